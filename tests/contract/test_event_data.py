"""Events built as plain data publish the very bytes of the contract's models.

The validator builds each event as ``EventData`` and ``scannerd.contract.topics``
encodes it with orjson, not through its pydantic model: the condition is that
every payload is byte for byte what the model gives for the same event, and
validates against it. Shown here over every golden session (what a replay
publishes, commands and all) and over generated input streams that reach
every kind of event and every field left out while unset.
"""

from __future__ import annotations

import contextlib
import json
import random
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from scannerd.contract.alert_catalogue import FAULT_CODES
from scannerd.contract.events import DealerData, EventData, RoundData
from scannerd.contract.requests import Response
from scannerd.contract.table_state import TableState
from scannerd.contract.topics import encode, encode_data, encode_response
from scannerd.core.house import HouseRules
from scannerd.core.inputs import Actor, Anchored, ClockStepped, Command, Fault, Restarted, ValidatorInput
from scannerd.core.validator import CommandRejected, Validator
from scannerd.recording.replay import replay
from simulators.dealer import Dealer
from tests.core.test_shuffle_check import feed_validator
from tests.core.test_validator_properties import as_input, table_inputs
from tests.sessions import recordings

T0 = 1_700_000_000.0


def assert_as_the_model(event: EventData, payload: bytes) -> None:
    """``payload`` is what the event's model publishes for it, and what a consumer parses back."""
    model = type(event).model
    assert event["kind"] == model.model_fields["kind"].default
    assert encode(model.model_validate(event)) == payload, event
    assert encode(model.model_validate_json(payload)) == payload


def assert_all_as_the_models(events: list[EventData]) -> None:
    for event in events:
        assert_as_the_model(event, encode_data(event))


@pytest.mark.parametrize("recording", recordings(), ids=lambda p: p.name)
def test_every_golden_session_publishes_the_models_bytes(recording: Path) -> None:
    messages = list(replay(recording))
    published = [m for m in messages if isinstance(m.source, EventData)]
    assert published
    for message in published:
        assert message.topic.endswith("/" + message.source["kind"])
        assert_as_the_model(message.source, message.payload)
    # The answers too, written by orjson from the model's fields.
    answers = [m for m in messages if isinstance(m.source, Response)]
    assert all(encode(m.source) == m.payload for m in answers)


@pytest.mark.parametrize(
    "response",
    [
        Response(command="get_state", status="ok", transaction=2**70, data={"seq": 1}),
        Response(command="get_state", status="ok", data={"shoe": {1: "a key no JSON object has"}}),
        Response(command="betting_open", status="error", transaction="t-1", error="shoe S1 is finished"),
        Response(command="get_state", status="ok", data={"x": [1e16, -0.0, float("nan"), "\u2028\x00"]}),
    ],
    ids=["long-transaction", "int-key", "refusal", "floats-and-escapes"],
)
def test_an_answer_is_the_models_bytes_whatever_orjson_takes(response: Response) -> None:
    """What orjson refuses (an integer past 64 bits, a key that is no string) is the model's to write."""
    assert encode_response(response) == encode(response)


def test_the_answer_model_writes_its_fields_as_they_are() -> None:
    """What ``encode_response`` relies on to write an answer from its fields: nothing added, left out
    or written otherwise by the model's serializer. A change here must change it too."""
    assert Response.model_config.get("extra") == "forbid"
    assert not Response.model_computed_fields
    assert all(f.exclude is None and f.exclude_if is None for f in Response.model_fields.values())
    assert not Response.__pydantic_decorators__.field_serializers
    assert not Response.__pydantic_decorators__.model_serializers
    assert not any(key.startswith("ser_json") for key in Response.model_config)


# The inputs of a table, as tests/core/test_validator_properties.py generates them, and what those leave
# out: betting times (whole seconds too, which the model turns into floats), dealers, operator voids
# with any text, acknowledgements, faults, restarts, steps of the clock, and who took each action:
# any actor, through any way in, with any verdict on a PIN (wrong ones that lock an id).
names = st.text(min_size=1, max_size=64)


def command(name: str, required: dict[str, Any] | None = None, **optional: Any) -> st.SearchStrategy:
    return st.tuples(st.just("cmd"), st.just(name), st.fixed_dictionaries(required or {}, optional=optional))


more_inputs = st.one_of(
    command("betting_open", round_id=names, betting_time_s=st.integers(1, 60) | st.floats(0.5, 60)),
    command("new_shoe", shoe_id=names),
    command("void_round", reason=st.text()),
    command("dealer_sign_in", {"dealer_id": names}),
    command("dealer_sign_out"),
    st.tuples(st.just("ack")),
    st.tuples(st.just("fault"), st.sampled_from(sorted(FAULT_CODES)), st.text()),
    st.tuples(st.just("restart"), st.booleans(), st.text(max_size=20)),
    st.tuples(st.just("clock"), st.floats(-3600, 3600)),
    command("resume", {"reason": st.text(min_size=1)}, supervisor_id=names),
)
actors = st.none() | st.builds(
    Actor,
    via=st.sampled_from(["display", "pit", "gameserver"]),
    by=st.none() | st.sampled_from(["D-1", "S-1", "boss"]),
    role=st.sampled_from([None, "dealer", "supervisor", "unknown"]),
    pin=st.sampled_from([None, "right", "wrong", "wrong"]),
)


