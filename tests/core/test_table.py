"""The pure table: what each input makes it do, the tick grid, and the saved state's one shape."""

from __future__ import annotations

import json

from drivers.events import DeviceButton, DeviceCard, DeviceHello, DeviceStatus, LinkUp
from scannerd.contract.events import CardData
from scannerd.contract.payloads import DevicePayload
from scannerd.contract.requests import parse_request
from scannerd.contract.table_state import ALERTS_ANSWERED, TableState
from scannerd.core.house import HouseRules
from scannerd.core.inputs import TICK_S, Tick
from scannerd.core.table import SavedState, Table

T0 = 1_700_000_000.0


def dealing(rules: HouseRules | None = None, **kwargs) -> Table:
    """A table whose round is open for cards."""
    table = Table("T1", rules or HouseRules(), driver="framed", **kwargs)
    for name in ("new_shoe", "betting_open", "betting_close"):
        table.request(parse_request(name, b"{}"), T0)
    return table


def test_a_card_is_acknowledged_only_once_its_events_are_stored_and_a_button_at_once() -> None:
    table = dealing()
    card = table.device_event(T0 + 1, DeviceCard("9H", ack=7))
    assert card.ack == 7 and card.ack_now is None
    assert [type(e) for e in card.events][:1] == [CardData] and card.judged is not None
    button = table.device_event(T0 + 2, DeviceButton("reveal", ack=8))
    assert (button.events, button.judged, button.ack, button.ack_now) == ([], None, None, 8)
    assert button.acks == [8]


def test_the_device_payload_comes_back_only_when_it_changed() -> None:
    table = Table("T1", HouseRules(), driver="framed", channel="/dev/shoe-1")
    up = table.device_event(T0, LinkUp("framed on /dev/shoe-1")).device
    assert up is not None and up.link == "up" and up.channel == "/dev/shoe-1"
    assert table.device_event(T0 + 1, DeviceHello("SHOE", "S1", "1.0", 3)).device is not None
    assert table.device_event(T0 + 2, DeviceStatus()).device is not None  # the first says how it is
    assert table.device_event(T0 + 3, DeviceStatus()).device is None  # a heartbeat like the last
    assert table.device_event(T0 + 4, DeviceStatus(jam=True)).device is not None


def test_a_request_comes_back_with_its_answer_and_is_judged_even_when_refused() -> None:
    table = Table("T1", HouseRules(), driver="beetek")
    refused = table.request(parse_request("betting_close", b'{"transaction": 5}'), T0)
    assert refused.response is not None and refused.response.status == "error"
    assert refused.response.transaction == 5 and refused.judged is not None  # a replay must answer it too
    state = table.request(parse_request("get_state", b"{}"), T0)
    assert state.judged is None and state.response is not None and state.response.status == "ok"


def test_a_card_only_notes_the_heartbeat_the_payload_is_copied_when_asked(monkeypatch) -> None:
    table = dealing()
    table.device_event(T0, LinkUp("framed"))
    copies = []
    real_copy = DevicePayload.model_copy

    def counted(self: DevicePayload, **kwargs: object) -> DevicePayload:
        copies.append(kwargs)
        return real_copy(self, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(DevicePayload, "model_copy", counted)
    for i, card in enumerate(("9H", "2C", "KD", "5S")):
        assert table.device_event(T0 + 1 + i, DeviceCard(card)).device is None
    assert copies == []  # the card path: no pydantic copy per card
    seen = table.device_view.payload
    assert (seen.link, seen.last_heartbeat) == ("up", T0 + 4)  # yet the view is up to date
    assert table.device_event(T0 + 5, LinkUp("framed")).device is None  # nothing new
    assert table.device_view.payload.last_heartbeat == T0 + 5


def test_a_table_restored_from_its_saved_state_judges_as_the_one_that_saved_it() -> None:
    first = dealing()
    first.device_event(T0 + 1, DeviceCard("9H"))
    saved = SavedState.from_dict(
        json.loads(json.dumps(first.saved_state({"boot_id": 3, "acked": 1}).to_dict()))
    )
    assert saved is not None and saved.device == {"boot_id": 3, "acked": 1}
    second = Table("T1", HouseRules(), driver="framed", saved=saved)
    after = [first.device_event(T0 + 2, DeviceCard("2C")), second.device_event(T0 + 2, DeviceCard("2C"))]
    assert after[0].events == after[1].events


def test_the_saved_state_has_one_shape() -> None:
    assert SavedState({"next_seq": 5}).to_dict() == {"validator": {"next_seq": 5}}
    assert SavedState({"next_seq": 5}, {"acked": 2}).to_dict() == {
        "validator": {"next_seq": 5},
        "device": {"acked": 2},
    }
    assert SavedState.from_dict(None) is None and SavedState.from_dict({"validator": None}) is None
    assert SavedState({"next_seq": 5}).skip_seq(1000).next_seq == 1005
    assert (
        SavedState({"shoe": None}).shoe == {}
        and SavedState({"shoe": {"shoe_id": "S1"}}).shoe["shoe_id"] == "S1"
    )


def test_the_tick_grid_judges_only_the_ticks_that_do_something() -> None:
    rules = HouseRules(stall_timeout_s=30)
    table = dealing(rules, ticks_from=T0)
    table.device_event(T0 + 1, DeviceCard("9H"))
    assert table.ticks(T0 + 30) == []  # not stalled yet
    stalled = table.ticks(T0 + 40)
    assert len(stalled) == 1 and isinstance(stalled[0].judged, Tick)
    assert stalled[0].judged.ts == T0 + 31 * TICK_S  # the first tick of the grid past the stall
    assert [e.code for e in stalled[0].events if e.kind == "alert"] == ["ROUND_STALLED"]
    assert table.ticks(T0 + 40) == []  # the grid went on; nothing is judged twice


def test_a_commands_answer_carries_the_newest_open_alerts_and_how_many_get_state_carries_them_all() -> None:
    """Nobody acknowledging, a table's open alerts only grow: every answer carrying them all grew each
    betting command's answer with the table's age, and its replay and audit with the square of it."""
    table = Table("T1", HouseRules(), driver="beetek")
    table.request(parse_request("new_shoe", b"{}"), T0)
    for n in range(40):  # the same card over and over: a foreign card each time, none acknowledged
        table.device_event(T0 + 1 + n, DeviceCard("9H"))
    open_ids = list(table.validator.open_alerts)
    assert len(open_ids) > ALERTS_ANSWERED

    answer = table.request(parse_request("dealer_sign_in", b'{"dealer_id": "D-1"}'), T0 + 60).response
    assert answer is not None and answer.status == "ok" and answer.data is not None
    assert [a["alert_id"] for a in answer.data["alerts"]] == open_ids[-ALERTS_ANSWERED:]
    assert answer.data["alerts_open"] == len(open_ids)
    TableState.model_validate(answer.data)

    whole = table.request(parse_request("get_state", b"{}"), T0 + 60).response
    assert whole is not None and whole.data is not None
    assert [a["alert_id"] for a in whole.data["alerts"]] == open_ids and "alerts_open" not in whole.data


def test_with_few_alerts_open_an_answer_is_as_it_always_was() -> None:
    table = dealing()
    table.device_event(T0 + 1, DeviceCard("9H"))
    answer = table.request(parse_request("dealer_sign_in", b'{"dealer_id": "D-1"}'), T0 + 2).response
    assert answer is not None and answer.data is not None and "alerts_open" not in answer.data
