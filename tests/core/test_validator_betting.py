"""The table's betting procedure and who deals: betting time, the table closing betting itself, sign-in.

The house procedure: the timer counts the betting time down, and when it has run out the dealer
announces NO MORE BETS. With a game server the daemon only carries the time (the server closes
betting); with ``round_control = "auto"`` the table closes betting itself when the time runs out,
and opens it again as soon as a hand is over. A dealer signed in is carried by every round opened.
"""

from __future__ import annotations

import json

import pytest

from scannerd.contract.events import EventData
from scannerd.contract.requests import RequestError, parse_request
from scannerd.contract.topics import encode_data
from scannerd.core.house import HouseRules
from scannerd.core.inputs import CardDrawn, ClockStepped, Command, LinkChanged, Tick, ValidatorInput
from scannerd.core.validator import CommandRejected, Validator

T0 = 1_700_000_000.0
NATURAL = ("9H", "2S", "9C", "3D")
AUTO = HouseRules(burn="none", round_control="auto", betting_time_s=15)


def run(v: Validator, inputs: list[ValidatorInput]) -> list[EventData]:
    return [e for inp in inputs for e in v.handle(inp)]


def rounds(events: list[EventData]) -> list[tuple[str, float]]:
    return [(e.phase, e.ts) for e in events if e.kind == "round"]


def test_betting_open_carries_the_betting_time_and_when_it_runs_out():
    v = Validator("T1", HouseRules(burn="none", betting_time_s=20))
    (opened,) = v.handle(Command(T0, "betting_open", {"round_id": "R1", "betting_time_s": 12.5}))
    assert (opened.betting_time_s, opened.betting_ends_ts) == (12.5, T0 + 12.5)
    assert v.state()["round"]["betting_ends_ts"] == T0 + 12.5
    # With a game server the table never closes betting itself: the server does.
    assert v.handle(Tick(T0 + 60)) == [] and v.round.phase == "betting"
    v.handle(Command(T0 + 61, "betting_close", {}))
    v.handle(Command(T0 + 62, "void_round", {}))
    (second,) = v.handle(Command(T0 + 63, "betting_open", {"round_id": "R2"}))
    assert (second.betting_time_s, second.betting_ends_ts) == (20, T0 + 83)  # the house's time


def test_a_whole_number_of_seconds_is_answered_as_the_round_event_gives_it():
    """``get_state`` says the betting time as the round's event does, a float, whatever number the game
    server sent: the compiled build keeps it as the float its type says, and the pure one answers alike."""
    v = Validator("T1", HouseRules(burn="none"))
    (opened,) = v.handle(Command(1_700_000_000, "betting_open", {"round_id": "R1", "betting_time_s": 20}))
    state = v.state()["round"]
    assert encode_data(opened).endswith(b'"betting_time_s":20.0,"betting_ends_ts":1700000020.0}')
    assert json.dumps([state["betting_time_s"], state["betting_ends_ts"]]) == "[20.0, 1700000020.0]"


def test_without_a_betting_time_the_round_events_are_as_before():
    v = Validator("T1", HouseRules(burn="none"))
    (opened,) = v.handle(Command(T0, "betting_open", {"round_id": "R1"}))
    assert b"betting_time_s" not in encode_data(opened) and b"betting_ends_ts" not in encode_data(opened)
    assert "betting_ends_ts" not in v.state()["round"]


def test_in_auto_round_control_the_table_opens_and_closes_betting_by_itself():
    v = Validator("T1", AUTO)
    events = run(v, [LinkChanged(T0, up=True)])  # the shoe reports in: betting opens
    assert rounds(events) == [("betting", T0)]
    early = run(v, [CardDrawn(T0 + 3, "5C")])  # drawn while bets are still being placed
    assert [e.code for e in early if e.kind == "alert"] == ["CARD_BEFORE_BETS_CLOSED"]
    assert run(v, [Tick(T0 + 14.6)]) == []
    # The time ran out at T0+15; the tick that finds it closes betting at that moment.
    assert rounds(run(v, [Tick(T0 + 15.4)])) == [("dealing", T0 + 15)]
    dealt = run(v, [CardDrawn(T0 + 20 + n, c) for n, c in enumerate(NATURAL)])
    # The hand is over, and betting for the next opens at once.
    assert rounds(dealt) == [("complete", T0 + 23), ("betting", T0 + 23)]
    assert v.round.hand_no == 2 and v.round.betting_ends == T0 + 38


