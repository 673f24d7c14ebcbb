"""The audit of recordings against the exact odds."""