def to_input(ts: float, inp: tuple, v: Validator) -> ValidatorInput:
    kind = inp[0]
    if kind == "by":  # a command with who took it
        return replace(to_input(ts, inp[2], v), actor=inp[1])  # type: ignore[type-var]
    if kind == "ack":  # the oldest open alert, or one that is not open
        return Command(ts, "ack_alert", {"alert_id": next(iter(v.open_alerts), 1)})
    if kind == "fault":
        return Fault(ts, inp[1], inp[2])
    if kind == "restart":
        return Restarted(ts, inp[2], inp[1])
    if kind == "clock":
        return ClockStepped(ts, inp[1])
    return as_input(ts, inp)


any_rules = st.builds(
    HouseRules,
    decks=st.integers(1, 2),
    round_control=st.sampled_from(["server", "auto"]),
    burn=st.sampled_from(["first-card-value", "none", 2]),
    cut_card_remaining=st.one_of(st.none(), st.integers(20, 60)),
    last_hand=st.sampled_from(["finish", "one-more"]),
    stall_timeout_s=st.just(30.0),
    betting_time_s=st.one_of(st.none(), st.integers(5, 20), st.floats(5, 20)),
)
# Whole seconds too: an input's time may be an int, which the model makes a float.
any_start = st.floats(1e9, 4e9) | st.integers(10**9, 4 * 10**9)
acted = st.tuples(st.just("by"), actors, more_inputs.filter(lambda inp: inp[0] in ("cmd", "ack")))
any_stream = st.lists(
    st.tuples(st.sampled_from([0.5, 3, 40]), table_inputs | more_inputs | acted), max_size=120
)


@settings(max_examples=300, deadline=None)
@given(rules=any_rules, start=any_start, stream=any_stream)
def test_any_input_stream_publishes_the_models_bytes(
    rules: HouseRules, start: float, stream: list[tuple[float, tuple]]
) -> None:
    v = Validator("T1", rules)
    # Each event's bytes as the input that made it left it: no later input may change them.
    built: list[tuple[EventData, bytes]] = []
    ts = start
    for step, inp in stream:
        ts += step
        try:
            out = v.handle(to_input(ts, inp, v))
        except CommandRejected as exc:
            out = exc.events  # what a refusal must publish (a lockout's alert) goes out with it
        built += [(event, encode_data(event)) for event in out]
        assert_all_as_the_models(out)
    for event, payload in built:
        assert_as_the_model(event, payload)
    # A saved state's alerts, through the JSON the outbox keeps, are restored as the validator built them.
    restored = Validator.restore("T1", rules, json.loads(json.dumps(v.snapshot())))
    assert list(restored.open_alerts.values()) == list(v.open_alerts.values())
    assert_all_as_the_models(list(restored.open_alerts.values()))


@settings(max_examples=100, deadline=None)
@given(rules=any_rules, start=any_start, stream=any_stream)
def test_the_state_a_table_answers_with_is_the_documented_model(
    rules: HouseRules, start: float, stream: list[tuple[float, tuple]]
) -> None:
    """``get_state``'s ``data`` (and a command's, without results) holds to ``TableState``, which the
    AsyncAPI document declares for it, after every input of any stream."""
    v = Validator("T1", rules)
    ts = start
    for step, inp in stream:
        ts += step
        with contextlib.suppress(CommandRejected):
            v.handle(to_input(ts, inp, v))
        for state in (v.state(), v.state(results=False)):
            assert TableState.model_validate(state).model_dump(mode="json", exclude_unset=True) == json.loads(
                json.dumps(state)
            )


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    seed=st.integers(0, 2**32 - 1),
    error_rate=st.sampled_from([0.0, 0.2]),
)
def test_a_repeated_shoes_alerts_publish_the_models_bytes(seed: int, error_rate: float):
    """The pit's shuffle alerts carry nested evidence, restated at the shoe's end: from a real dealer
    who deals the last shoe's order again, a shuffle always caught (tests/core/test_shuffle_check.py)."""
    rules = HouseRules(suspend_on=())  # the whole of both shoes, however suspect
    dealer = Dealer(rules, random.Random(seed), pace=0, error_rate=error_rate, shuffle="preset")
    events = feed_validator(Validator("T1", rules), dealer.play(shoes=2))
    assert any("shuffle" in e for e in events)
    assert_all_as_the_models(events)


field_values: dict[str, Any] = {
    "ts": st.floats(allow_nan=True, allow_infinity=True),
    "shoe_id": st.none() | st.text(),
    "dealer_id": st.none() | st.text(),
}


@given(seq=st.integers(1, 2**63 - 1), **field_values)
def test_any_value_of_a_field_encodes_as_the_model_does(seq: int, ts: float, shoe_id, dealer_id) -> None:
    """Floats in any form (1e+16; non-finite as null, which the model itself does not read back), any
    text (escapes, non-ASCII), the largest seq."""
    event = DealerData(seq=seq, ts=ts, table_id="T1", shoe_id=shoe_id, kind="dealer", dealer_id=dealer_id)
    assert encode_data(event) == encode(DealerData.model.model_validate(event))


def test_a_field_unset_reads_as_none_as_on_the_model_and_no_other_is_invented() -> None:
    v = Validator("T1", HouseRules(burn="none"))
    (opened,) = v.handle(Command(T0, "betting_open", {}))
    assert isinstance(opened, RoundData) and "dealer_id" not in opened
    assert opened.dealer_id is None and opened.betting_time_s is None
    with pytest.raises(AttributeError):
        _ = opened.dealer


def test_an_anchor_publishes_the_models_bytes() -> None:
    """A recording's anchor, as the validator numbers it, in the model's field order."""
    (anchor,) = Validator("T1", HouseRules()).handle(
        Anchored(T0, "T1-20231114T221320Z.jsonl.gz", 7, "0f" * 32)
    )
    assert_all_as_the_models([anchor])
