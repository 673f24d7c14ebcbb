"""Each round names its game (docs/mqtt.md, The game and its facts): game, variant, the house's paytable."""

from __future__ import annotations

import json

import pytest
from pydantic import ValidationError

from scannerd.contract.events import GameIdentity, RoundEvent, ShoeEvent, Software
from scannerd.contract.table_state import TableState
from scannerd.core.house import HouseRules
from scannerd.core.inputs import Command
from scannerd.core.validator import Validator
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


def test_what_judged_the_hand_is_stated_beside_the_game_and_a_restore_keeps_stating_it() -> None:
    running = GameIdentity.running(
        "1.2.3", Software(source="wheel", digest="ab" * 32, intact=True, build="compiled"), "cd" * 32
    )
    t = Table(burn="none")
    t.v.run_under(running)
    shoe = t.cmd("new_shoe", shoe_id="S1")[-1]
    t.round(*NATURAL, round_id="R1")
    want = {
        "game": "punto_banco",
        "variant": "standard",
        "version": "1.2.3",
        "software": {"source": "wheel", "digest": "ab" * 32, "intact": True, "build": "compiled"},
        "config_digest": "cd" * 32,
    }
    assert dict(t.last_round().identity) == dict(shoe.identity) == want
    GameIdentity.model_validate(want)
    # A restore states what ran when the snapshot was taken, so the inputs journalled after it are
    # judged again into the same events; a start then states what runs now.
    restored = Validator.restore("T1", t.v._rules, json.loads(json.dumps(t.v.snapshot())))
    assert restored.snapshot() == t.v.snapshot()
    restored.run_under(GameIdentity.running("1.2.4", None, None))
    restored.handle(Command(2e9, "new_shoe", {"shoe_id": "S2"}))
    assert restored.state()["shoe"]["identity"] == {
        "game": "punto_banco",
        "variant": "standard",
        "version": "1.2.4",
    }
    # A table from before (no start has said what runs) keeps its snapshot's bytes.
    assert "running" not in Table(burn="none").v.snapshot()


def test_a_table_not_from_a_wheel_states_no_digest_but_its_build() -> None:
    running = GameIdentity.running("0.1.0", Software(source="not_from_a_wheel", build="pure"), None)
    identity = HouseRules().identity(running)
    assert identity is not None
    assert identity["software"] == {
        "source": "not_from_a_wheel",
        "digest": None,
        "intact": None,
        "build": "pure",
    }
    assert "config_digest" not in identity
