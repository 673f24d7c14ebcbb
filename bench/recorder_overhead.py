"""Recorder overhead on the card path: what the daemon's reader thread pays per card to record it.

Prints one JSON object. Per card the reader calls the input listener (the
card) and the rx listener (its bytes); with the recorder attached those
calls only queue a small message, and a writer thread does the disk work. The
baseline is the same two calls to listeners that do nothing, so
``extra_us_per_card`` is the recorder's cost on the hot path, to set against
the milliseconds a card takes to cross a 9600-baud line.

    python bench/recorder_overhead.py [--cards 50000]
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path

from scannerd.core.house import HouseRules
from scannerd.core.inputs import CardDrawn, LinkChanged
from scannerd.recording.recorder import Recorder
from scannerd.recording.settings import RecordSettings

FRAME = b" [Game]<Card:9H> \r\n"


def feed(on_input, on_rx, cards: int) -> float:
    card = CardDrawn(1.0, "9H")
    t0 = time.perf_counter()
    for i in range(cards):
        on_input(card)
        on_rx(1_714_564_800.0 + i, FRAME)
    return time.perf_counter() - t0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cards", type=int, default=50_000)
    args = parser.parse_args()
    baseline = min(feed(lambda inp: None, lambda ts, data: None, args.cards) for _ in range(3))
    runs = []
    with tempfile.TemporaryDirectory() as tmp:
        for i in range(3):
            settings = RecordSettings(dir=Path(tmp) / str(i), compress=False)
            rec = Recorder(settings, table_id="bench", driver="beetek", rules=HouseRules())
            rec.start(1_714_564_800.0)
            rec.on_input(LinkChanged(1_714_564_800.0, True))  # this thread plays the reader
            runs.append(feed(rec.on_input, rec.on_rx, args.cards))
            rec.stop(timeout=60)
            lost = rec.health().dropped
    recorded = min(runs)
    print(
        json.dumps(
            {
                "cards": args.cards,
                "baseline_us_per_card": round(baseline / args.cards * 1e6, 3),
                "recorded_us_per_card": round(recorded / args.cards * 1e6, 3),
                "extra_us_per_card": round((recorded - baseline) / args.cards * 1e6, 3),
                "ratio": round(recorded / baseline, 1),
                "lines_lost": lost,
            }
        )
    )


if __name__ == "__main__":
    main()
