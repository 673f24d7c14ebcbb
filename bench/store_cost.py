"""What a store costs a card: a journal row against a snapshot per store, and what a start then replays.

Prints one JSON object. Shuffled 8-deck shoes go through the pure ``Table``
one card a store, into a real outbox on disk (commit and fsync, the rows
then acknowledged as the broker would), in two ways in the same run:

- ``snapshot_per_store``: the whole saved state with every store, as the
  daemon stored before the journal: the baseline;
- ``journal``: the daemon's way now: a journal row a store, the whole state
  at a new shoe and every ``SNAPSHOT_EVERY`` inputs (``scannerd.store.journal``).

It also times a start on the longest journal the schedule leaves
(``SNAPSHOT_EVERY - 1`` inputs after the snapshot): what ``restore`` costs.
The figures are the time from the card judged to the store synced; the
ratio of the two ways is the figure to judge.

    python -m bench.store_cost [--shoes 6] [--repeat 3] [--out docs/performance]
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import time
from pathlib import Path
from typing import Any

from bench.support import machine, one_shoe, report, summary_ms, work_dir
from scannerd.contract.topics import Topics
from scannerd.core.house import HouseRules
from scannerd.core.inputs import CardDrawn, Command, ValidatorInput
from scannerd.core.table import SavedState, Table
from scannerd.store.journal import SNAPSHOT_EVERY, Schedule, encode, restore
from scannerd.store.outbox import Outbox

RULES = HouseRules(round_control="auto", burn="none", cut_card_remaining=14)
TOPICS = Topics("casino", "BENCH")


def _table(saved: SavedState | None) -> Table:
    return Table("BENCH", RULES, driver="framed", saved=saved)


def _run(root: Path, shoes: list[list[str]], journal: bool) -> dict[str, Any]:
    """One way of storing over every shoe: each store's time, and the bytes it wrote beside the events."""
    box = Outbox(root / "outbox.sqlite3")
    table = _table(None)
    schedule = Schedule()
    ts, n = 1.7e9, 0
    costs: list[float] = []
    extra_bytes = 0
    for cards in shoes:
        inputs: list[ValidatorInput] = [Command(ts, "new_shoe", {})]
        inputs += [CardDrawn(ts + 2.5 * (i + 1), card) for i, card in enumerate(cards)]
        ts += 2.5 * (len(cards) + 2)
        for inp in inputs:
            events = table.judge(inp).events
            started = time.perf_counter()
            n += 1
            device = {"boot": 1, "ack": n}  # a framed shoe's part, as the daemon stores it
            messages = TOPICS.messages(events)
            if not journal or schedule.snapshot_now(1, table.validator.shoe):
                state = table.saved_state(device).to_dict()
                extra_bytes += len(json.dumps(state, separators=(",", ":")))
                written = box.write(messages, state)
            else:
                entry = encode([inp], device)
                extra_bytes += len(entry)
                written = box.write(messages, None, entry)
            box.sync()
            costs.append(time.perf_counter() - started)
            box.remove([row.id for row in written.rows])
    box.close()
    return {"stores": len(costs), "store": summary_ms(costs), "bytes_per_store": extra_bytes // len(costs)}


def _longest_restart(root: Path, cards: list[str]) -> dict[str, Any]:
    """A start on a snapshot and ``SNAPSHOT_EVERY - 1`` journal rows after it."""
    box = Outbox(root / "restart.sqlite3")
    table = _table(None)
    shoe = table.judge(Command(1.7e9, "new_shoe", {}))
    box.put(TOPICS.messages(shoe.events), table.saved_state().to_dict())
    for i, card in enumerate(cards[: SNAPSHOT_EVERY - 1]):
        inp = CardDrawn(1.7e9 + 2.5 * (i + 1), card)
        box.put(TOPICS.messages(table.judge(inp).events), None, encode([inp], None))
    started = time.perf_counter()
    restored = restore(box, _table, TOPICS)
    took = time.perf_counter() - started
    box.close()
    assert restored.broken is None and restored.saved == table.saved_state()
    return {"journal_rows": restored.replayed, "restore_ms": round(took * 1e3, 2)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shoes", type=int, default=6, help="8-deck shoes stored each way")
    parser.add_argument("--repeat", type=int, default=3, help="runs of each way, in turn; the best is kept")
    parser.add_argument("--out", type=Path, help="directory for store_cost.json")
    args = parser.parse_args()
    rng = random.Random(11)
    shoes = [one_shoe(rng) for _ in range(args.shoes)]
    root = work_dir("store-cost")
    try:
        runs: dict[str, list[dict[str, Any]]] = {"snapshot_per_store": [], "journal": []}
        for i in range(args.repeat):
            for name in runs:
                path = root / f"{name}-{i}"
                path.mkdir()
                runs[name].append(_run(path, shoes, journal=name == "journal"))
        best = {name: min(rs, key=lambda r: r["store"]["mean_ms"]) for name, rs in runs.items()}
        restart = _longest_restart(root, shoes[0])
    finally:
        shutil.rmtree(root, ignore_errors=True)
    base, new = best["snapshot_per_store"]["store"], best["journal"]["store"]
    report(
        {
            "benchmark": "store_cost",
            "machine": machine(),
            "settings": {"shoes": args.shoes, "repeat": args.repeat, "snapshot_every": SNAPSHOT_EVERY},
            **best,
            "ratio_to_snapshot_per_store": {
                key: round(new[f"{key}_ms"] / base[f"{key}_ms"], 2) for key in ("p50", "p99", "mean")
            },
            "longest_restart": restart,
        },
        args.out,
        "store_cost",
    )


if __name__ == "__main__":
    main()
