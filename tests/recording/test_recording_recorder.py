"""The live recorder: listeners in, files out, in the validator's order, whatever the disk does."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
import threading
from pathlib import Path
from typing import Any

from scannerd.core.house import HouseRules
from scannerd.core.inputs import CardDrawn, Command, LinkChanged
from scannerd.core.table import SavedState
from scannerd.recording.anchors import SealedFile
from scannerd.recording.format import CmdLine, LinkLine, RecordingReader, RxLine
from scannerd.recording.recorder import OnSealed, Recorder
from scannerd.recording.settings import RecordSettings
from scannerd.recording.verify import read_chained
from tests.support.broker import wait_until

T0 = 1_714_564_800.0 + 0.123456  # 2024-05-01 12:00:00.123456 UTC


def make(tmp_path: Path, state=None, on_sealed: OnSealed | None = None, **settings: Any) -> Recorder:
    return Recorder(
        RecordSettings(dir=tmp_path / "rec", **settings),
        table_id="T1",
        driver="linecode",
        rules=HouseRules(burn="none"),
        driver_options={"table": "letter-rank"},
        state=state,
        on_sealed=on_sealed,
    )


def read(path: Path) -> tuple[Any, list[Any]]:
    with RecordingReader(path) as r:
        return r.header, list(r.lines())


def in_thread(fn, *args) -> None:
    t = threading.Thread(target=fn, args=args)
    t.start()
    t.join(5)


def test_a_session_is_written_compressed_and_reads_back(tmp_path: Path) -> None:
    rec = make(tmp_path)
    rec.start(T0)
    rec.on_input(LinkChanged(T0 + 0.5, True, "linecode on /dev/shoe-1"))
    in_thread(rec.on_input, Command(T0 + 1, "betting_open", {"round_id": "R1"}))
    rec.on_input(CardDrawn(T0 + 2, "AS"))
    rec.on_rx(T0 + 2, b"A01\r\n")
    rec.stop()
    assert [p.name for p in rec.files] == ["T1-20240501T120000Z.jsonl.gz"]
    assert not list((tmp_path / "rec").glob("*.jsonl"))
    header, lines = read(rec.files[0])
    assert (header.table_id, header.driver, header.driver_options) == (
        "T1",
        "linecode",
        {"table": "letter-rank"},
    )
    assert header.rules == HouseRules(burn="none") and header.scannerd
    assert [line.model_copy(update={"t": 0}) for line in lines] == [
        LinkLine(t=0, state="up", detail="linecode on /dev/shoe-1"),
        CmdLine(t=0, name="betting_open", args={"round_id": "R1"}),
        RxLine(t=0, hex=b"A01\r\n".hex()),
    ]
    # Exactly the stamps the table gave, so replayed events carry the live ts.
    assert [header.start_ts + line.t for line in lines] == [T0 + 0.5, T0 + 1, T0 + 2]
    assert rec.health().lines == 3 and rec.health().errors == 0


def shoe_state(shoe_id: str, cards_dealt: int = 0) -> SavedState:
    return SavedState({"shoe": {"shoe_id": shoe_id, "cards_dealt": cards_dealt, "hands_started": 0}})


def test_one_file_per_shoe_each_beginning_with_the_tables_state(tmp_path: Path) -> None:
    state = {"now": shoe_state("S1", 40)}
    rec = make(tmp_path, state=lambda: state["now"], rotate="shoe")
    rec.start(T0)
    rec.on_rx(T0 + 1, b"A01\r\n")
    state["now"] = shoe_state("S2")
    rec.on_input(Command(T0 + 2, "new_shoe", {"shoe_id": "S2"}))
    rec.on_rx(T0 + 3, b"A02\r\n")
    state["now"] = shoe_state("S2", 9)
    rec.on_input(Command(T0 + 4, "new_shoe", {"shoe_id": "S3"}))  # refused: S2 has cards dealt
    rec.stop()
    assert [p.name for p in rec.files] == [
        "T1-20240501T120000Z-S1.jsonl.gz",
        "T1-20240501T120002Z-S2.jsonl.gz",
    ]
    first, first_lines = read(rec.files[0])
    second, second_lines = read(rec.files[1])
    assert first.state == shoe_state("S1", 40).to_dict() and second.state == shoe_state("S2").to_dict()
    # The command that started S2 belongs to the file whose replay publishes its events.
    assert [line.event for line in first_lines] == ["rx", "cmd"]
    assert [line.event for line in second_lines] == ["rx", "cmd"]
    assert second.start_ts + second_lines[0].t == T0 + 3


def test_one_file_per_utc_day(tmp_path: Path) -> None:
    rec = make(tmp_path, rotate="day")
    rec.start(T0)
    in_thread(rec.on_input, Command(T0 + 3600, "betting_open", {}))
    in_thread(rec.on_input, Command(T0 + 86_400, "betting_close", {}))  # the next day
    rec.stop()
    assert [p.name for p in rec.files] == ["T1-20240501T120000Z.jsonl.gz", "T1-20240502T120000Z.jsonl.gz"]
    # A command is written before the rotation it causes: the new file's state already includes it.
    assert [[line.name for line in read(p)[1]] for p in rec.files] == [["betting_open", "betting_close"], []]


def test_uncompressed_files_left_by_a_crash_are_compressed_at_start(tmp_path: Path) -> None:
    (tmp_path / "rec").mkdir()
    (tmp_path / "rec" / "T1-20240430T080000Z.jsonl").write_text("left over\n")
    rec = make(tmp_path)
    rec.start(T0)
    rec.stop()
    assert sorted(p.name for p in (tmp_path / "rec").iterdir()) == [
        "T1-20240430T080000Z.jsonl.gz",
        "T1-20240501T120000Z.jsonl.gz",
    ]


def test_file_names_sort_in_the_order_they_were_begun_whatever_the_clock_did(tmp_path: Path) -> None:
    """A directory replays in name order: a clock stepped back, or two starts in one second, keep it."""
    rec = make(tmp_path)
    rec.start(T0)
    rec.stop()
    again = make(tmp_path)  # the daemon restarted within the same second
    again.start(T0 + 0.5)
    again.stop()
    stepped_back = make(tmp_path)  # and then started under a clock an hour behind
    stepped_back.start(T0 - 3600)
    stepped_back.stop()
    names = [p.name for r in (rec, again, stepped_back) for p in r.files]
    assert names == sorted(names), names
    assert names == [
        "T1-20240501T120000Z.jsonl.gz",
        "T1-20240501T120000Z_01.jsonl.gz",
        "T1-20240501T120000Z_02.jsonl.gz",
    ]
    assert read(stepped_back.files[0])[0].start_ts == int(T0 - 3600)  # the header keeps the real start


def test_without_compression_files_stay_plain(tmp_path: Path) -> None:
    rec = make(tmp_path, compress=False)
    rec.start(T0)
    rec.stop()
    assert [p.name for p in rec.files] == ["T1-20240501T120000Z.jsonl"]


def test_a_directory_that_cannot_be_made_is_reported_and_recording_resumes_at_the_next_shoe(tmp_path) -> None:
    (tmp_path / "rec").write_text("a file where the directory should be")
    state = {"now": shoe_state("S1", 5)}
    rec = make(tmp_path, state=lambda: state["now"])
    rec.start(T0)
    rec.on_rx(T0 + 1, b"A01\r\n")  # nowhere to go: dropped, never raised
    wait_until(lambda: rec.errors == 1, 10, "the error")
    (tmp_path / "rec").unlink()
    rec.on_rx(T0 + 2, b"A02\r\n")  # still no file: a file never starts mid-shoe without its state
    state["now"] = shoe_state("S2")
    rec.on_input(Command(T0 + 3, "new_shoe", {"shoe_id": "S2"}))
    rec.on_rx(T0 + 4, b"A03\r\n")
    rec.stop()
    health = rec.health()
    assert health.errors == 1 and "rec" in (health.last_error or "") and health.dropped == 3
    assert [p.name for p in rec.files] == ["T1-20240501T120003Z-S2.jsonl.gz"]
    assert [line.data for line in read(rec.files[0])[1] if isinstance(line, RxLine)] == [b"A03\r\n"]


def test_a_full_disk_ends_the_file_at_the_last_good_line_and_the_daemon_carries_on(tmp_path: Path) -> None:
    """A real write failure (EFBIG under a file size limit, in a child process): logged and counted;
    the file ends whole; the next shoe starts a new one."""
    script = textwrap.dedent(
        f"""
        import json, resource, signal, sys
        from pathlib import Path
        sys.path.insert(0, {str(Path(__file__).parents[2])!r})
        from tests.recording.test_recording_recorder import make, shoe_state, T0
        from scannerd.core.inputs import Command

        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        state = {{"now": shoe_state("S1", 1)}}
        rec = make(Path({str(tmp_path)!r}), state=lambda: state["now"], compress=False)
        rec.start(T0)
        resource.setrlimit(resource.RLIMIT_FSIZE, (4096, resource.RLIM_INFINITY))
        for i in range(100):
            rec.on_rx(T0 + 1 + i, b"A01\\r\\n" * 10)
        import time
        deadline = time.monotonic() + 10
        while not rec.errors and time.monotonic() < deadline:
            time.sleep(0.01)
        resource.setrlimit(resource.RLIMIT_FSIZE, (resource.RLIM_INFINITY, resource.RLIM_INFINITY))
        state["now"] = shoe_state("S2")
        rec.on_input(Command(T0 + 200, "new_shoe", {{"shoe_id": "S2"}}))
        rec.on_rx(T0 + 201, b"A02\\r\\n")
        rec.stop()
        print(json.dumps({{"health": rec.health().model_dump(), "files": [str(p) for p in rec.files]}}))
        """
    )
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout.splitlines()[-1])
    assert report["health"]["errors"] >= 1 and "File too large" in report["health"]["last_error"]
    first, second = (Path(p) for p in report["files"])
    with RecordingReader(first) as r:  # the line cut by the failed write is seen as the end
        assert 0 < len(list(r.lines())) < 100
        assert r.truncated
    assert [line.data for line in read(second)[1] if isinstance(line, RxLine)] == [b"A02\r\n"]


def test_a_file_whose_seal_cannot_be_written_is_ended_on_disk_and_anchored_when_the_next_file_begins(
    tmp_path: Path,
) -> None:
    """The disk refuses the seal itself (EFBIG under a file size limit set at the file's size, in a child
    process): the file ends at its last line on disk, the next file goes on from there, and that file's
    beginning hands the ended file's anchor on, as the chain took it on."""
    script = textwrap.dedent(
        f"""
        import json, resource, signal, sys
        from pathlib import Path
        sys.path.insert(0, {str(Path(__file__).parents[2])!r})
        from tests.recording.test_recording_recorder import make, shoe_state, T0
        from tests.support.broker import wait_until
        from scannerd.core.inputs import Command

        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        sealed, state = [], {{"now": shoe_state("S1", 1)}}
        rec = make(Path({str(tmp_path)!r}), lambda: state["now"], on_sealed=sealed.append, compress=False)
        rec.start(T0)
        for i in range(20):
            rec.on_rx(T0 + 1 + i, b"A01\\r\\n" * 10)
        wait_until(lambda: rec.path and rec.path.read_bytes().count(b"\\n") == 21, 10, "the lines on disk")
        resource.setrlimit(resource.RLIMIT_FSIZE, (rec.path.stat().st_size, resource.RLIM_INFINITY))
        state["now"] = shoe_state("S2")
        rec.on_input(Command(T0 + 100, "new_shoe", {{"shoe_id": "S2"}}))
        rec.on_rx(T0 + 101, b"A02\\r\\n")
        rec.stop()
        handed = [[s.file, s.lines, s.digest] for s in sealed]
        print(json.dumps({{"errors": rec.errors, "sealed": handed, "files": [str(p) for p in rec.files]}}))
        """
    )
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout.splitlines()[-1])
    assert report["errors"] >= 1
    ended, after = (Path(p) for p in report["files"])
    on_disk = read_chained(ended)
    assert on_disk.lines == 21 and not on_disk.sealed  # the header and the 20 reads: no command, no seal
    assert [SealedFile(*s) for s in report["sealed"]] == [SealedFile.of(on_disk)]
    link = read_chained(after).header.chain
    assert link is not None and (link.lines, link.prev) == (21, on_disk.last.hex())


