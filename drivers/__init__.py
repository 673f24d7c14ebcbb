"""Device drivers: turn bytes from a shoe or scanner into device events."""
