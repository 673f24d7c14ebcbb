"""The drawing rule, checked against a table copied from the rules, not from the code."""

from fractions import Fraction
from itertools import product
from pathlib import Path

import pytest

from scannerd.core.baccarat import next_position, outcome_odds
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
