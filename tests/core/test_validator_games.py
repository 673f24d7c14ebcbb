"""The validator asks the table's game: Dragon Tiger's deal and misdeals, and the facts of every game."""

import pytest

from scannerd.contract.events import RoundEvent
from scannerd.contract.table_state import TableState
from scannerd.core.house import HouseRules
from scannerd.core.validator import CommandRejected, Validator
from tests.support.table import Table


def dragon_tiger(**rules):
    return Table(game="dragon_tiger", burn="none", **rules)


def test_a_dragon_tiger_round_is_two_cards_and_its_event_names_dragon_and_tiger():
    t = dragon_tiger()
    t.cmd("new_shoe", shoe_id="S1")
    out = t.round("KS", "KS", round_id="R1")
    assert t.positions(out) == ["dragon", "tiger"]
    done = t.last_round()
    assert (done.phase, done.winner) == ("complete", "tie")
    assert done.dragon.cards == ["KS"] and done.dragon.total == 13 and done.tiger.total == 13
    assert "player" not in done and "banker" not in done
    assert (done.natural, done.player_pair, done.banker_pair) == (None, None, None)
    assert done.facts.suited_tie is True
    RoundEvent.model_validate(done)
    state = t.v.state()
    assert state["results"] == [
        {"winner": "tie", "natural": False, "player_pair": False, "banker_pair": False}
    ]
    TableState.model_validate(state)


def test_dragon_tiger_winners_and_what_is_due_while_dealing():
    t = dragon_tiger()
    t.cmd("new_shoe")
    t.cmd("betting_open")
    t.cmd("betting_close")
    t.card("2H")
    assert t.v.state()["round"]["next_position"] == "tiger"
    assert t.v.state()["round"]["dragon"] == {"cards": ["2H"], "total": 2}
    t.card("AH")
    t.round("5C", "JD")
    assert [r.winner for r in t.rounds() if r.phase == "complete"] == ["dragon", "tiger"]
    assert [r["winner"] for r in t.v.state()["results"]] == ["dragon", "tiger"]


def test_dragon_tiger_misdeals_mean_what_they_mean_at_baccarat():
    t = dragon_tiger()
    t.cmd("new_shoe")
    t.cmd("betting_open", round_id="R1")
    assert t.alerts(t.card("AS")) == ["CARD_BEFORE_BETS_CLOSED"]  # a card before betting closed
    t.cmd("betting_close")
    t.cards("2S", "3S")
    assert t.alerts(t.card("4S")) == ["EXTRA_CARD"]  # a third card to a two-card game
    t.round("5S", round_id="R2")
    assert t.alerts(t.cmd("betting_open", round_id="R3")) == ["SHORT_DEAL"]  # Tiger never got its card
    t.cmd("betting_close")
    assert t.alerts(t.card(None)) == ["UNREADABLE_CARD"]
    assert [(r.round_id, r.reason) for r in t.rounds() if r.phase == "void"] == [
        ("R2", "SHORT_DEAL"),
        ("R3", "UNREADABLE_CARD"),
    ]


def test_a_dragon_tiger_foreign_card_and_a_card_after_the_shoe_end():
    t = dragon_tiger(decks=1)
    t.cmd("new_shoe")
    t.round("9H", "2S")
    assert t.alerts(t.round("9H")) == ["FOREIGN_CARD"]  # the second 9H of a one-deck shoe
    assert (t.last_round().phase, t.last_round().reason) == ("void", "FOREIGN_CARD")
    t.cmd("betting_open")
    t.cut()
    t.cmd("betting_close")
    t.cards("3C", "4C")
    assert t.v.state()["shoe"]["status"] == "closed"
    assert t.alerts(t.card("5C")) == ["CARD_AFTER_SHOE_END"]


def test_a_stalled_dragon_tiger_round_names_the_side_due():
    t = dragon_tiger(stall_timeout_s=5)
    t.round("9H")
    t.tick(6)
    stalled = [e for e in t.events if e.kind == "alert" and e.code == "ROUND_STALLED"]
    assert "TIGER" in stalled[0].message


