"""fatnet.sim."""