def test_a_message_the_writer_has_no_case_for_ends_the_file_loudly_and_recording_goes_on(tmp_path) -> None:
    """A kind put on the queue that the writer was never taught: an error and a whole file, not a lost thread.

    The writer matches every kind of message; this one reaches its exhaustiveness guard, as a kind added
    to the queue without a case would.
    """
    state = {"now": shoe_state("S1", 5)}
    rec = make(tmp_path, state=lambda: state["now"])
    rec.start(T0)
    rec.on_rx(T0 + 1, b"A01\r\n")
    rec._put(CardDrawn(T0 + 2, "AS"))  # type: ignore[arg-type]  # an input, but no kind of line
    wait_until(lambda: rec.errors == 1, 10, "the error")
    rec.on_rx(T0 + 3, b"A02\r\n")  # the file ended at the last good line: dropped, as is the command
    state["now"] = shoe_state("S2")
    rec.on_input(Command(T0 + 4, "new_shoe", {"shoe_id": "S2"}))
    rec.on_rx(T0 + 5, b"A03\r\n")
    assert rec.alive
    rec.stop()
    health = rec.health()
    assert health.errors == 1 and "CardDrawn" in (health.last_error or "") and health.dropped == 2
    first, second = (read(path)[1] for path in rec.files)
    assert [line.data for line in first if isinstance(line, RxLine)] == [b"A01\r\n"]
    assert [line.data for line in second if isinstance(line, RxLine)] == [b"A03\r\n"]
