"""The dealer display's acknowledge button endpoint: whatever a browser (or anyone) posts, a clear answer."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from collections.abc import Iterator
from typing import Any

import pytest

from scannerd.config import DisplaySettings
from scannerd.display.server import Display
from scannerd.requests import Response


@pytest.fixture
def display() -> Iterator[tuple[Display, list[dict[str, Any]]]]:
    asked: list[dict[str, Any]] = []

    def request(command: str, args: dict[str, Any]) -> Response:
        asked.append(args)
        return Response(command=command, status="ok", data={})

    d = Display(DisplaySettings(listen="127.0.0.1:0"), "T1", dict, request)
    d.start()
    yield d, asked
    d.stop()


def post(display: Display, body: bytes) -> tuple[int, dict[str, Any]]:
    req = urllib.request.Request(
        display.url + "api/ack", data=body, headers={"Content-Type": "application/json"}
    )
    try:
        with urllib.request.urlopen(req, timeout=10) as resp:
            return resp.status, json.loads(resp.read())
    except urllib.error.HTTPError as err:
        return err.code, json.loads(err.read())


@pytest.mark.parametrize(
    ("body", "text"),
    [
        (b"{nope", "malformed JSON"),
        (b"[" * 100_000 + b"]" * 100_000, "malformed JSON"),  # deeper than the JSON parser goes
        (b'{"alert_id": ' + b"9" * 5000 + b"}", "malformed JSON"),  # longer than int() takes
        (b'{"alert_id": "5"}', "alert_id must be an integer"),
    ],
)
def test_a_bad_body_is_a_400_with_a_reason_and_runs_nothing(display, body: bytes, text: str) -> None:
    d, asked = display
    assert post(d, body) == (400, {"command": "ack_alert", "status": "error", "error": text})
    assert asked == []
    assert post(d, b'{"alert_id": 7}')[0] == 200 and asked == [{"alert_id": 7}]
