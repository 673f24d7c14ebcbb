"""The shuffle check against the reference it replaced: the same outcome at every card.

``scannerd.core.shuffle_check`` works a card out from tables made once per
earlier shoe; ``tests/core/shuffle_reference.py`` is the check as it was
before. Both are fed the same streams of shoes, dealt by the rules with the
next shoe made from the discards (simulators/shuffles.py) by every kind of
shuffle the calibration uses, lazy and proper, mixed at random so each shoe
meets earlier shoes of every kind. The streams carry what a table's shoe can
send besides: unreadable cards, bursts of extra copies of a face (a
miscounted shoe: the branches that judge nothing), shoes abandoned too early
to keep, another number of decks. After every card the two must agree on the
comparisons the card made overwhelming and on every comparison's figures,
its running evidence bit for bit; at every shoe's end on the alerts restated
and the whole snapshot. Along the way the new check is restored from the
reference's snapshot, the state the daemon saved before this change, and
must continue the same.
"""

import json
import random
from collections import Counter
from collections.abc import Iterator
from typing import Any

import pytest

from scannerd.core.cards import ALL_CARDS
from scannerd.core.shuffle_check import Comparison, ShuffleCheck
from simulators.shuffles import KINDS, deal, discard_pile, next_shoe
from tests.core import shuffle_reference as reference

Shoe = tuple[str, list[str | None]]


def stream(rng: random.Random, shoes: int, decks: int) -> Iterator[Shoe]:
    """``shoes`` shoes in a row, each made from the last one's discards by a kind chosen at random."""
    order = [c for c in ALL_CARDS for _ in range(decks)]
    rng.shuffle(order)
    for n in range(shoes):
        drawn, rack, undealt = deal(order)
        yield f"S{n}", list(disturbed(rng, drawn))
        order = next_shoe(rng, rng.choice(KINDS), order, discard_pile(rack, undealt))


def disturbed(rng: random.Random, drawn: list[str]) -> Iterator[str | None]:
    """The cards as a shoe's reader may send them: a few unreadable, now and then a burst of copies
    of one face that the shoe never held, and one shoe in eight abandoned early."""
    stop = rng.randrange(20, 60) if rng.random() < 1 / 8 else len(drawn)
    for card in drawn[:stop]:
        roll = rng.random()
        if roll < 0.02:
            yield None
        elif roll < 0.025:
            yield from [rng.choice(ALL_CARDS)] * rng.randrange(1, 25)
        yield card


def figures(check: Any) -> list[tuple[Any, ...]]:
    """Everything a comparison holds, its running evidence bit for bit."""
    return [
        (
            *(c.earlier, [v.hex() for v in c.logs], c.pairs, c.forward, c.backward, c.misses),
            *(c.cleared, c.alert_id, c.final, c.log_evidence.hex(), c.figures()),
        )
        for c in check.comparisons
    ]


def compared(new: ShuffleCheck) -> dict[str, Any]:
    """The new check's snapshot but for its own-order figures, which the reference never had."""
    return {k: v for k, v in new.snapshot().items() if k != "order"}


def restored(old: reference.ShuffleCheck) -> ShuffleCheck:
    """The new check from the reference's snapshot, as saved to disk and read back."""
    return ShuffleCheck.restore(json.loads(json.dumps(old.snapshot())))


def run_side_by_side(seed: int, shoes: int, decks: int) -> Counter[str]:
    """Feed both checks one stream, comparing them at every card; what the stream exercised."""
    rng = random.Random(seed)
    old, new = reference.ShuffleCheck(), ShuffleCheck()
    seq = 0
    seen_kinds: Counter[str] = Counter()
    for shoe_id, cards in stream(rng, shoes, decks):
        old.new_shoe(shoe_id)
        new.new_shoe(shoe_id)
        seen: Counter[str] = Counter()
        restore_at = rng.randrange(len(cards))
        for n, card in enumerate(cards):
            if n == restore_at:
                assert compared(new) == old.snapshot()
                new = restored(old)
                seen_kinds["restored"] += 1
            if card is not None:
                seen[card] += 1
            crossed_old = old.card(card, seen, decks)
            crossed_new = [c for c in new.card(card, seen, decks) if isinstance(c, Comparison)]
            assert [c.earlier for c in crossed_new] == [c.earlier for c in crossed_old], (shoe_id, n)
            for comparison in (*crossed_old, *crossed_new):  # the validator numbers each alert
                comparison.alert_id = seq
            seq += 1
            assert figures(new) == figures(old), (shoe_id, n)
            seen_kinds["alerts"] += len(crossed_old)
        finished_old = old.finish()
        finished_new = [c for c in new.finish() if isinstance(c, Comparison)]
        assert [c.figures() for c in finished_new] == [c.figures() for c in finished_old]
        assert compared(new) == old.snapshot()
        seen_kinds["cleared"] += sum(c.cleared for c in old.comparisons)
        seen_kinds["shoes"] += 1
    return seen_kinds


@pytest.mark.parametrize("seed", range(8))
def test_every_card_comes_out_as_it_did_before(seed):
    exercised = run_side_by_side(seed, shoes=14, decks=8)
    assert exercised["alerts"] and exercised["cleared"] and exercised["restored"]


def test_another_number_of_decks_comes_out_as_before():
    exercised = run_side_by_side(100, shoes=10, decks=6)
    assert exercised["alerts"] and exercised["cleared"]


def test_a_check_restored_before_any_shoe_or_between_shoes_continues_the_same():
    rng = random.Random(5)
    old = reference.ShuffleCheck()
    new = restored(old)
    for shoe_id, cards in stream(rng, 6, 8):
        new = restored(old)  # the state saved between shoes
        old.new_shoe(shoe_id)
        new.new_shoe(shoe_id)
        seen: Counter[str] = Counter()
        for card in cards:
            if card is not None:
                seen[card] += 1
            assert [c.earlier for c in new.card(card, seen, 8) if isinstance(c, Comparison)] == [
                c.earlier for c in old.card(card, seen, 8)
            ]
        assert figures(new) == figures(old)
