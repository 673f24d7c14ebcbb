"""Keeping the tables' anchors, so ``scannerd verify --anchors`` can prove no recording is missing.

A table publishes an ``anchor`` event for every recording it seals. The
recordings live on the table PC, where whoever can delete one can delete the
lot; the anchors live with the game server. Kept as JSON lines of the events
as published, one file per table or one for all, they are what ``verify
--anchors FILE`` reads (docs/recording.md). An anchor kept twice (a handler
run again after a crash) is harmless: verify counts each file once.
"""

from __future__ import annotations

import os
from pathlib import Path

from scannerd.contract.events import AnchorEvent
from scannerd.contract.topics import encode


def keep_anchor(event: AnchorEvent, path: str | Path) -> None:
    """Append ``event`` to ``path`` and sync it: an anchor is kept once on disk, not once buffered."""
    with Path(path).open("ab") as f:
        f.write(encode(event) + b"\n")
        f.flush()
        os.fsync(f.fileno())
