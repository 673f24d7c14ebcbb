"""The live recorder: the daemon's inputs to a directory of recordings, off the hot path.

The listeners only put a message on a bounded queue; a writer thread turns
them into lines, rotates files (per shoe or per UTC day), gzips finished
ones and survives the disk: any write error is logged and counted, and
recording resumes at the next rotation point, so a file never has a hole
in its middle. The deal goes on whatever the disk does.

Lines are written in the order the validator judged their inputs, which
is what lets a replay reproduce every event: the daemon calls the listeners
under its lock, and its device reader holds that lock for a whole chunk
(its time, its cards, then its bytes to ``on_rx``), so no command can fall
between a chunk's cards and its bytes, nor between its time and its cards.

Each file's header carries the table's state when the file began (validator
snapshot and framed dedup state, as the outbox stores them), taken under the
daemon's lock at the moment of rotation, so every file replays on its own to
exactly what the table published while it was being written.

Every line is chained to the one before (scannerd/recording/chain.py), across files
too: the first file of a run continues from the last line of the table's
newest file in the directory, each header names the file before's last
digest, and each finished file is sealed, signed when the table has a key.

No file can prove its own absence, so the daemon publishes an ``anchor`` event
for each file (its final name, lines and last digest), which the game server
keeps. The daemon judges the anchor like any input, so it comes back to
``on_input`` and is written as a line of the current file, and a replay numbers
it as the table did. A file's anchor is therefore handed to ``on_sealed`` only
once the next file is open to record it: a file sealed at a rotation, or ended
at a write error (as far as it reached the disk), when the next one begins; the
file sealed at a stop, never by this run. The first file of a run is handed the
anchors its start owes, in chain order: walking back from the table's newest
file, each file that the file after it does not show anchored (a stop sealed
it, a crash came before its anchor went out, or between its anchor and that
anchor's line), up to the first file that it does.
"""

from __future__ import annotations

import contextlib
import gzip
import queue
import re
import shutil
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, assert_never

import structlog

from scannerd import __version__
from scannerd.contract.payloads import RecorderHealth, Software
from scannerd.core.house import HouseRules
from scannerd.core.ingest import DEVICE_FAULT
from scannerd.core.inputs import (
    Anchored,
    ClockStepped,
    Command,
    ConfigChanged,
    Fault,
    FaultCleared,
    LinkChanged,
    Restarted,
    ValidatorInput,
)
from scannerd.core.listeners import TableListener
from scannerd.core.table import SavedState
from scannerd.recording import signing
from scannerd.recording.anchors import SealedFile, anchored_in
from scannerd.recording.chain import Chain
from scannerd.recording.format import SUFFIX, ChainLink, Header, RecordingError, RecordingWriter, whole_second
from scannerd.recording.settings import RecordSettings
from scannerd.recording.verify import ChainedFile, read_chained

if TYPE_CHECKING:
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

log = structlog.get_logger(__name__)

QUEUE_LIMIT = 100_000
"""Lines waiting for the disk; past it lines are dropped and the file is ended (never left with a hole)."""

WALK_BACK = 64
"""The most files a start anchors: more than a loop of crashes leaves unanchored, fewer than an archive
recorded before anchors were (whose files hold none), which would otherwise all be anchored at once."""

StateSource = Callable[[], SavedState]
"""The table's state for a header; only called from ``on_input`` (under the daemon's lock) or before start."""

_SAFE = re.compile(r"[^A-Za-z0-9_.-]+")
_STAMP = re.compile(r"\d{8}T\d{6}Z")


# ------------------------------------------------------------------ what the writer's queue carries


@dataclass(frozen=True, slots=True)
class _Rx:
    """Bytes the device sent, as the reader delivered them: a line."""

    ts: float
    data: bytes


_Line = _Rx | LinkChanged | Restarted | Command | Anchored | ConfigChanged | Fault | FaultCleared
"""What becomes one line: the device's bytes, or an input the validator judged, queued as it is."""


OnSealed = Callable[[SealedFile], None]
"""Told on the writer thread, so it must not block nor take the daemon's lock: the daemon queues it."""


@dataclass(frozen=True, slots=True)
class _Rotate:
    """End the current file and begin one whose header holds ``state``."""

    ts: float
    state: SavedState | None


