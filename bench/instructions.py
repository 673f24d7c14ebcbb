"""Instructions a card: the day's replay, the validator and the reading floor, counted, not timed.

Prints one JSON object. On a shared machine whose load moves a timing by a
fifth within a minute, a cut of a few percent cannot be told from the noise;
the instructions a run executes can, and do not depend on the load. Each
stage runs once in a child process under Valgrind's cachegrind (instruction
counts only, no cache simulation), and again without its work (the same
imports, the same day and inputs loaded): the difference is the stage's own
count. The stages are those of ``bench.throughput`` over the same simulated
day:

- ``reading``: the reading floor, the file gunzipped, each line's JSON
  parsed, each read's hex made bytes;
- ``validator``: the validator alone over the inputs the replay gives it,
  each event encoded as sent;
- ``pipeline``: the replay in this process, every message built and made the
  line ``replay --emit jsonl`` prints.

``ratio_to_reading`` is each stage's count against the floor's: the goal of
``replay --fast`` at most 2x the floor, in work rather than in seconds. It is
not the timed ratio: an instruction of a dict lookup and one of a memory copy
take different times. Counts vary by a few hundred a card between runs (hash
seeds), so compare figures that differ by more. ``build`` says which build
ran (``scannerd.runtime.build``). Valgrind must be installed (Debian:
``apt-get install valgrind``).

    python -m bench.instructions [--shoes 20] [--out docs/performance]
"""

from __future__ import annotations

import argparse
import pickle
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

from bench.support import machine, report, work_dir
from bench.throughput import inputs_and_bytes, make_day, pipeline_seconds, reading_seconds, validator_seconds
from scannerd.core.inputs import CardDrawn
from scannerd.runtime import build

STAGES = ("reading", "validator", "pipeline")
_COUNT = re.compile(r"I\s+refs:\s+([\d,]+)")


def child(stage: str, day: Path, inputs_path: Path, work: bool) -> None:
    """One stage's run under Valgrind: everything loaded, and the work itself only with ``work``."""
    inputs, rules = pickle.loads(inputs_path.read_bytes())  # the parent's own file, written just now
    if not work:
        return
    if stage == "reading":
        reading_seconds(day)
    elif stage == "validator":
        validator_seconds(inputs, rules)
    else:
        pipeline_seconds(day)


def counted(stage: str, day: Path, inputs_path: Path, work: bool) -> int:
    """Instructions the child executes, start to end."""
    cmd = ["valgrind", "--tool=cachegrind", "--cache-sim=no", "--cachegrind-out-file=/dev/null"]
    cmd += [sys.executable, "-m", "bench.instructions", "--child", stage, "--day", str(day)]
    cmd += ["--inputs", str(inputs_path), *(["--work"] if work else [])]
    done = subprocess.run(cmd, capture_output=True, text=True, check=True)
    found = _COUNT.search(done.stderr)
    if found is None:
        raise SystemExit(f"instructions: no count in valgrind's report for {stage}: {done.stderr[-300:]}")
    return int(found.group(1).replace(",", ""))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shoes", type=int, default=20)
    parser.add_argument("--out", type=Path, help="directory for instructions.json")
    parser.add_argument("--child", choices=STAGES, help=argparse.SUPPRESS)
    parser.add_argument("--day", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--inputs", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--work", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args.child, args.day, args.inputs, args.work)
        return
    if shutil.which("valgrind") is None:
        raise SystemExit("instructions: valgrind is not installed (Debian: apt-get install valgrind)")

    root = work_dir("instructions")
    day = make_day(root, args.shoes)
    inputs, _, header = inputs_and_bytes(day)
    cards = sum(isinstance(i, CardDrawn) for i in inputs)
    inputs_path = root / "inputs.pickle"
    inputs_path.write_bytes(pickle.dumps((inputs, header.rules)))
    per_card: dict[str, int] = {}
    for stage in STAGES:
        work = counted(stage, day, inputs_path, True) - counted(stage, day, inputs_path, False)
        per_card[stage] = round(work / cards)
    result: dict[str, Any] = {
        "benchmark": "instructions",
        "build": build.running(),
        "machine": machine(),
        "shoes": args.shoes,
        "cards": cards,
        "validator_inputs": len(inputs),
        "instructions_per_card": per_card,
        "ratio_to_reading": {
            stage: round(per_card[stage] / per_card["reading"], 2) for stage in STAGES if stage != "reading"
        },
    }
    report(result, args.out, "instructions")
    shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
