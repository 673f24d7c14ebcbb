"""The stream overlay's server: what it sends (only what players may see), when (with the dealer's
screen), whom it answers, and what happens when it cannot listen or read its theme.

A real validator and Display (``tests.support.display``) with the overlay on its own port, read
over HTTP as a mixer's browser would.
"""

from __future__ import annotations

import json
import socket
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from scannerd.core.house import HouseRules
from scannerd.display.settings import OverlaySettings
from tests.support.display import NATURAL_ROUND, SIX_CARD_ROUND, STATES, Table, table_in

OVERLAY = OverlaySettings(listen="127.0.0.1:0")
PUBLIC_KEYS = {"table_id", "game", "shoe_id", "round", "history", "server_version"}


def get(url: str, path: str = "api/state", headers: dict[str, str] | None = None) -> tuple[int, bytes]:
    request = urllib.request.Request(url + path, headers=headers or {})
    try:
        with urllib.request.urlopen(request, timeout=5) as answer:
            return answer.status, answer.read()
    except urllib.error.HTTPError as refused:
        return refused.code, refused.read()


def until(predicate: Callable[[], bool], what: str, timeout: float = 10.0) -> None:
    """Poll ``predicate`` (an HTTP read) until it holds; the timeout bounds a hang."""
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.02)


def answers(url: str) -> bool:
    try:
        return get(url)[0] == 200
    except OSError:
        return False


def overlay_state(table: Table) -> dict[str, Any]:
    assert table.display.overlay_url is not None
    status, body = get(table.display.overlay_url)
    assert status == 200
    return json.loads(body)


def secrets(table: Table) -> list[str]:
    """What the table holds that players must not see: its alerts' words, its staff, why it stopped."""
    state = table.state()
    words = [a["message"] for a in state["alerts"]] + [a["code"] for a in state["alerts"]]
    if state.get("dealer_id"):
        words.append(state["dealer_id"])
    if state.get("suspended"):
        words += [state["suspended"]["message"], state["suspended"]["cause"]]
    return words


@pytest.mark.parametrize("state", sorted(STATES))
def test_the_overlay_is_sent_the_round_and_roads_and_nothing_a_player_must_not_see(state: str) -> None:
    table = table_in(state, OVERLAY)
    try:
        view = overlay_state(table)
        text = json.dumps(view)
        assert set(view) == PUBLIC_KEYS
        for word in secrets(table):
            assert word not in text, f"{state}: the overlay was sent {word!r}"
        if view["round"] is not None:
            assert "next_position" not in view["round"]  # where the card goes would tell a held card
        if table.validator.rules.squeeze:
            held = [c for side in view["round"]["sides"] for c in view["round"][side]["cards"]]
            assert held and set(held) == {"back"}, "a squeezed card's face reached the overlay"
            assert view["round"]["winner"] is None
    finally:
        table.display.stop()


def test_a_table_with_alerts_a_dealer_and_a_suspension_sends_none_of_them() -> None:
    """The states above each show one thing; here they are all at once, as a bad night has them."""
    table = table_in("suspended", OVERLAY)
    try:
        table.command("dealer_sign_in", dealer_id="D-117")
        table.extra_cards(3)
        assert len(secrets(table)) > 4
        text = json.dumps(overlay_state(table))
        for word in secrets(table):
            assert word not in text
    finally:
        table.display.stop()


def test_a_squeezed_hand_looks_the_same_whether_or_not_a_third_card_is_due() -> None:
    """Four cards face down: a natural (the table judges the round complete) and a Player 5 (a third
    card is due) must send the screens the very same view until the reveal, or its phase tells."""
    views = []
    for cards in (NATURAL_ROUND, SIX_CARD_ROUND[:4]):
        table = Table(HouseRules(burn="none", squeeze=True, suspend_on=()), overlay=OVERLAY)
        table.display.start()
        try:
            table.command("new_shoe", shoe_id="S-1")
            table.round("R1", *cards)
            until(
                lambda t=table: json.loads(get(t.display.url)[1])["round"]["player"]["cards"] == ["back"] * 2,
                "4 backs",
            )
            dealer = json.loads(get(table.display.url)[1])
            views.append((overlay_state(table)["round"], dealer["round"], dealer["next_action"]))
        finally:
            table.display.stop()
    natural, draws = views
    assert natural == draws
    assert natural[0]["phase"] == "dealing"


