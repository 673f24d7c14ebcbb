"""The archive's thread: each sealed recording to the bucket, read back and checked, beside the deal.

The deal never waits for it. It takes no lock of the daemon's: the recorder's
seal wakes it (``wake``), and the anchors the table publishes reach it through
a listener that only appends to a deque. Everything else it finds on disk:
the directory is the backlog (``backlog.py``) and the ledger (``ledger.py``)
says what is done, so a storage down for hours, a connection cut halfway or a
process killed mid-upload leaves the files waiting where they were, and it
catches up by itself.

A file counts as archived only once its copy reads back, through the same
reading path as ``scannerd verify`` (its first version, its checksum, its
retention), ending in the digest its anchor names. Before putting a file it
asks the bucket: a copy already there (a put the process was killed after) is
checked, never put again, so every file is archived once. Nothing is put into
a bucket without Object Lock, or whose default retention is shorter than the
house's: that is said in one line, and the files wait.

A local file goes only once archived and checked, ``keep_local_days`` later,
and never the table's newest, which the next start's chain goes on from.
"""

from __future__ import annotations

import hashlib
import io
import threading
import time
from collections import deque
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Literal

import orjson
import structlog

from scannerd.archive.backlog import Backlog, Waiting
from scannerd.archive.bucket import ArchiveError, ArchiveUnfit, Bucket, Credentials, Reach, retain_until
from scannerd.archive.copies import Copies, NotAsAnchored, check
from scannerd.archive.ledger import Archived, Ledger
from scannerd.archive.objects import ArchivedObject
from scannerd.archive.settings import DAY_S, ArchiveSettings
from scannerd.contract.events import AnchorData, EventData
from scannerd.contract.payloads import ArchiveHealth
from scannerd.core.listeners import TableListener
from scannerd.recording.format import RecordingError

log = structlog.get_logger(__name__)

ANCHORS = "anchors"
"""Where a table's anchors lie in the archive, beside its files: ``PREFIX/<table_id>/anchors/<seq>.json``."""

DUTY = 0.02
"""The share of the processor the archive's thread takes while it works through a backlog: each file
costs a few tens of milliseconds of Python (a client's requests, the chain walked twice), and every
one of them is a moment the reader thread could wait for the interpreter. At 2% a card meets it as
rarely as the deal's own other threads make it wait; a day's backlog still goes in a minute or two."""

RESCAN_S = 30.0
"""How often the directory is looked at without a seal to wake the thread: the backlog a start finds,
the local copies whose time is up."""
RETRY_MIN_S = 1.0
RETRY_MAX_S = 15.0
"""A storage that fails is tried again after a second, then twice as long each time up to this: a
storage back after hours is caught up with within seconds, and one that stays down costs a request
every quarter minute."""


State = Literal["shipping", "retrying", "refused"]


