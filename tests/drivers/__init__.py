"""The drivers and their codecs, on real ptys and the virtual USB bus."""
