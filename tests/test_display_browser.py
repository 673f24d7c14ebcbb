"""The dealer display in a real headless Chromium, fed by a real validator (issue 8)."""

from __future__ import annotations

import json
import os
import random
import shutil
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from scannerd.cards import ALL_CARDS
from scannerd.config import DisplaySettings
from scannerd.display import Display
from scannerd.events import CardDrawn, ValidatorInput
from scannerd.house import HouseRules
from scannerd.requests import Response, execute, parse_request
from scannerd.validator import Validator
from tests.browser import action, banners, js, live, open_page, screenshot, slot, text, wait_for

# Player 2+3=5 draws; Banker K+4=4 draws on a player third of 2.
SIX_CARD_ROUND = ("2H", "KS", "3C", "4D", "2C", "5S")
NATURAL_ROUND = ("9H", "2S", "9C", "3D")
PUSH_S = 1.0  # a misdeal must be on the dealer's screen within a second


class Table:
    """A validator and the display, wired as the daemon wires them: one lock, events to the display."""

    def __init__(self, rules: HouseRules | None = None, settings: DisplaySettings | None = None) -> None:
        self.validator = Validator("BAC-07", rules or HouseRules(burn="none"))
        self.lock = threading.Lock()
        self.ts = 1_700_000_000.0
        settings = settings or DisplaySettings(listen="127.0.0.1:0")
        self.display = Display(settings, "BAC-07", self.state, self.request, round_control="server")

    def state(self) -> dict[str, Any]:
        with self.lock:
            return self.validator.state()

    def feed(self, inp: ValidatorInput) -> None:
        with self.lock:
            self.display.on_events(self.validator.handle(inp))

    def command(self, name: str, **args: Any) -> Response:
        return self.request(name, args)

    def request(self, command: str, args: dict[str, Any]) -> Response:
        with self.lock:
            self.ts += 1
            parsed = parse_request(command, json.dumps(args).encode())
            response, events = execute(parsed, self.validator, self.ts)
            self.display.on_events(events)
            return response

    def card(self, *cards: str) -> None:
        for card in cards:
            self.ts += 1
            self.feed(CardDrawn(self.ts, card))

    def round(self, round_id: str, *cards: str) -> None:
        self.command("betting_open", round_id=round_id)
        self.command("betting_close")
        self.card(*cards)


@pytest.fixture
def table() -> Iterator[Table]:
    t = Table()
    t.command("new_shoe", shoe_id="S-0412")
    t.display.start()
    yield t
    t.display.stop()


def test_the_page_shows_the_round_as_it_is_dealt(browser, table):
    table.command("betting_open", round_id="R1")
    open_page(browser, table.display.url)
    assert text(browser, "table-id") == "BAC-07"
    assert action(browser) == "BETS OPEN - DO NOT DRAW"
    table.command("betting_close")
    table.card(*SIX_CARD_ROUND[:4])
    wait_for(browser, lambda b: action(b) == "NEXT: PLAYER THIRD CARD", 10, "the third card cue")
    first_four = ("player1", "banker1", "player2", "banker2")
    assert [slot(browser, p) for p in first_four] == list(SIX_CARD_ROUND[:4])
    assert (text(browser, "player-total"), text(browser, "banker-total")) == ("5", "4")
    assert "DEALING" in text(browser, "shoe-status") and text(browser, "cards-dealt") == "4"

    table.card(*SIX_CARD_ROUND[4:])
    wait_for(browser, lambda b: action(b) == "ROUND COMPLETE - DO NOT DRAW", 10, "the result")
    assert (text(browser, "player-total"), text(browser, "banker-total")) == ("7", "9")
    assert browser.find_element("id", "banker").get_attribute("data-winner") == "true"
    assert text(browser, "link") == "SHOE CONNECTED"
    assert text(browser, "cards-left") == str(8 * 52 - 6)
    # The scoreboard: one banker win on both roads.
    assert len(browser.find_elements("css selector", "#bead .cell.banker")) == 1
    assert len(browser.find_elements("css selector", "#big .cell.banker")) == 1
    assert text(browser, "count-banker") == "1"


