"""The fast path for a round's requests gives exactly what the models give, or leaves it to them.

Over generated requests of every command, good and bad: where the fast path
answers, the model accepts the same request with the same transaction and the
same arguments in the same order; where the model refuses, the fast path
never answered. And it does answer the requests every round sends.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from scannerd.contract.command_catalogue import COMMANDS
from scannerd.contract.request_fast_path import fast_args
from scannerd.contract.requests import Request, RequestError, parse_request, parse_request_data

IDS = st.one_of(
    st.sampled_from(["S1-R12", "R1", "D-117", " x", "a" * 64, "a" * 65, "", "   ", "R\u200b1", "R\n1", "é"]),
    st.text(max_size=70),
)
VALUES = st.one_of(
    IDS,
    st.none(),
    st.booleans(),
    st.integers(min_value=-5, max_value=10**20),
    st.sampled_from([10**18, -(10**18), 10**4200, 10**5000]),  # long integers, one too long to write
    st.floats(allow_nan=True),
    st.sampled_from(["start", "end", "player", "banker", "tie", "dragon", "tiger", "player1", "Banker"]),
    st.lists(st.integers(), max_size=2),
    st.dictionaries(st.text(max_size=3), st.integers(), max_size=2),
)
FIELDS = sorted({name for model in COMMANDS.values() for name in model.model_fields})


@st.composite
def requests(draw: Any) -> tuple[str, dict[str, Any]]:
    command = draw(st.sampled_from(sorted(COMMANDS)))
    own = [n for n in COMMANDS[command].model_fields]
    keys = draw(st.lists(st.sampled_from([*own, *own, *FIELDS, "extra"]), unique=True, max_size=4))
    return command, {key: draw(VALUES) for key in keys}


def by_the_model(command: str, raw: dict[str, Any]) -> tuple[Any, list[tuple[str, Any]]] | None:
    try:
        parsed = COMMANDS[command].model_validate(raw)
    except ValidationError:
        return None
    args = parsed.model_dump(exclude={"transaction"}, exclude_none=True)
    return parsed.transaction, list(args.items())


@settings(max_examples=3000, deadline=None)
@given(requests())
def test_where_the_fast_path_answers_the_model_gives_the_same(request: tuple[str, dict[str, Any]]) -> None:
    command, raw = request
    fast = fast_args(command, raw)
    if fast is None:
        return
    model = by_the_model(command, raw)
    assert model is not None, f"the fast path took what the model refuses: {command} {raw!r}"
    transaction, args = fast
    assert (transaction, list(args.items())) == model


def test_a_rounds_requests_take_the_fast_path_with_the_models_arguments() -> None:
    every_round = [
        ("betting_open", {"round_id": "S1-R12"}),
        ("betting_open", {}),
        ("betting_close", {}),
        ("betting_close", {"transaction": 17}),
        ("new_shoe", {"shoe_id": "S1"}),
        ("reveal", {"side": "player"}),
        ("deck_check", {}),
        ("confirm_result", {"winner": "banker", "round_id": "S1-R12"}),
        ("get_state", {"transaction": "t-1"}),
    ]
    for command, raw in every_round:
        fast = fast_args(command, raw)
        assert fast is not None, command
        assert (fast[0], list(fast[1].items())) == by_the_model(command, raw)
    assert fast_args("deck_check", {}) == (None, {"action": "start"})  # a default the model fills in


def test_what_it_doubts_is_the_models_to_refuse_in_its_own_words() -> None:
    for command, payload, said in [
        ("betting_open", b'{"round_id": "R\\u0000"}', "round_id: must not contain U+0000"),
        ("betting_open", b'{"betting_time_s": 0}', "betting_time_s"),
        ("betting_close", b'{"round": "R1"}', "round: Extra inputs are not permitted"),
        ("confirm_result", b'{"winner": "Banker"}', "winner: Input should be"),
        ("new_shoe", b'{"transaction": 1.5}', "must be a string of at most 128 characters or an integer"),
    ]:
        assert fast_args(command, json.loads(payload)) is None
        with pytest.raises(RequestError) as refused:
            parse_request(command, payload)
        assert said in str(refused.value), (command, str(refused.value))


def by_json(command: str, raw: dict[str, Any]) -> Request | str:
    try:
        return parse_request(command, json.dumps(raw).encode())
    except RequestError as exc:
        return str(exc)
    except ValueError as exc:  # an integer too long for Python to write as text
        return f"ValueError {exc}"


@settings(max_examples=3000, deadline=None)
@given(requests(), st.one_of(st.none(), VALUES))
def test_a_request_given_as_data_is_read_as_its_json_would_be(
    request: tuple[str, dict[str, Any]], transaction: Any
) -> None:
    command, raw = request
    raw = raw | {"transaction": transaction} if transaction is not None else raw
    try:
        as_data: Request | str = parse_request_data(command, raw)
    except RequestError as exc:
        as_data = str(exc)
    except ValueError as exc:
        as_data = f"ValueError {exc}"
    assert as_data == by_json(command, raw)
