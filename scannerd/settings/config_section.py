"""What every section of the config file shares, so each owner can declare its own section.

A section is strict and closed: an unknown key is a typo to report, not a
value to ignore, and ``decks = "8"`` is a mistake worth a word rather than 8.
The sections live beside the code they configure; ``scannerd/runtime/config.py``
assembles them into one file, and ``scannerd/settings/config_errors.py`` words their
problems for the technician.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

from pydantic import BaseModel, ConfigDict, Strict

FilePath = Annotated[Path, Strict(False)]
"""A path in a strict section: TOML has no path type, so it comes as text."""


class Section(BaseModel):
    """One ``[section]`` of the config file: unknown keys refused, values taken as typed, never changed."""

    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)
