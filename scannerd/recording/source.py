"""A recording's bytes, line by line, exactly as every reader of it must see them, in bounded memory.

``verify``, ``replay`` and ``audit`` all read a file through :class:`RawLines`,
so none of them can be shown content the others do not see. A recording is
a plain file, or one gzip member: the recorder writes nothing else. What
follows that member (a second member, or any byte) is not read but reported,
since gzip readers that take every member would otherwise replay lines the
table never signed. A line longer than :data:`MAX_LINE` is reported rather
than held: no table writes one, and a file that inflates to gigabytes must
not take the machine's memory with it.

A recording lies in a file, or in an archive's object (scannerd/archive/):
:class:`Stored` is what every reader asks of the latter, so an object is read
through the very same lines as a file, streamed in the same bounded memory.
"""

from __future__ import annotations

import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import Protocol, Self

GZIP_MAGIC = b"\x1f\x8b"

MAX_LINE = 1 << 20
"""The longest line a recording may hold, 1 MiB. The longest a table writes is a header: the saved
state, with four earlier shoes' shuffle fingerprints and a shoe's results, tens of KiB; then a
command (its request is at most 16 KiB, and escaping can grow it a few times) or a read of a serial
port's whole buffer (a few KiB, as hex). Past that margin a line is not a table's."""

CHUNK = 64 * 1024
"""How much is read, or inflated, at a time."""

PIECE = 512
"""How much compressed data is inflated at a time."""


class ContentError(Exception):
    """Where a file's bytes stop being a recording's; ``finding`` says what, without naming the file."""

    def __init__(self, line: int, finding: str) -> None:
        super().__init__(finding)
        self.line = line  # the number of the line at or after which it stops
        self.finding = finding


class ByteStream(Protocol):
    """What a recording's bytes are read from: a file, or an object's body as it arrives."""

    def read(self, size: int, /) -> bytes: ...

    def close(self) -> None: ...


@dataclass(frozen=True, slots=True)
class Opened:
    """A recording's bytes to read, and what the place it lies in says of it beside them (an archive:
    a newer version over the one read, a retention shorter than the house's), each in a few words."""

    stream: ByteStream
    findings: tuple[str, ...] = ()


class Stored(Protocol):
    """A recording kept elsewhere than in a file here: an archive's object, read where it lies.

    ``str()`` names it as a path names a file (``s3://BUCKET/KEY``); it must be
    picklable, so that a worker process or a cluster's worker reads it itself.
    """

    @property
    def name(self) -> str:
        """Its file name, as the recorder gave it."""
        ...

    def open_bytes(self) -> Opened:
        """Its bytes from the start, streamed; an ``OSError`` names what could not be reached."""
        ...

    def size(self) -> int: ...


Recorded = Path | Stored
"""Where a recording lies: every reader takes either, and reads both through :class:`RawLines`."""


class NotAsStored(Exception):
    """Raised by a stored recording's stream whose bytes are not those its archive took in."""

    def __init__(self, finding: str) -> None:
        super().__init__(finding)
        self.finding = finding


def open_recorded(where: Recorded) -> Opened:
    """A recording's bytes, wherever it lies; an ``OSError`` is the caller's to word."""
    if isinstance(where, Path):
        return Opened(where.open("rb"))
    return where.open_bytes()


def size_of(where: Recorded) -> int:
    return where.stat().st_size if isinstance(where, Path) else where.size()


class RawLines:
    """The lines of one recording file as bytes, each with its newline (a cut-off last one without).

    Iterating raises :class:`ContentError` where the bytes stop being a
    recording's: damaged compressed data, a line over :data:`MAX_LINE`, or
    anything after the gzip member. ``cut`` says the compressed stream ended
    before its end marker (a copy broken off). An ``OSError`` opening the
    file is the caller's to word.
    """

    def __init__(self, path: Recorded) -> None:
        self.path = path
        self.lines = 0  # lines handed out so far
        self.cut = False
        opened = open_recorded(path)
        self._file = opened.stream
        self.findings = opened.findings
        self.altered: str | None = None  # what its source said of bytes that are not as it stored them

    def __iter__(self) -> Iterator[bytes]:
        pending = b""
        for chunk in self._chunks():
            parts = (pending + chunk).split(b"\n")
            pending = parts.pop()
            for part in parts:
                yield self._line(part + b"\n")
            if len(pending) > MAX_LINE:
                raise self._too_long()
        if pending:
            yield self._line(pending)

    def _line(self, data: bytes) -> bytes:
        if len(data) > MAX_LINE + 1:
            raise self._too_long()
        self.lines += 1
        return data

    def _too_long(self) -> ContentError:
        return ContentError(
            self.lines + 1,
            f"line {self.lines + 1}: longer than any line a table writes (over {MAX_LINE // 1024} KiB): "
            "not read further",
        )

    def _chunks(self) -> Iterator[bytes]:
        """The recording's bytes, inflated if compressed; where the source fails, a finding."""
        try:
            # A stream cannot go back: the bytes that tell gzip from plain are kept for the reading.
            head = self._file.read(len(GZIP_MAGIC))
            if head != GZIP_MAGIC:
                yield head
                while data := self._file.read(CHUNK):
                    yield data
                return
            yield from self._inflated(head)
        except NotAsStored as exc:
            self.altered = exc.finding
            raise ContentError(self.lines + 1, exc.finding) from None
        except OSError as exc:
            where = f"after line {self.lines}" if self.lines else "before its first line ends"
            raise ContentError(self.lines + 1, f"unreadable {where}: {exc.strerror or exc}") from None

    def _inflated(self, head: bytes) -> Iterator[bytes]:
        """The first gzip member, inflated a bounded piece at a time; what follows it is a finding.

        Compressed data goes in a small piece at a time, so damage is named
        near the line it spoils rather than a whole read earlier.
        """
        inflate = zlib.decompressobj(wbits=31)
        while not inflate.eof:
            if not (piece := head + self._file.read(PIECE)):
                self.cut = True
                return
            while piece and not inflate.eof:
                try:
                    out = inflate.decompress(piece, CHUNK)
                except zlib.error:
                    raise ContentError(self.lines + 1, self._damaged()) from None
                piece = inflate.unconsumed_tail
                if out:
                    yield out
            head = b""
        rest = inflate.unused_data + self._file.read(CHUNK)
        if rest:
            raise ContentError(self.lines + 1, _after_the_end(rest))

    def _damaged(self) -> str:
        where = f"after line {self.lines}" if self.lines else "before its first line ends"
        return f"damaged: its compressed data is corrupt {where}"

    def close(self) -> None:
        self._file.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()


def _after_the_end(rest: bytes) -> str:
    what = "another gzip member" if rest.startswith(GZIP_MAGIC) else "bytes that are not part of it"
    return f"data after the end of its compressed recording ({what}): not the table's, not read"
