"""The replay and recorder benchmarks run to the end; their figures are for people to read, not asserted."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).parents[2]


def bench(script: str, *args: str) -> dict:
    proc = subprocess.run(
        [sys.executable, str(ROOT / "bench" / script), *args],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=ROOT,
    )
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout.strip().splitlines()[-1])


@pytest.mark.timeout(300)
def test_a_full_shoe_replays_to_the_end() -> None:
    report = bench("replay_speed.py", "--repeat", "1")
    assert report["cards"] > 300 and report["messages"] > report["cards"]
    assert report["replay_s"] > 0 and report["baseline_s"] > 0


@pytest.mark.timeout(300)
def test_the_recorder_overhead_bench_loses_no_line() -> None:
    report = bench("recorder_overhead.py", "--cards", "2000")
    assert report["lines_lost"] == 0 and report["recorded_us_per_card"] > 0


@pytest.mark.timeout(300)
def test_the_parallel_replay_bench_replays_the_same_cards_on_the_process_pool() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "bench.parallel_replay", "--files", "2", "--shoes", "1", "--repeat", "1",
         "--no-dask"],
        capture_output=True,
        text=True,
        timeout=280,
        cwd=ROOT,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout.strip().splitlines()[-1])
    assert report["cards"] > 300 and report["workers"] >= 1
    assert set(report["speedup"]) == {"workers"}  # the Dask executor is tested in test_replay_many
    assert report["target_speedup"] == round(0.8 * report["workers"], 2)
