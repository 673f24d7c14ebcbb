"""Who took an action: every operator event names them, and a wrong PIN counts towards a lockout."""

from __future__ import annotations

import json

import pytest

from scannerd.core.inputs import Actor, Command
from scannerd.core.validator import CommandRejected, Validator
from tests.support.table import Table

LOCK_S = 300.0


def act(t: Table, name: str, actor: Actor | None, **args) -> list:
    return t.v.handle(Command(t.step(), name, args, actor))


def refused(t: Table, name: str, actor: Actor, **args) -> CommandRejected:
    with pytest.raises(CommandRejected) as caught:
        act(t, name, actor, **args)
    return caught.value


def pin(staff_id: str, verdict: str, role: str = "dealer") -> Actor:
    return Actor("display", staff_id, role, verdict)  # type: ignore[arg-type]


def test_every_operator_action_names_who_took_it_and_through_what() -> None:
    t = Table(burn="none")
    desk = Actor("gameserver", "gameserver")
    (shoe,) = act(t, "new_shoe", desk, shoe_id="S1")
    (signed,) = act(t, "dealer_sign_in", pin("D-1", "right"), dealer_id="D-1")
    (extra, alert) = t.card("7H")
    (acked,) = act(t, "ack_alert", Actor("display"), alert_id=alert.alert_id)  # no PIN: the dealer
    act(t, "betting_open", desk)
    void, _ = act(t, "void_round", Actor("pit", "boss"), reason="dispute")
    (out,) = act(t, "dealer_sign_out", Actor("display"))
    assert [(e.kind, e.by, e.via) for e in (shoe, signed, void, acked, out)] == [
        ("shoe", "gameserver", "gameserver"),
        ("dealer", "D-1", "display"),
        ("round", "boss", "pit"),
        ("alert", "D-1", "display"),
        ("dealer", "D-1", "display"),
    ]
    assert "by" not in alert and "by" not in extra  # a card's events are no one's action


def test_without_actors_the_events_are_what_they_were() -> None:
    """A recording from before actions carried who took them replays to the same bytes."""
    t = Table(burn="none")
    (shoe,) = t.cmd("new_shoe", shoe_id="S1")
    (signed,) = t.cmd("dealer_sign_in", dealer_id="D-1")
    assert "by" not in shoe and "via" not in signed


def test_wrong_pins_in_a_row_lock_the_id_and_warn_the_pit() -> None:
    t = Table(burn="none", pin_attempts=3, pin_lockout_s=LOCK_S)
    for _ in range(2):
        exc = refused(t, "dealer_sign_in", pin("D-1", "wrong"), dealer_id="D-1")
        assert str(exc) == "wrong staff id or PIN" and exc.events == []
    exc = refused(t, "dealer_sign_in", pin("D-1", "wrong"), dealer_id="D-1")
    (lockout,) = exc.events
    assert (lockout.code, lockout.severity) == ("PIN_LOCKOUT", "warning")
    assert "D-1" in lockout.message and "5 min" in lockout.message
    assert "locked" in str(refused(t, "dealer_sign_in", pin("D-1", "right"), dealer_id="D-1"))
    assert t.v.dealer_id is None
    t.step(LOCK_S)
    (signed,) = act(t, "dealer_sign_in", pin("D-1", "right"), dealer_id="D-1")
    assert signed.by == "D-1"


def test_a_right_pin_starts_the_count_again() -> None:
    t = Table(burn="none", pin_attempts=3)
    refused(t, "dealer_sign_in", pin("D-1", "wrong"), dealer_id="D-1")
    refused(t, "dealer_sign_in", pin("D-1", "wrong"), dealer_id="D-1")
    act(t, "dealer_sign_in", pin("D-1", "right"), dealer_id="D-1")
    assert refused(t, "dealer_sign_in", pin("D-1", "wrong"), dealer_id="D-1").events == []


def test_an_unknown_id_gets_the_words_of_a_wrong_pin_and_locks_nothing() -> None:
    t = Table(burn="none", pin_attempts=1)
    for _ in range(3):
        exc = refused(t, "dealer_sign_in", pin("NOBODY", "wrong", "unknown"), dealer_id="NOBODY")
        assert str(exc) == "wrong staff id or PIN" and exc.events == []
    assert t.v.lockouts.snapshot() is None  # nothing counted that could grow without bound


def test_a_lock_survives_a_restart() -> None:
    t = Table(burn="none", pin_attempts=1)
    refused(t, "dealer_sign_in", pin("D-1", "wrong"), dealer_id="D-1")
    restored = Validator.restore("T1", t.v.rules, json.loads(json.dumps(t.v.snapshot())))
    with pytest.raises(CommandRejected, match="locked"):
        restored.handle(Command(t.step(), "dealer_sign_in", {"dealer_id": "D-1"}, pin("D-1", "right")))


def test_the_game_server_vouches_only_for_staff_on_the_list() -> None:
    t = Table(burn="none")
    exc = refused(t, "dealer_sign_in", Actor("gameserver", "X-9", "unknown"), dealer_id="X-9")
    assert "not on the table's staff list" in str(exc)
    (signed,) = act(t, "dealer_sign_in", Actor("gameserver", "D-1", "dealer"), dealer_id="D-1")
    assert (signed.by, signed.via) == ("D-1", "gameserver")


def test_acknowledging_needs_a_pin_where_the_house_says_so() -> None:
    t = Table(burn="none", ack_needs_pin=True)
    t.cmd("new_shoe")
    (_, alert) = t.card("7H")
    exc = refused(t, "ack_alert", Actor("display", role="unknown"), alert_id=alert.alert_id)
    assert "PIN" in str(exc) and alert.alert_id in t.v.open_alerts  # refused: still open
    (acked,) = act(t, "ack_alert", pin("D-2", "right"), alert_id=alert.alert_id)
    assert (acked.acknowledged, acked.by) == (True, "D-2")
