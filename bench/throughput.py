"""Throughput: a day at one table (80 shoes) through ``scannerd replay --fast``, and its parts alone.

Prints one JSON object. The day is made by the simulator (``scannerd record
--from-sim``, a Bee-Tek shoe, a dealer who deals by the rules). Measured,
each as the best of ``--repeat`` runs, interleaved:

- ``cli``: ``scannerd replay --fast DAY > /dev/null``, the command itself;
  ``cards_per_s`` leaves out the interpreter's start-up, measured on a
  recording with no lines (``wall_s`` keeps it);
- ``pipeline``: the same pipeline in this process (read, decode, validate,
  build and serialise every message), as ``replay_speed.py`` does per shoe;
- ``validator``: the validator alone over the inputs the replay gives it
  (cards, commands, and the ticks that can stall a round: the replay steps
  over the others), each event encoded as it is sent (``topics.encode_data``);
- ``decode_only``: the baseline, the Bee-Tek codec over the day's bytes,
  already in memory: the least any replay could do;
- ``reading``: the reading floor, the day's file read as any reader must:
  gunzipped, each line parsed as JSON, each read's hex made bytes.

The targets are 100,000 cards/s end to end, the command at least half as
fast as ``decode_only`` (``cli_speed_vs_decode_only`` >= 0.5), and the command
within twice the reading floor (``ratio_to_reading["cli"]`` <= 2); the ratios
say what each stage costs whatever the machine's speed today. ``build`` says
which build ran, compiled or pure (``scannerd.runtime.build``): the command
runs the same build as this process.

    python -m bench.throughput [--shoes 80] [--repeat 3] [--out docs/performance]
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bench.support import machine, report, work_dir
from drivers.events import DeviceEvent
from drivers.registry import create_driver
from scannerd.contract.topics import encode_data
from scannerd.core.house import HouseRules
from scannerd.core.inputs import Actor, CardDrawn, ValidatorInput
from scannerd.core.table import Outcome, Table
from scannerd.core.validator import CommandRejected, Validator
from scannerd.recording.format import Header, RecordingReader, RxLine
from scannerd.recording.replay import Replayer, replay
from scannerd.runtime import build

TARGET_CARDS_PER_S = 100_000
TARGET_CLI_SPEED_VS_DECODE_ONLY = 0.5
TARGET_CLI_VS_READING = 2.0


def make_day(root: Path, shoes: int) -> Path:
    day = root / "day.jsonl.gz"
    cmd = [sys.executable, "-m", "scannerd", "record", "--from-sim", "--driver", "beetek"]
    subprocess.run([*cmd, "--shoes", str(shoes), "--seed", "1", str(day)], check=True, capture_output=True)
    return day


def header_only(day: Path, root: Path) -> Path:
    """A recording with the same header and no lines: what the CLI costs before any work."""
    empty = root / "empty.jsonl"
    with gzip.open(day, "rt") as f:
        empty.write_text(f.readline())
    return empty


def cli_seconds(path: Path) -> float:
    t0 = time.perf_counter()
    with open(os.devnull, "wb") as sink:
        subprocess.run(
            [sys.executable, "-m", "scannerd", "replay", "--fast", "--emit", "jsonl", str(path)],
            stdout=sink,
            check=True,
        )
    return time.perf_counter() - t0


def pipeline_seconds(path: Path) -> tuple[float, int]:
    t0 = time.perf_counter()
    cards = 0
    for message in replay(path):
        message.to_json()
        cards += message.topic.endswith("/card")
    return time.perf_counter() - t0, cards


class NotedTable:
    """A replay's table that notes every input it judges; what the replay calls, passed on.

    Noted from outside: the table may be compiled (mypyc), and then takes no wrapper of its own.
    """

    def __init__(self, table: Table) -> None:
        self.table = table
        self.inputs: list[ValidatorInput] = []

    def _noted(self, outcome: Outcome) -> Outcome:
        if outcome.judged is not None:
            self.inputs.append(outcome.judged)
        return outcome

    def judge(self, inp: ValidatorInput) -> Outcome:
        return self._noted(self.table.judge(inp))

    def device_event(self, ts: float, event: DeviceEvent) -> Outcome:
        return self._noted(self.table.device_event(ts, event))

    def command(self, name: str, args: dict[str, Any], ts: float, actor: Actor | None = None) -> Outcome:
        return self._noted(self.table.command(name, args, ts, actor))

    def ticks(self, until: float) -> list[Outcome]:
        return [self._noted(outcome) for outcome in self.table.ticks(until)]


def inputs_and_bytes(path: Path) -> tuple[list[ValidatorInput], list[bytes], Header]:
    """Every validator input of the day, as the replay makes them, and the device's bytes."""
    chunks: list[bytes] = []
    with RecordingReader(path) as reader:
        replayer = Replayer(reader.header)
        noted = NotedTable(replayer.table)
        replayer.table = noted  # type: ignore[assignment]
        for line in reader.lines():
            if isinstance(line, RxLine):
                chunks.append(line.data)
            replayer.feed(line)
        return noted.inputs, chunks, reader.header


