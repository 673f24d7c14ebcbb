"""Dragon Tiger's deal, result and facts, and their chances against a count of every pair of cards."""

from collections import Counter
from fractions import Fraction
from itertools import permutations

import pytest

from scannerd.contract.events import DragonTigerFacts
from scannerd.core.cards import ALL_CARDS
from scannerd.core.games.dragon_tiger import fact_odds, facts, next_position, outcome_odds, total, winner


def test_one_card_to_dragon_then_one_to_tiger():
    assert next_position([], []) == "dragon"
    assert next_position(["AS"], []) == "tiger"
    assert next_position(["AS"], ["KD"]) is None


@pytest.mark.parametrize(
    ("dragon", "tiger", "won"),
    [("AS", "2S", "tiger"), ("KD", "QD", "dragon"), ("TC", "9H", "dragon"), ("7S", "7H", "tie")],
)
def test_rank_alone_decides_ace_low_king_high(dragon, tiger, won):
    assert winner(total([dragon]), total([tiger])) == won


def test_a_rounds_facts():
    got = facts(["7H"], ["7H"])
    assert got == {
        "suited_tie": True,
        "dragon_size": None,  # a seven is neither big nor small
        "dragon_parity": "odd",
        "dragon_colour": "red",
        "tiger_size": None,
        "tiger_parity": "odd",
        "tiger_colour": "red",
    }
    assert list(facts(["AS"], ["KC"]).values()) == [False, "small", "odd", "black", "big", "odd", "black"]
    assert list(got) == list(DragonTigerFacts.model_fields)
    DragonTigerFacts.model_validate(got)


def test_the_eight_deck_tie_is_31_in_415():
    assert outcome_odds(8)["tie"] == Fraction(31, 415)


@pytest.mark.parametrize("decks", [1, 2])
def test_the_closed_forms_are_what_every_ordered_pair_of_cards_gives(decks):
    shoe = list(ALL_CARDS) * decks
    winners: Counter[str] = Counter()
    seen: dict[str, Counter] = {}
    pairs = 0
    for d, t in permutations(range(len(shoe)), 2):
        dragon, tiger = shoe[d], shoe[t]
        pairs += 1
        winners[winner(total([dragon]), total([tiger]))] += 1
        for name, value in facts([dragon], [tiger]).items():
            seen.setdefault(name, Counter())[value] += 1
    assert {k: Fraction(v, pairs) for k, v in winners.items()} == outcome_odds(decks)
    counted = {name: {v: Fraction(c, pairs) for v, c in by.items()} for name, by in seen.items()}
    closed = {name: {v: p for v, p in by.items() if p} for name, by in fact_odds(decks).items()}
    assert counted == closed  # one deck has no suited tie: its chance is 0
