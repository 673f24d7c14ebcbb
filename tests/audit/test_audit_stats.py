"""The audit's statistics: the chi-square tail in closed form, a fact's z, the band, running frequencies."""

from __future__ import annotations

import math

import pytest

from scannerd.audit import stats
from scannerd.audit.published import differences
from scannerd.core.games import GAMES
from scannerd.core.games.punto_banco import outcome_odds

ODDS = {k: float(v) for k, v in outcome_odds(8).items()}


def expected(hands: int) -> dict[str, float]:
    return {k: hands * p for k, p in ODDS.items()}


def test_results_exactly_at_the_odds_fit_perfectly():
    x2, p = stats.chi_square({"banker": 458597, "player": 446247, "tie": 95156}, expected(1_000_000))
    assert x2 == pytest.approx(0, abs=1e-3)
    assert p == pytest.approx(1, abs=1e-3)


def test_the_p_value_is_the_chi_square_tail_with_two_degrees_of_freedom():
    """Its upper tail is exp(-x/2): 5.991, the 95th percentile, leaves 0.05."""
    assert math.exp(-5.991 / 2) == pytest.approx(0.05, abs=1e-4)
    e = expected(1000)
    # banker 30 above, player 30 below the odds: X^2 = 900/e_b + 900/e_p
    x2, p = stats.chi_square({"banker": e["banker"] + 30, "player": e["player"] - 30, "tie": e["tie"]}, e)
    assert x2 == pytest.approx(900 / e["banker"] + 900 / e["player"])
    assert p == pytest.approx(math.exp(-x2 / 2))


def test_every_game_has_three_results_so_the_closed_form_tail_holds():
    """exp(-x/2) is the tail of two degrees of freedom: three results, the sides and the tie."""
    for game in GAMES.values():
        assert len(game.outcome_odds(8)) == 3, game.name
        assert "tie" in game.outcome_odds(8)


def test_too_few_hands_give_no_p_value():
    assert stats.chi_square({"banker": 20, "player": 20, "tie": 2}, expected(42))[1] is None
    assert stats.chi_square({"banker": 26, "player": 24, "tie": 6}, expected(56))[1] is not None


def test_the_band_narrows_with_the_square_root_of_the_hands():
    lo, hi = stats.band(ODDS["tie"], 100)
    assert hi - lo == pytest.approx(2 * 1.96 * math.sqrt(ODDS["tie"] * (1 - ODDS["tie"]) / 100))
    lo4, hi4 = stats.band(ODDS["tie"], 400)
    assert hi4 - lo4 == pytest.approx((hi - lo) / 2)


def test_running_frequencies_keep_at_most_their_points_and_end_at_the_last_hand():
    results = ["dragon", "tiger", "tie", "dragon"] * 250
    points = stats.running(results, ("dragon", "tiger", "tie"))
    assert len(points) <= stats.POINTS
    assert points[-1] == (1000, 0.5, 0.25, 0.25)


def test_a_facts_z_is_its_distance_from_expected_in_binomial_standard_deviations():
    """400 hands at p = 0.25: 100 expected, sd sqrt(75); a value seen 130 times is 3.46 sd out."""
    assert stats.fact_z(130, 100.0, 75.0, 400) == pytest.approx(30 / math.sqrt(75))
    assert stats.fact_z(70, 100.0, 75.0, 400) == pytest.approx(-30 / math.sqrt(75))


def test_a_value_expected_or_missed_fewer_than_ten_times_is_not_tested():
    assert stats.fact_z(30, 9.9, 9.7, 590) is None  # a perfect pair in 590 hands
    assert stats.fact_z(30, 10.0, 9.8, 592) is not None
    assert stats.fact_z(580, 582.0, 9.8, 592) is not None  # its absence: missed 10 times, tested
    assert stats.fact_z(580, 582.1, 9.8, 592) is None  # missed 9.9 times: not


def flagged_by_chance(hands: int, p: float) -> float:
    """The exact chance that a fair table's value of chance ``p`` is flagged after ``hands`` hands."""
    sd = math.sqrt(hands * p * (1 - p))

    def log_binomial(k: int) -> float:
        ways = math.lgamma(hands + 1) - math.lgamma(k + 1) - math.lgamma(hands - k + 1)
        return ways + k * math.log(p) + (hands - k) * math.log(1 - p)

    far = (k for k in range(hands + 1) if abs(k - hands * p) >= stats.FACT_Z * sd)
    return sum(math.exp(log_binomial(k)) for k in far)


@pytest.mark.parametrize(
    ("hands", "p"),
    [(592, 0.0169), (3000, 0.0169), (200, 0.05), (1000, 0.0345), (20, 0.5), (400, 0.5), (2000, 0.4615)],
)
def test_a_fair_value_is_flagged_by_chance_less_than_once_in_fifty_thousand_tests(hands, p):
    """The threshold's cost as docs/audit.md states it: exactly, not by the normal approximation.

    A rare value (a perfect pair, 0.0169) expected only ten times has a skewed count; its upper
    tail beyond 5 sd is about 1.5e-5, against 5.7e-7 for the normal; expected 50 times, under
    4e-6; expected hundreds of times, close to the normal's.
    """
    chance = flagged_by_chance(hands, p)
    assert chance < 2e-5
    if hands * p >= 50:
        assert chance < 4e-6


def test_a_replay_that_ends_where_the_table_said_has_no_differences_but_for_clock_times():
    state = {"next_seq": 10, "dealer_id": "D1", "round": {"round_id": "R1", "last_activity": 5.0}}
    moved = {"next_seq": 10, "dealer_id": "D1", "round": {"round_id": "R1", "last_activity": 9.0}}
    assert differences(state, moved) == []
    assert differences(state, {**moved, "next_seq": 12}) == [
        "the replay published up to seq 9, the table up to seq 11"
    ]
