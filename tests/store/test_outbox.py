import json
import signal
import sqlite3
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from scannerd.contract.topics import Message
from scannerd.store.outbox import RECLAIM_PAGES, RECLAIM_STEP, Outbox


def msgs(first: int, n: int, size: int = 10) -> list[Message]:
    return [Message(seq, "t/T1/card", b"x" * size) for seq in range(first, first + n)]


def seqs(box: Outbox, limit: int = 10_000) -> list[int]:
    return [s.message.seq for s in box.pending(limit)]


def test_events_and_state_survive_reopening(tmp_path: Path) -> None:
    path = tmp_path / "o.sqlite3"
    with Outbox(path) as box:
        batch = [Message(1, "a/T1/card", b'{"seq":1}'), Message(2, "a/T1/shoe", b"{}", retain=True)]
        assert box.put(batch, {"n": 3})
        assert box.put([], {"n": 4})
    with Outbox(path) as box:
        rows = box.pending()
        assert [r.message for r in rows] == [
            Message(1, "a/T1/card", b'{"seq":1}', 1, False),
            Message(2, "a/T1/shoe", b"{}", 1, True),
        ]
        assert box.state() == {"n": 4}
        assert box.last_seq == box.durable_seq == 2


def test_the_database_runs_in_wal_mode(tmp_path: Path) -> None:
    with Outbox(tmp_path / "o.sqlite3"):
        other = sqlite3.connect(tmp_path / "o.sqlite3")
        assert other.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        other.close()


def test_rows_leave_only_when_removed_and_pending_pages_after_a_row(tmp_path: Path) -> None:
    with Outbox(tmp_path / "o.sqlite3") as box:
        box.put(msgs(1, 5))
        first_two = box.pending(2)
        assert [r.message.seq for r in first_two] == [1, 2]
        assert [r.message.seq for r in box.pending(10, after_id=first_two[-1].id)] == [3, 4, 5]
        box.remove([first_two[0].id, first_two[1].id])
        assert seqs(box) == [3, 4, 5]
        assert box.health().pending == 3
        assert box.health().bytes == 3 * (len("t/T1/card") + 10)


def test_seq_going_backwards_is_refused_and_stores_nothing(tmp_path: Path) -> None:
    with Outbox(tmp_path / "o.sqlite3") as box:
        box.put(msgs(1, 3), {"n": 1})
        with pytest.raises(ValueError, match="seq must increase"):
            box.put([Message(4, "t", b""), Message(3, "t", b"")], {"n": 2})
        with pytest.raises(ValueError):
            box.put(msgs(2, 1))
        assert seqs(box) == [1, 2, 3]
        assert box.state() == {"n": 1}


def test_warning_before_the_budget_then_holding_in_memory_without_losing_anything(tmp_path: Path) -> None:
    levels: list[str] = []
    row = len("t/T1/card") + 1000
    path = tmp_path / "o.sqlite3"
    box = Outbox(path, max_bytes=10 * row, warn_fraction=0.5, on_level=lambda lv, _: levels.append(lv))
    with box:
        for seq in range(1, 11):
            assert box.put(msgs(seq, 1, 1000), {"next": seq + 1})
        assert levels == ["warn"]
        assert box.health().level == "warn"
        # The budget is used up: the next batches are held, in order, and the disk state stays behind.
        assert not box.put(msgs(11, 2, 1000), {"next": 13})
        assert not box.put(msgs(13, 1, 1000), {"next": 14})
        h = box.health()
        assert (h.level, h.pending, h.held) == ("full", 13, 3)
        assert levels == ["warn", "full"]
        assert box.state() == {"next": 11}
        assert box.durable_seq == 10 and box.last_seq == 13
        assert seqs(box) == list(range(1, 11))
        # Acknowledging two rows makes room for the first held batch (two events) only.
        ids = [r.id for r in box.pending(2)]
        box.remove(ids)
        assert seqs(box) == list(range(3, 13))
        assert box.state() == {"next": 13}
        assert box.health().held == 1
        box.remove([r.id for r in box.pending(5)])
        assert seqs(box) == list(range(8, 14))
        assert box.state() == {"next": 14}
        assert box.health().held == 0
        assert levels[-1] == "warn"
        box.remove([r.id for r in box.pending(100)])
        assert levels[-1] == "ok"