def validator_seconds(inputs: list[ValidatorInput], rules: HouseRules) -> float:
    validator = Validator("DAY", rules)
    t0 = time.perf_counter()
    for inp in inputs:
        try:
            events = validator.handle(inp)
        except CommandRejected:
            continue
        for event in events:
            encode_data(event)
    return time.perf_counter() - t0


def reading_seconds(path: Path) -> float:
    """The reading floor: gunzip the file, parse each line's JSON, make each read's hex bytes."""
    t0 = time.perf_counter()
    with gzip.open(path, "rb") as f:
        for text in f:
            line = json.loads(text)
            if "hex" in line:
                bytes.fromhex(line["hex"])
    return time.perf_counter() - t0


def decode_seconds(chunks: list[bytes], driver: str) -> float:
    codec = create_driver(driver, "bench").codec
    t0 = time.perf_counter()
    for chunk in chunks:
        codec.feed(chunk)
    return time.perf_counter() - t0


def best(repeat: int, runs: dict[str, Callable[[], float]]) -> dict[str, float]:
    """Best time of each, the runs interleaved so that all see the same machine."""
    times: dict[str, list[float]] = {name: [] for name in runs}
    for _ in range(repeat):
        for name, run in runs.items():
            times[name].append(run())
    return {name: min(t) for name, t in times.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shoes", type=int, default=80)
    parser.add_argument("--repeat", type=int, default=3, help="best of this many runs of each")
    parser.add_argument("--out", type=Path, help="directory for throughput.json")
    args = parser.parse_args()

    root = work_dir("throughput")
    day = make_day(root, args.shoes)
    empty = header_only(day, root)
    inputs, chunks, header = inputs_and_bytes(day)
    cards = sum(isinstance(i, CardDrawn) for i in inputs)
    s = best(
        args.repeat,
        {
            "cli": lambda: cli_seconds(day),
            "cli_startup": lambda: cli_seconds(empty),
            "pipeline": lambda: pipeline_seconds(day)[0],
            "validator": lambda: validator_seconds(inputs, header.rules),
            "decode_only": lambda: decode_seconds(chunks, header.driver),
            "reading": lambda: reading_seconds(day),
        },
    )
    cli_work = s["cli"] - s["cli_startup"]
    result: dict[str, Any] = {
        "benchmark": "throughput",
        "build": build.running(),
        "machine": machine(),
        "shoes": args.shoes,
        "cards": cards,
        "validator_inputs": len(inputs),
        "recording_bytes": day.stat().st_size,
        "cli": {
            "wall_s": round(s["cli"], 3),
            "startup_s": round(s["cli_startup"], 3),
            "cards_per_s": round(cards / cli_work),
        },
        "pipeline": {"seconds": round(s["pipeline"], 3), "cards_per_s": round(cards / s["pipeline"])},
        "validator": {"seconds": round(s["validator"], 3), "cards_per_s": round(cards / s["validator"])},
        "decode_only": {
            "seconds": round(s["decode_only"], 4),
            "cards_per_s": round(cards / s["decode_only"]),
        },
        "reading": {"seconds": round(s["reading"], 4), "cards_per_s": round(cards / s["reading"])},
        "ratio_to_decode_only": {
            "cli": round(cli_work / s["decode_only"], 1),
            "pipeline": round(s["pipeline"] / s["decode_only"], 1),
            "validator": round(s["validator"] / s["decode_only"], 1),
        },
        "ratio_to_reading": {
            "cli": round(cli_work / s["reading"], 1),
            "pipeline": round(s["pipeline"] / s["reading"], 1),
            "validator": round(s["validator"] / s["reading"], 1),
            "decode_only": round(s["decode_only"] / s["reading"], 2),
        },
        "cli_speed_vs_decode_only": round(s["decode_only"] / cli_work, 3),
        "target_cards_per_s": TARGET_CARDS_PER_S,
        "target_cli_speed_vs_decode_only": TARGET_CLI_SPEED_VS_DECODE_ONLY,
        "target_cli_vs_reading": TARGET_CLI_VS_READING,
    }
    report(result, args.out, "throughput")
    shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
