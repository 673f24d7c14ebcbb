"""The dealer display's acknowledge button endpoint: whatever a browser (or anyone) posts, a clear answer."""

from __future__ import annotations

import http.cookiejar
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


@pytest.fixture
def display() -> Iterator[tuple[Display, list[dict[str, Any]]]]:
    asked: list[dict[str, Any]] = []

    def request(command: str, args: dict[str, Any], actor: Actor | None = None) -> Response:
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


def post_as(
    display: Display, headers: dict[str, str], opener: urllib.request.OpenerDirector | None = None
) -> tuple[int, dict[str, Any]]:
    """An acknowledgement with the headers a browser (or anyone) might send."""
    req = urllib.request.Request(
        display.url + "api/ack",
        data=b'{"alert_id": 7}',
        headers={"Content-Type": "application/json", **headers},
    )
    try:
        with (opener or urllib.request.build_opener()).open(req, timeout=10) as resp:
            return resp.status, json.loads(resp.read())
    except urllib.error.HTTPError as err:
        return err.code, json.loads(err.read())


def test_a_rebound_name_or_a_foreign_origin_cannot_acknowledge(display) -> None:
    """DNS rebinding: a page at evil.example whose name now points at the table PC posts from the kiosk."""
    d, asked = display
    port = d.url.rsplit(":", 1)[1].rstrip("/")
    rebound = {"Host": f"evil.example:{port}", "Origin": f"http://evil.example:{port}"}
    status, answer = post_as(d, rebound)
    assert status == 403 and "evil.example" in answer["error"]
    status, answer = post_as(d, {"Origin": "http://evil.example"})  # the right Host, another origin
    assert status == 403 and "evil.example" in answer["error"]
    assert asked == []
    assert post_as(d, {"Origin": f"http://127.0.0.1:{port}"})[0] == 200  # the page's own origin
    assert post_as(d, {"Host": f"localhost:{port}"})[0] == 200  # not a browser: no Origin
    assert len(asked) == 2


def test_a_configured_name_is_served(tmp_path) -> None:
    settings = DisplaySettings(listen="127.0.0.1:0", allowed_hosts=["BAC-01-display.pit.example"])
    d = Display(settings, "T1", dict, lambda c, a, actor: Response(command=c, status="ok", data={}))
    d.start()
    try:
        port = d.url.rsplit(":", 1)[1].rstrip("/")
        host = f"bac-01-display.pit.example:{port}"
        assert post_as(d, {"Host": host, "Origin": f"http://{host}"})[0] == 200
        assert post_as(d, {"Host": f"other.pit.example:{port}"})[0] == 403
    finally:
        d.stop()


def test_with_a_token_only_a_holder_of_it_can_acknowledge(tmp_path) -> None:
    (tmp_path / "display-token").write_text("s3cret-token\n")
    asked: list[dict[str, Any]] = []

    def request(command: str, args: dict[str, Any], actor: Actor | None = None) -> Response:
        asked.append(args)
        return Response(command=command, status="ok", data={})

    # As systemd gives it: a credential by name in $CREDENTIALS_DIRECTORY.
    environ = {"CREDENTIALS_DIRECTORY": str(tmp_path)}
    d = Display(DisplaySettings(listen="127.0.0.1:0"), "T1", dict, request, environ=environ)
    d.start()
    try:
        status, answer = post_as(d, {})
        assert status == 401 and "token" in answer["error"]
        assert post_as(d, {"Authorization": "Bearer wrong"})[0] == 401
        assert asked == []
        assert post_as(d, {"Authorization": "Bearer s3cret-token"})[0] == 200

        # The kiosk opens the page with the token once; the page's own requests then carry the cookie.
        kiosk = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(http.cookiejar.CookieJar()))
        with kiosk.open(d.url + "?token=s3cret-token", timeout=10) as resp:
            assert resp.status == 200 and resp.url == d.url  # the token left the address
        assert post_as(d, {}, kiosk)[0] == 200
        with pytest.raises(urllib.error.HTTPError) as wrong:
            urllib.request.urlopen(d.url + "?token=guess", timeout=10)
        assert wrong.value.code == 401
        assert len(asked) == 2
    finally:
        d.stop()
