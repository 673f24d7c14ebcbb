"""What the shuffle check costs a card, against the check as it was before, in the same run.

Prints one JSON object. For each kind of shuffle (the proper ones, ``random``
and ``full``, and every lazy one the calibration uses) a table's stream of
``--shoes`` shoes, each made from the last one's discards by that kind, is
dealt by the rules (simulators/shuffles.py) and fed card by card to
``scannerd.core.shuffle_check``, with each alert taken as the validator takes
it, and to the reference (``tests/core/shuffle_reference.py``: the check
before its per-card work became table lookups, which gives the same figures).
The loop that only keeps ``seen`` is timed too and taken off both, so the
figures are the check's own microseconds per card; the ratio is what to judge.
Best of ``--repeat``, the three taken in turn. Not timed: where in the shoe
the comparisons clear (stop being compared with), which is where the cost of
a properly shuffled shoe ends.

    python -m bench.shuffle_check_cost [--shoes N] [--repeat N]
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import time
from collections.abc import Callable

from bench.shuffle_calibration import LAZY, fresh
from scannerd.core.shuffle_check import SHOES_KEPT, ShuffleCheck
from simulators.shuffles import deal, discard_pile, next_shoe
from tests.core import shuffle_reference

Check = Callable[[], ShuffleCheck | shuffle_reference.ShuffleCheck]


def stream(kind: str, shoes: int, seed: int) -> list[list[str]]:
    """The cards each of ``shoes`` shoes dealt, each shoe made from the last one's discards."""
    rng = random.Random(seed)
    order = fresh(rng)
    out = []
    for _ in range(shoes):
        drawn, rack, undealt = deal(order)
        out.append(drawn)
        order = next_shoe(rng, kind, order, discard_pile(rack, undealt))
    return out


def run(make: Check | None, shoes: list[list[str]]) -> float:
    """Seconds to deal ``shoes`` through a check made by ``make`` (None: keep ``seen`` only)."""
    check = make() if make is not None else None
    seq = 0
    t0 = time.perf_counter()
    for n, drawn in enumerate(shoes):
        seen: dict[str, int] = {}
        if check is not None:
            check.new_shoe(f"S{n}")
        for card in drawn:
            seen[card] = seen.get(card, 0) + 1
            if check is not None:
                for comparison in check.card(card, seen, 8):
                    comparison.alert_id = seq  # as the validator does: raised once
            seq += 1
    return time.perf_counter() - t0


def clearing(shoes: list[list[str]]) -> dict[str, object]:
    """The card at which each comparison cleared, over the shoes with a full history."""
    check = ShuffleCheck()
    cards: list[int] = []
    never = 0
    for n, drawn in enumerate(shoes):
        check.new_shoe(f"S{n}")
        seen: dict[str, int] = {}
        at: dict[int, int] = {}
        for i, card in enumerate(drawn, 1):
            seen[card] = seen.get(card, 0) + 1
            for comparison in check.card(card, seen, 8):
                comparison.alert_id = i
            at.update((j, i) for j, c in enumerate(check.comparisons) if c.cleared and j not in at)
        if n >= SHOES_KEPT:
            cards += at.values()
            never += SHOES_KEPT - len(at)
    quartiles = statistics.quantiles(cards, n=4) if len(cards) > 1 else [None] * 3
    return {
        "quartiles_of_card_cleared": quartiles,
        "share_never_cleared": round(never / (never + len(cards)), 3),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shoes", type=int, default=24, help="per kind, the first four without history")
    parser.add_argument("--repeat", type=int, default=7, help="best of this many runs of each")
    args = parser.parse_args()
    result: dict[str, object] = {"benchmark": "shuffle_check_cost", "shoes_per_kind": args.shoes}
    kinds = {}
    for i, kind in enumerate(("random", "full", *LAZY)):
        shoes = stream(kind, args.shoes, seed=1 + i)
        cards = sum(map(len, shoes))
        now, before, bare = [], [], []
        for _ in range(args.repeat):
            now.append(run(ShuffleCheck, shoes))
            before.append(run(shuffle_reference.ShuffleCheck, shoes))
            bare.append(run(None, shoes))
        base = min(bare)
        us_now = (min(now) - base) / cards * 1e6
        us_before = (min(before) - base) / cards * 1e6
        kinds[kind] = {
            "cards": cards,
            "us_per_card": round(us_now, 2),
            "reference_us_per_card": round(us_before, 2),
            "speedup": round(us_before / us_now, 2),
            **clearing(shoes),
        }
    result["kinds"] = kinds
    print(json.dumps(result))


if __name__ == "__main__":
    main()
