"""The casino's client library against a real broker."""