def test_a_misdeal_appears_within_a_second_and_the_button_clears_it(browser, table):
    table.round("R1", *NATURAL_ROUND)
    open_page(browser, table.display.url)
    assert banners(browser) == [] and js(browser, "document.body.dataset.alarm") == ""
    table.card("7H")  # no round dealing: an extra card
    wait_for(browser, lambda b: banners(b), PUSH_S, "the misdeal banner")
    banner = banners(browser)[0]
    assert "misdeal" in banner.get_attribute("class").split()
    assert "Extra card 7H" in banner.text and "ACKNOWLEDGE" in banner.text
    assert js(browser, "document.body.dataset.alarm") == "misdeal"
    assert js(browser, "window.scannerdDisplay.sound") == "running"
    assert js(browser, "window.scannerdDisplay.tones") >= 1

    banner.find_element("css selector", "button.ack").click()
    wait_for(browser, lambda b: not banners(b), 10, "the banner to clear")
    assert table.state()["alerts"] == []
    assert js(browser, "document.body.dataset.alarm") == ""


def test_with_a_token_the_kiosk_that_opened_the_page_with_it_acknowledges(browser, tmp_path):
    """A display on another machine: the page's own request carries the token as the cookie it got."""
    (tmp_path / "token").write_text("kiosk-token-1\n")
    table = Table(settings=DisplaySettings(listen="127.0.0.1:0", token_file=tmp_path / "token"))
    table.display.start()
    try:
        open_page(browser, table.display.url)  # without the token: it shows, but cannot acknowledge
        table.card("7H")
        wait_for(browser, lambda b: banners(b), 10, "the misdeal banner")
        banners(browser)[0].find_element("css selector", "button.ack").click()
        wait_for(browser, lambda b: "needs its token" in banners(b)[0].text, 10, "the refusal on the banner")
        assert len(table.state()["alerts"]) == 1

        open_page(browser, table.display.url + "?token=kiosk-token-1")
        assert browser.current_url == table.display.url  # the token left the address bar
        banners(browser)[0].find_element("css selector", "button.ack").click()
        wait_for(browser, lambda b: not banners(b), 10, "the banner to clear")
        assert table.state()["alerts"] == []
    finally:
        table.display.stop()


def test_the_game_servers_acknowledgement_clears_it_too(browser, table):
    open_page(browser, table.display.url)
    table.command("betting_open", round_id="R1")
    table.card("5C")  # before bets closed
    wait_for(browser, lambda b: banners(b), 10, "the misdeal banner")
    alert_id = table.state()["alerts"][0]["alert_id"]
    assert table.command("ack_alert", alert_id=alert_id).status == "ok"
    wait_for(browser, lambda b: not banners(b), 10, "the banner to clear")


def test_warnings_are_amber_and_queue_behind_misdeals(browser, table):
    open_page(browser, table.display.url)
    table.command("betting_open", round_id="R1")
    table.command("betting_close")
    table.card("AS")
    table.feed(CardDrawn(table.ts + 60, "2S"))  # a minute without a card: the round stalled
    table.command("betting_open", round_id="R2")  # and then cut short
    wait_for(browser, lambda b: len(banners(b)) == 2, 10, "two alerts")
    first, second = banners(browser)
    assert "misdeal" in first.get_attribute("class") and "SHORT DEAL" in first.text
    assert "warning" in second.get_attribute("class") and "ROUND STALLED" in second.text


def test_the_page_says_disconnected_and_recovers_after_a_restart(browser, table):
    open_page(browser, table.display.url)
    url = table.display.url
    table.display.stop()
    wait_for(browser, lambda b: not live(b), 10, "the page to notice")
    assert "DISCONNECTED" in text(browser, "disconnected")
    table.round("R1", *NATURAL_ROUND)  # the table moves on while the display is down
    table.display.start()
    assert table.display.url == url  # same port: the kiosk's address still works
    wait_for(browser, live, 10, "the page to reconnect")
    wait_for(browser, lambda b: action(b) == "ROUND COMPLETE - DO NOT DRAW", 10, "the new state")
    assert not browser.find_element("id", "disconnected").is_displayed()


def test_screenshot_of_a_misdeal(browser, table, tmp_path):
    """The picture in docs/display.md; set DISPLAY_SCREENSHOT=docs/display-alert.png to refresh it."""
    cards = [c for _ in range(8) for c in ALL_CARDS]
    random.Random(7).shuffle(cards)
    for n in range(30):  # a shoe well under way, for the roads
        table.command("betting_open", round_id=f"R{n + 1}")
        table.command("betting_close")
        while table.state()["round"]["phase"] == "dealing":
            table.card(cards.pop())
    table.round("R31", *SIX_CARD_ROUND)
    table.card("7H")  # one card too many
    open_page(browser, table.display.url)
    wait_for(browser, lambda b: banners(b), 10, "the misdeal banner")
    path = tmp_path / "display-alert.png"
    screenshot(browser, path)
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    target = os.environ.get("DISPLAY_SCREENSHOT")
    if target:
        shutil.copyfile(path, Path(target))
