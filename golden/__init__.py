"""fatnet.golden."""
