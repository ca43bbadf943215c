"""fatnet.hdl."""
