"""The consumer's high-water marks: per table, the highest ``seq`` it has processed, in SQLite.

A mark is only worth something if it is never ahead of, and never behind,
what the consumer did with the events. So the caller's handler runs inside
the transaction that moves the mark: whatever it writes through the
connection it is handed commits together with the mark, or not at all. The
PUBACK that lets the broker forget the event goes only after that commit.

Several worker processes on one host may share one file: ``BEGIN
IMMEDIATE`` serialises them, so two workers never judge the same table's
mark at once.
"""

from __future__ import annotations

import sqlite3
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

BUSY_TIMEOUT_S = 30.0
"""How long a worker waits for another that holds the write lock (a handler that is slow)."""


class Marks:
    """The marks in ``path`` (``":memory:"`` for a consumer that needs nothing to survive it)."""

    def __init__(self, path: Path | str) -> None:
        self.path = str(path)
        self._lock = threading.RLock()
        self._db = sqlite3.connect(
            self.path, timeout=BUSY_TIMEOUT_S, isolation_level=None, check_same_thread=False
        )
        if self.path != ":memory:":
            self._db.execute("PRAGMA journal_mode=WAL")
        # FULL: a mark that a power cut can take back would let an event the caller handled come again.
        self._db.execute("PRAGMA synchronous=FULL")
        self._db.execute(
            "CREATE TABLE IF NOT EXISTS client_marks (table_id TEXT PRIMARY KEY, seq INTEGER NOT NULL)"
        )
        self._db.execute(
            "CREATE TABLE IF NOT EXISTS client_first_seen "
            "(table_id TEXT PRIMARY KEY, seq INTEGER NOT NULL, since REAL NOT NULL)"
        )

    def get(self, table_id: str) -> int | None:
        """The highest seq processed for the table; None for a table never heard from."""
        with self._lock:
            row = self._db.execute("SELECT seq FROM client_marks WHERE table_id = ?", (table_id,)).fetchone()
        return None if row is None else int(row[0])

    def all(self) -> dict[str, int]:
        with self._lock:
            return dict(self._db.execute("SELECT table_id, seq FROM client_marks").fetchall())

    @contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        """A write-locked transaction: committed when the block ends, rolled back if it raises."""
        with self._lock:
            self._db.execute("BEGIN IMMEDIATE")
            try:
                yield self._db
            except BaseException:
                self._db.execute("ROLLBACK")
                raise
            self._db.execute("COMMIT")

    def set(self, db: sqlite3.Connection, table_id: str, seq: int) -> None:
        """Move the table's mark to ``seq``, inside :meth:`transaction`."""
        db.execute(
            "INSERT INTO client_marks (table_id, seq) VALUES (?, ?) "
            "ON CONFLICT (table_id) DO UPDATE SET seq = excluded.seq",
            (table_id, seq),
        )

    def forget(self, db: sqlite3.Connection, table_id: str) -> None:
        """Drop the table's mark, inside :meth:`transaction`: its next event counts as its first."""
        db.execute("DELETE FROM client_marks WHERE table_id = ?", (table_id,))

    def settle_first(self, db: sqlite3.Connection, table_id: str, seq: int, settle_s: float) -> int | None:
        """A table no worker has a mark for: its mark once ``settle_s`` has passed, None until then.

        One consumer gets a table's events in order, so its first is the first. Workers of a
        share group get them in turns: whichever event a worker meets first may not be the
        table's first. So each worker offers what it holds, and once the table has been known
        for ``settle_s`` the lowest offer is taken as the first (the mark is set just below it).
        Inside :meth:`transaction`.
        """
        now = time.time()
        db.execute(
            "INSERT INTO client_first_seen (table_id, seq, since) VALUES (?, ?, ?) "
            "ON CONFLICT (table_id) DO UPDATE SET seq = min(seq, excluded.seq)",
            (table_id, seq, now),
        )
        lowest, since = db.execute(
            "SELECT seq, since FROM client_first_seen WHERE table_id = ?", (table_id,)
        ).fetchone()
        if now - since < settle_s:
            return None
        db.execute("DELETE FROM client_first_seen WHERE table_id = ?", (table_id,))
        self.set(db, table_id, lowest - 1)
        return int(lowest) - 1

    def close(self) -> None:
        with self._lock:
            self._db.close()
