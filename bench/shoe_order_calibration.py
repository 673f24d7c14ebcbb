"""Calibration of a shoe's own order: false alarms on proper first shoes, and when a bad one is caught.

Not a timed benchmark: it measures rates, not the machine. Each shoe is the
first of a table (no earlier shoe to compare with), dealt by the rules
(simulators/shuffles.py: burn, hands, cut card) through the same
``ShuffleCheck`` the validator calls, so only its own order can raise an alert
(``scannerd.core.shoe_order``).

- Null: properly shuffled first shoes (a uniform order). Per shoe it keeps
  the largest evidence reached at any card, so the tail of that distribution
  is the false-alarm rate at any threshold.
- Power: first shoes made badly from new decks, each kind ``--trials``
  times: when the alert comes, by card and by hand.

    python -m bench.shoe_order_calibration --out docs/shuffle
"""

from __future__ import annotations

import argparse
import math
import multiprocessing
import random
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bench.support import pyplot, quantiles, report
from scannerd.core.cards import ALL_CARDS
from scannerd.core.shoe_order import FALSE_ALARM, THRESHOLD, new_deck_order
from scannerd.core.shuffle_check import ShuffleCheck
from simulators.shuffles import deal, riffle, stacked, strip

LN10 = math.log(10)
DECKS = 8


def _shuffled(rng: random.Random) -> list[str]:
    cards = [c for c in ALL_CARDS for _ in range(DECKS)]
    rng.shuffle(cards)
    return cards


def _riffled(times: int) -> Callable[[random.Random], list[str]]:
    def make(rng: random.Random) -> list[str]:
        cards = new_deck_order() * DECKS
        for _ in range(times):
            cards = riffle(rng, cards)
        return cards

    return make


def _one_deck(ordered: bool) -> Callable[[random.Random], list[str]]:
    """A good shoe with one deck laid in somewhere as it is: new (``ordered``) or in a memorised order."""

    def make(rng: random.Random) -> list[str]:
        deck = new_deck_order()
        if not ordered:
            rng.shuffle(deck)
        rest = [c for c in ALL_CARDS for _ in range(DECKS - 1)]
        rng.shuffle(rest)
        at = rng.randrange(len(rest))
        return rest[:at] + deck + rest[at:]

    return make


def _replayed(rng: random.Random) -> list[str]:
    """The last shoe of yesterday dealt again as today's first: to the shoe alone, any order."""
    return _shuffled(rng)


KINDS: dict[str, Callable[[random.Random], list[str]]] = {
    "new": lambda rng: new_deck_order() * DECKS,
    "riffle-1": _riffled(1),
    "riffle-2": _riffled(2),
    "riffle-3": _riffled(3),
    "riffle-4": _riffled(4),
    "strip": lambda rng: strip(rng, strip(rng, new_deck_order() * DECKS)),
    "stacked-half": lambda rng: stacked(rng, DECKS),
    "one-new-deck": _one_deck(True),
    "one-memorised-deck": _one_deck(False),
    "replayed": _replayed,
}


def judge(order: list[str]) -> tuple[int | None, int | None, float]:
    """Deal ``order`` as a first shoe: the card and hand of the alert (if any), and the largest
    log10 evidence reached."""
    check = ShuffleCheck()
    check.new_shoe("S1")
    drawn, rack, _ = deal(order)
    hand_of = [0] * (len(drawn) + 1)
    n = hands = 0
    for group in rack:
        hands += len(group) > 1  # a burnt card goes to the rack alone; a hand has four to six
        for _ in group:
            n += 1
            hand_of[n] = hands
    seen: Counter[str] = Counter()
    for n, card in enumerate(drawn, 1):
        seen[card] += 1
        if check.card(card, seen, DECKS):
            return n, max(hand_of[n], 1), THRESHOLD / LN10
    order_check = check.order
    return None, None, max(order_check.new_decks.peak, order_check.own.peak) / LN10


