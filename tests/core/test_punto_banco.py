"""The drawing rule, checked against a table copied from the rules, not from the code."""

from fractions import Fraction
from itertools import product
from pathlib import Path

import pytest

from scannerd.contract.events import PuntoBancoFacts
from scannerd.core.games.punto_banco import ending_odds, fact_odds, facts, next_position, outcome_odds
from tests.support.reference_rules import BANKER_TABLE, expected_draws

# A card of each point value, to build layouts from values.
CARD_OF = {0: "KS", 1: "AS", 2: "2S", 3: "3S", 4: "4S", 5: "5S", 6: "6S", 7: "7S", 8: "8S", 9: "9S"}


def two_cards(total: int) -> list[str]:
    """Two cards making ``total``, chosen so the test covers many ways to reach it."""
    first = (total + 3) % 10
    return [CARD_OF[first], CARD_OF[(total - first) % 10]]


@pytest.mark.parametrize(("p", "b", "third"), list(product(range(10), range(10), range(10))))
def test_third_card_rule_matches_the_written_table(p, b, third):
    player, banker = two_cards(p), two_cards(b)
    player_draws, banker_draws = expected_draws(p, b, third)
    assert next_position(player, banker) == (
        "player3" if player_draws else "banker3" if banker_draws else None
    )
    if player_draws:
        player = [*player, CARD_OF[third]]
        assert next_position(player, banker) == ("banker3" if banker_draws else None)
        if banker_draws:
            assert next_position(player, [*banker, "QH"]) is None


def test_first_four_cards_alternate_player_and_banker():
    assert next_position([], []) == "player1"
    assert next_position(["AS"], []) == "banker1"
    assert next_position(["AS"], ["2S"]) == "player2"
    assert next_position(["AS", "3S"], ["2S"]) == "banker2"


def test_enumerating_every_eight_deck_draw_gives_the_published_odds():
    """Every ordered draw of up to six cards from 416, weighted exactly, through our rule code."""
    counts = [128] + [32] * 9  # cards of each point value in eight decks
    total_cards = 416
    wins = {"player": 0, "banker": 0, "tie": 0}
    full = 1
    for k in range(6):
        full *= total_cards - k

    def deal(player, banker, weight, used):
        pos = next_position([CARD_OF[v] for v in player], [CARD_OF[v] for v in banker])
        if pos is None:
            # The rest of the six draws can be anything: scale to the common denominator.
            n = len(player) + len(banker)
            for k in range(n, 6):
                weight *= total_cards - k
            pt, bt = sum(player) % 10, sum(banker) % 10
            wins["player" if pt > bt else "banker" if bt > pt else "tie"] += weight
            return
        for v in range(10):
            left = counts[v] - used[v]
            if left == 0:
                continue
            used[v] += 1
            if pos.startswith("player"):
                deal([*player, v], banker, weight * left, used)
            else:
                deal(player, [*banker, v], weight * left, used)
            used[v] -= 1

    deal([], [], 1, [0] * 10)
    assert sum(wins.values()) == full
    odds = {k: Fraction(v, full) for k, v in wins.items()}
    assert round(float(odds["banker"]), 6) == 0.458597
    assert round(float(odds["player"]), 6) == 0.446247
    assert round(float(odds["tie"]), 6) == 0.095156


def _values(text: str) -> set[int]:
    """``0-7, 9`` -> {0, ..., 7, 9}; ``never`` -> {}; a remark in brackets is ignored."""
    text = text.split("(")[0].strip()
    if text == "never":
        return set()
    values: set[int] = set()
    for part in text.split(","):
        low, _, high = part.strip().partition("-")
        values.update(range(int(low), int(high or low) + 1))
    return values


