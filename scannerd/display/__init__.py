"""The dealer display: a web page served by the daemon for the kiosk browser at the table."""

from scannerd.display.server import Display

__all__ = ["Display"]
