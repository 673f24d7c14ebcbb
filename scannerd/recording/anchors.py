"""Checking an archive against the anchors the game server kept.

A file's chain proves what is in it and in the files before it, but no file
can prove its own absence: the newest file of a table deleted, renamed or
swapped for another table's signed file leaves a chain that still checks out.
So the table publishes an ``anchor`` event for every file it seals (its name,
line count and last digest) and the game server keeps them, out of reach of
whoever holds the recordings. ``scannerd verify --anchors FILE`` then asks of
every anchor that its file be in the archive under that name, of that table,
with those lines ending in that digest.

Whether the table anchored a file is in its recordings too: the anchor is an
``anchor`` line of the file written when it went out, as a rule the next in
the chain (:func:`anchored_in`), which a start reads to anchor again what no
recording shows anchored.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from pydantic import ValidationError

from scannerd.contract.events import AnchorEvent
from scannerd.recording.format import AnchorLine, RecordingError, RecordingReader
from scannerd.recording.source import Recorded

if TYPE_CHECKING:
    from scannerd.recording.verify import ChainedFile, Verdict


@dataclass(frozen=True, slots=True)
class SealedFile:
    """A file the table's chain holds, as its anchor names it: final name, lines, last digest (hex)."""

    file: str
    lines: int
    digest: str

    @classmethod
    def of(cls, found: ChainedFile) -> SealedFile:
        return cls(found.path.name, found.lines, found.last.hex())


def anchored_in(path: Recorded, sealed: SealedFile) -> bool:
    """Whether the recording at ``path`` holds ``sealed``'s anchor, under its name compressed or not.

    Read up to that line only: the anchor of the file before goes out within
    a second of the file beginning. A file that cannot be read holds none.
    """
    wanted = (_unzipped(sealed.file), sealed.lines, sealed.digest)
    try:
        with RecordingReader(path) as reader:
            return any(
                isinstance(line, AnchorLine) and (_unzipped(line.file), line.lines, line.digest) == wanted
                for line in reader.lines()
            )
    except RecordingError:
        return False


def read_anchors(path: Path) -> list[AnchorEvent]:
    """The anchors in ``path``: JSON lines of anchor events as published; RecordingError names a bad line."""
    try:
        with path.open(encoding="utf-8") as lines:  # a line at a time, not the whole text beside them
            return parse_anchors(lines, str(path))
    except (OSError, UnicodeDecodeError) as exc:
        raise RecordingError(f"{path}: {getattr(exc, 'strerror', None) or exc}") from None


def parse_anchors(lines: Iterable[str], where: str) -> list[AnchorEvent]:
    """Anchor events, a JSON line each, wherever kept; a RecordingError names ``where`` and the line."""
    anchors = []
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            anchors.append(AnchorEvent.model_validate_json(line))
        except ValidationError:
            raise RecordingError(f"{where}:{number}: not an anchor event as the table publishes it") from None
    return anchors


def _unzipped(name: str) -> str:
    """A file's name as the anchor may give it: compressed after its anchor went out, or not."""
    return name.removesuffix(".gz")


def check_anchors(anchors: Iterable[AnchorEvent], files: list[ChainedFile], verdict: Verdict) -> None:
    """Every anchored file is in ``files`` under its name, of its table, with its lines and last digest;
    and every file of a table the anchors speak for is anchored, but for its newest (anchored only at
    the table's next start): a file no anchor names was not the table's to record."""
    anchors = list(anchors)
    by_name = {_unzipped(f.path.name): f for f in files}
    by_content = {(f.lines, f.last.hex()): f for f in files}
    _unanchored(anchors, files, verdict)
    seen: set[tuple[str, str, int, str]] = set()
    for anchor in anchors:
        key = (anchor.table_id, _unzipped(anchor.file), anchor.lines, anchor.digest)
        if key in seen:
            continue  # a table killed before an anchor's line was written anchors the file again
        seen.add(key)
        found = by_name.get(key[1])
        problem = _anchor_problem(anchor, found, by_content.get((anchor.lines, anchor.digest)))
        if problem:
            verdict.problem(found.path if found else Path(anchor.file), problem)


def _unanchored(anchors: list[AnchorEvent], files: list[ChainedFile], verdict: Verdict) -> None:
    named = {(a.table_id, _unzipped(a.file)) for a in anchors}
    tables = {table for table, _ in named}
    for table in sorted(tables):
        held = sorted((f for f in files if f.header.table_id == table), key=lambda f: f.path.name)
        for found in held[:-1]:
            if (table, _unzipped(found.path.name)) not in named:
                verdict.problem(
                    found.path,
                    f"not anchored: no anchor of table {table} names it, though the table anchors every "
                    "file it records",
                )


def _anchor_problem(anchor: AnchorEvent, found: ChainedFile | None, same: ChainedFile | None) -> str | None:
    what = f"anchored by table {anchor.table_id} (seq {anchor.seq}) with {anchor.lines} lines"
    if found is None:
        if same is not None:
            return f"missing: {what}; its content is in {same.path.name}: renamed"
        return f"missing: {what}, and not in the archive"
    if found.header.table_id != anchor.table_id:
        return f"replaced: {what}, it holds table {found.header.table_id}'s recording"
    if (found.lines, found.last.hex()) == (anchor.lines, anchor.digest):
        return None
    if found.lines < anchor.lines:
        return f"cut short after its anchor: {what}, it holds {found.lines} that check out"
    return f"replaced: {what}, its line {found.lines} does not end in the anchored digest"
