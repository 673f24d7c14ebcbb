"""A game-server worker process built on ``scannerd.client``, for the tests that kill and share it.

    python -m tests.support.client HOST PORT MARKS CLIENT_ID [GROUP]

Its handler writes each event it is given into ``handled`` in the marks
database, through the transaction the client hands it: the row and the mark
commit together, so ``handled`` is exactly what the worker did, whenever it
is killed. It prints ``ready`` once subscribed and runs until SIGTERM.
"""

from __future__ import annotations

import signal
import sqlite3
import sys
import threading
import time
from pathlib import Path

import structlog

from scannerd.client import Gap, TableClient
from scannerd.contract.events import Event

HANDLED = (
    "CREATE TABLE IF NOT EXISTS handled "
    "(n INTEGER PRIMARY KEY, worker TEXT, table_id TEXT, seq INTEGER, kind TEXT)"
)


def handled(marks: Path) -> list[tuple[str, str, int, str]]:
    """(worker, table_id, seq, kind) of every event the workers handled, in the order they did."""
    with sqlite3.connect(marks) as db:
        db.execute(HANDLED)
        return db.execute("SELECT worker, table_id, seq, kind FROM handled ORDER BY n").fetchall()


def main(argv: list[str]) -> int:
    host, port, marks, client_id, *group = argv
    structlog.configure(logger_factory=structlog.PrintLoggerFactory(sys.stderr))  # stdout is for the test
    with sqlite3.connect(marks) as db:
        db.execute(HANDLED)

    def on_event(event: Event, db: sqlite3.Connection) -> None:
        db.execute(
            "INSERT INTO handled (worker, table_id, seq, kind) VALUES (?, ?, ?, ?)",
            (client_id, event.table_id, event.seq, event.kind),
        )
        time.sleep(0.002)  # a handler does some work: it widens the window a kill can land in

    def on_gap(gap: Gap) -> None:
        print(f"gap {gap.table_id} {gap.expected} {gap.received}", flush=True)

    client = TableClient(
        host,
        int(port),
        client_id=client_id,
        marks=marks,
        on_event=on_event,
        on_gap=on_gap,
        share_group=group[0] if group else None,
    )
    done = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: done.set())
    client.start()
    print("ready", flush=True)
    done.wait()
    client.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
