"""A simulated framed shoe dealt through the daemon, seen on the dealer display and on the shoe itself."""

from __future__ import annotations

import signal
from contextlib import AbstractContextManager
from pathlib import Path

from drivers.events import DeviceCard
from tests.support.broker import Broker, wait_until
from tests.support.browser import action, banners, live, open_page, slot, text, wait_for
from tests.support.process import LiveTable, live_table

NATURAL_ROUND = ("9H", "2S", "9C", "3D")


def display_table(tmp_path: Path, broker: Broker, start: bool = True) -> AbstractContextManager[LiveTable]:
    """Table BAC-07 in the test's process, where the test opens and closes betting as the game server
    would; its dealer display on a free port, which a restart keeps as a table's fixed port."""
    return live_table(
        tmp_path,
        broker,
        table_id="BAC-07",
        in_process=True,
        start=start,
        rules={"burn": "none"},
        display={"enabled": True, "listen": "127.0.0.1:0"},
    )


def test_the_dealt_round_the_misdeal_and_its_acknowledgement_reach_page_and_shoe(
    browser, tmp_path, mosquitto
):
    with display_table(tmp_path, mosquitto) as table:
        daemon, shoe = table.daemon, table.shoe
        assert daemon is not None and daemon.display is not None and shoe is not None
        wait_until(lambda: daemon.reader.link_up, 10, "the shoe to open")
        open_page(browser, daemon.display.url)
        for command, args in (("new_shoe", {"shoe_id": "S1"}), ("betting_open", {}), ("betting_close", {})):
            assert daemon.request(command, args).status == "ok"
        for card in NATURAL_ROUND:
            shoe.send(DeviceCard(card))
        wait_for(browser, lambda b: action(b) == "ROUND COMPLETE - DO NOT DRAW", 10, "the result")
        assert (text(browser, "side0-total"), text(browser, "side1-total")) == ("8", "5")
        assert [slot(browser, p) for p in ("player1", "banker1", "player2", "banker2")] == list(NATURAL_ROUND)

        shoe.send(DeviceCard("7H"))  # no card is due
        wait_for(browser, banners, 1.0, "the misdeal within a second")
        assert "Extra card 7\u2665" in banners(browser)[0].text
        wait_until(lambda: shoe.device.led and shoe.device.buzzer, 10, "the shoe's LED and buzzer")

        banners(browser)[0].find_element("css selector", "button.ack").click()
        wait_for(browser, lambda b: not banners(b), 10, "the banner to clear")
        wait_until(lambda: not (shoe.device.led or shoe.device.buzzer), 10, "the shoe's alarm off")


def test_the_page_recovers_after_the_daemon_restarts(browser, tmp_path, mosquitto):
    with display_table(tmp_path, mosquitto) as table:
        daemon, shoe = table.daemon, table.shoe
        assert daemon is not None and daemon.display is not None and shoe is not None
        url = daemon.display.url
        open_page(browser, url)
        daemon.request("betting_open", {"round_id": "R1"})
        daemon.request("betting_close", {})
        shoe.send(DeviceCard("9H"))
        wait_for(browser, lambda b: text(b, "side0-total") == "9", 10, "the first card")
        table.kill(signal.SIGTERM)
        wait_for(browser, lambda b: not live(b), 10, "the page to notice")
        assert "DISCONNECTED" in text(browser, "disconnected")

        table.start()  # on the port the page has open
        assert table.daemon is not None and table.daemon.display is not None
        assert table.daemon.display.url == url
        wait_for(browser, live, 10, "the page to reconnect by itself")
        shoe.send(DeviceCard("2S"))
        wait_for(browser, lambda b: action(b) == "NEXT: PLAYER SECOND CARD", 10, "the restored round")
        assert (text(browser, "side0-total"), text(browser, "side1-total")) == ("9", "2")


def test_a_shoe_plugged_in_after_the_daemon_started_clears_the_offline_warning(browser, tmp_path, mosquitto):
    """The daemon starts before the shoe is there, as on a table PC booting with the shoe unplugged."""
    with display_table(tmp_path, mosquitto, start=False) as table:
        table.port.unplug()
        daemon = table.build()
        table.start()
        assert daemon.display is not None
        open_page(browser, daemon.display.url)
        wait_for(browser, lambda b: action(b) == "SHOE OFFLINE - DO NOT DEAL", 10, "the shoe offline")
        wait_for(browser, banners, 10, "the disconnection warning")
        assert "Shoe disconnected - do not deal" in banners(browser)[0].text

        table.port.plug()
        wait_until(lambda: daemon.reader.link_up, 10, "the shoe to open")
        wait_for(browser, lambda b: not banners(b), 10, "the warning to leave once the shoe is back")
        wait_for(browser, lambda b: text(b, "link").endswith(" CONNECTED"), 10, "the shoe connected")
        assert text(browser, "notice") == "Shoe reconnected"
        assert action(browser) == "WAITING FOR BETS - DO NOT DRAW"

        daemon.request("betting_open", {"round_id": "R1"})
        wait_for(browser, lambda b: action(b) == "BETS OPEN - DO NOT DRAW", 10, "the next hand")
        assert text(browser, "notice") == ""  # a passing notice: gone when the next hand begins
