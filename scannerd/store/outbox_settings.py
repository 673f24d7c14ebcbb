"""The ``[outbox]`` config section, beside the outbox (``outbox.py``) it sizes and places."""

from __future__ import annotations

from pathlib import Path

from pydantic import Field

from scannerd.settings.config_section import FilePath, Section


class OutboxSettings(Section):
    """Where events wait for the broker's acknowledgement, and how much disk they may take."""

    path: FilePath = Field(Path("/var/lib/scannerd/outbox.sqlite3"), description="SQLite database file.")
    max_bytes: int = Field(
        256 * 1024 * 1024,
        ge=64 * 1024,
        le=1024**4,
        description="Budget for waiting events (topic + payload bytes). Beyond it new events are "
        "held in memory and an alert is raised; see docs/mqtt.md.",
    )
    warn_fraction: float = Field(
        0.8, gt=0, lt=1, allow_inf_nan=False, description="Fill level that raises the early warning."
    )
