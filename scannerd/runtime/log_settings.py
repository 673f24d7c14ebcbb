"""The ``[log]`` config section, read by ``logs.py`` (which cannot hold it: it needs ``config.redact``)."""

from __future__ import annotations

from typing import Literal, get_args

from pydantic import Field, field_validator

from scannerd.settings.config_section import FilePath, Section

LogLevel = Literal["debug", "info", "warning", "error"]
LOG_LEVELS: tuple[str, ...] = get_args(LogLevel)


class LogSettings(Section):
    """Where log lines go and how they look."""

    level: LogLevel = "info"
    format: Literal["auto", "console", "json"] = Field(
        "auto", description="'auto': readable on a terminal, JSON lines otherwise (journald, files)."
    )
    file: FilePath | None = Field(
        None, description="Append to this file instead of stderr; SIGHUP reopens it."
    )

    @field_validator("level", mode="before")
    @classmethod
    def _lower(cls, level: object) -> object:
        return level.lower() if isinstance(level, str) else level
