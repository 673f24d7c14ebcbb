"""The pit view, in process and in a real browser."""
