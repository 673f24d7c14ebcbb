"""Which of a table's recordings are due for the archive, and what each must read back as.

The directory is the backlog: whatever waits survives a restart because it is
a file, and the ledger says which files are done. A file is due once the chain
has linked it, and its copy must then read back as its anchor says:

- a sealed file, to its seal: its lines and last digest as walked;
- a file a crash left unsealed, once the next start has gone on from it: the
  lines and digest the next file's header took the chain on from, no more.

The file the recorder is writing is never due, nor a plain file that is waiting
to be compressed: only the names the recorder finishes with are shipped, once.
Which files wait is told from their names and headers alone, so a backlog of
thousands costs a look; each is walked only when its turn to be shipped comes
(a day's file is a few seconds of hashing on the archive's thread, not the
deal's), and judged again only if it changes.
"""

from __future__ import annotations

from collections.abc import Container
from dataclasses import dataclass
from pathlib import Path

from scannerd.recording.anchors import SealedFile
from scannerd.recording.format import SUFFIX, RecordingError
from scannerd.recording.verify import ChainedFile, read_chained


@dataclass(frozen=True, slots=True)
class Due:
    """A file the chain has linked, with what its archived copy must read back as."""

    path: Path
    sealed: SealedFile
    closed: bool  # it ends in its seal (else a crash ended it, and its copy reads back truncated)


@dataclass(frozen=True, slots=True)
class Waiting:
    """A finished file not yet archived."""

    path: Path
    since: float  # when it was last written: how long it has waited for the archive


@dataclass(frozen=True, slots=True)
class _Walked:
    stamp: tuple[int, int]  # size and modification time: a file changed since is walked again
    found: ChainedFile


class Backlog:
    """One table's finished recordings in its directory, judged for the archive."""

    def __init__(self, directory: Path, table_id: str, compress: bool) -> None:
        self.directory = directory
        self.table_id = table_id
        self.suffix = SUFFIX + ".gz" if compress else SUFFIX
        self._walked: dict[str, _Walked] = {}
        self._tables: dict[str, str] = {}  # each file's table, as its header says: it never changes

    def files(self) -> list[Path]:
        """Every file of the table's chain here, the one being written too, in the order they were begun."""
        found = self.directory.glob(f"{self.table_id}-*{SUFFIX}*")
        return sorted(p for p in found if p.name.endswith((SUFFIX, SUFFIX + ".gz")) and p.is_file())

    def waiting(self, archived: Container[str], writing: Path | None) -> list[Waiting]:
        """The finished files not in ``archived``, oldest first; ``writing`` is the file being written."""
        out = []
        for path in self.files():
            if path == writing or not path.name.endswith(self.suffix) or path.name in archived:
                continue
            try:
                since = path.stat().st_mtime
                if self._table(path) != self.table_id:
                    continue  # a table "T1-x" beside "T1"
            except (OSError, RecordingError):
                continue  # gone meanwhile (compressed, removed), or no recording at all: nothing to ship
            out.append(Waiting(path, since))
        return out

    def _table(self, path: Path) -> str:
        if path.name not in self._tables:
            self._tables[path.name] = read_chained(path, 1).header.table_id
        return self._tables[path.name]

    def due(self, path: Path) -> Due | None:
        """What ``path`` must read back as in the archive, once the chain has linked it; None until then.
        An OSError or RecordingError: it cannot be read (gone meanwhile)."""
        stat = path.stat()
        found = self._walk(path, (stat.st_size, stat.st_mtime_ns))
        files = self.files()
        return _due(path, found, files[files.index(path) + 1 :] if path in files else [])

    def _walk(self, path: Path, stamp: tuple[int, int]) -> ChainedFile:
        known = self._walked.get(path.name)
        if known is None or known.stamp != stamp:
            known = _Walked(stamp, read_chained(path))
            self._walked[path.name] = known
        return known.found

    def forget(self, name: str) -> None:
        """A file archived (or removed): its walk is not needed again."""
        self._walked.pop(name, None)
        self._tables.pop(name, None)


def _due(path: Path, found: ChainedFile, later: list[Path]) -> Due | None:
    """What ``path`` (walked: ``found``) must read back as once the chain has linked it; None until then."""
    if found.sealed and found.problem is None:
        return Due(path, SealedFile.of(found), closed=True)
    if not found.chained:
        return None
    for after in later:
        try:
            header = read_chained(after, 1).header
        except RecordingError:
            continue
        link = header.chain
        if header.table_id == found.header.table_id and link and link.file == found.number + 1:
            if link.lines is None or link.prev is None:
                return None  # written by a version that did not say where it took the chain on
            return Due(path, SealedFile(path.name, link.lines, link.prev), closed=False)
    return None
