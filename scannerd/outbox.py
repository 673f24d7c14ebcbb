"""The durable outbox: events wait here, on disk, until the broker has acknowledged them.

Events and the state that produced them (validator snapshot, driver dedup
state) are written in one SQLite transaction, so after a crash at any moment
the restored state matches exactly the events that are on disk: none missing,
none twice. A row leaves only on the broker's PUBACK (``remove``).

Disk budget policy. ``max_bytes`` bounds the topic + payload bytes of waiting
events. Past ``warn_fraction`` of it the level is ``warn``; when a batch no
longer fits (or the disk itself is full) the batch is *held in memory, in
order*, the level is ``full`` and ``put`` returns False. Nothing is dropped:
held batches move to disk, oldest first and together with their state, as
soon as acknowledged rows make room. The state on disk never runs ahead of
the events on disk. Held batches are lost if the process dies, which is why
the level is reported long before (``on_level``) and why the caller learns
from ``put`` that a batch is not yet durable.
"""

from __future__ import annotations

import json
import sqlite3
import threading
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from scannerd.mqtt_settings import OutboxSettings
from scannerd.topics import Message

Level = Literal["ok", "warn", "full"]

_SCHEMA = """
CREATE TABLE IF NOT EXISTS messages (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    seq INTEGER NOT NULL,
    topic TEXT NOT NULL,
    payload BLOB NOT NULL,
    qos INTEGER NOT NULL,
    retain INTEGER NOT NULL,
    size INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
"""


@dataclass(frozen=True, slots=True)
class Stored:
    """A waiting message and its outbox row id (what ``remove`` takes)."""

    id: int
    message: Message


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
        self._db.execute("PRAGMA journal_mode=WAL")
        # FULL: a commit survives power loss, not just a killed process.
        self._db.execute("PRAGMA synchronous=FULL")
        self._db.execute("PRAGMA busy_timeout=5000")
        self._db.executescript(_SCHEMA)
        count, total = self._db.execute("SELECT count(*), coalesce(sum(size), 0) FROM messages").fetchone()
        self._count: int = count
        self._bytes: int = total
        self._last_seq = int(self._meta("last_seq") or 0)
        self._durable_seq = self._last_seq
        self._held: deque[_Batch] = deque()
        self._level: Level = self._compute_level()

    @classmethod
    def from_settings(
        cls, settings: OutboxSettings, on_level: Callable[[Level, OutboxHealth], None] | None = None
    ) -> Outbox:
        return cls(settings.path, settings.max_bytes, settings.warn_fraction, on_level)

    # ------------------------------------------------------------------ writing

    def put(self, messages: Iterable[Message], state: Any = None) -> bool:
        """Store messages and, unless None, the JSON-ready ``state`` in one transaction.

        Returns True when both are on disk, False when they are held in memory
        because the budget or the disk is exhausted (see the module docstring).
        Raises ValueError when seq does not strictly increase: that is a bug
        upstream that consumers must never see. Any other error (an unusable
        database) propagates, and the batch stays held for the next attempt.
        """
        batch = list(messages)
        with self._lock:
            seq = self._last_seq
            for m in batch:
                if m.seq <= seq:
                    raise ValueError(f"outbox seq must increase: {m.seq} after {seq}")
                seq = m.seq
            self._last_seq = seq
            self._held.append(_Batch(batch, state, sum(_size(m) for m in batch)))
            self._flush_held()
            durable = not self._held
        self._report_level()
        return durable

    def remove(self, ids: Iterable[int]) -> None:
        """Forget acknowledged rows; held batches move to disk if they now fit."""
        wanted = [(i,) for i in ids]
        if not wanted:
            return
        with self._lock:
            self._db.execute("BEGIN IMMEDIATE")
            try:
                freed = n = 0
                for row in wanted:
                    hit = self._db.execute("DELETE FROM messages WHERE id = ? RETURNING size", row).fetchone()
                    if hit is not None:
                        freed += hit[0]
                        n += 1
                self._db.execute("COMMIT")
            except BaseException:
                self._rollback()
                raise
            self._count -= n
            self._bytes -= freed
            self._flush_held()
        self._report_level()

    def _flush_held(self) -> None:
        """Move held batches to disk, oldest first, while they fit. Caller holds the lock."""
        while self._held:
            batch = self._held[0]
            fits = self._count == 0 or self._bytes + batch.size <= self.max_bytes
            if not fits or not self._write(batch):
                return
            self._held.popleft()

    def _write(self, batch: _Batch) -> bool:
        try:
            self._db.execute("BEGIN IMMEDIATE")
            try:
                self._db.executemany(
                    "INSERT INTO messages (seq, topic, payload, qos, retain, size) VALUES (?, ?, ?, ?, ?, ?)",
                    [(m.seq, m.topic, m.payload, m.qos, int(m.retain), _size(m)) for m in batch.messages],
                )
                if batch.messages:
                    self._set_meta("last_seq", str(batch.messages[-1].seq))
                if batch.state is not None:
                    self._set_meta("state", json.dumps(batch.state, separators=(",", ":")))
                self._db.execute("COMMIT")
            except BaseException:
                self._rollback()
                raise
        except sqlite3.OperationalError as exc:
            if exc.sqlite_errorname != "SQLITE_FULL":
                raise
            return False
        self._count += len(batch.messages)
        self._bytes += batch.size
        if batch.messages:
            self._durable_seq = batch.messages[-1].seq
        return True

    def _rollback(self) -> None:
        # SQLite may already have rolled back on its own (e.g. after SQLITE_FULL).
        if self._db.in_transaction:
            self._db.execute("ROLLBACK")

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
        """The state stored with the newest batch on disk (what to restore after a restart)."""
        with self._lock:
            raw = self._meta("state")
        return None if raw is None else json.loads(raw)

    def pending(self, limit: int = 100, after_id: int = 0) -> list[Stored]:
        """Waiting messages on disk in the order they were put (seq order), after row ``after_id``."""
        with self._lock:
            rows = self._db.execute(
                "SELECT id, seq, topic, payload, qos, retain FROM messages WHERE id > ? ORDER BY id LIMIT ?",
                (after_id, limit),
            ).fetchall()
        return [Stored(r[0], Message(r[1], r[2], bytes(r[3]), r[4], bool(r[5]))) for r in rows]

    @property
    def last_seq(self) -> int:
        """Highest seq ever put (held or on disk)."""
        return self._last_seq

    @property
    def durable_seq(self) -> int:
        """Highest seq known to be on disk: what a driver may acknowledge to its device."""
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

    def close(self) -> None:
        with self._lock:
            self._db.close()

    def __enter__(self) -> Outbox:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