@dataclass(frozen=True, slots=True)
class _Gap:
    """Lines were lost to a full queue: the file must end here."""


@dataclass(frozen=True, slots=True)
class _Stop:
    """Write what came before, end the file, and end the writer thread."""


_Message = _Line | _Rotate | _Gap | _Stop
"""Put by the listeners (any thread, never blocking); only the writer thread takes them."""


def _day(ts: float) -> str:
    return datetime.fromtimestamp(ts, UTC).strftime("%Y%m%d")


class Recorder(TableListener):
    """Records one table into ``settings.dir``: a daemon's listener (``on_rx``, ``on_input``)."""

    def __init__(
        self,
        settings: RecordSettings,
        *,
        table_id: str,
        driver: str,
        rules: HouseRules,
        driver_options: dict[str, Any] | None = None,
        state: StateSource | None = None,
        queue_limit: int = QUEUE_LIMIT,
        key: Ed25519PrivateKey | None = None,
        on_sealed: OnSealed | None = None,
        software: Software | None = None,
        config_digest: str | None = None,
    ) -> None:
        if settings.dir is None:
            raise ValueError("recording needs record.dir")
        self.settings = settings
        self.dir = Path(settings.dir)
        self.table_id = table_id
        self.driver = driver
        self.rules = rules
        self.driver_options = dict(driver_options or {})
        self._state = state
        self._key = key
        self._key_id = signing.fingerprint(key.public_key()) if key is not None else None
        self._on_sealed = on_sealed
        self._software = software  # what every header states the table runs, and under which config
        self._config_digest = config_digest
        # The chain so far: the last file's number and its chain (the digest of its last line written).
        self._file_number = 0
        self._chain: Chain | None = None
        self._linked = False  # whether the directory was read for where the chain stands
        self._owed: list[SealedFile] = []  # anchors for the next file to record (writer thread only)
        self._queue: queue.Queue[_Message] = queue.Queue(queue_limit)
        self._lock = threading.Lock()  # the gap flag, for listeners on several threads
        self._day: str | None = None  # UTC day of the current file (rotation per day)
        self._gap = False  # a line was lost to a full queue: the file must end there
        self._thread: threading.Thread | None = None
        # Writer-thread state and figures for health reports.
        self._writer: RecordingWriter | None = None
        self._path: Path | None = None
        self.files: list[Path] = []  # every file written, in order (compressed names once finished)
        self.lines = 0
        self.overflowed = 0  # lines lost to a full queue (counted by the listeners)
        self.dropped = 0  # lines not written because the file was broken (counted by the writer)
        self.errors = 0
        self.last_error: str | None = None

    # ------------------------------------------------------------------ lifecycle

    def start(self, ts: float | None = None) -> None:
        """Begin the first file; call before the daemon's threads start (the table's state is read now)."""
        self._thread = threading.Thread(target=self._run, name="recorder", daemon=True)
        self._thread.start()
        self._rotate(time.time() if ts is None else ts)

    def stop(self, timeout: float = 5.0) -> None:
        """Write what is queued, end (and compress) the current file."""
        if self._thread is None:
            return
        try:
            self._queue.put(_Stop(), timeout=timeout)
        except queue.Full:
            log.error("recorder queue stuck full at stop", pending=self._queue.qsize())
        self._thread.join(timeout)
        if self._thread.is_alive():
            log.error("recorder did not finish writing in time", pending=self._queue.qsize())

    @property
    def alive(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    @property
    def path(self) -> Path | None:
        """The file being written now."""
        return self._path

    def health(self) -> RecorderHealth:
        """Its figures for the health topic (read from another thread: each is current, not all at once)."""
        return RecorderHealth(
            file=str(self._path) if self._path else None,
            files=len(self.files),
            lines=self.lines,
            dropped=self.dropped + self.overflowed,
            errors=self.errors,
            last_error=self.last_error,
            alive=self.alive,
        )

    # ------------------------------------------------------------------ listeners (hot path)

    def on_rx(self, ts: float, data: bytes) -> None:
        self._put(_Rx(ts, data))

    def on_input(self, inp: ValidatorInput) -> None:
        """Daemon input listener; runs under the daemon's lock, so the state read here is consistent.

        Inputs made from device bytes are not written: their bytes are, by ``on_rx``.
        """
        if isinstance(inp, LinkChanged):
            self._put(inp)
            self._maybe_rotate_day(inp.ts)
        elif isinstance(inp, Restarted | Anchored | ConfigChanged):
            self._put(inp)
        elif isinstance(inp, Fault | FaultCleared) and inp.code != DEVICE_FAULT and self._thread is not None:
            # The daemon's own faults; one judged before the first file began is in its header's state.
            self._put(inp)
        elif isinstance(inp, ClockStepped):
            # A file's times never go back, and its stall times must come out as they were judged:
            # a new file whose header holds the state after the step covers both.
            self._rotate(inp.ts)
        elif isinstance(inp, Command):
            self._put(replace(inp, args=dict(inp.args)))  # the line holds the arguments as judged
            if inp.name == "new_shoe" and self.settings.rotate == "shoe":
                self._rotate_for_shoe(inp.ts)
            else:
                self._maybe_rotate_day(inp.ts)

    # ------------------------------------------------------------------ rotation (caller's thread)

    def _rotate_for_shoe(self, ts: float) -> None:
        state = self._state() if self._state else None
        shoe = state.shoe if state is not None else {}
        if shoe.get("cards_dealt") or shoe.get("hands_started"):
            return  # the command was refused: the same shoe goes on
        self._rotate(ts, state)

    def _maybe_rotate_day(self, ts: float) -> None:
        if self.settings.rotate == "day" and self._day is not None and _day(ts) != self._day:
            self._rotate(ts)

    def _rotate(self, ts: float, state: SavedState | None = None) -> None:
        if state is None and self._state is not None:
            state = self._state()
        self._day = _day(ts)
        self._put(_Rotate(ts, state))

    def _put(self, item: _Message) -> None:
        """Never blocks (the caller may hold the daemon's lock); a lost line ends the file there."""
        with self._lock:
            try:
                if self._gap:
                    self._queue.put_nowait(_Gap())
                    self._gap = False
                self._queue.put_nowait(item)
            except queue.Full:
                self.overflowed += 1
                self._gap = True

    # ------------------------------------------------------------------ the writer thread

    def _run(self) -> None:
        self._compress_leftovers()
        while True:
            item = self._queue.get()
            batch = [item]
            with contextlib.suppress(queue.Empty):
                while len(batch) < 1000:
                    batch.append(self._queue.get_nowait())
            for item in batch:
                if isinstance(item, _Stop):
                    self._finish()
                    return
                try:
                    self._handle(item)
                except OSError as exc:
                    self._broken(exc)
                except Exception as exc:  # a bug here must not end recording silently
                    _say("exception", "recorder failed on a line", kind=type(item).__name__)
                    self._broken(exc)
            try:
                if self._writer is not None:
                    self._writer.flush()
            except OSError as exc:
                self._broken(exc)

    def _handle(self, item: _Line | _Rotate | _Gap) -> None:
        match item:
            case _Rotate(ts, state):
                self._finish()
                self._open(ts, state)
            case _Gap():
                self._broken(OSError("recording queue overflowed: lines were lost"))
            case _:
                self._write(item)

    def _write(self, line: _Line) -> None:
        writer = self._writer
        if writer is None:
            self.dropped += 1
            return
        match line:
            case _Rx(ts, data):
                writer.rx(ts, data)
            case Command(ts, name, args, actor):
                writer.cmd(ts, name, args, actor)
            case LinkChanged(ts, up, detail):
                writer.link(ts, up, detail)
            case Restarted(ts, detail, cards_repeat):
                writer.restart(ts, detail, cards_repeat)
            case Anchored(ts, file, lines, digest):
                writer.anchor(ts, file, lines, digest)
            case ConfigChanged(ts, digest, previous, changed):
                writer.config(ts, digest, previous, changed)
            case Fault(ts, code, text):
                writer.fault(ts, code, text)
            case FaultCleared(ts, code):
                writer.fault(ts, code, cleared=True)
            case _:
                assert_never(line)
        self.lines += 1

    def _open(self, ts: float, state: SavedState | None) -> None:
        started = whole_second(ts)
        self.dir.mkdir(parents=True, exist_ok=True)
        if not self._linked:
            self._link()  # an OSError here stops recording until the next shoe or day, which tries again
            self._linked = True
        prev = self._chain.digest if self._chain else None
        header = Header(
            table_id=self.table_id,
            driver=self.driver,
            started_at=started,
            rules=self.rules,
            driver_options=self.driver_options,
            state=state.to_dict() if state is not None else None,
            scannerd=__version__,
            chain=ChainLink(
                file=self._file_number + 1,
                prev=prev.hex() if prev else None,
                key=self._key_id,
                lines=self._chain.n if self._chain else None,
            ),
            software=self._software,
            config_digest=self._config_digest,
        )
        path = self._new_path(started, state)
        chain = Chain(prev) if prev else Chain()
        self._writer = RecordingWriter.create(path, header, chain, self._key)
        self._file_number, self._chain = self._file_number + 1, chain
        self._path = path
        self.files.append(path)
        _say("info", "recording", file=str(path), key=self._key_id)
        owed, self._owed = self._owed, []
        for sealed in owed:
            self._sealed(sealed)

    def _new_path(self, started: datetime, state: SavedState | None) -> Path:
        """A name that sorts after every file this table has in the directory, whatever the clock did.

        A directory is replayed in name order. The name carries the file's start,
        but never an earlier one than the newest file already there (a clock
        stepped back), and a file begun in a second that already has one is
        numbered ``_01``, ``_02``... right after the time, which sorts after it.
        """
        prefix = f"{self.table_id}-"
        stamp = started.strftime("%Y%m%dT%H%M%SZ")
        names = [p.name[len(prefix) :] for p in self.dir.glob(f"{prefix}*{SUFFIX}*")]
        stamp = max([stamp, *(n[: len(stamp)] for n in names if _STAMP.match(n))])
        same = [n[len(stamp) :] for n in names if n.startswith(stamp)]
        numbers = [int(rest[1:3]) for rest in same if rest[:1] == "_" and rest[1:3].isdigit()]
        stem = prefix + stamp + (f"_{max(numbers, default=0) + 1:02d}" if same else "")
        shoe = state.shoe if state is not None else {}
        if shoe.get("shoe_id"):
            stem += "-" + _SAFE.sub("_", str(shoe["shoe_id"]))
        return self.dir / (stem + SUFFIX)

    def _link(self) -> None:
        """Where the table's chain stands in the directory, and the anchors this start owes."""
        names = sorted(
            (p for p in self.dir.glob(f"{self.table_id}-*{SUFFIX}*") if not p.name.endswith(".part")),
            reverse=True,
        )
        newest = self._newest(names)
        if newest is None or not newest.chained:
            return
        self._file_number, self._chain = newest.number, Chain(newest.last, newest.lines)
        self._owed = self._unanchored(newest, [p for p in names if p.name < newest.path.name])

    def _newest(self, names: list[Path]) -> ChainedFile | None:
        """The table's newest file (``names`` newest first), walked to its last good line.

        A file cut short by a crash still gives its last whole line, so the
        chain goes on from there and a verifier sees exactly where it broke.
        One with no whole header (a power cut before it reached the disk, or
        garbage) is passed over for the file before it: a verifier names that
        file, and the chain goes on rather than begin again at file 1. One the
        recorder may not open (its permissions, no file handle left) raises:
        chained past, a file that is whole would be followed by a second of its
        number, and a verifier that can read both would see a fork.
        """
        for path in names:  # the glob also finds a table "T1-x"'s files beside "T1"'s
            path.open("rb").close()  # an OSError: the file is there, only not to be read now
            try:
                newest = read_chained(path)
            except RecordingError as exc:
                _say("warning", "recording unreadable: chained on from the one before", reason=str(exc))
                continue
            if newest.header.table_id == self.table_id:
                return newest
        return None

    def _unanchored(self, newest: ChainedFile, older: list[Path]) -> list[SealedFile]:
        """The files no recording shows anchored, in chain order: ``newest``, and back from it.

        Each earlier file is anchored as the file after it took the chain on
        (its header's digest and line count), which is what that file was when
        the table went on, whatever became of it since. The walk ends at the
        first file whose successor holds its anchor, at a file the chain does
        not lead back to, or after ``WALK_BACK`` files.
        """
        owed = [SealedFile.of(newest)]
        after = newest
        for path in older:
            try:
                before = read_chained(path, 1)
            except RecordingError:
                break
            if before.header.table_id != self.table_id:
                continue
            link = after.header.chain
            if not (before.chained and link and link.file == before.number + 1 and link.lines and link.prev):
                break  # not the file the chain went on from, or it does not say where: nothing to tell
            sealed = SealedFile(path.name, link.lines, link.prev)
            if anchored_in(after.path, sealed):
                break
            if len(owed) == WALK_BACK:
                _say("warning", "earlier files not anchored again", before=path.name, anchored=len(owed))
                break
            owed.append(sealed)
            after = before
        return owed[::-1]

    def _finish(self) -> None:
        """End the current file and compress it; a failure leaves it uncompressed, not lost.

        Its anchor is owed to the next file: one the seal could not end is
        ended where it reached the disk, as at any write error.
        """
        writer, path = self._writer, self._path
        if writer is None or path is None:
            return
        try:
            writer.seal()
            writer.close()
        except OSError as exc:
            self._broken(exc)
            return
        self._writer = self._path = None
        if self.settings.compress:
            try:
                compressed = _gzip(path)
                self.files[self.files.index(path)], path = compressed, compressed
            except OSError as exc:
                # Anchored under its plain name: the next start compresses it, and verify takes
                # an anchor's name for the file compressed or not.
                self._error(exc)
        if writer.chain is not None:
            self._owed.append(SealedFile(path.name, writer.chain.n, writer.chain.digest.hex()))

    def _sealed(self, sealed: SealedFile) -> None:
        if self._on_sealed is not None and sealed.lines:
            try:
                self._on_sealed(sealed)
            except Exception:  # a bug there must not end recording
                _say("exception", "anchor not handed on", file=sealed.file)

    def _broken(self, exc: BaseException) -> None:
        """End the file at the last good line; the next rotation point starts a whole one."""
        writer, self._writer = self._writer, None
        if writer is not None:
            # Closed before the error is counted: whoever sees the count (health, a test that then
            # frees the disk) finds the file already ended, and its close cannot write more later.
            with contextlib.suppress(OSError):
                writer.close()
        self._error(exc)
        if self._path is not None:
            _say("warning", "recording stopped until the next shoe or day", file=str(self._path))
            self._ended(self._path)
            self._path = None

    def _ended(self, path: Path) -> None:
        """Where a file ended at an error really ends: the next file goes on from there, and anchors it.

        The lines the writer still held when the disk failed never arrived, so
        the chain goes on from the file's last whole line, as after a crash.
        """
        try:
            ended = read_chained(path)
        except RecordingError:
            return  # not even its header arrived: nothing to go on from, nothing to anchor
        if ended.lines:
            self._chain = Chain(ended.last, ended.lines)
            self._owed.append(SealedFile.of(ended))

    def _error(self, exc: BaseException) -> None:
        self.errors += 1
        self.last_error = str(exc)
        _say("error", "recording error", error=str(exc), dir=str(self.dir))

    def _compress_leftovers(self) -> None:
        """Files a crashed run left uncompressed."""
        if not self.settings.compress or not self.dir.is_dir():
            return
        for path in sorted(self.dir.glob(f"{self.table_id}-*{SUFFIX}")):
            try:
                _gzip(path)
            except OSError as exc:
                self._error(exc)


def _say(level: str, event: str, **fields: Any) -> None:
    """Log from the writer thread; a log that cannot be written must not end the recording too."""
    with contextlib.suppress(Exception):
        getattr(log, level)(event, **fields)


def _gzip(path: Path) -> Path:
    """``path`` compressed to ``path.gz``; the plain file goes only once the copy is complete."""
    target = path.with_name(path.name + ".gz")
    partial = target.with_name(target.name + ".part")
    with path.open("rb") as src, gzip.open(partial, "wb") as dst:
        shutil.copyfileobj(src, dst)
    partial.replace(target)
    path.unlink()
    return target