def test_the_reference_table_is_the_one_docs_rules_md_gives():
    """docs/rules.md is where the rule is written down: the table the tests use must be that one."""
    doc = (Path(__file__).parents[2] / "docs" / "rules.md").read_text()
    rows = {}
    for line in doc.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 3 and cells[0][:1].isdigit():
            draws, stands = _values(cells[1]), _values(cells[2])
            assert draws | stands == set(range(10)) and not draws & stands, line
            for total in _values(cells[0]):
                rows[total] = "".join("D" if v in draws else "S" for v in range(10))
    assert rows == BANKER_TABLE


def test_outcome_odds_are_the_published_eight_deck_figures():
    """What an audit judges results against: derived from the drawing rule, exact, summing to one."""
    odds = outcome_odds(8)
    assert sum(odds.values()) == 1
    assert {k: round(float(v), 6) for k, v in odds.items()} == {
        "banker": 0.458597,
        "player": 0.446247,
        "tie": 0.095156,
    }


def test_the_side_bet_facts_have_their_published_eight_deck_chances():
    """Published figures for eight decks, to four places, from the same walk as the results."""
    odds = fact_odds(8)
    assert round(float(odds["dragon_7"][True]), 4) == 0.0225
    assert round(float(odds["panda_8"][True]), 4) == 0.0345
    assert round(float(odds["banker_six"][2] + odds["banker_six"][3]), 4) == 0.0539
    assert odds["either_pair"][True] == 2 * Fraction(31, 415) - odds_of_both_pairs(8)
    assert odds["player_perfect_pair"][True] == Fraction(7, 415)
    for name, chances in odds.items():
        assert sum(chances.values()) == 1, name
    assert sum(ending_odds(8).values()) == 1


def odds_of_both_pairs(decks: int) -> Fraction:
    """Player's and Banker's first two cards each a pair, counted by brute force over ranks."""
    n, of_rank = 52 * decks, 4 * decks
    ways = 0
    for a, b in product(range(13), repeat=2):
        left = [of_rank] * 13
        w = 1
        for rank in (a, b, a, b):  # player1, banker1, player2, banker2
            w *= left[rank]
            left[rank] -= 1
        ways += w
    return Fraction(ways, n * (n - 1) * (n - 2) * (n - 3))


@pytest.mark.parametrize(
    ("player", "banker", "expected"),
    [
        # Banker's three-card 7 beats Player's 6: Dragon 7, a non-natural win by one.
        (
            ["2S", "4S", "KS"],
            ["3H", "AD", "3C"],
            {"dragon_7": True, "panda_8": False, "banker_bonus": "win", "player_bonus": "none", "margin": 1},
        ),
        # Player's three-card 8 beats Banker's 5: Panda 8, big (five cards).
        (["AS", "2D", "5C"], ["5H", "KD"], {"panda_8": True, "size": "big", "player_cards": 3, "margin": 3}),
        # Banker wins with a two-card 6 over Player's 5 after Player drew: Lucky 6 on two cards.
        (
            ["2S", "2D", "AC"],
            ["3H", "3D"],
            {"banker_six": 2, "either_pair": True, "banker_cards": 2},
        ),
        # Natural 9 over natural 8: a natural win for Player, small (four cards).
        (
            ["9S", "KD"],
            ["8H", "QC"],
            {"player_bonus": "natural_win", "size": "small"},
        ),
        # Natural 8 each: a natural tie for both sides, no margin.
        (
            ["8S", "KD"],
            ["8H", "QC"],
            {"banker_bonus": "natural_tie", "margin": 0},
        ),
        # Same card twice from the shoe: a perfect pair.
        (["QS", "QS", "5C"], ["2H", "4C", "9D"], {"player_perfect_pair": True, "either_pair": True}),
    ],
)
def test_a_rounds_facts_are_read_from_its_hands(player, banker, expected):
    got = facts(player, banker)
    assert {k: got[k] for k in expected} == expected
    assert list(got) == list(PuntoBancoFacts.model_fields)  # in the contract's order
    PuntoBancoFacts.model_validate(got)
