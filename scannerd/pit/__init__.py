"""``scannerd pit``: every table under a prefix on one live web page, for the pit boss (docs/pit.md)."""

from scannerd.pit.app import Pit
from scannerd.pit.board import PitBoard

__all__ = ["Pit", "PitBoard"]
