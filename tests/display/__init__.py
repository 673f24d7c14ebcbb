"""The dealer display, in process and in a real browser."""