def test_a_full_disk_holds_events_in_memory_until_there_is_room(tmp_path: Path) -> None:
    with Outbox(tmp_path / "o.sqlite3") as box:
        box.put(msgs(1, 1), {"n": 1})
        pages = box._db.execute("PRAGMA page_count").fetchone()[0]
        box._db.execute(f"PRAGMA max_page_count = {pages}")  # SQLite now answers SQLITE_FULL
        assert not box.put(msgs(2, 50, 2000), {"n": 2})
        assert box.health().level == "full"
        assert seqs(box) == [1]
        assert box.state() == {"n": 1}
        box._db.execute("PRAGMA max_page_count = 1000000")
        box.remove([box.pending(1)[0].id])
        assert seqs(box) == list(range(2, 52))
        assert box.state() == {"n": 2}
        assert box.health().level == "ok"


def test_putting_and_removing_from_different_threads(tmp_path: Path) -> None:
    n = 1500
    removed: list[int] = []
    done = threading.Event()
    errors: list[BaseException] = []

    with Outbox(tmp_path / "o.sqlite3") as box:

        def producer() -> None:
            try:
                for seq in range(1, n + 1, 3):
                    box.put(msgs(seq, 3), {"next": seq + 3})
            except BaseException as exc:
                errors.append(exc)
            finally:
                done.set()

        def consumer() -> None:
            try:
                while not (done.is_set() and box.health().pending == 0):
                    rows = box.pending(7)
                    removed.extend(r.message.seq for r in rows)
                    box.remove(r.id for r in rows)
                    box.health()
            except BaseException as exc:
                errors.append(exc)

        threads = [threading.Thread(target=producer), threading.Thread(target=consumer)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(60)
        assert not errors
        assert removed == list(range(1, n + 1))
        assert box.health().bytes == 0


WRITER = """
import sys
from scannerd.store.outbox import RECLAIM_PAGES, RECLAIM_STEP, Outbox
from scannerd.contract.topics import Message
box = Outbox(sys.argv[1])
seq = box.last_seq
while True:
    batch = [Message(seq + i, "t/T1/card", b'{"card":"AS"}' * 20) for i in (1, 2, 3)]
    seq += 3
    # Committed, not synced: what the publisher sends at once must survive a killed process.
    box.write(batch, {"next_seq": seq + 1, "driver": {"ack": seq}})
    print(seq, flush=True)
    if seq % 30 == 0:
        box.sync()
"""


def test_after_sigkill_state_and_events_agree(tmp_path: Path) -> None:
    path = tmp_path / "o.sqlite3"
    proc = subprocess.Popen([sys.executable, "-c", WRITER, str(path)], stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        for line in proc.stdout:
            if int(line) >= 600:
                break
        proc.send_signal(signal.SIGKILL)  # while it keeps writing
    finally:
        proc.kill()
        proc.wait(10)
    with Outbox(path) as box:
        state = box.state()
        stored = seqs(box)
        last = state["next_seq"] - 1
        assert last >= 600
        assert stored == list(range(1, last + 1))
        assert state["driver"] == {"ack": last}
        assert json.loads(box.pending(1)[0].message.payload[:13]) == {"card": "AS"}


def test_write_commits_and_sync_makes_it_durable(tmp_path: Path) -> None:
    with Outbox(tmp_path / "o.sqlite3") as box:
        written = box.write(msgs(1, 2), {"n": 1})
        assert [r.message.seq for r in written.rows] == [1, 2] and not written.held
        assert written.after_id == 0
        assert box.durable_seq == 0  # committed, not yet synced
        box.sync()
        assert box.durable_seq == 2
        nxt = box.write(msgs(3, 1))
        assert nxt.after_id == written.rows[-1].id  # a sender that sent up to there may send these next


def _reopen(path: Path, *, boot_id: str | None = None) -> bool:
    """Open the outbox again as a restarted daemon would; ``boot_id``: as if the last ran on another boot."""
    if boot_id is not None:
        db = sqlite3.connect(path)
        db.execute("UPDATE meta SET value = ? WHERE key = 'boot_id'", (boot_id,))
        db.commit()
        db.close()
    with Outbox(path) as box:
        return box.power_lost


def test_power_lost_only_when_the_machine_restarted_under_an_open_outbox(tmp_path: Path) -> None:
    path = tmp_path / "o.sqlite3"
    with Outbox(path) as box:
        box.put(msgs(1, 1))
        assert not box.power_lost  # a new file
    assert not _reopen(path)  # closed cleanly
    assert not _reopen(path, boot_id="an-earlier-boot")  # closed cleanly before a reboot

    killed = Outbox(path)  # left open: the process died, the machine did not
    killed.put(msgs(2, 1))
    assert not _reopen(path)
    powered_off = Outbox(path)  # left open, and the machine restarted (another boot id)
    assert _reopen(path, boot_id="an-earlier-boot")
    killed.close()
    powered_off.close()


def _pages(path: Path) -> tuple[int, int]:
    """(page_count, freelist_count) as another connection sees the committed file."""
    other = sqlite3.connect(path)
    try:
        pages = other.execute("PRAGMA page_count").fetchone()[0]
        return pages, other.execute("PRAGMA freelist_count").fetchone()[0]
    finally:
        other.close()


def _backlog(box: Outbox, n: int = 2000) -> list[int]:
    """A broker outage's worth of 4 KiB events (8 MB), put as the daemon does, a batch at a time."""
    for first in range(1, n + 1, 50):
        box.put(msgs(first, 50, size=4096), {"seq": first})
    return [r.id for r in box.pending(limit=n)]


def test_the_file_gives_its_space_back_once_a_backlog_has_gone_out(tmp_path: Path) -> None:
    path = tmp_path / "o.sqlite3"
    with Outbox(path, max_bytes=64 * 1024 * 1024) as box:
        ids = _backlog(box)
        peak, _ = _pages(path)
        assert peak > 2000  # 8 MB of 4 KiB pages
        box.remove(ids[:1000])  # acknowledged as the broker takes them back
        assert _pages(path)[1] >= 1000, "nothing is given back while rows still wait"
        box.remove(ids[1000:])
        pages, free = _pages(path)
        assert pages <= peak - RECLAIM_STEP and free > 0, (peak, pages, free)  # one step given back
        # The rest in later steps, one per acknowledgement that leaves the outbox empty.
        for seq in range(3000, 3010):
            box.put(msgs(seq, 1), {"seq": seq})
            box.remove([r.id for r in box.pending()])
        pages, free = _pages(path)
        assert pages < RECLAIM_PAGES + 50 and free < RECLAIM_PAGES, (pages, free)  # less than 1 MiB left
        box.put(msgs(3010, 1), {"seq": 3010})  # and it goes on working
        assert seqs(box) == [3010]
    assert path.stat().st_size < 2 * 1024 * 1024  # from 9 MB
    with Outbox(path) as box:
        assert seqs(box) == [3010] and box.state() == {"seq": 3010}


def test_a_file_made_without_incremental_vacuum_is_converted_once_empty(tmp_path: Path) -> None:
    path = tmp_path / "o.sqlite3"
    with Outbox(path) as box:
        box.put(msgs(1, 2), {"seq": 2})
    old = sqlite3.connect(path, isolation_level=None)
    old.execute("PRAGMA auto_vacuum=NONE")
    old.execute("VACUUM")  # as files were made before the outbox asked for incremental vacuum
    assert old.execute("PRAGMA auto_vacuum").fetchone()[0] == 0
    old.close()

    with Outbox(path) as box:  # rows wait: no rewrite under them, everything as it was
        assert seqs(box) == [1, 2]
        box.remove([r.id for r in box.pending()])
    assert sqlite3.connect(path).execute("PRAGMA auto_vacuum").fetchone()[0] == 0
    with Outbox(path) as box:  # empty: converted at start
        assert box.state() == {"seq": 2} and box.last_seq == 2
    assert sqlite3.connect(path).execute("PRAGMA auto_vacuum").fetchone()[0] == 2
