"""A table's day brought back from the archive as files, each streamed and held to its checksum.

For a table PC that died with its disk, a replacement that needs the chain's
newest file to go on from, or an inspector who wants the files themselves.
Each object is read through the same checked stream every reader uses, into a
``.part`` file renamed only once its bytes proved to be those the archive took
in; a file already there is never overwritten.
"""

from __future__ import annotations

import contextlib
from pathlib import Path

from scannerd.archive.objects import ArchivedObject
from scannerd.recording.source import CHUNK, NotAsStored


class RestoreError(Exception):
    """A file that could not be brought back; ``str()`` names it and why, in one line."""


def restore(objects: list[ArchivedObject], to: Path) -> list[Path]:
    """Each object as a file in ``to``, by name, in name order; a RestoreError names the first to fail."""
    to.mkdir(parents=True, exist_ok=True)
    restored = []
    for obj in sorted(objects, key=lambda o: o.name):
        target = to / obj.name
        if target.exists():
            raise RestoreError(f"{target}: already there: not overwritten")
        part = target.with_name(target.name + ".part")
        opened = obj.open_bytes()
        try:
            with part.open("wb") as out:
                while data := opened.stream.read(CHUNK):
                    out.write(data)
        except (NotAsStored, OSError) as exc:
            with contextlib.suppress(OSError):
                part.unlink()
            raise RestoreError(f"{obj}: {getattr(exc, 'finding', None) or exc}") from None
        finally:
            opened.stream.close()
        part.replace(target)
        restored.append(target)
    return restored