def _null_batch(args: tuple[int, int]) -> tuple[int, list[float]]:
    seed, shoes = args
    rng = random.Random(seed)
    alarms = 0
    peaks = []
    for _ in range(shoes):
        card, _, peak = judge(_shuffled(rng))
        alarms += card is not None
        peaks.append(peak)
    return alarms, peaks


def null(shoes: int, seed: int, workers: int) -> dict[str, Any]:
    batches = [(seed * 1000 + i, shoes // workers + (i < shoes % workers)) for i in range(workers)]
    with multiprocessing.Pool(workers) as pool:
        results = pool.map(_null_batch, batches)
    alarms = sum(a for a, _ in results)
    peaks = sorted(p for _, batch in results for p in batch)
    return {
        "shoes": shoes,
        "false_alarms": alarms,
        "largest_log10_evidence": round(peaks[-1], 2),
        "share_of_shoes_reaching": {
            f">=1e{k}": sum(p >= k for p in peaks) / len(peaks) for k in range(2, int(THRESHOLD / LN10) + 1)
        },
        "peaks": peaks,
    }


def power(kind: str, trials: int, seed: int) -> dict[str, Any]:
    rng = random.Random(seed)
    results = [judge(KINDS[kind](rng)) for _ in range(trials)]
    cards = sorted(c for c, _, _ in results if c is not None)
    hands = sorted(h for _, h, _ in results if h is not None)
    return {
        "trials": trials,
        "caught": len(cards) / trials,
        "card_of_alert": quantiles(cards),
        "hand_of_alert": quantiles(hands),
        "cards": cards,
    }


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--shoes", type=int, default=100_000, help="properly shuffled first shoes")
    parser.add_argument("--trials", type=int, default=1000, help="badly made first shoes per kind")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--out", type=Path, help="keep shoe_order_calibration.json and .png here")
    args = parser.parse_args()
    started = time.perf_counter()
    nulls = null(args.shoes, args.seed, args.workers)
    powers = {kind: power(kind, args.trials, args.seed + 10 + i) for i, kind in enumerate(KINDS)}
    result = {
        "benchmark": "shoe_order_calibration",
        "threshold_log10": round(THRESHOLD / LN10, 3),
        "false_alarm_bound_per_shoe": FALSE_ALARM,
        "null": {f: v for f, v in nulls.items() if f != "peaks"},
        "power": {k: {f: v for f, v in r.items() if f != "cards"} for k, r in powers.items()},
        "seconds": round(time.perf_counter() - started, 1),
    }
    report(result, args.out, "shoe_order_calibration", lambda path: plot(path, nulls, powers))


def plot(path: Path, nulls: dict[str, Any], powers: dict[str, dict[str, Any]]) -> None:
    plt = pyplot()
    if plt is None:
        return
    fig, (left, right) = plt.subplots(1, 2, figsize=(12, 4.5))
    top = THRESHOLD / LN10
    peaks = nulls["peaks"]
    xs = [x / 10 for x in range(0, int(top * 10) + 11)]
    share = [sum(p >= x for p in peaks) / len(peaks) for x in xs]
    left.semilogy(
        [x for x, s in zip(xs, share, strict=True) if s > 0],
        [s for s in share if s > 0],
        label=f"proper first shoes ({len(peaks):,})",
    )
    left.axvline(top, color="red", label=f"threshold 10^{top:.1f}")
    left.axhline(FALSE_ALARM, color="grey", linestyle=":", label=f"bound {FALSE_ALARM:g} per shoe")
    left.set_xlabel("largest log10 evidence in the shoe")
    left.set_ylabel("share of shoes reaching it")
    left.set_title("Properly shuffled first shoes")
    left.legend(fontsize=8)
    for kind, r in powers.items():
        cards = r["cards"]
        grid = list(range(0, 421, 5))
        right.plot(grid, [sum(c <= g for c in cards) / r["trials"] for g in grid], label=kind)
    right.set_xlabel("cards dealt from the first shoe")
    right.set_ylabel("share of shoes alerted")
    right.set_title("Badly made first shoes: when the alert comes")
    right.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=100)


if __name__ == "__main__":
    main()
