"""The dealer display: a web page served by the daemon for the kiosk browser at the table.

The server is ``scannerd.display.server.Display``. Nothing is imported here, so
reading the ``[display]`` section (``settings.py``) or the view does not load
aiohttp and the server.
"""
