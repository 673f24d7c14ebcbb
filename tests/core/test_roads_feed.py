"""The roads in the feed (docs/mqtt.md, The scoreboard in the feed): every shoe event and ``get_state``
carry the shoe's five roads and the ask marks as columns of cells, so a game server draws the table's
own scoreboard without deriving it again."""

from __future__ import annotations

import json
import random

from hypothesis import given, settings
from hypothesis import strategies as st

from scannerd.contract.events import ShoeEvent, ShoeRoads
from scannerd.contract.table_state import TableState
from scannerd.core.cards import ALL_CARDS
from scannerd.core.roads import DERIVED, Result, Roads, scoreboard
from scannerd.core.validator import Validator
from tests.support.table import Table

LETTERS = {"banker": "B", "player": "P", "tie": "T"}
WINNER = {"B": "banker", "P": "player", "T": "tie"}


def roads_of(text: str) -> Roads:
    roads = Roads(LETTERS)
    for c in text:
        roads.add(Result(WINNER[c]))  # type: ignore[arg-type]
    return roads


def test_a_short_shoe_in_columns_of_six() -> None:
    """B B P T P B, worked by hand: the bead road holds all six hands in one column; the big road three
    columns, the tie marked on the first player win; Big Eye Boy starts at the second column's second
    row (column 1 has a second win beside it: red), then the third column opens (columns 2 and 1 are
    as long: red), one red run; Small Road would start at the third column's second row: nothing yet."""
    got = roads_of("BBPTPB").columns(("player", "banker"))
    empty = [None] * 6
    assert got["rows"] == 6
    assert got["bead"] == [("B", "B", "P", "T", "P", "B")]
    assert got["big"] == [("B", "B", *empty[2:]), ("P1", "P", *empty[2:]), ("B", *empty[1:])]
    assert got["big_eye_boy"] == [("red", "red", *empty[2:])]
    assert got["small_road"] == [] and got["cockroach_pig"] == []
    ShoeRoads.model_validate(json.loads(json.dumps(got)))


def _cells(grid: list) -> dict[tuple[int, int], str]:
    return {(c, r): v for c, column in enumerate(grid) for r, v in enumerate(column) if v is not None}


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet="BPT", max_size=90))
def test_the_columns_are_the_screens_cells_whatever_the_shoe(text: str) -> None:
    """The feed's columns and the cells the screens draw come from one derivation: cell for cell."""
    roads = roads_of(text)
    board = scoreboard([Result(WINNER[c]) for c in text], ("player", "banker"))  # type: ignore[arg-type]
    got = roads.columns(("player", "banker"))
    assert _cells(got["bead"]) == {(c["col"], c["row"]): c["winner"][0].upper() for c in board["bead"]}
    big = {
        (c["col"], c["row"]): (LETTERS[c["winner"]] if c["winner"] else "T")
        + (str(c["ties"]) if c["ties"] else "")
        for c in board["big"]
    }
    assert _cells(got["big"]) == big
    for name in DERIVED:
        assert _cells(got[name]) == {(c["col"], c["row"]): c["mark"] for c in board[name]}
        assert all(len(column) == 6 for column in got[name])
    assert got["ask"] == board["ask"]


def test_every_shoe_event_carries_the_roads_of_the_hands_before_it_and_get_state_the_same() -> None:
    t = Table(burn="none")
    t.cmd("new_shoe", shoe_id="S1")
    first = [e for e in t.events if e.kind == "shoe"][-1]
    assert first["roads"]["big"] == [] and first["roads"]["bead"] == []  # a shoe's roads start empty
    cards = [c for _ in range(8) for c in ALL_CARDS]
    random.Random(5).shuffle(cards)
    said: list[tuple[dict, dict]] = []
    for n in range(40):
        t.cmd("betting_open", round_id=f"R{n}")
        t.cmd("betting_close")
        while t.v.state()["round"]["phase"] == "dealing":
            t.card(cards.pop())
        shoe = [e for e in t.events if e.kind == "shoe"][-1]
        said.append((shoe, json.loads(json.dumps(shoe["roads"]))))
        results = t.v.state()["results"]
        assert len(results) == n + 1
    for shoe, then in said:
        assert json.loads(json.dumps(shoe["roads"])) == then  # what an event carried never changes after
        ShoeEvent.model_validate(json.loads(json.dumps(shoe)))
    state = t.v.state()
    assert state["roads"] == said[-1][0]["roads"]
    TableState.model_validate(json.loads(json.dumps(state)))
    # A restart rebuilds them from the results it saved: the same columns.
    restored = Validator.restore("T1", t.v._rules, json.loads(json.dumps(t.v.snapshot())))
    assert json.loads(json.dumps(restored.state()["roads"])) == json.loads(json.dumps(state["roads"]))
    # The next shoe starts empty.
    t.cmd("new_shoe", shoe_id="S2")
    assert [e for e in t.events if e.kind == "shoe"][-1]["roads"]["bead"] == []


def test_dragon_tiger_roads_use_its_letters() -> None:
    t = Table(burn="none", game="dragon_tiger")
    t.cmd("new_shoe", shoe_id="S1")
    t.round("KS", "2C", round_id="R1")  # dragon
    t.round("2S", "2C", round_id="R2")  # tie
    t.round("2S", "KC", round_id="R3")  # tiger
    roads = [e for e in t.events if e.kind == "shoe"][-1]["roads"]
    assert roads["bead"][0][:3] == ("D", "T", "G")
    assert (roads["big"][0][0], roads["big"][1][0]) == ("D1", "G")
    assert set(roads["ask"]) == {"dragon", "tiger"}
