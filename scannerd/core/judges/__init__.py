"""The validator's judges: each judges one part of a deal and keeps its own slice of the state.

``scannerd.core.validator.Validator`` hands each input to them; what every
judge reads (the shoe and the round on the table) is ``table_top``, and every
event is numbered and built by ``builder``. docs/architecture.md, "Adding a
judge", says what a new one takes.
"""
