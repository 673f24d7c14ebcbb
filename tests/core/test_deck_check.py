"""The deck check at the shoe's end (docs/validator.md, The shoe): count mode, the receipt, its alerts."""

from __future__ import annotations

import json

import pytest

from scannerd.contract.events import DeckCheckEvent
from scannerd.core.cards import ALL_CARDS
from scannerd.core.house import SUSPEND_ON
from scannerd.core.inputs import Actor, Command, DeviceNamed
from scannerd.core.validator import CommandRejected, Validator
from tests.support.table import Table

ONE_DECK = list(ALL_CARDS)


def one_deck_table(**rules) -> Table:
    """One deck, no burn: a shoe is 52 cards, counted in a few lines."""
    t = Table(decks=1, burn="none", **rules)
    t._feed(DeviceNamed(t.step(), "FS-8", "SN-0042"))
    t.cmd("new_shoe", shoe_id="S1")
    return t


def checks(t: Table, events=None) -> list:
    return [e for e in (t.events if events is None else events) if e.kind == "deck_check"]


def dealt_then_counted(t: Table, dealt: list[str | None], counted: list[str | None]) -> list:
    """Four cards to a hand (player wins 9-0: no third card), then the count of ``counted``."""
    t.round(*dealt)
    t.cmd("deck_check")
    t.cards(*counted)
    return t.cmd("deck_check", action="end")


HAND = ["4S", "AC", "5H", "TD"]  # player 4+5 = 9, banker 1+0 = 1: a natural, four cards
REST = [c for c in ONE_DECK if c not in HAND]


def test_a_full_shoe_counted_is_clean_and_its_receipt_names_the_shoe_the_device_and_the_dealer() -> None:
    t = one_deck_table()
    t._feed(Command(t.step(), "dealer_sign_in", {"dealer_id": "D-117"}))
    out = dealt_then_counted(t, HAND, REST)
    (receipt,) = checks(t, out)
    assert t.alerts(out) == []
    assert (receipt.status, receipt.shoe_id, receipt.dealt, receipt.counted) == ("done", "S1", 4, 48)
    assert (receipt.missing, receipt.surplus, receipt.unreadable, receipt.complete) == ([], [], 0, True)
    assert receipt.expected == 52 and receipt.by == "D-117"
    assert dict(receipt.device) == {"model": "FS-8", "serial": "SN-0042"}
    DeckCheckEvent.model_validate(json.loads(json.dumps(receipt)))


def test_the_count_closes_the_shoe_and_its_cards_are_counted_not_dealt_or_alerted() -> None:
    t = one_deck_table()
    t.round(*HAND)
    out = t.cmd("deck_check")
    assert [e.kind for e in out] == ["shoe", "deck_check"]
    assert (out[0].status, out[1].status, out[1].counted) == ("closed", "counting", 0)
    assert t.v.state()["deck_check"] == {"started": out[1].started, "dealt": 4, "counted": 0}
    cards = t.cards("2S", "2S")
    assert [(e.kind, e.position, e.shoe_card_no) for e in cards] == [
        ("card", "count", 5),
        ("card", "count", 6),
    ]
    assert t.v.shoe.cards_dealt == 4 and t.v.state()["deck_check"]["counted"] == 2
    with pytest.raises(CommandRejected, match=r"closed|finished"):
        t.v.handle(Command(t.step(), "betting_open", {}))


def test_a_card_removed_and_one_duplicated_are_both_named_and_alerted() -> None:
    t = one_deck_table(suspend_on=SUSPEND_ON)
    counted = [c for c in REST if c != "KH"] + ["7C"]  # KH taken out, a second 7C put in
    out = dealt_then_counted(t, HAND, counted)
    (receipt,) = checks(t, out)
    assert (receipt.missing, receipt.surplus, receipt.complete) == (["KH"], ["7C"], True)
    assert [e.kind for e in out] == ["deck_check", "alert", "alert", "suspension"]
    surplus, short = out[1:3]
    assert (surplus.code, short.code) == ("DECK_SURPLUS", "DECK_SHORT")
    assert "7C" in surplus.message and "KH" in short.message
    assert t.v.suspended is not None and t.v.suspended["cause"] == "DECK_SURPLUS"  # both suspend by default


