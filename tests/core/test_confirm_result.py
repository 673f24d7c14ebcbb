"""The dealer's word beside the shoe's (docs/validator.md, The dealer's word): ``[rules] confirm_result``.

A hand's result waits for the dealer to declare the winner; the cards' winner
completes the round naming who declared it, another raises RESULT_MISMATCH
and the hand waits on; no word in time is a warning, once.
"""

from __future__ import annotations

import json

import pytest

from drivers.events import DeviceButton, DeviceCard
from scannerd.contract.events import AlertEvent, RoundEvent
from scannerd.contract.table_state import TableState
from scannerd.core.house import SUSPEND_ON, HouseRules
from scannerd.core.inputs import Actor, Command
from scannerd.core.table import Table as LiveTable
from scannerd.core.validator import CommandRejected, Validator
from tests.support.table import Table

BANKER_NATURAL = ("2H", "9S", "3C", "KD")  # player 5, banker 9
DISPLAY = Actor("display")  # a button at the display: the dealer signed in declares
SUPERVISOR = Actor("gameserver", "S-1", "supervisor")


def confirming_table(**rules) -> Table:
    t = Table(burn="none", confirm_result=True, **rules)
    t.cmd("new_shoe", shoe_id="S1")
    t._feed(Command(t.step(), "dealer_sign_in", {"dealer_id": "D-7"}, Actor("gameserver", "D-7", "dealer")))
    return t


def declare(t: Table, winner: str, actor: Actor | None = DISPLAY, **args) -> list:
    return t._feed(Command(t.step(), "confirm_result", {"winner": winner, **args}, actor))


def test_the_result_waits_for_the_dealer_and_the_round_names_who_declared_it() -> None:
    t = confirming_table()
    t.round(*BANKER_NATURAL, round_id="R1")
    waiting = t.last_round()
    assert waiting.phase == "confirming" and waiting.winner is None and "facts" not in waiting
    assert [c["cards"] for c in (waiting.player, waiting.banker)] == [["2H", "3C"], ["9S", "KD"]]
    assert t.v.state()["round"]["phase"] == "confirming"
    assert t.v.state()["results"] == []  # nothing on the scoreboard before the word
    out = declare(t, "banker")
    (complete,) = t.rounds(out)
    assert (complete.phase, complete.winner) == ("complete", "banker")
    assert (complete["confirmed_by"], complete["confirmed_via"]) == ("D-7", "display")
    assert [e.kind for e in out] == ["round", "shoe"]  # the shoe is published after the round, as always
    RoundEvent.model_validate(json.loads(json.dumps(waiting)))
    RoundEvent.model_validate(json.loads(json.dumps(complete)))
    assert [r["winner"] for r in t.v.state()["results"]] == ["banker"]
    assert t.alerts() == []


def test_a_table_that_does_not_confirm_completes_at_the_last_card_naming_no_one() -> None:
    t = Table(burn="none")
    t.cmd("new_shoe", shoe_id="S1")
    t.round(*BANKER_NATURAL, round_id="R1")
    assert t.last_round().phase == "complete" and "confirmed_by" not in t.last_round()
    with pytest.raises(CommandRejected, match="does not confirm results"):
        declare(t, "banker")


def test_another_winner_raises_a_mismatch_suspends_and_the_hand_waits_for_a_word_that_agrees() -> None:
    t = confirming_table(suspend_on=SUSPEND_ON)
    t.round(*BANKER_NATURAL, round_id="R1")
    out = declare(t, "player")
    (alert,) = [e for e in out if e.kind == "alert"]
    assert (alert.code, alert.severity, alert.round_id) == ("RESULT_MISMATCH", "misdeal", "R1")
    assert alert.message == "Hand 1: player declared, the cards say banker - call a supervisor"
    AlertEvent.model_validate(json.loads(json.dumps(alert)))
    assert [e.kind for e in out] == ["alert", "suspension"]  # the hand is not voided: its cards are in
    assert t.v.state()["round"]["phase"] == "confirming" and t.v.suspended is not None
    with pytest.raises(CommandRejected, match="suspended"):
        t.cmd("betting_open")
    t._feed(Command(t.step(), "resume", {"reason": "cards checked", "supervisor_id": "S-1"}, SUPERVISOR))
    with pytest.raises(CommandRejected, match="R1 awaits the dealer's result"):
        t.cmd("betting_open")
    with pytest.raises(CommandRejected, match="R1 is still open"):
        t.cmd("new_shoe")
    (complete,) = t.rounds(declare(t, "banker"))
    assert complete.phase == "complete" and complete["confirmed_by"] == "D-7"


