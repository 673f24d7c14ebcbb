"""Parallel replay: a directory of recordings through ``scannerd replay DIR`` on N workers against one.

Prints one JSON object. The directory is made by the simulator (``scannerd
record --from-sim``, Bee-Tek shoes): ``--files`` recordings of ``--shoes``
shoes each (by default 80 shoes, a day at one table), spread over four
tables. Measured, each as the best of ``--repeat`` runs, interleaved, the
output going to ``/dev/null``:

- ``one_worker``: ``scannerd replay --fast --emit jsonl DIR --workers 1``,
  the baseline of the same run: the files one after the other in the
  command's own process, as a sequential replay does;
- ``workers``: the same with ``--workers N`` (default: every core), a pool of
  N processes;
- ``cpu_s``: the CPU time of the command and its pool, to tell work the
  parallel run added from CPU the shared machine did not give;
- ``machine_speedup``: the same run's ceiling, N equal pieces of pure
  Python work in N processes at once against one after another: what the
  machine gives N processes just now, whatever else shares its cores;
- ``dask`` (when Dask is installed): the same on a local Dask cluster of N
  worker processes (``--cluster``), the cluster started before the clock.

The target is a speed-up of at least 0.8 x N over one worker. The command's
start-up is in every figure and is not shared out, so it bounds the
speed-up as the directory gets smaller.

    python -m bench.parallel_replay [--files 8] [--shoes 10] [--workers N] [--repeat 3] [--out DIR]
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bench.support import machine, report, work_dir
from bench.throughput import best
from scannerd.recording.format import recordings_under
from scannerd.recording.replay_many import default_workers

TARGET_PER_WORKER = 0.8
TABLES = 4


def make_directory(root: Path, files: int, shoes: int) -> Path:
    """``files`` recordings of ``shoes`` shoes each, the tables taking turns, named as the recorder does."""
    directory = root / "recordings"
    directory.mkdir()
    for i in range(files):
        table = f"T{i % TABLES + 1}"
        day = f"2024-05-{i // TABLES + 1:02d}"
        out = directory / f"{table}-{day.replace('-', '')}T120000Z.jsonl.gz"
        cmd = [sys.executable, "-m", "scannerd", "record", "--from-sim", "--driver", "beetek"]
        cmd += ["--shoes", str(shoes), "--seed", str(i + 1), "--table-id", table]
        cmd += ["--start", f"{day}T12:00:00Z"]
        subprocess.run([*cmd, str(out)], check=True, capture_output=True)
    return directory


def cli_seconds(directory: Path, cpu: list[float], *where: str) -> float:
    """The command's wall time; its CPU time, and its pool's, goes to ``cpu`` (a cluster's is not seen)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    with open(os.devnull, "wb") as sink:
        subprocess.run(
            [sys.executable, "-m", "scannerd", "replay", "--fast", "--emit", "jsonl", *where, str(directory)],
            stdout=sink,
            check=True,
        )
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu.append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
    return wall


def spin(loops: int) -> int:
    """Pure Python work, no I/O: what one core does for the machine's own speed-up."""
    total = 0
    for i in range(loops):
        total += i % 7
    return total


def spin_seconds(processes: int, spins: int, loops: int = 3_000_000) -> float:
    """``spins`` equal pieces of pure Python work shared out over ``processes`` processes."""
    from concurrent.futures import ProcessPoolExecutor

    with ProcessPoolExecutor(processes) as pool:
        list(pool.map(spin, [1] * processes))  # the pool started before the clock
        t0 = time.perf_counter()
        list(pool.map(spin, [loops] * spins))
        return time.perf_counter() - t0


def cards_in(directory: Path) -> int:
    from scannerd.recording.replay import replay

    return sum(m.topic.endswith("/card") for path in recordings_under([directory]) for m in replay(path))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=8)
    parser.add_argument("--shoes", type=int, default=10, help="shoes per file")
    parser.add_argument("--workers", type=int, default=default_workers())
    parser.add_argument("--repeat", type=int, default=3, help="best of this many runs of each")
    parser.add_argument("--no-dask", action="store_true", help="leave the Dask cluster out")
    parser.add_argument("--out", type=Path, help="directory for parallel_replay.json")
    args = parser.parse_args()

    at_start = machine()
    root = work_dir("parallel-replay")
    directory = make_directory(root, args.files, args.shoes)
    n = args.workers
    cpu: dict[str, list[float]] = {"one_worker": [], "workers": []}
    runs: dict[str, Callable[[], float]] = {
        "one_worker": lambda: cli_seconds(directory, cpu["one_worker"], "--workers", "1"),
        "workers": lambda: cli_seconds(directory, cpu["workers"], "--workers", str(n)),
        "spin_one": lambda: spin_seconds(1, n),
        "spin_workers": lambda: spin_seconds(n, n),
    }
    cluster: Any = None
    if not args.no_dask:
        try:
            from distributed import LocalCluster
        except ImportError:
            pass
        else:
            cluster = LocalCluster(n_workers=n, processes=True, threads_per_worker=1, dashboard_address=None)
            runs["dask"] = lambda: cli_seconds(directory, [], "--cluster", cluster.scheduler_address)
    try:
        s = best(args.repeat, runs)
    finally:
        if cluster is not None:
            cluster.close()
    cards = cards_in(directory)
    spin_one, spin_workers = s.pop("spin_one"), s.pop("spin_workers")
    result: dict[str, Any] = {
        "benchmark": "parallel_replay",
        "machine": at_start,
        "files": args.files,
        "shoes_per_file": args.shoes,
        "cards": cards,
        "recording_bytes": sum(p.stat().st_size for p in recordings_under([directory])),
        "workers": n,
        "seconds": {name: round(t, 3) for name, t in s.items()},
        "cards_per_s": {name: round(cards / t) for name, t in s.items()},
        # Where the pool's CPU time is close to one worker's, a speed-up short of N is CPU the
        # machine did not give (other work on the same cores), not work the parallel run added.
        "cpu_s": {name: round(min(t), 3) for name, t in cpu.items()},
        "loadavg_at_end": [round(x, 2) for x in os.getloadavg()],
        "speedup": {name: round(s["one_worker"] / t, 2) for name, t in s.items() if name != "one_worker"},
        "target_speedup": round(TARGET_PER_WORKER * n, 2),
        # What the machine itself gives N processes: N equal pieces of pure Python work on N
        # processes at once against one after another; the most any parallel replay could reach.
        "machine_speedup": round(spin_one / spin_workers, 2),
    }
    report(result, args.out, "parallel_replay")
    shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