def test_the_overlay_moves_in_the_same_step_as_the_dealers_screen() -> None:
    """Whatever the dealer's page has been sent, the overlay has been sent too: no more lag, ever.

    Both views are published in the one step that applies a batch of events, on the loop that also
    answers requests; so once the dealer's view shows a card, the overlay's must already show it.
    """
    table = table_in("betting", OVERLAY)
    try:
        table.command("betting_close")
        for n, card in enumerate(("2H", "KS", "3C", "4D", "2C", "5S"), start=1):
            table.card(card)

            def dealt(n: int = n) -> bool:
                dealer = json.loads(get(table.display.url)[1])["round"]
                return sum(len(dealer[side]["cards"]) for side in dealer["sides"]) == n

            until(dealt, f"card {n} on the dealer's screen")
            dealer = json.loads(get(table.display.url)[1])["round"]
            shown = overlay_state(table)["round"]
            assert [shown[side]["cards"] for side in shown["sides"]] == [
                dealer[side]["cards"] for side in dealer["sides"]
            ]
        assert shown["winner"] == "banker" and shown["phase"] == "complete"
    finally:
        table.display.stop()


def test_the_overlay_answers_only_its_names_and_has_no_button() -> None:
    table = table_in("alerts-1", OVERLAY)
    try:
        url = table.display.overlay_url
        assert url is not None
        port = url.rsplit(":", 1)[1].strip("/")
        assert get(url, "", {"Host": f"evil.example:{port}"})[0] == 403
        assert get(url, "", {"Host": f"localhost:{port}"})[0] == 200
        alert_id = table.state()["alerts"][0]["alert_id"]
        ack = urllib.request.Request(
            url + "api/ack",
            data=json.dumps({"alert_id": alert_id}).encode(),
            headers={"Content-Type": "application/json"},
            method="POST",
        )
        with pytest.raises(urllib.error.HTTPError) as refused:
            urllib.request.urlopen(ack, timeout=5)
        assert refused.value.code in (404, 405)
        assert [a["alert_id"] for a in table.state()["alerts"]] == [alert_id]
    finally:
        table.display.stop()


def test_no_overlay_unless_its_address_is_set() -> None:
    table = table_in("dealing")
    try:
        assert table.display.overlay_url is None
    finally:
        table.display.stop()


def test_an_overlay_that_cannot_listen_leaves_the_dealers_page_up_and_listens_once_it_can() -> None:
    blocker = socket.create_server(("127.0.0.1", 0))
    port = blocker.getsockname()[1]
    table = table_in("dealing", OverlaySettings(listen=f"127.0.0.1:{port}"))
    try:
        assert table.display.health.state == "listening"
        assert get(table.display.url)[0] == 200
        assert (table.display.overlay_error or "").startswith("Address already in use")  # to say why
        blocker.close()
        url = table.display.overlay_url
        assert url is not None
        until(lambda: answers(url), "the overlay to listen once its port is free")
        assert table.display.overlay_error is None
        assert overlay_state(table)["round"]["round_id"] == "R31"
    finally:
        blocker.close()
        table.display.stop()


@pytest.mark.parametrize("content", [None, b"\xff\xfe:\x00r\x00"], ids=["missing", "utf-16"])
def test_a_theme_that_cannot_be_read_is_named_at_start(tmp_path: Path, content: bytes | None) -> None:
    theme = tmp_path / "theme.css"
    if content is not None:
        theme.write_bytes(content)
    with pytest.raises(OSError) as failed:
        Table(overlay=OverlaySettings(listen="127.0.0.1:0", theme_file=theme))
    assert failed.value.filename == str(theme)
