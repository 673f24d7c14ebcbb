"""Hand recall (docs/mqtt.md, Hand recall): the last ten hands, as dealt, in get_state and the saved state."""

from __future__ import annotations

import json

from scannerd.contract.table_state import TableState
from scannerd.core.inputs import Actor, Command
from scannerd.core.recall import KEPT
from scannerd.core.validator import Validator
from scannerd.display.view import TableView
from tests.support.table import Table

SIX = ("2H", "KS", "3C", "4D", "2C", "5S")  # Player 2+3=5 draws 2: 7; Banker K+4=4 draws 5: 9
NATURAL = ("9H", "2S", "9C", "3D")


def dealt(hands: int, **rules) -> Table:
    t = Table(burn="none", **rules)
    t.cmd("new_shoe", shoe_id="S1")
    t._feed(Command(t.step(), "dealer_sign_in", {"dealer_id": "D-117"}, Actor("gameserver", "gameserver")))
    for n in range(hands):
        t.round(*(SIX if n % 2 else NATURAL), round_id=f"R{n + 1}")
    return t


def test_the_last_ten_hands_are_recalled_oldest_first_each_as_dealt() -> None:
    t = dealt(12)
    recall = t.v.state()["recall"]
    assert len(recall) == KEPT == 10
    assert [h["round_id"] for h in recall] == [f"R{n}" for n in range(3, 13)]
    six = recall[-1]
    assert [(c["position"], c["card"]) for c in six["cards"]] == [
        ("player1", "2H"), ("banker1", "KS"), ("player2", "3C"), ("banker2", "4D"),
        ("player3", "2C"), ("banker3", "5S"),
    ]  # fmt: skip
    assert (six["phase"], six["winner"], six["totals"]) == ("complete", "banker", {"player": 7, "banker": 9})
    assert (six["dealer_id"], six["shoe_id"], six["hand_no"], six["misdeals"]) == ("D-117", "S1", 12, [])
    assert six["facts"] is not None and six["ended"] > six["betting_s"] >= 0
    TableState.model_validate(json.loads(json.dumps(t.v.state())))


def test_a_void_hand_is_recalled_with_its_reason_and_the_misdeals_raised_on_it() -> None:
    t = dealt(1)
    t.cmd("betting_open", round_id="R2")
    t.card("4S")  # before bets closed: a misdeal, the round goes on
    t.cmd("betting_close")
    t.cards("9H", None)  # an unreadable card: the round is void
    hand = t.v.state()["recall"][-1]
    assert (hand["round_id"], hand["phase"], hand["reason"]) == ("R2", "void", "UNREADABLE_CARD")
    assert hand["misdeals"] == ["CARD_BEFORE_BETS_CLOSED", "UNREADABLE_CARD"]
    assert [c["card"] for c in hand["cards"]] == ["9H"]


def test_the_recall_is_the_same_after_a_restart_and_left_out_until_a_hand_is_dealt() -> None:
    t = dealt(3)
    restored = Validator.restore("T1", t.v.rules, json.loads(json.dumps(t.v.snapshot())))
    assert restored.state()["recall"] == t.v.state()["recall"]
    fresh = Table(burn="none")
    fresh.cmd("new_shoe", shoe_id="S1")
    assert not {"recall", "recall_open"} & set(fresh.v.snapshot())
    assert "recall" not in fresh.v.state(results=False)  # a command's answer stays small


def test_the_screens_recall_what_the_table_does_newest_first() -> None:
    t = dealt(4)
    view = TableView("T1")
    view.load_state(t.v.state())
    for event in t.round(*SIX, round_id="R5"):
        view.apply(event)
    shown = view.snapshot()["recall"]
    assert [h["round_id"] for h in shown] == ["R5", "R4", "R3", "R2", "R1"]
    assert shown == t.v.state()["recall"][::-1]


def test_at_a_squeeze_table_a_hand_shows_its_faces_in_the_recall_only_once_revealed() -> None:
    t = dealt(1, squeeze=True)
    view = TableView("T1")
    view.load_state(t.v.state())
    for event in t.round(*NATURAL, round_id="R2"):
        view.apply(event)
    (held, _) = view.snapshot()["recall"]
    assert [c["card"] for c in held["cards"]] == ["back"] * 4 and held["winner"] is None
    assert t.v.state()["recall"][-1]["cards"][0]["card"] == "9H"  # the game server gets every card
    for event in t.cmd("reveal"):
        view.apply(event)
    (shown, _) = view.snapshot()["recall"]
    assert [c["card"] for c in shown["cards"]] == list(NATURAL) and shown["winner"] == "player"


def test_watch_draws_the_last_hands_one_line_each() -> None:
    from rich.console import Console

    from scannerd.commands.watch import recall_line, render

    t = dealt(2)
    view = TableView("T1")
    view.load_state(t.v.state())
    snapshot = view.snapshot()
    newest = snapshot["recall"][0]
    line = recall_line(newest, ["player", "banker"])
    assert line.startswith(
        "#2 BANKER WINS 7-9  P 2\u2665 3\u2663 2\u2663  B K\u2660 4\u2666 5\u2660  R2 D-117"
    )
    console = Console(width=120, record=True)
    console.print(render(snapshot, "online", True, "localhost:1883"))
    drawn = console.export_text()
    assert "Last hands, newest first" in drawn and "#1 PLAYER WINS" in drawn
