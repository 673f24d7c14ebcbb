"""The pit's tiles at few tables: they share the screen between them, and say all they say whole.

A wall laid out for fifty kept its fifty-table tiles for two, and cut a long table id behind the
Dragon Tiger badge; a suspended tile with a misdeal lost its roads and counts. Judged by geometry
in headless Chromium at the wall screens' and tablets' sizes.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from scannerd.core.house import HouseRules
from scannerd.display.settings import DisplaySettings
from scannerd.link.mqtt_settings import MqttSettings
from scannerd.pit import Pit
from tests.display.test_display_layout import check_roads
from tests.pit.test_pit_browser import WALLS, assert_readable, geometry, inside, open_pit, set_viewport, tiles
from tests.support.broker import Broker
from tests.support.browser import VIEWPORT, js, wait_for
from tests.support.pit import SimulatedPit


@pytest.fixture(scope="module")
def two_tables(browser: Any, tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Any, Pit]]:
    """Two tables: a Dragon Tiger table with a long id, suspended with a misdeal open, and a baccarat one."""
    broker = Broker(tmp_path_factory.mktemp("two-tables"))
    broker.start()
    long_id = "BACCARAT-VIP-SALON-12"
    tables = SimulatedPit(broker, 1, houses={long_id: HouseRules(game="dragon_tiger", burn="none")})
    for table_id in tables.tables:
        tables.set_online(table_id, True)
        tables.command(table_id, "new_shoe", shoe_id="S-4100-EVENING")
        for _ in range(30):
            tables.deal_round(table_id)
    tables.card(long_id)  # one too many: a misdeal
    tables.fault(
        long_id, "DEVICE_FAULT", "Shoe alarm 3: card jam in the reader, clear it and re-seat the card"
    )
    view = Pit(MqttSettings(host=broker.host, port=broker.port), DisplaySettings(listen="127.0.0.1:0"))
    view.start()
    try:
        open_pit(browser, view)
        wait_for(browser, lambda b: len(tiles(b)) == 2, 20, "two tiles")
        wait_for(browser, lambda b: js(b, "scannerdPit.view.counts.misdeals") == 1, 20, "the misdeal")
        yield browser, view
    finally:
        view.stop()
        tables.close()
        broker.stop()


@pytest.mark.parametrize(("width", "height"), WALLS)
def test_two_tables_share_the_screen_and_each_tile_says_it_whole(two_tables, width, height):
    browser, _ = two_tables
    set_viewport(browser, width, height)
    try:
        g = geometry(browser)
        assert_readable(g, tables=2)
        for tile in g["tiles"]:
            area = (tile["box"]["right"] - tile["box"]["left"]) * (tile["box"]["bottom"] - tile["box"]["top"])
            assert area >= width * height / 12, f"{tile['id']}: a fifty-table tile for two tables"
            foot = [p["box"] for p in tile["parts"] if p["cls"] == "foot"]
            assert foot and inside(foot[0], tile["box"]), f"{tile['id']}: its roads and counts run out of it"
        dt = js(
            browser,
            "[...document.querySelectorAll('.tile[data-game=dragon_tiger] .counts span')]"
            ".map((s) => s.textContent)",
        )
        assert [c.split()[0] for c in dt] == ["D", "T", "="]  # Tiger and a tie told apart, not by colour
    finally:
        set_viewport(browser, *VIEWPORT)


@pytest.mark.parametrize(("width", "height"), WALLS)
def test_a_tiles_road_opens_the_tables_whole_scoreboard(two_tables, width, height):
    """The five roads and the ask marks of the table, as its dealer's screen draws them, opened from
    its tile: the wall's stream carries only the tiles, the scoreboard is asked for when opened."""
    browser, pit = two_tables
    set_viewport(browser, width, height)
    try:
        browser.find_element("css selector", '.tile[data-table="BAC-01"] .tile-road').click()
        drawn = lambda b: b.find_elements("css selector", "#detail #cockroach_pig .cell")  # noqa: E731
        wait_for(browser, drawn, 10, "the scoreboard drawn")
        check_roads(browser, "#detail")
        history = pit.detail("BAC-01")["history"]
        shown = js(browser, "document.querySelectorAll('#detail #big_eye_boy .cell').length")
        assert 0 < shown <= len(history["big_eye_boy"])  # the last columns that fit, as boards do
        assert js(browser, "document.getElementById('count-hands').textContent") == str(
            history["counts"]["hands"]
        )
        # Below the roads, the last ten hands as the dealer's RECALL shows them, newest first.
        recall = pit.detail("BAC-01")["recall"]
        rows = js(
            browser,
            "[...document.querySelectorAll('#detail #recall-items li')].map((li) => li.dataset.round)",
        )
        assert len(recall) == 10 and rows == [hand["round_id"] for hand in recall]
    finally:
        browser.execute_script("document.getElementById('detail').close()")
        set_viewport(browser, *VIEWPORT)
