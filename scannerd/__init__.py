"""scannerd: the daemon between a baccarat table's card-reading shoe and the game server."""

__version__ = "0.1.0"
