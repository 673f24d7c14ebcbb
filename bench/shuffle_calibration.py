"""Calibration of the shuffle check: false alarms on proper shuffles, and the power on lazy ones.

Not a timed benchmark: it measures rates, not the machine. Shoes are dealt by
the rules (simulators/shuffles.py: burn, hands, cut card) and each next shoe
made from the discards as the dealer picks them up, then judged by the same
``scannerd.core.shuffle_check`` the validator calls.

- Null: a table's stream of properly shuffled shoes (``random``: a uniform
  order; ``full``: washing, three riffles and a cut), each compared with the
  four before it, as live. Per comparison it keeps the largest evidence
  reached anywhere in the shoe, so the tail of that distribution is the
  false-alarm rate at any threshold; Ville's inequality bounds it by
  1/threshold, which is what the threshold is set by (docs/shuffle.md).
- Power: for each lazy shuffle, a proper shoe then the lazy one made from its
  discards: how often, and how early in the shoe, the alert is raised.

    python -m bench.shuffle_calibration --out docs/shuffle
"""

from __future__ import annotations

import argparse
import math
import random
import statistics
import time
from collections import Counter
from pathlib import Path
from typing import Any

from bench.support import pyplot, quantiles, report
from scannerd.core.cards import ALL_CARDS
from scannerd.core.shuffle_check import FALSE_ALARM, SHOES_KEPT, THRESHOLD, ShuffleCheck
from simulators.shuffles import deal, discard_pile, next_shoe

LAZY = ("preset", "pile", "cut", "riffle", "riffle-cut", "strip")
LN10 = math.log(10)


def fresh(rng: random.Random) -> list[str]:
    cards = [c for c in ALL_CARDS for _ in range(8)]
    rng.shuffle(cards)
    return cards


def judge(check: ShuffleCheck, shoe_id: str, order: list[str]) -> tuple[int | None, list[float]]:
    """Deal ``order`` through the check: the card that raised the alert (if any), and per
    comparison the largest log10 evidence reached in the shoe."""
    check.new_shoe(shoe_id)
    drawn, _, _ = deal(order)
    seen: Counter[str] = Counter()
    first = None
    peaks = [-math.inf] * len(check.comparisons)
    for n, card in enumerate(drawn, 1):
        seen[card] += 1
        if check.card(card, seen, 8) and first is None:
            first = n
        for i, comp in enumerate(check.comparisons):
            peaks[i] = max(peaks[i], comp.log_evidence / LN10)
    return first, peaks


def null(kind: str, shoes: int, seed: int) -> dict[str, Any]:
    """A stream of ``shoes`` properly shuffled shoes, each judged against the ones before it."""
    rng = random.Random(seed)
    check = ShuffleCheck()
    order = fresh(rng)
    peaks: list[float] = []
    alarms = 0
    for n in range(shoes + SHOES_KEPT):
        first, shoe_peaks = judge(check, f"S{n}", order)
        if n >= SHOES_KEPT:  # a full history from here on, as on a table that has run a while
            peaks += shoe_peaks
            alarms += first is not None
        _, rack, undealt = deal(order)
        order = next_shoe(rng, kind, order, discard_pile(rack, undealt))
    peaks.sort()
    tail = {f">=1e{k}": sum(p >= k for p in peaks) / len(peaks) for k in range(0, int(THRESHOLD / LN10) + 1)}
    return {
        "shoes": shoes,
        "comparisons": len(peaks),
        "false_alarms": alarms,
        "largest_log10_evidence": round(peaks[-1], 2),
        "median_log10_evidence": round(statistics.median(peaks), 2),
        "share_of_comparisons_reaching": tail,
        "peaks": [round(p, 3) for p in peaks],
    }


def power(kind: str, trials: int, seed: int) -> dict[str, Any]:
    rng = random.Random(seed)
    firsts: list[int | None] = []
    for _ in range(trials):
        check = ShuffleCheck()
        order = fresh(rng)
        judge(check, "S1", order)
        _, rack, undealt = deal(order)
        first, _ = judge(check, "S2", next_shoe(rng, kind, order, discard_pile(rack, undealt)))
        firsts.append(first)
    caught = sorted(f for f in firsts if f is not None)
    return {
        "trials": trials,
        "caught": len(caught) / trials,
        "caught_within_30_cards": sum(f <= 30 for f in caught) / trials,
        "caught_within_100_cards": sum(f <= 100 for f in caught) / trials,
        "card_of_alert": quantiles(caught),
        "cards": caught,
    }


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--shoes", type=int, default=10000, help="properly shuffled shoes per procedure")
    parser.add_argument("--trials", type=int, default=1000, help="lazy shoes per kind")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--out", type=Path, help="keep shuffle_calibration.json and .png here")
    args = parser.parse_args()
    started = time.perf_counter()
    nulls = {kind: null(kind, args.shoes, args.seed + i) for i, kind in enumerate(("random", "full"))}
    powers = {kind: power(kind, args.trials, args.seed + 10 + i) for i, kind in enumerate(LAZY)}
    result = {
        "benchmark": "shuffle_calibration",
        "threshold_log10": round(THRESHOLD / LN10, 3),
        "false_alarm_bound_per_shoe": FALSE_ALARM,
        "shoes_compared": SHOES_KEPT,
        "null": {k: {f: v for f, v in r.items() if f != "peaks"} for k, r in nulls.items()},
        "power": {k: {f: v for f, v in r.items() if f != "cards"} for k, r in powers.items()},
        "seconds": round(time.perf_counter() - started, 1),
    }
    report(result, args.out, "shuffle_calibration", lambda path: plot(path, nulls, powers))


def plot(path: Path, nulls: dict[str, dict[str, Any]], powers: dict[str, dict[str, Any]]) -> None:
    plt = pyplot()
    if plt is None:
        return
    fig, (left, right) = plt.subplots(1, 2, figsize=(12, 4.5))
    top = THRESHOLD / LN10
    xs = [x / 10 for x in range(0, int(top * 10) + 11)]
    left.semilogy(xs, [10**-x for x in xs], "k--", label="Ville's bound, per comparison")
    for kind, r in nulls.items():
        peaks = r["peaks"]
        n = len(peaks)
        share = [sum(p >= x for p in peaks) / n for x in xs]
        left.semilogy(
            [x for x, s in zip(xs, share, strict=True) if s > 0],
            [s for s in share if s > 0],
            label=f"{kind} ({n} comparisons)",
        )
    left.axvline(top, color="red", label=f"threshold 10^{top:.1f}")
    left.set_xlabel("largest log10 evidence in the shoe")
    left.set_ylabel("share of comparisons reaching it")
    left.set_title("Properly shuffled shoes")
    left.legend(fontsize=8)
    for kind, r in powers.items():
        cards = r["cards"]
        grid = list(range(0, 421, 5))
        right.plot(grid, [sum(c <= g for c in cards) / r["trials"] for g in grid], label=kind)
    right.axvline(30, color="grey", linestyle=":")
    right.set_xlabel("cards dealt from the lazy shoe")
    right.set_ylabel("share of shoes alerted")
    right.set_title("Lazy shuffles: when the alert comes")
    right.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=100)


if __name__ == "__main__":
    main()
