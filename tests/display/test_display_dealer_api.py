"""The display's sign-in endpoints: whatever is posted, one clear answer, and only good ids run."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from collections.abc import Iterator
from typing import Any

import pytest

from scannerd.contract.requests import Response
from scannerd.core.inputs import Actor
from scannerd.display.server import Display
from scannerd.display.settings import DisplaySettings
from tests.support.display import table_in


@pytest.fixture
def display() -> Iterator[tuple[Display, list[tuple[str, dict[str, Any]]]]]:
    asked: list[tuple[str, dict[str, Any]]] = []

    def request(command: str, args: dict[str, Any], actor: Actor | None = None) -> Response:
        asked.append((command, args))
        return Response(command=command, status="ok", data={})

    d = Display(DisplaySettings(listen="127.0.0.1:0"), "T1", dict, request)
    d.start()
    yield d, asked
    d.stop()


def post(display: Display, path: str, body: bytes, content_type: str = "application/json") -> tuple[int, Any]:
    req = urllib.request.Request(display.url + path, data=body, headers={"Content-Type": content_type})
    try:
        with urllib.request.urlopen(req, timeout=10) as resp:
            return resp.status, json.loads(resp.read())
    except urllib.error.HTTPError as err:
        return err.code, json.loads(err.read()) if err.code != 404 else None


@pytest.mark.parametrize(
    ("path", "body", "content_type", "status", "text"),
    [
        (
            "api/dealer/sign_in",
            b"dealer_id=D-1",
            "application/x-www-form-urlencoded",
            415,
            "application/json",
        ),
        ("api/dealer/sign_in", b"{nope", "application/json", 400, "malformed JSON"),
        ("api/dealer/sign_in", b"{}", "application/json", 400, "dealer_id: Field required"),
        ("api/dealer/sign_in", b'{"dealer_id": 117}', "application/json", 400, "dealer_id: Input should be"),
        ("api/dealer/sign_in", b'{"dealer_id": "' + b"D" * 65 + b'"}', "application/json", 400, "at most 64"),
        ("api/dealer/sign_out", b'{"dealer_id": "D-1"}', "application/json", 400, "Extra inputs"),
    ],
)
def test_a_bad_sign_in_gets_a_reason_and_runs_nothing(display, path, body, content_type, status, text):
    d, asked = display
    code, answer = post(d, path, body, content_type)
    assert code == status and answer["status"] == "error" and text in answer["error"]
    assert asked == []


def test_a_good_sign_in_and_out_run_as_the_game_servers_requests(display):
    d, asked = display
    assert post(d, "api/dealer/sign_in", b'{"dealer_id": "D-117"}')[0] == 200
    assert post(d, "api/dealer/sign_out", b"{}")[0] == 200
    assert asked == [("dealer_sign_in", {"dealer_id": "D-117"}), ("dealer_sign_out", {})]
    assert post(d, "api/dealer/anything", b"{}") == (404, None)


def test_an_answer_to_the_page_carries_no_state_whose_cards_a_squeeze_table_holds_back():
    """The table's answer holds its state, every card as drawn: the page gets the status and error only."""
    table = table_in("squeezed")
    try:
        for path, body in (
            ("api/dealer/sign_in", {"dealer_id": "D-1"}),
            ("api/dealer/sign_out", {}),
            ("api/ack", {"alert_id": 1}),
        ):
            status, answer = post(table.display, path, json.dumps(body).encode())
            assert "data" not in answer and "9H" not in json.dumps(answer), (path, status, answer)
    finally:
        table.display.stop()
