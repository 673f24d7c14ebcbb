"""A directory replayed in parallel prints, byte for byte, what replaying its files one by one prints.

Real ``scannerd replay DIR`` processes, a real process pool, and a real Dask
cluster (``LocalCluster`` with worker processes) where Dask is installed.
The generated directory has several tables, and files whose name order is
not their table order, so the defined order (by table, then by file name) is
seen, and files of very different sizes, so the workers finish out of order.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from scannerd.recording.format import RecordingReader, recordings_under
from scannerd.recording.replay_many import (
    IN_FLIGHT,
    FileReplay,
    each_file,
    executor_for,
    replay_file,
    replay_many,
)
from tests.sessions import DIR, golden_path, recordings, render

pytestmark = pytest.mark.timeout(300)


def replay_cli(*args: str | Path) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [sys.executable, "-m", "scannerd", "replay", *map(str, args)], capture_output=True, timeout=240
    )


def defined_order(paths: list[Path]) -> list[Path]:
    def key(path: Path) -> tuple[str, str]:
        with RecordingReader(path) as reader:
            return reader.header.table_id, path.name

    return sorted(paths, key=key)


def sequential_jsonl(paths: list[Path]) -> bytes:
    """Each file replayed alone, as ``scannerd replay --fast --emit jsonl FILE`` prints it, one by one."""
    return "".join(render(path) for path in defined_order(paths)).encode()


@pytest.fixture(scope="module")
def tables(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Three tables' recordings from the simulator: one table's long day, short shoes, a framed shoe."""
    root = tmp_path_factory.mktemp("tables")
    made = [
        # (file name, table, driver, shoes, seed): names that do not sort in table order.
        ("a-evening.jsonl.gz", "T3", "beetek", 1, 3),
        ("b-day.jsonl.gz", "T1", "beetek", 3, 1),
        ("T2-20240501T120000Z.jsonl", "T2", "framed", 1, 2),
        ("T2-20240501T120000Z_01.jsonl.gz", "T2", "linecode", 1, 4),
        ("T2-20240501T180000Z.jsonl.gz", "T2", "beetek", 1, 5),
    ]
    for name, table, driver, shoes, seed in made:
        cmd = ["record", "--from-sim", "--driver", driver, "--shoes", str(shoes), "--seed", str(seed)]
        cmd += ["--table-id", table, "--start", "2024-05-01T12:00:00Z", "--error-rate", "0.1"]
        subprocess.run([sys.executable, "-m", "scannerd", *cmd, str(root / name)], check=True, timeout=240)
    (root / "notes.txt").write_text("not a recording: left alone\n")
    return root


def test_the_golden_sessions_replayed_in_parallel_equal_their_golden_files() -> None:
    expected = "".join(golden_path(p).read_text() for p in defined_order(recordings())).encode()
    done = replay_cli("--fast", "--emit", "jsonl", "--workers", "2", DIR)
    assert done.returncode == 0, done.stderr.decode()
    assert done.stdout == expected


def test_several_tables_in_parallel_equal_a_sequential_run_in_table_then_name_order(tables: Path) -> None:
    paths = recordings_under([tables])
    assert [p.name for p in defined_order(paths)] == [
        "b-day.jsonl.gz",  # T1
        "T2-20240501T120000Z.jsonl",  # T2, in the order the recorder began them
        "T2-20240501T120000Z_01.jsonl.gz",
        "T2-20240501T180000Z.jsonl.gz",
        "a-evening.jsonl.gz",  # T3
    ]
    expected = sequential_jsonl(paths)
    for workers in ("2", "5"):
        done = replay_cli("--emit", "jsonl", "--workers", workers, tables)
        assert done.returncode == 0, done.stderr.decode()
        assert done.stdout == expected, f"{workers} workers"


def test_a_directory_summary_is_each_files_summary_in_order(tables: Path) -> None:
    expected = b"".join(replay_cli(path).stdout for path in defined_order(recordings_under([tables])))
    done = replay_cli(tables)
    assert done.returncode == 0, done.stderr.decode()
    assert done.stdout == expected
    assert done.stdout.count(b"hands ") == 5


def test_one_worker_in_process_equals_the_pool(tables: Path) -> None:
    from concurrent.futures import ProcessPoolExecutor

    paths = recordings_under([tables])
    with ProcessPoolExecutor(2) as pool:
        assert list(replay_many(paths, pool)) == list(replay_many(paths))


