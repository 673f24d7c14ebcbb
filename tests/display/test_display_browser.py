"""The dealer display in a real headless Chromium, fed by a real validator."""

from __future__ import annotations

import time
from collections.abc import Iterator

import pytest

from scannerd.core.inputs import CutCardSeen, Fault
from scannerd.display.settings import DisplaySettings
from tests.support.browser import (
    action,
    alert_text,
    banners,
    js,
    live,
    open_page,
    slot,
    start_chromium,
    text,
    wait_for,
)
from tests.support.display import NATURAL_ROUND, SIX_CARD_ROUND, Table

PUSH_S = 1.0  # a misdeal must be on the dealer's screen within a second


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
    assert (text(browser, "side0-total"), text(browser, "side1-total")) == ("5", "4")
    assert "DEALING" in text(browser, "shoe-status") and text(browser, "cards-dealt") == "4"

    table.card(*SIX_CARD_ROUND[4:])
    wait_for(browser, lambda b: action(b) == "ROUND COMPLETE - DO NOT DRAW", 10, "the result")
    assert (text(browser, "side0-total"), text(browser, "side1-total")) == ("7", "9")
    assert browser.find_element("id", "side1").get_attribute("data-winner") == "true"
    assert text(browser, "link") == "SHOE CONNECTED"
    assert text(browser, "cards-left") == str(8 * 52 - 6)
    # The scoreboard: one banker win on both roads.
    assert len(browser.find_elements("css selector", "#bead .cell.banker")) == 1
    assert len(browser.find_elements("css selector", "#big .cell.banker")) == 1
    assert text(browser, "count1-n") == "1"  # Banker, the second side


def test_a_misdeal_appears_within_a_second_and_the_button_clears_it(browser, table):
    table.round("R1", *NATURAL_ROUND)
    open_page(browser, table.display.url)
    assert banners(browser) == [] and js(browser, "document.body.dataset.alarm") == ""
    table.card("7H")  # no round dealing: an extra card
    wait_for(browser, lambda b: banners(b), PUSH_S, "the misdeal banner")
    banner = banners(browser)[0]
    assert "misdeal" in banner.get_attribute("class").split()
    assert "Extra card 7\u2665" in banner.text and "ACKNOWLEDGE" in banner.text
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


def test_the_newest_alert_is_on_top_and_the_older_ones_wait_in_a_list_that_acknowledges_too(browser, table):
    open_page(browser, table.display.url)
    table.round("R1", *NATURAL_ROUND)
    table.card("7H", "TS")  # two cards with none due: two misdeals after hand 1
    table.feed(Fault(table.ts + 1, "DEVICE_FAULT", "Shoe reports a jammed card"))  # the newest, a warning
    wait_for(browser, lambda b: len(banners(b)) == 3, 10, "three alerts")
    top, *older = banners(browser)
    assert "warning" in top.get_attribute("class").split() and "DEVICE FAULT" in top.text
    assert all(alert_text(a).startswith("MISDEAL \u00b7 EXTRA CARD \u00b7 AFTER HAND 1") for a in older)
    assert "Extra card 10\u2660" in alert_text(older[0]) and "Extra card 7\u2665" in alert_text(older[1])
    assert js(browser, "document.body.dataset.alarm") == "misdeal"  # a misdeal is open, though not on top
    more = browser.find_element("id", "alert-more")
    assert more.text.startswith("+2 MORE") and not older[0].is_displayed()

    more.click()
    wait_for(browser, lambda b: older[1].is_displayed(), 10, "the list of older alerts")
    older[1].find_element("css selector", "button.ack").click()
    wait_for(browser, lambda b: len(banners(b)) == 2, 10, "the oldest misdeal acknowledged from the list")
    assert [a["card"] for a in table.state()["alerts"] if a["severity"] == "misdeal"] == ["TS"]
    browser.find_element("id", "alert-list-close").click()
    banners(browser)[0].find_element("css selector", "button.ack").click()
    wait_for(browser, lambda b: len(banners(b)) == 1, 10, "the top alert acknowledged")
    assert not browser.find_element("id", "alert-more").is_displayed()


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


