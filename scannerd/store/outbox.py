"""The durable outbox: events wait here, on disk, until the broker has acknowledged them.

Events and what produced them are written in one SQLite transaction, so
after a crash at any moment the restored state matches exactly the events
that are on disk: none missing, none twice. What produced them is either the
whole state after them (a snapshot: validator and driver dedup state), which
replaces the last one and trims the journal, or a journal row: the inputs
the table judged to make them and a digest of the events (``scannerd.store.journal``
decides which, and replays the journal on a start). A row leaves only on the
broker's PUBACK (``remove``).

Two steps of durability, so the fsync is not on a card's way to the broker.
``write`` commits (SQLite WAL, ``synchronous=NORMAL``): from then on the
batch survives a killed process, so it may be published. ``sync`` then
fsyncs the WAL, after which it survives a power cut too, so a device may be
told its card is stored. ``put`` is both. A power cut between the two can
lose a batch that was already published; the next start says so
(``power_lost``) and the daemon moves ``seq`` past anything that batch
could have used.

Disk budget policy. ``max_bytes`` bounds the topic + payload bytes of waiting
events. Past ``warn_fraction`` of it the level is ``warn``; when a batch no
longer fits (or the disk itself is full) the batch is *held in memory, in
order*, the level is ``full`` and ``put`` returns False. Nothing is dropped:
held batches move to disk, oldest first and together with their state, as
soon as acknowledged rows make room. The state on disk never runs ahead of
the events on disk. Held batches are lost if the process dies, which is why
the level is reported long before (``on_level``) and why the caller learns
from ``put`` that a batch is not yet durable.

Disk space. The file grows with a backlog (a broker away for hours) and,
once every waiting row has gone out, gives the freed pages back to the disk
(SQLite's incremental vacuum) instead of keeping its high-water size.

A disk the outbox itself filled. Even forgetting a row writes pages (to the
WAL), so on a full disk the acknowledgements that would make room could not
be recorded, and the backlog would never drain. Two things keep that path
open. The WAL is checkpointed early (``WAL_PAGES``), so it stays small and
is rewritten in place rather than grown. And a reserve file beside the
outbox (``<name>.reserve``, ``RESERVE_BYTES``) is given up the moment a
delete finds the disk full; it is made again once the outbox has emptied
and given its pages back. Should a delete fail all the same, the rows are
remembered as acknowledged (never sent again) and deleted at the next chance.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import sqlite3
import threading
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from scannerd.contract.topics import Message
from scannerd.store.outbox_errors import open_error
from scannerd.store.outbox_settings import OutboxSettings

Level = Literal["ok", "warn", "full"]

RECLAIM_PAGES = 256
"""Free pages (4 KiB each) worth giving back to the disk once the outbox is empty: 1 MiB."""
RECLAIM_STEP = 1024
"""Pages given back per acknowledgement (4 MiB): a card waiting for the lock meanwhile waits for one step,
not for a whole backlog (``python -m bench.latency_stages`` shows what the store costs a card)."""
_BACKLOG_BYTES = RECLAIM_PAGES * 4096 // 2
"""Waiting rows of fewer bytes than this cannot have filled RECLAIM_PAGES pages (appended rows fill a
page well over half), so draining them can leave no free pages worth asking SQLite about."""
_DELETE = "DELETE FROM messages WHERE id = ? RETURNING size"
_INCREMENTAL = 2  # PRAGMA auto_vacuum's number for INCREMENTAL
WAL_PAGES = 256
"""Checkpoint the WAL at this many pages (1 MiB; SQLite's default is 1000): a full disk then holds the
rows in the database file, where deletes free pages, and the WAL's space is reused, not grown."""
RESERVE_BYTES = 2 * 1024 * 1024
"""Room kept back for deleting acknowledged rows on a disk the outbox filled: more than the WAL needs."""

_SCHEMA = """
CREATE TABLE IF NOT EXISTS messages (
    id INTEGER PRIMARY KEY,  -- given by the outbox, always increasing (no AUTOINCREMENT bookkeeping)
    seq INTEGER NOT NULL,
    topic TEXT NOT NULL,
    payload BLOB NOT NULL,
    qos INTEGER NOT NULL,
    retain INTEGER NOT NULL,
    size INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS journal (
    id INTEGER PRIMARY KEY,  -- in the order stored; emptied by every snapshot
    last_seq INTEGER NOT NULL,  -- the newest seq stored by then
    entry TEXT NOT NULL,  -- what the caller journals (scannerd.store.journal: the inputs judged)
    digest BLOB NOT NULL  -- of the events stored with it (``digest``)
);
"""


@dataclass(frozen=True, slots=True)
class Stored:
    """A waiting message and its outbox row id (what ``remove`` takes)."""

    id: int
    message: Message


@dataclass(frozen=True, slots=True)
class JournalRow:
    """A journal entry as stored after the snapshot, and the digest of the events stored with it."""

    id: int
    entry: str
    digest: bytes


def digest(messages: Iterable[Message]) -> bytes:
    """Of a batch's seqs, topics and payloads: the same bytes give the same digest, other bytes another."""
    h = hashlib.blake2b(digest_size=16)
    for m in messages:
        h.update(b"%d %d %d %d %d " % (m.seq, len(m.topic), len(m.payload), m.qos, m.retain))
        h.update(m.topic.encode())
        h.update(m.payload)
    return h.digest()


@dataclass(frozen=True, slots=True)
class Written:
    """What one ``write`` put on disk: the rows, in order, and the newest row before them."""

    after_id: int  # a sender that has sent up to this row may send ``rows`` next
    rows: list[Stored]  # held batches that now fitted, then this one (empty if still held)
    held: bool  # something, this batch or an older one, is still held in memory


@dataclass(frozen=True, slots=True)
class OutboxHealth:
    pending: int  # messages waiting, on disk and held in memory
    held: int  # of which held in memory (not durable)
    bytes: int  # topic + payload bytes on disk
    max_bytes: int
    level: Level


@dataclass(slots=True)
class _Batch:
    messages: list[Message]
    state: Any
    size: int
    journal: str | None = None


UNKNOWN_BOOT = "unknown"


def _boot_id() -> str:
    """The kernel's id of this boot: it changes only when the machine restarts.

    Unreadable where /proc/sys is hidden (systemd's ``ProcSubset=pid``, which
    the shipped units therefore leave out).
    """
    try:
        with open("/proc/sys/kernel/random/boot_id") as f:
            return f.read().strip()
    except OSError:
        return UNKNOWN_BOOT


def _size(m: Message) -> int:
    return len(m.topic.encode()) + len(m.payload)


class Outbox:
    """Safe to use from several threads; one SQLite connection guarded by a lock."""

    def __init__(
        self,
        path: str | Path,
        max_bytes: int = OutboxSettings.model_fields["max_bytes"].default,
        warn_fraction: float = OutboxSettings.model_fields["warn_fraction"].default,
        on_level: Callable[[Level, OutboxHealth], None] | None = None,
    ) -> None:
        self.path = Path(path)
        self.max_bytes = max_bytes
        self.warn_bytes = int(max_bytes * warn_fraction)
        self._on_level = on_level
        self._lock = threading.Lock()
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._db = sqlite3.connect(self.path, check_same_thread=False, isolation_level=None)
        # Pages freed by acknowledged rows can be given back to the disk (``_reclaim``); this takes
        # effect only on a file with no tables yet: older files are converted by ``_convert``.
        self._db.execute("PRAGMA auto_vacuum=INCREMENTAL")
        self._db.execute("PRAGMA journal_mode=WAL")
        # NORMAL: a commit survives a killed process; ``sync`` makes it survive a power cut.
        self._db.execute("PRAGMA synchronous=NORMAL")
        self._db.execute("PRAGMA busy_timeout=5000")
        self._db.execute(f"PRAGMA wal_autocheckpoint={WAL_PAGES}")
        self._db.executescript(_SCHEMA)
        count, total = self._db.execute("SELECT count(*), coalesce(sum(size), 0) FROM messages").fetchone()
        self._count: int = count
        self._bytes: int = total
        batch = json.loads(self._meta("batch") or '{"last_seq": 0, "state": null}')
        journalled = self._db.execute("SELECT coalesce(max(last_seq), 0) FROM journal").fetchone()[0]
        self._last_seq: int = max(batch["last_seq"], journalled)
        self._state_json = json.dumps(batch["state"], separators=(",", ":"))  # kept by batches without one
        self._durable_seq = self._written_seq = self._last_seq
        self._last_id: int = self._db.execute("SELECT coalesce(max(id), 0) FROM messages").fetchone()[0]
        self._held: deque[_Batch] = deque()
        self._level: Level = self._compute_level()
        self._wal_fd: int | None = None
        self._dirty = False  # committed since the last sync
        # Whether free pages may be worth giving back (``_reclaim``): a file opened may carry a past
        # backlog's, and a backlog sets it again. Asking SQLite is one more statement under the lock,
        # which the next card's store waits behind: not worth it for every acknowledgement of a table
        # that merely publishes (``python -m bench.latency_stages`` shows what the store costs a card).
        self._reclaim_due = True
        self._reserve = self.path.with_name(self.path.stem + ".reserve")
        self._undeleted: set[int] = set()  # acknowledged rows a full disk kept us from deleting yet
        self.lost_at_close = 0  # held events that no room could be found for at ``close``
        self._closed = False
        self._convert()
        self._make_reserve()
        self.power_lost = self._mark_open()

    def _convert(self) -> None:
        """Give a file made without incremental vacuum the ability, while it is empty and cheap to rewrite."""
        if self._count or self._db.execute("PRAGMA auto_vacuum").fetchone()[0] == _INCREMENTAL:
            return
        try:
            self._db.execute("VACUUM")  # rewrites the file in the auto_vacuum mode set above
        except sqlite3.OperationalError as exc:  # a full disk must not stop the table starting
            if exc.sqlite_errorname != "SQLITE_FULL":
                raise

    def _mark_open(self) -> bool:
        """Whether the last process using this file died with the machine (not just by itself).

        Only then can the WAL have lost commits that were already published; a
        killed process loses nothing the kernel has. ``close`` marks a clean end.
        """
        boot = _boot_id()
        self.boot_known = boot != UNKNOWN_BOOT
        last_boot = self._meta("boot_id")
        unclean = self._meta("open") == "1"
        # A restart of the machine, or no way to tell one from a crash: assume the worse.
        other_boot = last_boot is not None and (last_boot != boot or boot == UNKNOWN_BOOT)
        # A power loss found by a start that died before the daemon dealt with it is still one.
        lost = self._meta("power_lost") == "1" or (unclean and other_boot)
        try:
            self._commit_meta({"open": "1", "boot_id": boot, "power_lost": "1" if lost else "0"})
        except sqlite3.OperationalError as exc:  # a full disk must not stop the table starting
            if exc.sqlite_errorname != "SQLITE_FULL":
                raise
            return lost
        self.sync()
        return lost

    def power_loss_handled(self) -> None:
        """The daemon has stored what it does after a power loss (seq moved on, the round void)."""
        with self._lock, contextlib.suppress(sqlite3.Error):
            self._commit_meta({"power_lost": "0"})
        self.sync()

    @classmethod
    def from_settings(
        cls, settings: OutboxSettings, on_level: Callable[[Level, OutboxHealth], None] | None = None
    ) -> Outbox:
        """The daemon's outbox; a file it cannot use is an OSError naming it (``outbox_errors``)."""
        try:
            return cls(settings.path, settings.max_bytes, settings.warn_fraction, on_level)
        except sqlite3.Error as exc:
            raise open_error(settings.path, exc) from None

    # ------------------------------------------------------------------ writing

    def put(self, messages: Iterable[Message], state: Any = None, journal: str | None = None) -> bool:
        """``write`` then ``sync``: True when the batch is on disk for good, False when held."""
        written = self.write(messages, state, journal)
        self.sync()
        return not written.held

    def write(self, messages: Iterable[Message], state: Any = None, journal: str | None = None) -> Written:
        """Commit messages and, unless None, the JSON-ready ``state`` or a ``journal`` entry: one transaction.

        A ``state`` is a snapshot: it replaces the last one and empties the
        journal, which it covers. A ``journal`` entry is kept, with the digest
        of ``messages``, until the next snapshot (``journal``).

        The batch is held in memory instead when the budget or the disk is
        exhausted (see the module docstring); ``Written.held`` says so. Raises
        ValueError when seq does not strictly increase: that is a bug upstream
        that consumers must never see. Any other error (an unusable database)
        propagates, and the batch stays held for the next attempt.
        """
        batch = list(messages)
        with self._lock:
            seq = self._last_seq
            for m in batch:
                if m.seq <= seq:
                    raise ValueError(f"outbox seq must increase: {m.seq} after {seq}")
                seq = m.seq
            self._last_seq = seq
            after_id = self._last_id
            self._held.append(_Batch(batch, state, sum(_size(m) for m in batch), journal))
            rows = self._flush_held()
            held = bool(self._held)
        self._report_level()
        return Written(after_id, rows, held)

    def retry(self) -> Written:
        """Move held batches to disk if they now fit, adding none: what a tick does while full.

        Writing an empty batch instead would hold one more each second for as long as the disk
        stays full: memory that grows with the outage, for rows that say nothing.
        """
        with self._lock:
            after_id = self._last_id
            rows = self._flush_held()
            held = bool(self._held)
        self._report_level()
        return Written(after_id, rows, held)

    def sync(self) -> None:
        """fsync what was committed since the last call: it now survives a power cut."""
        with self._lock:
            if not self._dirty:
                return
            fd = self._wal()
            if fd is not None:
                os.fsync(fd)
            self._dirty = False
            self._durable_seq = self._written_seq

    def _wal(self) -> int | None:
        """The WAL's file descriptor; fsync of any descriptor of a file flushes all of it.

        SQLite keeps the same WAL file for as long as a connection is open (a
        checkpoint rewrites it from the start, it does not replace it), so one
        descriptor serves until ``close``.
        """
        if self._wal_fd is None:
            try:
                self._wal_fd = os.open(f"{self.path}-wal", os.O_RDONLY)
            except FileNotFoundError:
                return None
            dir_fd = os.open(self.path.parent, os.O_RDONLY)  # the WAL's name must survive too
            try:
                os.fsync(dir_fd)
            finally:
                os.close(dir_fd)
        return self._wal_fd

    def remove(self, ids: Iterable[int]) -> None:
        """Forget acknowledged rows; held batches move to disk if they now fit."""
        wanted = [*self._undeleted, *ids]
        if not wanted:
            return
        with self._lock:
            if not self._delete(wanted):
                self._undeleted.update(wanted)  # acknowledged all the same: never sent again
                return
            self._undeleted.clear()
            flushed = self._flush_held()
            if not self._count and self._reclaim_due:
                self._reclaim()
        if flushed:
            self.sync()  # the sender reads them back to publish: make them as safe as a put's
        self._report_level()

    def _delete(self, ids: list[int]) -> bool:
        """Delete rows; False when the disk is full even after giving up the reserve. Caller holds the lock"""
        for attempt in range(2):
            try:
                with self._transaction():
                    freed = n = 0
                    for i in ids:
                        hit = self._db.execute(_DELETE, (i,)).fetchone()
                        if hit is not None:
                            freed += hit[0]
                            n += 1
            except sqlite3.OperationalError as exc:
                if exc.sqlite_errorname != "SQLITE_FULL":
                    raise
                if attempt or not self._give_up_reserve():
                    return False
                continue
            self._dirty = True
            self._count -= n
            self._bytes -= freed
            return True
        return False

    def _make_reserve(self) -> None:
        """Set aside RESERVE_BYTES of disk for deletes, if the disk has them; else try again later."""
        try:
            if self._reserve.stat().st_size >= RESERVE_BYTES:
                return
        except FileNotFoundError:
            pass
        try:
            with open(self._reserve, "wb") as f:
                f.write(bytes(RESERVE_BYTES))  # written, not sparse: the blocks must really be ours
                f.flush()
                os.fsync(f.fileno())
        except OSError:
            with contextlib.suppress(OSError):
                self._reserve.unlink()

    def _give_up_reserve(self) -> bool:
        try:
            self._reserve.unlink()
        except FileNotFoundError:
            return False
        return True

    def _reclaim(self) -> None:
        """Give the disk back the pages a backlog left free, once it has all gone out.

        Only when the outbox is empty, so a table that merely publishes never
        pays for it, and the file does not keep its high-water size after a
        long broker outage; a step at a time (``RECLAIM_STEP``), since the next
        card waits for the lock meanwhile, and a long backlog's pages given back
        at once would hold it for as long as the disk takes to rewrite them.
        Caller holds the lock.
        """
        if self._db.execute("PRAGMA freelist_count").fetchone()[0] < RECLAIM_PAGES:
            self._reclaim_due = False
            self._make_reserve()  # the disk has the backlog's room back: set some aside again
            return
        # Through executescript: execute() steps a statement that returns nothing only once, which
        # frees a single page; this runs it to the end.
        try:
            self._db.executescript(f"PRAGMA incremental_vacuum({RECLAIM_STEP});")
        except sqlite3.OperationalError as exc:
            # Even giving pages back writes a few to the WAL; on a disk the backlog filled that can
            # fail. Nothing is lost by waiting: the next acknowledgement that empties the outbox retries.
            self._rollback()
            if exc.sqlite_errorname != "SQLITE_FULL":
                raise
            return
        self._dirty = True

    def _flush_held(self, over_budget: bool = False) -> list[Stored]:
        """Move held batches to disk, oldest first, while they fit; their rows. Caller holds the lock."""
        rows: list[Stored] = []
        while self._held:
            batch = self._held[0]
            fits = over_budget or self._count == 0 or self._bytes + batch.size <= self.max_bytes
            if not fits:
                break
            ids = self._write(batch)
            if ids is None:
                break
            rows += (Stored(i, m) for i, m in zip(ids, batch.messages, strict=True))
            self._held.popleft()
        return rows

    def _write(self, batch: _Batch) -> list[int] | None:
        """The new rows' ids, or None when the disk is full."""
        try:
            with self._transaction():
                ids = list(range(self._last_id + 1, self._last_id + 1 + len(batch.messages)))
                self._db.executemany(
                    "INSERT INTO messages (id, seq, topic, payload, qos, retain, size) "
                    "VALUES (?, ?, ?, ?, ?, ?, ?)",
                    [
                        (i, m.seq, m.topic, m.payload, m.qos, int(m.retain), _size(m))
                        for i, m in zip(ids, batch.messages, strict=True)
                    ],
                )
                last_seq = batch.messages[-1].seq if batch.messages else self._written_seq
                state_json = self._state_json
                if batch.state is None and batch.journal is not None:
                    self._db.execute(
                        "INSERT INTO journal (last_seq, entry, digest) VALUES (?, ?, ?)",
                        (last_seq, batch.journal, digest(batch.messages)),
                    )
                else:
                    if batch.state is not None:
                        state_json = json.dumps(batch.state, separators=(",", ":"))
                        self._db.execute("DELETE FROM journal")  # the snapshot covers it
                    # One row for both: each row a commit touches is another page written to the WAL.
                    self._set_meta("batch", f'{{"last_seq":{last_seq},"state":{state_json}}}')
        except sqlite3.OperationalError as exc:
            if exc.sqlite_errorname != "SQLITE_FULL":
                raise
            return None
        self._dirty = True
        self._count += len(batch.messages)
        self._bytes += batch.size
        if self._bytes >= _BACKLOG_BYTES:
            self._reclaim_due = True
        self._state_json = state_json
        if ids:
            self._last_id = ids[-1]
            self._written_seq = last_seq
        return ids

    def _rollback(self) -> None:
        # SQLite may already have rolled back on its own (e.g. after SQLITE_FULL).
        if self._db.in_transaction:
            self._db.execute("ROLLBACK")

    def _commit_meta(self, values: dict[str, str]) -> None:
        """Set meta keys in a transaction of their own. Caller holds the lock, or is still constructing."""
        with self._transaction():
            for key, value in values.items():
                self._set_meta(key, value)
        self._dirty = True

    @contextlib.contextmanager
    def _transaction(self) -> Iterator[None]:
        """One write transaction: committed whole, or rolled back on any error. Caller holds the lock."""
        self._db.execute("BEGIN IMMEDIATE")
        try:
            yield
            self._db.execute("COMMIT")
        except BaseException:
            self._rollback()
            raise

    def _set_meta(self, key: str, value: str) -> None:
        self._db.execute(
            "INSERT INTO meta (key, value) VALUES (?, ?) "
            "ON CONFLICT(key) DO UPDATE SET value = excluded.value",
            (key, value),
        )

    def _meta(self, key: str) -> str | None:
        row = self._db.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return None if row is None else row[0]

    # ------------------------------------------------------------------ reading

    def state(self) -> Any:
        """The newest snapshot on disk: what a restart restores before it replays the ``journal``."""
        with self._lock:
            raw = self._meta("batch")
        return None if raw is None else json.loads(raw)["state"]

    def journal(self) -> list[JournalRow]:
        """The journal entries stored since the newest snapshot, oldest first."""
        with self._lock:
            rows = self._db.execute("SELECT id, entry, digest FROM journal ORDER BY id").fetchall()
        return [JournalRow(i, entry, bytes(d)) for i, entry, d in rows]

    def pending(self, limit: int = 100, after_id: int = 0) -> list[Stored]:
        """Waiting messages on disk in the order they were put (seq order), after row ``after_id``."""
        with self._lock:
            rows = self._db.execute(
                "SELECT id, seq, topic, payload, qos, retain FROM messages WHERE id > ? ORDER BY id LIMIT ?",
                (after_id, limit + len(self._undeleted)),
            ).fetchall()
            gone = self._undeleted
            rows = [r for r in rows if r[0] not in gone][:limit] if gone else rows
        return [Stored(r[0], Message(r[1], r[2], bytes(r[3]), r[4], bool(r[5]))) for r in rows]

    def oldest(self) -> Message | None:
        """The oldest waiting message, on disk or else held in memory; None when none waits, or once
        closed (what waits is on disk for the next start; health is still asked of a stopped table)."""
        if self._closed:
            return None
        rows = self.pending(limit=1)
        if rows:
            return rows[0].message
        with self._lock:
            return self._held[0].messages[0] if self._held and self._held[0].messages else None

    @property
    def last_seq(self) -> int:
        """Highest seq ever put (held or on disk)."""
        return self._last_seq

    @property
    def durable_seq(self) -> int:
        """Highest seq synced to disk: what a driver may acknowledge to its device."""
        return self._durable_seq

    def health(self) -> OutboxHealth:
        with self._lock:
            return self._health()

    def _health(self) -> OutboxHealth:
        held = sum(len(b.messages) for b in self._held)
        return OutboxHealth(self._count + held, held, self._bytes, self.max_bytes, self._compute_level())

    def _compute_level(self) -> Level:
        if self._held:
            return "full"
        return "warn" if self._bytes >= self.warn_bytes else "ok"

    def _report_level(self) -> None:
        with self._lock:
            health = self._health()
            changed = health.level != self._level
            self._level = health.level
        if changed and self._on_level is not None:
            self._on_level(health.level, health)

    def close(self, state: Any = None) -> None:
        """A clean end: the next start knows no published batch can be missing.

        Held batches would die with the process: they go to disk now, over the
        budget and into the reserve if need be, since a shoe that cannot repeat
        its cards has no other copy of them. What still does not fit is counted.
        ``state``, unless None, is a snapshot stored after them, so the next
        start has no journal to judge. A second call does nothing.
        """
        if self._closed:
            return
        self._closed = True
        with self._lock:
            if state is not None:
                self._held.append(_Batch([], state, 0))
            if self._held:
                self._flush_held(over_budget=True)
            if self._held and self._give_up_reserve():
                self._flush_held(over_budget=True)
            self.lost_at_close = sum(len(b.messages) for b in self._held)
        # On a full disk the mark cannot be written, and the next start treats this end as unclean.
        with self._lock, contextlib.suppress(sqlite3.Error):
            self._commit_meta({"open": "0"})
        self.sync()
        with self._lock:
            if self._wal_fd is not None:
                os.close(self._wal_fd)
                self._wal_fd = None
            self._db.close()

    def __enter__(self) -> Outbox:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