def test_a_bad_file_is_named_once_and_the_others_still_replay(tables: Path, tmp_path: Path) -> None:
    for path in recordings_under([tables]):
        shutil.copy(path, tmp_path / path.name)
    (tmp_path / "T0-copied-badly.jsonl").write_bytes(b"\x00\x00 not a recording\n")
    cut = tmp_path / "T2-20240501T120000Z.jsonl"  # the recorder stopped mid-line: a note, not a failure
    cut.write_bytes(cut.read_bytes()[:-7])
    done = replay_cli("--fast", "--emit", "jsonl", "--workers", "2", tmp_path)
    assert done.returncode == 2
    errors = done.stderr.decode().splitlines()
    assert len([e for e in errors if "T0-copied-badly.jsonl" in e]) == 1, errors
    assert any("cut-off line" in e and cut.name in e for e in errors), errors
    assert "Traceback" not in done.stderr.decode()
    good = [p for p in recordings_under([tmp_path]) if not p.name.startswith("T0")]
    assert done.stdout == sequential_jsonl(good)


def test_a_directory_is_refused_for_a_broker_and_an_empty_one_is_named(tmp_path: Path) -> None:
    done = replay_cli("--emit", "mqtt", DIR)
    assert done.returncode == 2 and b"--emit mqtt publishes one recording" in done.stderr
    done = replay_cli(tmp_path)
    assert (
        done.returncode == 2
        and done.stderr.decode().strip()
        == f"replay: {tmp_path}: no recordings (.jsonl, .jsonl.gz) in this directory"
    )


def test_a_file_that_cannot_be_read_is_a_failed_result_not_an_exception(tmp_path: Path) -> None:
    result = replay_file(tmp_path / "gone.jsonl")
    assert result.failed and result.text == "" and "gone.jsonl" in result.notes[0]


def test_on_a_dask_cluster_the_output_is_the_sequential_one(tables: Path, dask_scheduler: str) -> None:
    done = replay_cli("--fast", "--emit", "jsonl", "--cluster", dask_scheduler, tables)
    assert done.returncode == 0, done.stderr.decode()
    assert done.stdout == sequential_jsonl(recordings_under([tables]))


def test_a_mistyped_scheduler_address_is_one_line(tables: Path) -> None:
    # A port with nothing behind it gives the same line after Dask's 10 s of retrying.
    pytest.importorskip("distributed")
    done = replay_cli("--cluster", "tpc://127.0.0.1:8786", tables)
    assert done.returncode == 2, done.stderr.decode()
    lines = done.stderr.decode().splitlines()
    assert len(lines) == 1 and lines[0].startswith("replay: no Dask scheduler at tpc://127.0.0.1:8786"), lines


def test_a_worker_killed_mid_replay_fails_its_files_and_nothing_else_breaks(tables: Path) -> None:
    """The kernel's OOM killer or an operator's kill takes a pool process while it replays."""
    import os
    import signal
    import threading
    from concurrent.futures import ProcessPoolExecutor

    paths = recordings_under([tables])
    made, _ = executor_for(None, 2, len(paths))  # the pool replay itself makes
    assert isinstance(made, ProcessPoolExecutor)
    with made as pool:
        list(pool.map(abs, [1, 2]))  # both processes up
        victim = next(iter(pool._processes))
        threading.Timer(0.05, os.kill, (victim, signal.SIGKILL)).start()
        results = list(replay_many(paths, pool))
    assert [r.path for r in results] == defined_order(paths)
    failed = [r for r in results if r.failed]
    assert failed, "the kill came after every file was done: make the files longer"
    for r in failed:
        assert r.text == "" and r.notes == (f"{r.path}: not replayed: its worker failed (BrokenProcessPool)",)
    for r in results:
        if not r.failed:
            assert r.text == render(r.path)


class CountingPool(ThreadPoolExecutor):
    """A real pool that remembers how many files it was given that were not yet handed on."""

    def __init__(self) -> None:
        super().__init__(max_workers=4)
        self.out = 0
        self.most_out = 0

    def submit(self, fn, /, *args, **kwargs):  # type: ignore[no-untyped-def]
        self.out += 1
        self.most_out = max(self.most_out, self.out)
        return super().submit(fn, *args, **kwargs)


def test_an_archive_goes_through_a_few_dozen_files_at_a_time_not_all_at_once(tmp_path: Path) -> None:
    """A casino's year is tens of thousands of files: given to the workers all at once, every result
    waits in memory for its turn, and the audit of a year is killed by the kernel for memory."""
    paths = []
    for n in range(3 * IN_FLIGHT):
        path = tmp_path / f"f{n:04d}.jsonl"
        path.write_text("not a recording\n")
        paths.append(path)
    with CountingPool() as pool:
        results = each_file(paths, replay_file, FileReplay, pool)
        for result in results:
            pool.out -= 1
            assert result.failed
    assert pool.most_out <= IN_FLIGHT + 1
    assert [r.path for r in replay_many(paths, None)] == sorted(paths)