def test_an_unread_card_makes_the_check_incomplete_and_a_missing_card_no_proof_of_short() -> None:
    t = one_deck_table()
    counted = [None if c == "KH" else c for c in REST]  # KH went through unread
    out = dealt_then_counted(t, HAND, counted)
    (receipt,) = checks(t, out)
    assert (receipt.missing, receipt.unreadable, receipt.complete) == (["KH"], 1, False)
    assert t.alerts(out) == ["DECK_CHECK_INCOMPLETE"]


def test_more_cards_missing_than_unread_is_short() -> None:
    t = one_deck_table()
    counted = [None if c == "KH" else c for c in REST if c != "QH"]
    out = dealt_then_counted(t, HAND, counted)
    assert t.alerts(out) == ["DECK_SHORT", "DECK_CHECK_INCOMPLETE"]
    assert checks(t, out)[0].missing == ["QH", "KH"]


def test_a_new_shoe_ends_the_count_with_its_receipt_first() -> None:
    t = one_deck_table()
    t.round(*HAND)
    t.cmd("deck_check")
    t.cards(*REST)
    out = t.cmd("new_shoe", shoe_id="S2")
    assert [e.kind for e in out] == ["deck_check", "shoe"]
    assert (out[0].shoe_id, out[0].status, out[0].missing) == ("S1", "done", [])
    assert t.v.state().get("deck_check") is None
    assert t.positions(t.card("2S")) == ["discard"] and t.v.shoe.cards_dealt == 1  # S2's, not counted


@pytest.mark.parametrize(
    ("setup", "args", "refusal"),
    [
        (lambda t: None, {"action": "end"}, "no deck check is under way"),
        (lambda t: t.cmd("betting_open"), {}, "still open"),
        (lambda t: t.cmd("deck_check"), {}, "already being counted"),
    ],
)
def test_a_count_refused_where_it_makes_no_sense_changes_nothing(setup, args, refusal) -> None:
    t = one_deck_table()
    setup(t)
    before = t.v.snapshot()
    with pytest.raises(CommandRejected, match=refusal):
        t.v.handle(Command(t.step(), "deck_check", args))
    assert t.v.snapshot() == before


def test_no_shoe_no_count() -> None:
    v = Validator("T1")
    with pytest.raises(CommandRejected, match="no shoe to count"):
        v.handle(Command(1.0, "deck_check", {}))


def test_a_count_under_way_and_the_device_survive_a_restart_of_the_state() -> None:
    t = one_deck_table()
    t.round(*HAND)
    t.cmd("deck_check")
    t.cards(*REST[:20])
    restored = Validator.restore("T1", t.v.rules, json.loads(json.dumps(t.v.snapshot())))
    t.v = restored
    t.cards(*REST[20:])
    (receipt,) = checks(t, t.cmd("deck_check", action="end"))
    assert (receipt.counted, receipt.missing, receipt.device["serial"]) == (48, [], "SN-0042")


def test_a_table_that_never_counted_saves_what_it_did_before() -> None:
    t = Table(decks=1, burn="none")
    t.cmd("new_shoe", shoe_id="S1")
    assert not {"deck_check", "shoe_device"} & set(t.v.snapshot())


def test_the_same_device_saying_hello_again_is_not_judged() -> None:
    t = one_deck_table()
    assert not t.v.named_anew("FS-8", "SN-0042")
    assert t.v.named_anew("FS-8", "SN-0043")


def test_the_display_counts_with_the_receipt_and_the_dealer_who_ended_it() -> None:
    t = one_deck_table()
    t.round(*HAND)
    t.cmd("deck_check")
    t.cards(*REST)
    out = t._feed(Command(t.step(), "deck_check", {"action": "end"}, Actor("display", "D-9")))
    (receipt,) = checks(t, out)
    assert (receipt.by, receipt.via) == ("D-9", "display")
