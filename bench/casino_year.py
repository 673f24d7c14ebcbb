"""A casino's year audited: ``scannerd audit`` over 100 tables x 365 days of signed, chained recordings.

Prints one JSON object. The archive is the simulated casino of
``simulators.week`` (a shoe a day at each table, each file spanning the
night until the next day's shoe, a few misdeals a shoe, six lazy shuffles
among them), signed with a key of its own, written on every core at once
(``write_week``'s parts) or taken from ``--archive`` when one was kept.
Measured, each once, the whole command's wall time (and CPU time, which for
the pool and the cluster misses their workers'):

- ``one_worker``: ``scannerd audit --workers 1 --key PUB``: the baseline,
  every file one after the other in the command's own process; its CPU
  seconds per file are the figure per core;
- ``workers``: the same on ``--workers N`` (default: every core);
- ``dask``: the same on a local Dask cluster of N worker processes
  (``--cluster``), the cluster started before the clock;
- ``week_replay``: ``scannerd replay --fast --emit jsonl --workers N`` over
  the casino's first week (every table's first seven files), what an
  investigator replays.

``--days`` scales the year down for a machine that cannot spare the hours
(files are audited one by one, each on its own, so a year's CPU time is the
files' time added up); the JSON says which scale ran and what the year
comes to at the measured rate per file.

    python -m bench.casino_year [--tables 100] [--days 365] [--workers N] [--archive DIR] [--keep]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from functools import partial
from pathlib import Path
from typing import Any

from bench.support import machine, report, work_dir
from scannerd.recording.format import recordings_under
from scannerd.recording.replay_many import default_workers
from scannerd.recording.signing import load_private_key, write_key_pair
from scannerd.runtime import build
from simulators.week import write_week

YEAR_DAYS = 365
WEEK_DAYS = 7
RUNS = ("one_worker", "workers", "dask", "week_replay")


def _write_part(out: str, key: str, tables: int, days: int, parts: int, part: int) -> int:
    key_ = load_private_key(Path(key))
    return len(write_week(Path(out), tables=tables, days=days, key=key_, part=(part, parts)))


def write_archive(archive: Path, tables: int, days: int, workers: int) -> tuple[Path, float]:
    """The casino's files, signed, ``workers`` processes each writing every ``workers``-th table."""
    archive.mkdir(parents=True)
    write_key_pair(archive / "key", archive / "key.pub")
    files = archive / "files"
    t0 = time.perf_counter()
    write = partial(_write_part, str(files), str(archive / "key"), tables, days, workers)
    with ProcessPoolExecutor(workers) as pool:
        shoes = sum(pool.map(write, range(workers)))
    seconds = time.perf_counter() - t0
    if shoes != tables * days:
        raise RuntimeError(f"wrote {shoes} shoes, not {tables * days}")
    return files, seconds


