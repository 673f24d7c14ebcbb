"""The ``[record]`` config section, beside the recorder (``recorder.py``) that follows it."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from scannerd.settings.config_section import FilePath, Section


class RecordSettings(Section):
    """Recording of raw device traffic for replay (docs/recording.md)."""

    dir: FilePath | None = Field(None, description="Directory for recordings; None to record nothing.")
    rotate: Literal["shoe", "day"] = Field("shoe", description="Start a new file per shoe or per day.")
    compress: bool = Field(True, description="Gzip finished recordings.")
    key_file: FilePath | None = Field(
        None,
        description="File holding the Ed25519 private key (PEM, made by scannerd keygen) that signs each "
        "finished recording. A relative path is taken inside $CREDENTIALS_DIRECTORY. Unset: "
        "$CREDENTIALS_DIRECTORY/recording-key if it exists, else files are chained but not signed.",
    )
