"""A table that stops after a malfunction until a supervisor resumes it (docs/validator.md, Suspension)."""

from __future__ import annotations

import json

import pytest

from scannerd.core.house import SUSPEND_ON
from scannerd.core.inputs import Actor, Command, Fault, Restarted
from scannerd.core.validator import CommandRejected, Validator
from scannerd.recording.format import Header
from tests.support.table import Table

SUPERVISOR = Actor("gameserver", "S-1", "supervisor")


def suspended_table(**rules) -> Table:
    t = Table(suspend_on=SUSPEND_ON, burn="none", **rules)
    t.cmd("new_shoe", shoe_id="S1")
    return t


def suspension(t: Table, events=None) -> list:
    return [e for e in (t.events if events is None else events) if e.kind == "suspension"]


@pytest.mark.parametrize(
    "cause",
    ["DEVICE_FAULT", "DAEMON_RESTARTED", "STATE_LOST", "FOREIGN_CARD", "UNREADABLE_REPEATED"],
)
def test_each_default_cause_voids_the_round_and_suspends_the_table(cause: str) -> None:
    t = suspended_table(decks=1)
    t.round("9H", round_id="R1")  # dealing: one card in
    if cause in ("DEVICE_FAULT", "STATE_LOST"):
        out = t._feed(Fault(t.step(), cause, "the shoe says so"))
    elif cause == "DAEMON_RESTARTED":
        out = t.restarted()
    elif cause == "FOREIGN_CARD":
        out = t.card("9H")  # one deck: a second nine of hearts
    else:
        out = t.card(None)  # unreadable: void; two more in the next round's run make three
        t.round(round_id="R2")
        t.card(None)
        t.round(round_id="R3")
        out = t.card(None)
    (stop,) = suspension(t, out)
    assert (stop.suspended, stop.cause) == (True, cause)
    assert out[-1] is stop  # last of the input
    assert t.v.round.phase == "void" and t.v.state()["suspended"]["cause"] == cause
    with pytest.raises(CommandRejected, match="suspended"):
        t.v.handle(Command(t.step(), "betting_open", {}))


def test_a_restart_during_the_burn_warns_without_suspending() -> None:
    t = Table(suspend_on=SUSPEND_ON)  # a burn by the first card's value
    t.cmd("new_shoe", shoe_id="S1")
    t.card("5H")
    assert t.alerts(t.restarted()) == ["DAEMON_RESTARTED"]
    assert suspension(t) == [] and t.v.suspended is None


def test_cards_drawn_while_suspended_are_set_aside_as_misdeals_and_change_nothing_else() -> None:
    t = suspended_table()
    t._feed(Fault(t.step(), "DEVICE_FAULT", "jam"))
    out = t.card("KD")
    assert [e.kind for e in out] == ["card", "alert"]
    assert (out[0].position, out[0].round_id, out[1].code) == ("discard", None, "CARD_WHILE_SUSPENDED")
    assert t.v.round is None and t.v.shoe.cards_dealt == 1


def test_auto_rounds_open_no_round_while_suspended() -> None:
    t = suspended_table(round_control="auto", betting_time_s=10)
    t._feed(Fault(t.step(), "DEVICE_FAULT", "jam"))
    t.tick(30)
    assert t.v.round is None or t.v.round.phase in ("void", "complete")
    assert t.alerts(t.card("KD"))[-1] == "CARD_WHILE_SUSPENDED"


def test_only_a_supervisor_resumes_and_the_game_server_must_name_one() -> None:
    t = suspended_table()
    t._feed(Fault(t.step(), "DEVICE_FAULT", "jam"))
    since = t.v.suspended["since"]

    def resume(actor: Actor | None, **args) -> list:
        return t.v.handle(Command(t.step(), "resume", {"reason": "checked", **args}, actor))

    with pytest.raises(CommandRejected, match="supervisor_id is required"):
        resume(Actor("gameserver", "gameserver"))
    with pytest.raises(CommandRejected, match="not a supervisor"):
        resume(Actor("gameserver", "D-1", "dealer"), supervisor_id="D-1")
    with pytest.raises(CommandRejected, match="not on the table's staff list"):
        resume(Actor("gameserver", "X-9", "unknown"), supervisor_id="X-9")
    with pytest.raises(CommandRejected, match="not a supervisor"):
        resume(Actor("display", "D-1", "dealer", "right"))
    with pytest.raises(CommandRejected, match="PIN"):
        resume(Actor("display", role="unknown"))  # a staff list, and nobody typed anything
    assert t.v.suspended is not None  # refused: still suspended
    (back,) = resume(SUPERVISOR, supervisor_id="S-1")
    assert (back.suspended, back.by, back.via, back.reason) == (False, "S-1", "gameserver", "checked")
    assert (back.cause, back.since) == ("DEVICE_FAULT", since)
    assert "suspended" not in t.v.state()
    t.round(round_id="R2")  # betting opens again
    with pytest.raises(CommandRejected, match="not suspended"):
        resume(SUPERVISOR, supervisor_id="S-1")


def test_the_pit_resumes_as_its_broker_user() -> None:
    t = suspended_table()
    t._feed(Fault(t.step(), "STATE_LOST", "lost"))
    (back,) = t.v.handle(Command(t.step(), "resume", {"reason": "checked"}, Actor("pit", "boss")))
    assert (back.by, back.via) == ("boss", "pit")


def test_a_suspension_survives_a_restart_and_a_new_shoe_but_not_a_resume() -> None:
    t = suspended_table()
    t._feed(Fault(t.step(), "DEVICE_FAULT", "jam"))
    restored = Validator.restore("T1", t.v.rules, json.loads(json.dumps(t.v.snapshot())))
    assert restored.suspended == t.v.suspended
    restored.handle(Command(t.step(), "new_shoe", {"shoe_id": "S2"}))
    assert restored.suspended is not None  # a fresh shoe is the fix for a shuffle, not the clearance


def test_one_suspension_at_a_time_and_an_unlisted_code_does_not_suspend() -> None:
    t = suspended_table(decks=1)
    t._feed(Fault(t.step(), "DEVICE_FAULT", "jam"))
    t.card("9H")
    t.card("9H")  # foreign, while suspended: its alert, no second suspension
    assert len(suspension(t)) == 1
    quiet = Table(suspend_on=["FOREIGN_CARD"])
    quiet.cmd("new_shoe")
    quiet._feed(Fault(quiet.step(), "DEVICE_FAULT", "jam"))
    assert quiet.v.suspended is None


def test_a_recording_from_before_suspension_suspends_on_nothing() -> None:
    header = Header.model_validate(
        {"table_id": "T1", "driver": "framed", "started_at": "2024-05-01T12:00:00Z", "rules": {"decks": 8}}
    )
    assert header.rules.suspend_on == ()
    assert "suspend_on" not in json.loads(header.to_json())["rules"]  # written back as it was read


def test_restarting_with_a_round_open_suspends_a_table_that_lists_it() -> None:
    t = suspended_table()
    t.round(round_id="R1")
    out = t._feed(Restarted(t.step(), "stopped"))
    assert [e.kind for e in out] == ["alert", "round", "shoe", "suspension"]