@pytest.mark.parametrize("commission", ["standard", "no_commission", "ez"])
def test_every_punto_banco_round_states_its_facts(commission):
    t = Table(burn="none", commission=commission)
    t.round("2S", "3H", "4S", "AD", "3C")  # Banker's three-card 7 over Player's 6
    done = t.last_round()
    assert (done.winner, done.facts.dragon_7, done.facts.banker_cards) == ("banker", True, 3)
    RoundEvent.model_validate(done)
    assert all("facts" not in r for r in t.rounds() if r.phase != "complete")


def test_a_table_from_before_games_were_chosen_publishes_its_rounds_as_it_did():
    t = Table(burn="none", game=None)
    t.round("2S", "3H", "4S", "AD", "3C")
    assert "facts" not in t.last_round()
    assert t.last_round().winner == "banker"


def test_commission_is_punto_bancos():
    with pytest.raises(ValueError, match="Dragon Tiger has none"):
        HouseRules(game="dragon_tiger", commission="ez")


def test_a_dragon_tiger_table_restores_into_dragon_tiger():
    t = dragon_tiger()
    t.cmd("new_shoe")
    t.round("9H")
    again = Validator.restore("T1", t.v.rules, t.v.snapshot())
    assert again.state() == t.v.state()


def test_a_round_says_how_long_it_spent_betting_and_dealing():
    t = Table(burn="none")
    t.cmd("betting_open")  # at +1 s
    t.ts += 14  # betting stays open fifteen seconds
    t.cmd("betting_close")
    t.cards("9H", "2S", "9C", "3D")  # a card a second
    assert dict(t.last_round().times) == {
        "betting_s": 15.0,
        "dealing_s": 4.0,
    }
    assert all("times" not in r for r in t.rounds() if r.phase in ("betting", "dealing"))


def test_a_clock_step_is_not_time_spent_in_a_phase():
    t = Table(burn="none")
    t.cmd("betting_open")
    t.clock_step(3600.0)
    t.cmd("betting_close")
    t.card(None)  # unreadable: the round is void
    assert dict(t.last_round().times) == {"betting_s": 1.0, "dealing_s": 1.0}


def test_a_round_voided_before_betting_closed_spent_its_time_betting():
    t = Table(burn="none")
    t.cmd("betting_open")
    t.cmd("void_round")
    assert dict(t.last_round().times) == {"betting_s": 1.0, "dealing_s": None}


# ----------------------------------------------------------------- squeeze


def reveals(t: Table) -> list[tuple[list[str], str, float]]:
    return [(e.positions, e.reason, e.ts) for e in t.events if e.kind == "reveal"]


def test_a_squeeze_table_publishes_every_card_at_once_and_holds_its_face_until_revealed():
    t = Table(burn="none", squeeze=True)
    out = t.round("9H", "2S", "9C", "3D", round_id="R1")
    assert [e.card for e in out if e.kind == "card"] == ["9H", "2S", "9C", "3D"]  # the game server has them
    assert t.last_round().winner == "player"  # judged on scan, as always
    state = t.v.state()
    assert state["squeeze"] is True
    assert state["round"]["hidden"] == ["player1", "banker1", "player2", "banker2"]
    TableState.model_validate(state)
    t.cmd("reveal", side="banker")
    t.cmd("reveal", position="player2")
    t.cmd("reveal")
    assert [(p, r) for p, r, _ in reveals(t)] == [
        (["banker1", "banker2"], "request"),
        (["player2"], "request"),
        (["player1"], "request"),
    ]
    assert t.v.state()["round"]["hidden"] == []
    with pytest.raises(CommandRejected, match="no card is held back"):
        t.cmd("reveal")


def test_a_squeezed_card_shows_by_itself_when_the_house_timeout_passes():
    t = Table(burn="none", squeeze=True, reveal_timeout_s=10, round_control="auto")
    t.card("9H")  # drawn at +1 s
    drawn = t.ts
    t.card("2S")
    assert t.v.acts_from() == drawn + 10
    assert not t.v.acts_at(drawn + 9.9) and t.v.acts_at(drawn + 10)
    t.tick(20)
    assert [(p, r, ts - drawn) for p, r, ts in reveals(t)] == [
        (["player1"], "timeout", 10.0),  # each at the moment its time was up, not when the tick came
        (["banker1"], "timeout", 11.0),
    ]


