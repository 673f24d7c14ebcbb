import random
from collections import Counter

import pytest

from scannerd.core.cards import ALL_CARDS
from simulators.shoe import CUT_CARD, Shoe, ShoeEmpty


def drain(shoe: Shoe) -> list[str]:
    out = []
    while True:
        try:
            out.append(shoe.draw())
        except ShoeEmpty:
            return out


@pytest.mark.parametrize("decks", [1, 6, 8])
def test_a_shoe_holds_each_card_once_per_deck(decks):
    cards = [c for c in drain(Shoe(random.Random(1), decks=decks, cut=None)) if c != CUT_CARD]
    assert Counter(cards) == Counter({c: decks for c in ALL_CARDS})


def test_the_seed_decides_the_order():
    a = drain(Shoe(random.Random(7)))
    assert a == drain(Shoe(random.Random(7)))
    assert a != drain(Shoe(random.Random(8)))


def test_the_cut_card_comes_out_with_n_cards_behind_it():
    shoe = Shoe(random.Random(2), decks=1, cut=7)
    out = drain(shoe)
    assert out.count(CUT_CARD) == 1
    assert len(out) - out.index(CUT_CARD) - 1 == 7
    assert shoe.cut_card_out


def test_a_cut_range_places_the_card_within_it():
    placed = {Shoe(random.Random(seed), decks=8, cut=(10, 20)).cut_remaining for seed in range(200)}
    assert placed <= set(range(10, 21))
    assert len(placed) > 5


def test_a_cut_card_that_does_not_fit_is_refused():
    with pytest.raises(ValueError):
        Shoe(random.Random(1), decks=1, cut=60)


def test_before_cut_counts_down_to_the_cut_card():
    shoe = Shoe(random.Random(3), decks=1, cut=50)
    assert shoe.before_cut == 2
    shoe.draw()
    shoe.draw()
    assert shoe.before_cut == 0
    assert shoe.draw() == CUT_CARD
    assert shoe.before_cut is None
    assert shoe.remaining == 50


def test_first_card_value_burn_turns_one_card_and_burns_its_value():
    for seed in range(40):
        burn = Shoe(random.Random(seed)).burn()
        first = burn[0][0]
        more = {"A": 1, "T": 10, "J": 10, "Q": 10, "K": 10}.get(first) or int(first)
        assert len(burn) == 1 + more, burn


@pytest.mark.parametrize(("policy", "count"), [(3, 3), (0, 0), ("none", 0)])
def test_fixed_and_no_burn(policy, count):
    shoe = Shoe(random.Random(1), burn=policy)
    assert len(shoe.burn()) == count
    assert shoe.remaining == 416 - count


def test_a_cut_card_met_during_the_burn_is_reported_in_place():
    shoe = Shoe(random.Random(1), decks=1, cut=50, burn=4)
    burn = shoe.burn()
    assert burn[2] == CUT_CARD
    assert len([c for c in burn if c != CUT_CARD]) == 4
