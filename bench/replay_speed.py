"""Replay speed: a full 8-deck shoe through ``scannerd replay --fast``'s pipeline.

Prints one JSON object. ``replay_s`` is the whole replay of the shipped
clean-shoe sample (read, decode, validate, build and serialise every
message as ``--emit jsonl`` prints it); the baseline in the same run is only
reading the file and decoding its bytes with the driver's codec, so the
ratio says what judging and publishing cost on top of merely reading,
whatever the machine's speed today. The target: well under a second.
``build`` says which build ran, compiled or pure (``scannerd.runtime.build``).

    python bench/replay_speed.py [--file samples/clean-shoe.jsonl.gz] [--repeat 3]
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

from drivers.registry import create_driver
from scannerd.recording.format import RecordingReader, RxLine
from scannerd.recording.replay import replay
from scannerd.runtime import build

SAMPLE = Path(__file__).parent.parent / "samples" / "clean-shoe.jsonl.gz"


def run_replay(path: Path) -> tuple[float, int, int]:
    t0 = time.perf_counter()
    messages = list(replay(path))
    for message in messages:
        message.to_json()
    elapsed = time.perf_counter() - t0
    return elapsed, len(messages), sum(m.topic.endswith("/card") for m in messages)


def run_baseline(path: Path) -> float:
    t0 = time.perf_counter()
    with RecordingReader(path) as reader:
        codec = create_driver(reader.header.driver, "bench", **reader.header.driver_options).codec
        for line in reader.lines():
            if isinstance(line, RxLine):
                codec.feed(line.data)
    return time.perf_counter() - t0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--file", type=Path, default=SAMPLE)
    parser.add_argument("--repeat", type=int, default=3, help="best of this many runs of each")
    args = parser.parse_args()
    replays, baselines = [], []
    for _ in range(args.repeat):  # interleaved, so both see the same machine
        replays.append(run_replay(args.file))
        baselines.append(run_baseline(args.file))
    replay_s, messages, cards = min(replays)
    baseline_s = min(baselines)
    print(
        json.dumps(
            {
                "build": build.running(),
                "file": str(args.file),
                "cards": cards,
                "messages": messages,
                "replay_s": round(replay_s, 4),
                "baseline_s": round(baseline_s, 4),
                "ratio": round(replay_s / baseline_s, 1) if baseline_s else None,
            }
        )
    )


if __name__ == "__main__":
    main()
