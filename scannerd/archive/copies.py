"""A file's copy in the archive: the first put under its name, and whether it reads back as its anchor says.

What the shipper asks before it puts a file and after, and what ``scannerd
archive check`` asks of every file the table PC still has: one judgement, so a
copy the one counts as archived is a copy the other passes.
"""

from __future__ import annotations

from datetime import UTC, datetime

from scannerd.archive.backlog import Due
from scannerd.archive.bucket import ArchiveError, Bucket
from scannerd.archive.objects import ArchivedObject
from scannerd.recording.format import RecordingError
from scannerd.recording.verify import read_chained


class NotAsAnchored(Exception):
    """A copy in the archive that does not read back as its anchor says: never counted as archived."""


class Copies:
    """The copies in one bucket, each read with this process's client and held to the house's lock."""

    def __init__(self, bucket: Bucket, retention_days: int) -> None:
        self.bucket = bucket
        self.retention_days = retention_days

    def first(self, key: str) -> ArchivedObject | None:
        """The copy under ``key`` (its first version, the one the lock keeps); None if none was put."""
        kept = [v for v in self.bucket.versions(key) if v.key == key and not v.deleted]
        if not kept:
            return None
        first = min(reversed(kept), key=lambda v: v.modified)  # S3 lists a key's versions newest first
        return self.at(key, first.version_id, first.modified.timestamp(), first.size)

    def at(self, key: str, version: str, modified: float, size: int) -> ArchivedObject:
        return ArchivedObject(
            self.bucket.reach,
            self.bucket.name,
            key,
            version,
            datetime.fromtimestamp(modified, UTC),
            size,
            retention_days=self.retention_days,
            via=self.bucket,
        )


def check(copy: ArchivedObject, due: Due) -> None:
    """The copy, read as verify reads it, must end in the lines and digest its anchor names, locked, and
    nothing put over it. An ArchiveError: the storage failed mid-read, and it may be asked again."""
    try:
        found = read_chained(copy)
    except RecordingError as exc:
        raise NotAsAnchored(str(exc)) from None
    if found.problem and found.problem.startswith("unreadable"):
        raise ArchiveError(f"{copy}: {found.problem}")
    if found.findings:
        raise NotAsAnchored("; ".join(found.findings))
    whole = found.problem is None if due.closed else bool(found.problem and "truncated" in found.problem)
    if not whole or (found.lines, found.last.hex()) != (due.sealed.lines, due.sealed.digest):
        raise NotAsAnchored(
            f"it reads back as {found.lines} lines ending in {found.last.hex()[:16]}... "
            f"({found.problem or 'sealed'}), its anchor names {due.sealed.lines} lines ending in "
            f"{due.sealed.digest[:16]}..."
        )
