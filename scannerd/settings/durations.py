"""Durations in the config: every one finite and inside a range a table can live with.

An unbounded float lets ``inf`` through: in a timed wait it overflows and
kills the thread that waits; in a timeout it switches the detection off
without a word. ``nan`` compares false with everything and does the same.
"""

from __future__ import annotations

from typing import Any

from pydantic import Field


def seconds(default: float, low: float, high: float, description: str) -> Any:
    """A ``Field`` for a duration in seconds, from ``low`` to ``high`` inclusive."""
    return Field(default, ge=low, le=high, allow_inf_nan=False, description=description)