def test_the_betting_time_counts_down_then_sounds_and_flashes_no_more_bets(browser, table):
    open_page(browser, table.display.url)
    table.ts = time.time()  # the countdown runs on the page's clock, the table PC's
    table.command("betting_open", round_id="R1", betting_time_s=2.5)
    wait_for(browser, lambda b: text(b, "countdown") in ("2", "3"), 10, "the countdown")
    assert action(browser) == "BETS OPEN - DO NOT DRAW"
    wait_for(browser, lambda b: text(b, "countdown") == "1", 10, "the countdown to go on")
    wait_for(browser, lambda b: action(b) == "NO MORE BETS", 10, "NO MORE BETS at zero")
    assert browser.find_element("id", "action").get_attribute("data-tone") == "nomorebets"
    assert js(browser, "window.scannerdDisplay.timerTones") == 1
    assert not browser.find_element("id", "countdown").is_displayed()
    table.command("betting_close")  # the game server closes betting: NO MORE BETS until the first card
    assert action(browser) == "NO MORE BETS"
    table.card("9H")
    wait_for(browser, lambda b: action(b) == "NEXT: BANKER FIRST CARD", 10, "the deal")
    assert js(browser, "window.scannerdDisplay.timerTones") == 1


def test_the_last_hand_is_announced_when_it_begins(browser, table):
    open_page(browser, table.display.url)
    table.round("R1", *NATURAL_ROUND)
    table.feed(CutCardSeen(table.ts + 1))  # between hands: the next one is the last
    wait_for(browser, lambda b: text(b, "notice").startswith("Cut card out"), 10, "the cut card notice")
    assert not browser.find_element("id", "announce").is_displayed()
    table.command("betting_open", round_id="R2")
    wait_for(browser, lambda b: b.find_element("id", "announce").is_displayed(), 10, "the announcement")
    assert text(browser, "announce") == "LAST HAND BEFORE SHUFFLE"
    table.command("betting_close")
    table.card(*NATURAL_ROUND)
    wait_for(browser, lambda b: action(b) == "SHOE FINISHED - DO NOT DRAW", 10, "the end of the shoe")
    assert not browser.find_element("id", "announce").is_displayed()


def test_a_dealer_signs_in_and_out_at_the_display(browser, table):
    open_page(browser, table.display.url)
    pill = browser.find_element("id", "dealer")
    assert pill.text == "DEALER: SIGN IN"
    pill.click()
    field = browser.find_element("id", "dealer-input")
    wait_for(browser, lambda b: field.is_displayed(), 10, "the sign-in control")
    field.send_keys("D-117\n")  # as a badge reader types it
    wait_for(browser, lambda b: pill.text == "DEALER D-117", 10, "the dealer on the screen")
    assert not field.is_displayed()
    assert table.state()["dealer_id"] == "D-117"
    table.command("betting_open", round_id="R1")
    assert table.state()["round"]["dealer_id"] == "D-117"

    pill.click()
    browser.find_element("id", "sign-in-ok").click()  # nothing typed: the form does not send
    browser.find_element("id", "sign-out").click()
    wait_for(browser, lambda b: pill.text == "DEALER: SIGN IN", 10, "the dealer signed out")
    assert "dealer_id" not in table.state()


def test_a_second_browser_opened_within_the_first_ones_keep_alive_gets_a_live_page(browser, table, tmp_path):
    """A browser keeps its connections open between requests; a second browser is served beside it,
    at the shipped caps, not answered 503 for its scripts and left at ``connecting`` for good."""
    open_page(browser, table.display.url)
    with start_chromium(tmp_path / "second") as second:
        open_page(second, table.display.url)
        table.card("7H")  # an extra card: both pages show it
        for driver in (browser, second):
            wait_for(driver, lambda b: banners(b), 10, "the misdeal on each page")


def test_a_page_whose_script_did_not_load_says_it_is_disconnected_and_loads_again(browser, table):
    """The server busy or the link gone while the page loads: no page left at ``connecting`` for good."""
    browser.execute_cdp_cmd("Network.enable", {})
    browser.execute_cdp_cmd("Network.setBlockedURLs", {"urls": ["*/static/display.js"]})
    try:
        browser.get(table.display.url)
        wait_for(browser, lambda b: js(b, "document.body.dataset.conn") == "disconnected", 10, "DISCONNECTED")
        assert browser.find_element("id", "disconnected").is_displayed()
    finally:
        browser.execute_cdp_cmd("Network.setBlockedURLs", {"urls": []})
    wait_for(browser, live, 15, "the page, loaded again by itself, live")