def test_no_word_in_the_house_time_is_a_warning_once_and_the_word_clears_it() -> None:
    t = confirming_table(confirm_within_s=20)
    t.round(*BANKER_NATURAL, round_id="R1")
    assert t.alerts(t.tick(19.5)) == []
    late = t.tick(1.0)
    (alert,) = [e for e in late if e.kind == "alert"]
    assert (alert.code, alert.severity) == ("RESULT_UNCONFIRMED", "warning")
    assert alert.message == "Hand 1: declare the winner on the screen"
    assert t.alerts(t.tick(30.0)) == []  # once
    out = declare(t, "banker")
    cleared = [e for e in out if e.kind == "alert"]
    assert [(a.alert_id, a.acknowledged, a.get("cleared")) for a in cleared] == [(alert.alert_id, True, True)]
    assert t.last_round().phase == "complete"
    assert t.v.state()["alerts"] == []


def test_a_card_before_the_word_is_set_aside_and_opens_no_round() -> None:
    t = confirming_table(round_control="auto")
    t.cards(*BANKER_NATURAL)
    out = t.card("5S")
    assert [(e.kind, e.get("position")) for e in out] == [("card", "discard"), ("alert", None)]
    assert out[1].message == "Extra card 5S: declare hand 1's winner first - set it aside"
    assert t.v.state()["round"]["phase"] == "confirming"
    declare(t, "banker")
    t.cards("9H", "2S", "9C", "3D")  # the next hand opens on its own card once the word is said
    assert [r.phase for r in t.rounds()][-1] == "confirming"


def test_refused_declarations_change_nothing() -> None:
    t = confirming_table()
    with pytest.raises(CommandRejected, match="no hand awaits"):
        declare(t, "banker")
    t.round(*BANKER_NATURAL, round_id="R1")
    before = t.v.snapshot()
    with pytest.raises(CommandRejected, match="dragon is not a result at punto_banco"):
        declare(t, "dragon")
    with pytest.raises(CommandRejected, match="round R0 is not the round on the table"):
        declare(t, "banker", round_id="R0")
    assert t.v.snapshot() == before


def test_dragon_tiger_declares_its_own_sides() -> None:
    t = confirming_table(game="dragon_tiger")
    t.round("KS", "2C", round_id="R1")
    with pytest.raises(CommandRejected, match="banker is not a result at dragon_tiger"):
        declare(t, "banker")
    (complete,) = t.rounds(declare(t, "dragon"))
    assert (complete.winner, complete.phase) == ("dragon", "complete")


def test_a_restart_keeps_the_hand_waiting_and_a_restore_keeps_its_word_due() -> None:
    t = confirming_table(confirm_within_s=20)
    t.round(*BANKER_NATURAL, round_id="R1")
    t.restarted()  # all its cards are in: nothing of it was lost
    assert t.v.state()["round"]["phase"] == "confirming"
    restored = Validator.restore("T1", t.v._rules, json.loads(json.dumps(t.v.snapshot())))
    TableState.model_validate(json.loads(json.dumps(restored.state())))
    t.v = restored
    assert [e.code for e in t.tick(25) if e.kind == "alert"] == ["RESULT_UNCONFIRMED"]
    assert t.last_round().phase == "confirming"
    assert t.rounds(declare(t, "banker"))[0].phase == "complete"


def test_a_supervisor_may_void_the_hand_awaiting_its_word() -> None:
    t = confirming_table()
    t.round(*BANKER_NATURAL, round_id="R1")
    (void,) = t.rounds(t.cmd("void_round", reason="cards disputed"))
    assert (void.phase, void.reason) == ("void", "OPERATOR_VOID")


def test_the_shoes_button_declares_for_the_dealer_signed_in_and_elsewhere_is_the_devices_alone() -> None:
    rules = HouseRules(burn="none", confirm_result=True, suspend_on=())
    table = LiveTable("T1", rules, driver="framed")
    ts = 1_700_000_000.0
    table.command("new_shoe", {"shoe_id": "S1"}, ts)
    table.command("dealer_sign_in", {"dealer_id": "D-7"}, ts, Actor("gameserver", "D-7", "dealer"))
    table.command("betting_open", {}, ts + 1)
    table.command("betting_close", {}, ts + 2)
    for i, card in enumerate(BANKER_NATURAL):
        table.device_event(ts + 3 + i, DeviceCard(card))
    assert table.device_event(ts + 8, DeviceButton("reveal", ack=9)).events == []  # not a winner: nothing
    out = table.device_event(ts + 9, DeviceButton("banker", ack=10))
    (complete,) = [e for e in out.events if e.kind == "round"]
    assert (complete["confirmed_by"], complete["confirmed_via"], complete.winner) == ("D-7", "shoe", "banker")
    assert out.ack == 10
    # Pressed again: no hand awaits a word, and the press is nothing but acknowledged.
    again = table.device_event(ts + 10, DeviceButton("banker", ack=11))
    assert (again.events, again.ack) == ([], 11)

    plain = LiveTable("T1", HouseRules(burn="none"), driver="framed")
    assert plain.device_event(ts, DeviceButton("banker", ack=3)).judged is None