def test_betting_closes_at_the_same_moment_whichever_input_finds_the_time_over():
    """Live ticks and replayed ones fall a fraction of a second apart: the events must not."""

    def session(tick_offset: float, card_at: float) -> list[bytes]:
        v = Validator("T1", AUTO)
        inputs: list[ValidatorInput] = [LinkChanged(T0, up=True)]
        inputs += [Tick(T0 + n + tick_offset) for n in range(1, 17)]
        inputs += [CardDrawn(card_at + n, c) for n, c in enumerate(NATURAL)]
        return [encode_data(e) for e in run(v, inputs)]

    live = session(0.3, T0 + 17)
    assert live == session(0.8, T0 + 17)
    # No tick at all before the first card: the card itself finds the time over.
    v = Validator("T1", AUTO)
    events = run(v, [LinkChanged(T0, up=True), CardDrawn(T0 + 17, "9H")])
    assert rounds(events) == [("betting", T0), ("dealing", T0 + 15)]
    assert [e.position for e in events if e.kind == "card"] == ["player1"]


def test_the_table_waits_for_its_shoe_before_opening_betting():
    v = Validator("T1", AUTO)
    assert rounds(run(v, [LinkChanged(T0, up=False)])) == []  # no shoe, no betting
    assert rounds(run(v, [LinkChanged(T0 + 5, up=True)])) == [("betting", T0 + 5)]


def test_a_dealer_signed_in_is_carried_by_every_round_opened_after():
    v = Validator("T1", HouseRules(burn="none"))
    v.handle(Command(T0, "betting_open", {"round_id": "R1"}))
    (signed,) = v.handle(Command(T0 + 1, "dealer_sign_in", {"dealer_id": "D-117"}))
    assert (signed.kind, signed.dealer_id) == ("dealer", "D-117")
    assert v.state()["dealer_id"] == "D-117"
    # R1 opened before the sign-in: it keeps the dealer it opened with (none).
    (closed,) = v.handle(Command(T0 + 2, "betting_close", {}))
    assert closed.dealer_id is None
    events = run(v, [CardDrawn(T0 + 3 + n, c) for n, c in enumerate(NATURAL)])
    events += v.handle(Command(T0 + 10, "betting_open", {"round_id": "R2"}))
    assert [e.dealer_id for e in events if e.kind == "round"] == [None, "D-117"]
    assert v.state()["round"]["dealer_id"] == "D-117"

    restored = Validator.restore("T1", v.rules, v.snapshot())  # a daemon restart keeps the dealer
    assert restored.dealer_id == "D-117" and restored.round.dealer_id == "D-117"
    (out,) = v.handle(Command(T0 + 11, "dealer_sign_out", {}))
    assert out.dealer_id is None and "dealer_id" not in v.state()
    with pytest.raises(CommandRejected, match="no dealer is signed in"):
        v.handle(Command(T0 + 12, "dealer_sign_out", {}))


@pytest.mark.parametrize(
    ("command", "payload", "error"),
    [
        ("betting_open", b'{"betting_time_s": 0}', "betting_time_s: Input should be greater than 0"),
        ("betting_open", b'{"betting_time_s": 601}', "betting_time_s: Input should be less than or equal"),
        ("betting_open", b'{"betting_time_s": "15"}', "betting_time_s: Input should be a valid number"),
        ("dealer_sign_in", b"{}", "dealer_id: Field required"),
        ("dealer_sign_in", b'{"dealer_id": " "}', "dealer_id: must not be blank"),
        ("dealer_sign_out", b'{"dealer_id": "D-1"}', "dealer_id: Extra inputs are not permitted"),
    ],
)
def test_bad_betting_times_and_dealer_ids_are_refused_in_one_line(command, payload, error):
    with pytest.raises(RequestError) as exc:
        parse_request(command, payload)
    assert error in str(exc.value) and "\n" not in str(exc.value)


def test_a_clock_step_moves_the_end_of_betting_with_it():
    """NTP stepping the clock while bets are placed must neither cut the betting short nor stretch it."""
    v = Validator("T1", AUTO)
    run(v, [LinkChanged(T0, up=True)])
    v.handle(ClockStepped(T0 + 3605, step=3600.0))  # five seconds in, the clock jumps an hour ahead
    assert rounds(run(v, [Tick(T0 + 3614)])) == []
    assert rounds(run(v, [Tick(T0 + 3615.2)])) == [("dealing", T0 + 3615)]