class Shipper(TableListener):
    """Ships one table's recordings from ``directory`` to the archive ``settings`` names."""

    def __init__(
        self,
        settings: ArchiveSettings,
        *,
        table_id: str,
        directory: Path,
        compress: bool,
        writing: Callable[[], Path | None],
        credentials: Credentials | None = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        url = settings.archive
        if url is None:
            raise ValueError("archiving needs archive.url")
        self.settings = settings
        self.url = url
        self.table_id = table_id
        self.directory = directory
        self.bucket = Bucket(Reach(settings.endpoint, settings.region), url.bucket, credentials)
        self.backlog = Backlog(directory, table_id, compress)
        self.copies = Copies(self.bucket, settings.retention_days)
        self._writing = writing
        self._clock = clock
        self._ledger: Ledger | None = None  # read on the thread: the directory may appear only later
        self._heard: deque[tuple[int, str]] = deque()  # anchors published: (seq, the event's JSON)
        self._wake = threading.Event()
        self._stopping = threading.Event()
        self._thread: threading.Thread | None = None
        self._fit = False  # the bucket was seen to keep what it is given
        self._refused: dict[str, str] = {}  # files whose copy does not check out: why (until a restart)
        # Figures for health, each replaced whole by the thread.
        self._waiting: list[Waiting] = []
        self.archived = 0
        self.errors = 0
        self.state: State = "shipping"
        self.last_error: str | None = None

    # ------------------------------------------------------------------ the daemon's side

    def start(self) -> None:
        self._thread = threading.Thread(target=self._run, name="archive", daemon=True)
        self._thread.start()

    def stop(self, timeout: float = 2.0) -> None:
        """An upload under way is let go: the next start finds the file waiting, or its copy there."""
        self._stopping.set()
        self._wake.set()
        if self._thread is not None:
            self._thread.join(timeout)

    @property
    def alive(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    def wake(self) -> None:
        """A file was sealed: look now. Any thread; never blocks."""
        self._wake.set()

    def on_events(self, events: Sequence[EventData]) -> None:
        """The anchors the table published go to the archive too; only queued here (the card's path)."""
        for event in events:
            if isinstance(event, AnchorData):
                self._heard.append((event.seq, orjson.dumps(event).decode()))
                self._wake.set()

    def health(self) -> ArchiveHealth:
        waiting = self._waiting
        oldest = min(waiting, key=lambda w: w.since) if waiting else None
        return ArchiveHealth(
            url=str(self.url),
            state=self.state,
            behind=len(waiting),
            oldest=oldest.path.name if oldest else None,
            oldest_age_s=max(0.0, self._clock() - oldest.since) if oldest else None,
            archived=self.archived,
            errors=self.errors,
            last_error=self.last_error,
            alive=self.alive,
        )

    def ship_now(self) -> None:
        """One round on the caller's thread, for ``scannerd archive push`` while no daemon runs; an
        ArchiveError says why it stopped."""
        self._round(paced=False)

    # ------------------------------------------------------------------ the thread

    def _run(self) -> None:
        delay = RETRY_MIN_S
        while not self._stopping.is_set():
            try:
                self._round()
            except ArchiveUnfit as exc:
                self._failed("refused", str(exc), log.error, "archive refused: nothing is put there")
                self._stopping.wait(RETRY_MAX_S)
                continue
            except ArchiveError as exc:
                self._failed("retrying", str(exc), log.warning, "archive unreachable: the files wait")
                self._stopping.wait(delay)
                delay = min(delay * 2, RETRY_MAX_S)
                continue
            except Exception as exc:  # a bug must not end archiving silently
                log.exception("archive failed")
                self._failed("retrying", repr(exc), None, "")
                self._stopping.wait(RETRY_MAX_S)
                continue
            self._reached()
            delay = RETRY_MIN_S
            self._wake.wait(RESCAN_S)
            self._wake.clear()
        self._keep_heard()  # the anchors a stop judged last: the next start puts them

    def _reached(self) -> None:
        """The storage answered: said at once, not only when a round through a backlog ends."""
        if self.state != "shipping":
            log.info("archive reached again", url=str(self.url), behind=len(self._waiting))
        # A copy that does not check out stays the latest error while its file waits.
        self.state = "shipping"
        self.last_error = next(iter(self._refused.values()), None)

    def _keep_heard(self) -> None:
        """The anchors heard so far, into the ledger: from there they survive the process."""
        ledger = self._ledger_now()
        try:
            while ledger is not None and self._heard:
                ledger.anchor_heard(*self._heard[0])
                self._heard.popleft()
        except OSError as exc:
            log.error("anchors not kept for the archive", error=str(exc), waiting=len(self._heard))

    def _failed(self, state: State, text: str, say: Callable[..., object] | None, event: str) -> None:
        """Counted every time, said once per reason: a storage down for hours is one line, not thousands."""
        self.errors += 1
        if say is not None and (text != self.last_error or state != self.state):
            say(event, url=str(self.url), error=text, behind=len(self._waiting))
        self.state, self.last_error = state, text

    def _round(self, paced: bool = True) -> None:
        """The directory looked at; then, the bucket being fit, what is due shipped, the anchors, old copies
        let go."""
        self._keep_heard()
        ledger = self._ledger_now()
        if ledger is None:
            return
        self._waiting = self.backlog.waiting(ledger.archived, self._writing())
        if not self._fit:
            self.bucket.check_lock(self.settings.retention_days)
            self._fit = True
            log.info("archive ready", url=str(self.url), behind=len(self._waiting))
        for waiting in list(self._waiting):
            if waiting.path.name in self._refused or self._stopping.is_set():
                continue
            began = time.thread_time()
            if self._archive(ledger, waiting.path):
                self._waiting = [w for w in self._waiting if w is not waiting]
                self._reached()
            self._rest(began, paced)
        for seq, line in sorted(ledger.anchors.items()):
            began = time.thread_time()
            self._put_anchor(seq, line)
            ledger.anchor_archived(seq)
            self._rest(began, paced)
        self._expire(ledger)

    def _rest(self, began: float, paced: bool) -> None:
        """A rest in proportion to the processor time taken since ``began`` (``time.thread_time()``), once
        what it did is counted: beside the deal the thread shares the interpreter, and a backlog shipped
        flat out would delay its cards. Not ``paced`` (by hand, no table dealing): no rest."""
        if paced:
            self._stopping.wait((time.thread_time() - began) * (1 - DUTY) / DUTY)

    def _ledger_now(self) -> Ledger | None:
        """The ledger, read and made small once the directory exists (it may come with the first file)."""
        if self._ledger is None and self.directory.is_dir():
            ledger = Ledger(self.directory, self.table_id)
            ledger.keep_only({p.name for p in self.backlog.files()})
            self._ledger = ledger
        return self._ledger

    def _archive(self, ledger: Ledger, path: Path) -> bool:
        """``path`` put once the chain links it (unless its copy is there already), read back and checked;
        then it counts."""
        try:
            due = self.backlog.due(path)
        except (OSError, RecordingError):
            return False  # gone meanwhile: the next look says what is there
        if due is None:
            return False  # unsealed, and no file after it yet: the next start links it
        key = self.url.key(self.table_id, due.path.name)
        copy = self.copies.first(key) or self._put(key, due.path)
        try:
            check(copy, due)
        except NotAsAnchored as exc:
            self.errors += 1
            self._refused[due.path.name] = f"{copy}: does not check out, not archived: {exc}"
            log.error("archived copy does not check out: not archived", file=str(copy), why=str(exc))
            return False
        ledger.file_archived(
            Archived(due.path.name, key, copy.version, due.sealed.lines, due.sealed.digest, self._clock())
        )
        self.backlog.forget(due.path.name)
        self.archived += 1
        log.info("archived", file=due.path.name, object=str(copy), version=copy.version)
        return True

    def _put(self, key: str, path: Path) -> ArchivedObject:
        with path.open("rb") as body:
            sha256 = hashlib.file_digest(body, "sha256").digest()
            body.seek(0)
            now = self._clock()
            until = retain_until(now, self.settings.retention_days)
            version = self.bucket.put(key, body, sha256, until, self.settings.mode)
        return self.copies.at(key, version, now, path.stat().st_size)

    def _put_anchor(self, seq: int, line: str) -> None:
        """An anchor the table published, beside the files it names: one locked object each."""
        data = (line + "\n").encode()
        key = self.url.key(self.table_id, ANCHORS, f"{seq:020d}.json")
        if any(v.key == key for v in self.bucket.versions(key)):
            return  # put before a restart, its line in the ledger lost with the process
        until = retain_until(self._clock(), self.settings.retention_days)
        self.bucket.put(key, io.BytesIO(data), hashlib.sha256(data).digest(), until, self.settings.mode)

    def _expire(self, ledger: Ledger) -> None:
        """Local copies archived and checked ``keep_local_days`` ago go; never the table's newest file."""
        files = self.backlog.files()
        newest = files[-1].name if files else None
        cutoff = self._clock() - self.settings.keep_local_days * DAY_S
        for path in files:
            done = ledger.archived.get(path.name)
            if done is None or done.at > cutoff or path.name == newest or path == self._writing():
                continue
            try:
                path.unlink()
            except OSError as exc:
                log.warning("local copy not removed", file=str(path), error=str(exc))
                continue
            log.info("local copy removed: archived and checked", file=path.name, archived_at=done.at)