def test_the_next_round_shows_what_the_last_one_held_back():
    t = Table(burn="none", squeeze=True)
    t.round("9H", "2S", "9C", "3D", round_id="R1")
    t.cmd("reveal", side="player")
    t.cmd("betting_open", round_id="R2")
    assert reveals(t)[-1][:2] == (["banker1", "banker2"], "next_round")
    assert t.events[-1].kind == "round" and t.events[-1].round_id == "R2"  # the reveal came first


@pytest.mark.parametrize(
    ("rules", "args", "message"),
    [
        ({}, {}, "does not squeeze"),
        ({"squeeze": True}, {"side": "dragon"}, "not a side at punto_banco"),
        ({"squeeze": True}, {"side": "player", "position": "player1"}, "not both"),
        ({"squeeze": True}, {"position": "banker3"}, "banker3 has no card held back"),
    ],
)
def test_a_reveal_that_makes_no_sense_is_refused_and_changes_nothing(rules, args, message):
    t = Table(burn="none", **rules)
    t.round("9H", "2S", "9C", "3D")
    before = t.v.snapshot()
    with pytest.raises(CommandRejected, match=message):
        t.cmd("reveal", **args)
    assert t.v.snapshot() == before


def test_a_squeeze_table_restores_what_it_held_back():
    t = dragon_tiger(squeeze=True)
    t.round("9H", "KD")
    again = Validator.restore("T1", t.v.rules, t.v.snapshot())
    assert again.state()["round"]["hidden"] == ["dragon", "tiger"]
    assert again.acts_from() == t.v.acts_from()


def test_a_new_shoe_shows_what_the_last_round_held_back():
    t = Table(burn="none", squeeze=True)
    t.round("9H", "2S", "9C", "3D", round_id="R1")
    t.cmd("new_shoe", shoe_id="S2")
    assert reveals(t)[-1][:2] == (["player1", "banker1", "player2", "banker2"], "next_round")


def test_a_clock_step_neither_shortens_nor_lengthens_a_squeezed_cards_wait():
    for step in (3600.0, -3600.0):
        t = Table(burn="none", squeeze=True, reveal_timeout_s=10, round_control="auto")
        t.card("9H")
        drawn = t.ts
        t.clock_step(step)
        t.tick(1)
        assert reveals(t) == []  # two seconds of waiting, whatever the clock did
        assert t.v.acts_from() == drawn + step + 10


def test_the_timeout_ends_whatever_the_times_rounding():
    """A draw time for which (t + T) - T is not t (0.1 + 0.2 with T = 60): it is shown, once."""
    t = Table(burn="none", squeeze=True, reveal_timeout_s=60, round_control="auto")
    t.ts = 0.1 + 0.2 - 1.0
    t.card("9H")  # drawn at 0.30000000000000004
    assert (t.ts + 60) - 60 != t.ts
    t.tick(100)
    assert [p for p, _, _ in reveals(t)] == [["player1"]]


def test_a_reveal_for_another_round_is_refused():
    t = Table(burn="none", squeeze=True)
    t.round("9H", "2S", "9C", "3D", round_id="R1")
    t.cmd("betting_open", round_id="R2")
    t.cmd("betting_close")
    t.card("5C")
    with pytest.raises(CommandRejected, match="round R1 is not the round on the table"):
        t.cmd("reveal", side="player", round_id="R1")  # late, or delivered twice
    t.cmd("reveal", side="player", round_id="R2")


def test_squeeze_is_refused_where_the_table_would_open_the_next_round_on_the_last_card():
    with pytest.raises(ValueError, match="squeeze needs a game server"):
        HouseRules(squeeze=True, round_control="auto", betting_time_s=10)
    HouseRules(squeeze=True, round_control="auto")  # without a house betting time it waits for the dealer


def test_every_round_event_of_a_squeeze_table_says_so():
    t = Table(burn="none", squeeze=True)
    t.round("9H", "2S", "9C", "3D")
    assert {r.squeeze for r in t.rounds()} == {True}
    assert all(
        "squeeze" not in r for r in Table(burn="none").round("9H", "2S", "9C", "3D") if r.kind == "round"
    )


def test_a_clock_step_leaves_a_snapshot_taken_before_it_as_it_was():
    """The state is stored from snapshots; one taken before a step must not change after it."""
    t = Table(burn="none", squeeze=True, round_control="auto")
    t.card("9H")
    before = t.v.snapshot()
    held = [list(h) for h in before["round"]["hidden"]]
    t.clock_step(3600.0)
    assert before["round"]["hidden"] == held