def timed(cmd: list[str], ok: tuple[int, ...] = (0,)) -> dict[str, float]:
    """The command's wall time and CPU time: its own, with a pool's only where the pool's processes are
    its children (not the audit's, started by a fork server, nor a cluster's); and the peak resident
    memory of any command run so far (the kernel keeps only the largest), the first run's its own."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    with open(os.devnull, "wb") as sink:
        done = subprocess.run(cmd, stdout=sink, stderr=subprocess.PIPE, check=False)
    if done.returncode not in ok:
        said = done.stderr.decode(errors="replace")[-2000:]
        raise RuntimeError(f"{cmd[3]} exited {done.returncode}: {said}")
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
    peak_mb = after.ru_maxrss / 1024  # Linux counts it in KiB
    return {"seconds": round(wall, 2), "cpu_s": round(cpu, 2), "peak_rss_mb_so_far": round(peak_mb, 1)}


def audit(files: Path, key: Path, out: Path, *where: str) -> dict[str, float]:
    cmd = [
        sys.executable,
        "-m",
        "scannerd",
        "audit",
        "--key",
        str(key),
        "--out",
        str(out),
        *where,
        str(files),
    ]
    return timed(cmd, ok=(0, 1))  # 1: the audit flagged something (the lazy shuffles), as it should


def first_week(files: Path, into: Path) -> Path:
    """Every table's first ``WEEK_DAYS`` files, linked into one directory: the casino's first week."""
    into.mkdir()
    by_table: dict[str, list[Path]] = {}
    for path in sorted(files.iterdir()):
        by_table.setdefault(path.name.split("-2", 1)[0], []).append(path)
    for paths in by_table.values():
        for path in paths[:WEEK_DAYS]:
            (into / path.name).symlink_to(path)
    return into


def replay_week(files: Path, into: Path, workers: int) -> dict[str, float]:
    """``scannerd replay --fast`` over the casino's first week on ``workers``: what an investigator runs."""
    week = first_week(files, into)
    cmd = [sys.executable, "-m", "scannerd", "replay", "--fast", "--emit", "jsonl", "--workers", str(workers)]
    return timed([*cmd, str(week)])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tables", type=int, default=100)
    parser.add_argument("--days", type=int, default=YEAR_DAYS)
    parser.add_argument("--workers", type=int, default=default_workers())
    parser.add_argument(
        "--archive", type=Path, help="a casino written by an earlier run (--keep): not written again"
    )
    parser.add_argument("--keep", action="store_true", help="keep the casino written and say where")
    parser.add_argument("--no-dask", action="store_true", help="leave the Dask cluster out")
    parser.add_argument(
        "--runs",
        default=",".join(RUNS),
        help="which runs, comma-separated (one_worker is always run: it is the figure per core); "
        "a whole year on every core and on Dask is hours more than the figure needs",
    )
    parser.add_argument("--out", type=Path, help="directory for casino_year.json")
    args = parser.parse_args()
    wanted = set(args.runs.split(",")) | {"one_worker"}
    if wanted - set(RUNS):
        parser.error(
            f"--runs: not a run: {', '.join(sorted(wanted - set(RUNS)))}; the runs: {', '.join(RUNS)}"
        )

    at_start = machine()
    root = work_dir("casino-year")
    archive = args.archive or root / "casino"
    written_s = None
    if args.archive is None:
        _, written_s = write_archive(archive, args.tables, args.days, args.workers)
    files, key = archive / "files", archive / "key.pub"
    n = args.workers
    runs: dict[str, dict[str, float]] = {}
    runs["one_worker"] = audit(files, key, root / "one", "--workers", "1")
    if "workers" in wanted:
        runs["workers"] = audit(files, key, root / "n", "--workers", str(n))
    if "dask" in wanted and not args.no_dask:
        try:
            from distributed import LocalCluster
        except ImportError:
            pass
        else:
            with LocalCluster(
                n_workers=n, processes=True, threads_per_worker=1, dashboard_address=None
            ) as cluster:
                runs["dask"] = audit(files, key, root / "dask", "--cluster", cluster.scheduler_address)
    if "week_replay" in wanted:
        runs["week_replay"] = replay_week(files, root / "week", n)

    totals = json.loads((root / "one" / "report.json").read_text())["totals"]
    paths = recordings_under([files])
    per_file_cpu = runs["one_worker"]["cpu_s"] / len(paths)
    year_files = args.tables * YEAR_DAYS
    result: dict[str, Any] = {
        "benchmark": "casino_year",
        "machine": at_start,
        "build": build.running(),
        "tables": args.tables,
        "days": args.days,
        "files": len(paths),
        "hands": totals["hands"],
        "archive_bytes": sum(p.stat().st_size for p in paths),
        "written_s": None if written_s is None else round(written_s, 1),
        "runs": runs,
        "speedup": {
            name: round(runs["one_worker"]["seconds"] / r["seconds"], 2)
            for name, r in runs.items()
            if name in ("workers", "dask")
        },
        "per_core": {
            "cpu_s_per_file": round(per_file_cpu, 4),
            "hands_per_cpu_s": round(totals["hands"] / runs["one_worker"]["cpu_s"]),
            # A year's files at the rate measured here, on one core: what a casino-year costs.
            "year_core_hours": round(year_files * per_file_cpu / 3600, 2),
        },
        "loadavg_at_end": [round(x, 2) for x in os.getloadavg()],
    }
    report(result, args.out, "casino_year")
    if args.keep and args.archive is None:
        print(f"the casino is kept in {archive}", file=sys.stderr)
        shutil.rmtree(root / "one", ignore_errors=True)
    else:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
