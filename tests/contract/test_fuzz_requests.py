"""Fuzzing the game-server request handler: parse, then run against a live validator.

Whatever arrives on a request topic, the answer is a ``Request`` or a
``RequestError`` with a clear text, never another exception; a request that
is refused (malformed, unknown, wrong types, or senseless now) changes
nothing; and cards dealt amid a stream of bad requests come out exactly as
they would without them. Full count: ``--hypothesis-profile=fuzz`` (see
tests/drivers/test_fuzz_codecs.py).
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from scannerd.contract.command_catalogue import COMMANDS as CATALOGUE
from scannerd.contract.events import EventData
from scannerd.contract.requests import MAX_REQUEST_BYTES, Request, RequestError, Response
from scannerd.contract.requests import parse_request as parse
from scannerd.core.cards import ALL_CARDS
from scannerd.core.house import HouseRules
from scannerd.core.inputs import CardDrawn
from scannerd.core.table import execute
from scannerd.core.validator import Validator

FUZZ = settings(deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
# The full count takes minutes per test; the bound is only there to catch a hang.
pytestmark = pytest.mark.timeout(1800)

COMMANDS = list(CATALOGUE)
FIELDS = ["transaction", "shoe_id", "round_id", "reason", "alert_id"]

json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(2**70), 2**70)
    | st.floats(allow_nan=False)
    | st.text(max_size=80),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=10), inner, max_size=4),
    max_leaves=12,
)
# Mostly the right keys, with values of any type: the shapes a confused client really sends.
objects = st.dictionaries(st.sampled_from(FIELDS) | st.text(max_size=12), json_values, max_size=5)
payloads = st.one_of(
    objects.map(lambda o: json.dumps(o).encode()),
    json_values.map(lambda v: json.dumps(v).encode()),
    st.binary(max_size=200),
    st.text(max_size=200).map(str.encode),
    st.integers(MAX_REQUEST_BYTES - 8, MAX_REQUEST_BYTES + 8).map(
        lambda n: b'{"reason": "' + b"x" * n + b'"}'
    ),
)
commands = st.sampled_from(COMMANDS) | st.text(max_size=20)


def answer(command: str, payload: bytes, validator: Validator, ts: float) -> tuple[Response, list[EventData]]:
    """What the daemon does with one request message."""
    try:
        request = parse(command, payload)
    except RequestError as exc:
        response = exc.response()
        assert response.status == "error" and response.error
        return response, []
    assert isinstance(request, Request) and request.command in COMMANDS
    return execute(request, validator, ts)


@FUZZ
@given(commands, payloads)
def test_any_request_gets_a_request_or_a_clear_error(command: str, payload: bytes) -> None:
    try:
        request = parse(command, payload)
    except RequestError as exc:
        assert str(exc)
        Response.model_validate(exc.response().model_dump())
    else:
        assert request.command in COMMANDS
        json.dumps(request.args)  # what goes into the validator and the recording is plain JSON


request_steps = st.lists(
    st.one_of(
        st.tuples(st.just("card"), st.sampled_from([*ALL_CARDS, None])),
        st.tuples(commands, payloads),
        st.tuples(st.sampled_from(COMMANDS), st.just(b"{}")),  # well formed, often senseless now
    ),
    max_size=60,
)


@FUZZ
@given(request_steps, st.sampled_from(["server", "auto"]))
def test_requests_never_break_the_validator_and_a_refusal_changes_nothing(
    steps: list[tuple[str, Any]], round_control: str
) -> None:
    rules = HouseRules(round_control=round_control, burn="none", decks=1)
    validator = Validator("T1", rules)
    ts = 1_700_000_000.0
    for kind, arg in steps:
        ts += 1
        if kind == "card":
            validator.handle(CardDrawn(ts, arg))
            continue
        before = validator.snapshot()
        response, events = answer(kind, arg, validator, ts)
        if response.status == "error":
            assert events == [] and validator.snapshot() == before
        else:
            assert response.data == validator.state(results=kind == "get_state")
    restored = Validator.restore("T1", rules, json.loads(json.dumps(validator.snapshot())))
    assert restored.state() == validator.state()


# Refused before they reach the validator: unknown commands, payloads that are not a JSON object
# (an empty one means {}), and objects with a key no request has.
bad_requests = st.one_of(
    st.tuples(st.text(max_size=20).filter(lambda c: c not in CATALOGUE), payloads),
    st.tuples(
        st.sampled_from(COMMANDS), st.binary(max_size=80).filter(lambda b: b.strip()[:1] not in (b"", b"{"))
    ),
    st.tuples(st.sampled_from(COMMANDS), objects.map(lambda o: json.dumps({**o, "unexpected": 1}).encode())),
)


@FUZZ
@given(st.lists(st.tuples(st.sampled_from(ALL_CARDS), st.lists(bad_requests, max_size=3)), max_size=40))
def test_no_card_is_lost_or_changed_amid_bad_requests(
    deal: list[tuple[str, list[tuple[str, bytes]]]],
) -> None:
    rules = HouseRules(round_control="auto", burn="none")
    clean, noisy = Validator("T1", rules), Validator("T1", rules)
    clean_events: list[EventData] = []
    noisy_events: list[EventData] = []
    for n, (card, junk) in enumerate(deal):
        ts = 1_700_000_000.0 + n
        for command, payload in junk:
            response, events = answer(command, payload, noisy, ts)
            assert response.status == "error"
            noisy_events += events
        clean_events += clean.handle(CardDrawn(ts, card))
        noisy_events += noisy.handle(CardDrawn(ts, card))
    assert noisy_events == clean_events
