"""Each round names its game (docs/mqtt.md, The game and its facts): game, variant, the house's paytable."""

from __future__ import annotations

import json

import pytest
from pydantic import ValidationError

from scannerd.contract.events import RoundEvent, ShoeEvent
from scannerd.contract.table_state import TableState
from scannerd.core.house import HouseRules
from tests.support.table import Table

NATURAL = ("9H", "2S", "9C", "3D")


def test_a_complete_round_and_the_shoe_name_the_game_variant_and_paytable() -> None:
    t = Table(burn="none", commission="ez", paytable="PB-EZ-2026")
    shoe = t.cmd("new_shoe", shoe_id="S1")[-1]
    t.round(*NATURAL, round_id="R1")
    complete = t.last_round()
    want = {"game": "punto_banco", "variant": "ez", "paytable": "PB-EZ-2026"}
    assert dict(complete.identity) == dict(shoe.identity) == want
    assert t.v.state()["shoe"]["identity"] == want
    RoundEvent.model_validate(json.loads(json.dumps(complete)))
    ShoeEvent.model_validate(json.loads(json.dumps(shoe)))
    TableState.model_validate(json.loads(json.dumps(t.v.state())))


def test_only_a_complete_round_states_it_and_without_a_paytable_it_says_none() -> None:
    t = Table(burn="none", game="dragon_tiger")
    t.cmd("new_shoe", shoe_id="S1")
    t.round("KS", None, round_id="R1")  # an unreadable card: void
    assert [r.phase for r in t.rounds()][-1] == "void"
    assert not any("identity" in r for r in t.rounds())
    t.round("KS", "2C", round_id="R2")
    assert dict(t.last_round().identity) == {"game": "dragon_tiger", "variant": "standard"}


def test_a_table_from_before_games_were_chosen_states_none() -> None:
    t = Table(burn="none", game=None)
    shoe = t.cmd("new_shoe", shoe_id="S1")[-1]
    t.round(*NATURAL, round_id="R1")
    assert "identity" not in t.last_round() and "identity" not in shoe


@pytest.mark.parametrize("name", ["", "two words", "x" * 65, "pay/table"])
def test_a_paytable_name_that_could_not_be_a_ticket_id_is_refused(name: str) -> None:
    with pytest.raises(ValidationError, match="paytable"):
        HouseRules(paytable=name)
