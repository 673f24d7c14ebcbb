"""A number above every ``seq`` the table has published, kept apart from the outbox.

Consumers drop every event whose ``seq`` they have seen (``docs/mqtt.md``), so
a table whose ``seq`` went back would be silently ignored until it passed its
old high-water mark. The outbox holds the next ``seq`` with the state, but an
outbox can be lost: deleted because it was corrupt, truncated, or on a disk
that was replaced. Two guards keep ``seq`` rising whatever happened to it:

- this file, next to the outbox, holds a ceiling that no published ``seq``
  has reached. It is moved up ``RESERVE`` at a time *before* a ``seq`` past
  it is used, so it is written about once per ``RESERVE`` events. When the
  outbox has no state but this file exists, the state was lost, and the
  daemon says so loudly;
- with no state at all, ``seq`` starts from the wall clock in milliseconds
  (``clock_floor``), which is above anything a table publishing fewer than
  a thousand events a second on average can have reached before.

The file also keeps the highest ``seq`` known published (``published``), as
of the last clean stop or reserve: a saved state below it is an outbox put
back from a copy, or one that lost its WAL, and reusing its numbers would
have consumers drop the new events as repeats.
"""

from __future__ import annotations

import json
from pathlib import Path

from scannerd.settings.files import replace_whole

RESERVE = 100_000
"""Seqs covered by one write: a busy table publishes that many in about a day."""


def ceiling_path(outbox: Path) -> Path:
    return outbox.with_name(outbox.stem + ".seq")


def clock_floor(ts: float) -> int:
    """The first ``seq`` of a table that knows nothing of its past: the wall clock in milliseconds."""
    return max(1, int(ts * 1000))


class SeqCeiling:
    def __init__(self, outbox: Path) -> None:
        self.path = ceiling_path(outbox)
        self.damaged = False  # there, but unreadable: the table had state, and what it says is gone
        self.published = 0  # the highest seq known to have gone out when the file was last written
        self.value: int | None = self._read()

    def _read(self) -> int | None:
        try:
            data = json.loads(self.path.read_text())
            value, published = data["ceiling"], data.get("published", 0)
        except FileNotFoundError:
            return None
        except (OSError, ValueError, KeyError, TypeError, AttributeError):
            self.damaged = True  # the clock floor still holds
            return None
        if not all(isinstance(v, int) and not isinstance(v, bool) for v in (value, published)) or value <= 0:
            self.damaged = True
            return None
        self.published = published
        return value

    def covers(self, seq: int) -> bool:
        return self.value is not None and seq < self.value

    def reserve(self, seq: int) -> None:
        """Make the ceiling exceed ``seq`` (and the next ``RESERVE``), durably, before ``seq`` is used."""
        if self.covers(seq):
            return
        self._write(seq + RESERVE, max(self.published, seq - 1))

    def note_published(self, seq: int) -> None:
        """At a clean stop: ``seq`` has gone out, so no saved state below it may be trusted again."""
        if seq > self.published and self.value is not None:
            self._write(self.value, seq)

    def _write(self, value: int, published: int) -> None:
        text = json.dumps({"ceiling": value, "published": published}) + "\n"
        replace_whole(self.path, text, 0o644)
        self.value, self.published = value, published
