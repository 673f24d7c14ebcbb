"""``scannerd pit`` in headless Chromium, with fifty simulated tables on a real Mosquitto.

The page is judged by its geometry, at a 1920x1080 wall screen and at tablet
sizes: every table on the wall without scrolling, nothing spilling out of
its tile or hidden by it, no horizontal scrolling on a tablet, type and the
ACK button big enough to read and to touch.
"""

from __future__ import annotations

import json
import os
import shutil
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from scannerd.display.settings import DisplaySettings
from scannerd.link.mqtt_settings import MqttSettings
from scannerd.pit import Pit
from tests.link.test_publisher_acl import answer
from tests.support.broker import Broker
from tests.support.browser import REBOUND, VIEWPORT, accessibility_findings, js, screenshot, wait_for
from tests.support.pit import OFFLINE, SHOE_DOWN, SimulatedPit

TABLES = 50
TABLET_SIZES = ((1024, 768), (768, 1024))
MIN_FONT_PX = 11
MIN_BUTTON_PX = (44, 32)  # width, height of the ACK button


@pytest.fixture(scope="module")
def sim(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SimulatedPit]:
    broker = Broker(tmp_path_factory.mktemp("pit-broker"))
    broker.start()
    tables = SimulatedPit(broker, TABLES)
    tables.populate()
    yield tables
    tables.close()
    broker.stop()


@pytest.fixture(scope="module")
def pit(sim: SimulatedPit) -> Iterator[Pit]:
    settings = MqttSettings(host=sim.client.host, port=sim.client.port)
    view = Pit(settings, DisplaySettings(listen="127.0.0.1:0"))
    view.start()
    yield view
    view.stop()


@pytest.fixture(scope="module")
def page(browser: Any, pit: Pit, sim: SimulatedPit) -> Any:
    """The pit page, live, with every table seeded from its get_state."""
    browser.get(pit.url)
    wait_for(browser, lambda b: js(b, "document.body.dataset.conn") == "live", 10, "the page to go live")
    wait_for(browser, lambda b: len(tiles(b)) == TABLES, 20, "fifty tiles")
    seeded = sum(len(t.validator.state(results=True)["results"]) > 0 for t in sim.tables.values())
    wait_for(
        browser,
        lambda b: js(b, "scannerdPit.view.tables.filter(t => t.counts.hands > 0).length") == seeded,
        20,
        "every table's roads from get_state",
    )
    sim.trouble()
    wait_for(
        browser, lambda b: js(b, "scannerdPit.view.counts.offline") == len(OFFLINE), 10, "tables offline"
    )
    # The lost shoe's alert comes on its own message, after the table's status: waited for too.
    alerts = {t: {a["alert_id"] for a in sim.tables[t].validator.state()["alerts"]} for t in sim.tables}
    shown = (
        "Object.fromEntries(scannerdPit.view.tables.map(t => [t.table_id, t.alerts.map(a => a.alert_id)]))"
    )
    wait_for(browser, lambda b: {t: set(ids) for t, ids in js(b, shown).items()} == alerts, 10, "every alert")
    return browser


def set_viewport(driver: Any, width: int, height: int, mobile: bool = False) -> None:
    driver.execute_cdp_cmd(
        "Emulation.setDeviceMetricsOverride",
        {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": mobile},
    )
    wait_for(driver, lambda d: js(d, "window.innerWidth") == width, 5, f"a {width}px wide viewport")


def tiles(driver: Any) -> list[dict[str, Any]]:
    return js(driver, "[...document.querySelectorAll('.tile')].map(t => t.dataset.table)")


GEOMETRY = """
const box = (e) => {
  const r = e.getBoundingClientRect();
  return {left: r.left + scrollX, top: r.top + scrollY, right: r.right + scrollX, bottom: r.bottom + scrollY};
};
const shown = (e) => e.getClientRects().length > 0;
const hasText = (e) => [...e.childNodes].some((n) => n.nodeType === 3 && n.textContent.trim());
return {
  width: innerWidth,
  height: innerHeight,
  pageWidth: document.documentElement.scrollWidth,
  pageHeight: document.documentElement.scrollHeight,
  tiles: [...document.querySelectorAll('.tile')].map((t) => ({
    id: t.dataset.table,
    box: box(t),
    clipped: t.scrollHeight > t.clientHeight + 1 || t.scrollWidth > t.clientWidth + 1,
    parts: [...t.querySelectorAll('*')].filter(shown).map((e) => ({cls: e.className, box: box(e)})),
  })),
  cut: [...document.querySelectorAll('.tile *, #top *')].filter(shown).filter(hasText)
    .filter((e) => getComputedStyle(e).overflow !== 'visible')  // what is visible spills: seen below
    .filter((e) => e.scrollWidth > e.clientWidth + 1 || e.scrollHeight > e.clientHeight + 1)
    .map((e) => `${e.className}: ${e.textContent}`),
  fonts: [...document.querySelectorAll('body *')].filter(hasText)
    .map((e) => parseFloat(getComputedStyle(e).fontSize)),
  buttons: [...document.querySelectorAll('.ack')].map((b) => b.getBoundingClientRect())
    .map((r) => [r.width, r.height]),
};
"""


def geometry(driver: Any) -> dict[str, Any]:
    return driver.execute_script(GEOMETRY)


def inside(inner: dict[str, float], outer: dict[str, float]) -> bool:
    return (
        inner["left"] >= outer["left"] - 1
        and inner["top"] >= outer["top"] - 1
        and inner["right"] <= outer["right"] + 1
        and inner["bottom"] <= outer["bottom"] + 1
    )


def overlap(a: dict[str, float], b: dict[str, float]) -> bool:
    return (
        a["left"] < b["right"] - 1
        and b["left"] < a["right"] - 1
        and a["top"] < b["bottom"] - 1
        and (b["top"] < a["bottom"] - 1)
    )


def assert_readable(g: dict[str, Any], tables: int = TABLES) -> None:
    """Nothing spills out of a tile or is cut off in it, no word is cut, no tiles overlap, type and
    buttons are big enough."""
    assert len(g["tiles"]) == tables
    assert not g["cut"], f"{g['width']}x{g['height']}: cut {g['cut']}"
    for tile in g["tiles"]:
        assert not tile["clipped"], f"{tile['id']}: its content does not fit the tile"
        spilled = [p["cls"] for p in tile["parts"] if not inside(p["box"], tile["box"])]
        assert not spilled, f"{tile['id']}: {spilled} outside the tile"
    boxes = [t["box"] for t in g["tiles"]]
    assert not [(i, j) for i in range(len(boxes)) for j in range(i) if overlap(boxes[i], boxes[j])]
    assert g["pageWidth"] <= g["width"], "the page scrolls sideways"
    assert min(g["fonts"]) >= MIN_FONT_PX
    assert g["buttons"], "no ACK button on the page"
    assert all(w >= MIN_BUTTON_PX[0] and h >= MIN_BUTTON_PX[1] for w, h in g["buttons"]), g["buttons"]


def columns(g: dict[str, Any]) -> int:
    return len({round(t["box"]["left"]) for t in g["tiles"]})


# ------------------------------------------------------------------ the tests


def test_the_wall_screen_shows_all_fifty_tables_at_once(page, sim):
    set_viewport(page, *VIEWPORT)
    g = geometry(page)
    assert_readable(g)
    tallest = max(g["tiles"], key=lambda t: t["box"]["bottom"] - t["box"]["top"])
    assert g["pageHeight"] <= g["height"], f"the wall screen must not need scrolling: {tallest}"
    assert all(
        inside(t["box"], {"left": 0, "top": 0, "right": g["width"], "bottom": g["height"]})
        for t in g["tiles"]
    )
    assert columns(g) == 10
    assert not page.find_element("id", "disconnected").is_displayed()  # live: nothing covers the top line
    assert tiles(page) == sorted(sim.tables)  # each table keeps its place on the wall


WALLS = ((1920, 1080), (1280, 1024), (1024, 768), (1080, 1920))
"""The wall screens and tablets a pit is shown on: 16:9, 5:4, 4:3 and portrait."""


@pytest.mark.parametrize(("width", "height"), WALLS)
def test_fifty_tiles_fit_what_they_say_at_every_size(page, width, height):
    set_viewport(page, width, height)
    try:
        assert_readable(geometry(page))
    finally:
        set_viewport(page, *VIEWPORT)


def test_each_tile_says_what_its_table_is_doing(page, sim):
    view = {t["table_id"]: t for t in js(page, "scannerdPit.view.tables")}
    for table_id, table in sim.tables.items():
        state = table.validator.state(results=True)
        tile = view[table_id]
        assert tile["online"] is table.online, table_id
        assert tile["shoe"]["shoe_id"] == state["shoe"]["shoe_id"]
        assert [a["alert_id"] for a in tile["alerts"]] == sorted(a["alert_id"] for a in state["alerts"]) or (
            {a["alert_id"] for a in tile["alerts"]} == {a["alert_id"] for a in state["alerts"]}
        )
        assert tile["counts"]["hands"] == len(state["results"])
        if state["results"]:
            assert tile["last_result"]["winner"] == state["results"][-1]["winner"]
        if state["round"]:
            assert tile["round"]["hand_no"] == state["round"]["hand_no"]
    offline = page.find_elements("css selector", '.tile[data-state="offline"]')
    assert sorted(t.get_attribute("data-table") for t in offline) == list(OFFLINE)
    assert not [t for t in offline if t.find_elements("css selector", ".ack")]  # it could not hear an ACK
    shoe_down = page.find_element("css selector", f'.tile[data-table="{SHOE_DOWN}"] .shoe-down')
    assert shoe_down.text == "SHOE DOWN"
    misdeals = page.find_elements("css selector", '.tile[data-alert="misdeal"]')
    assert len(misdeals) == sum(
        any(a["severity"] == "misdeal" for a in t.validator.state()["alerts"]) for t in sim.tables.values()
    )


def test_the_dealer_signed_in_at_a_table_shows_on_its_tile(page, sim):
    sim.command("BAC-03", "dealer_sign_in", dealer_id="D-117")
    selector = '.tile[data-table="BAC-03"] .dealer'
    wait_for(page, lambda b: b.find_elements("css selector", selector), 10, "the dealer on BAC-03's tile")
    assert page.find_element("css selector", selector).text == "D-117"
    sim.command("BAC-03", "dealer_sign_out")
    wait_for(page, lambda b: not b.find_elements("css selector", selector), 10, "the dealer gone")


def test_a_round_dealt_at_a_table_shows_on_its_tile(page, sim):
    before = js(page, "scannerdPit.view.tables.find(t => t.table_id === 'BAC-02').counts.hands")
    sim.deal_round("BAC-02")
    wait_for(
        page,
        lambda b: (
            js(b, "scannerdPit.view.tables.find(t => t.table_id === 'BAC-02').counts.hands") == before + 1
        ),
        10,
        "the new result on BAC-02",
    )
    winner = sim.tables["BAC-02"].validator.state(results=True)["results"][-1]["winner"]
    result = page.find_element("css selector", '.tile[data-table="BAC-02"] .result')
    assert result.get_attribute("data-winner") == winner and result.text == winner[0].upper()


def test_the_pit_boss_acknowledges_a_misdeal_through_the_request_topic(page, sim):
    table_id = next(t for t in sim.tables if any(a["severity"] == "misdeal" for a in sim.open_alerts(t)))
    alert_id = sim.open_alerts(table_id)[0]["alert_id"]
    page.find_element(
        "css selector", f'.tile[data-table="{table_id}"] .alert[data-alert-id="{alert_id}"] .ack'
    ).click()
    wait_for(
        page,
        lambda b: (
            not b.find_elements(
                "css selector", f'.tile[data-table="{table_id}"] [data-alert-id="{alert_id}"]'
            )
        ),
        10,
        "the acknowledged alert to leave the tile",
    )
    assert (table_id, "ack_alert", {"alert_id": alert_id}) in sim.requests
    assert alert_id not in [a["alert_id"] for a in sim.open_alerts(table_id)]


def test_the_pit_boss_resumes_a_suspended_table_as_the_pits_broker_user(page, sim):
    """The tile says SUSPENDED and why; RESUME asks for a reason and sends ``resume`` on the pit's own
    request topic, which the table records as the pit's broker user (``pit``: no login here)."""
    table_id = "BAC-09"
    sim.fault(table_id, "DEVICE_FAULT", "Shoe alarm 3: card jam")
    tile = f'.tile[data-table="{table_id}"]'
    suspended = f"document.querySelector('{tile}').dataset.suspended"
    wait_for(page, lambda b: js(b, suspended) == "true", 10, "the tile to say SUSPENDED")
    assert "card jam" in page.find_element("css selector", f"{tile} .suspended .msg").text
    page.find_element("css selector", f"{tile} .suspended .resume").click()
    wait_for(page, lambda b: b.find_element("id", "resume").is_displayed(), 10, "the resume dialog")
    page.find_element("id", "resume-reason").send_keys("jam cleared, shoe checked")
    page.find_element("id", "resume-ok").click()
    wait_for(page, lambda b: js(b, suspended) == "false", 10, "the tile to clear")
    assert (table_id, "resume", {"reason": "jam cleared, shoe checked"}) in sim.requests
    resumed = [e for e in sim.published if e.kind == "suspension" and e.table_id == table_id][-1]
    assert (resumed.suspended, resumed.by, resumed.via) == (False, "pit", "pit")


def test_the_fleet_view_shows_each_tables_health_and_sorts_by_any_column(page, sim):
    """Beside the game view, a row a table: the facts its health topic carries (version, uptime,
    outbox, clock, shoe), sortable; no monitoring system of the pit's own needed."""
    page.find_element("id", "show-fleet").click()
    wait_for(page, lambda b: b.find_element("id", "fleet").is_displayed(), 10, "the fleet view")
    assert not page.find_element("id", "tables").is_displayed()

    def column(name: str) -> list[tuple[str, str]]:
        cells = page.find_elements("css selector", f'#fleet-rows td[data-col="{name}"]')
        return [(c.text, c.get_attribute("data-state") or "") for c in cells]

    def tables() -> list[str]:
        return [r.get_attribute("data-table") for r in page.find_elements("css selector", "#fleet-rows tr")]

    wait_for(page, lambda b: len(tables()) == TABLES, 10, "a row a table")
    assert tables() == sorted(sim.tables)
    rows = {r["table_id"]: r for r in js(page, "scannerdPit.view.fleet")}
    for table_id, table in sim.tables.items():
        health = table.health()
        row = rows[table_id]
        assert (row["pending"], row["clock_well"]) == (health.pending, health.clock.well)  # type: ignore[union-attr]
        assert row["version"] == "0.1.0" and row["device"] == "framed SIM-SHOE"
        assert abs(row["uptime_s"] - (health.ts - health.started_at)) < 120  # type: ignore[operator]
    archives = dict(zip(tables(), column("archive_oldest_s"), strict=True))
    assert (archives["BAC-01"], archives["BAC-03"]) == (("\u2013", ""), ("archived", "ok"))
    assert archives["BAC-09"] == ("2 \u00b7 2 h", "bad")
    clocks = dict(zip(tables(), column("clock_error_s"), strict=True))
    assert clocks["BAC-07"][1] == "bad" and clocks["BAC-07"][0].startswith("UNSYNCED")
    assert clocks["BAC-08"] == ("synced \u00b12 ms", "ok")

    page.find_element("css selector", '#fleet-table th[data-key="pending"]').click()  # fewest first
    page.find_element("css selector", '#fleet-table th[data-key="pending"]').click()  # most first
    wait_for(page, lambda b: tables()[0] == "BAC-50", 10, "the fullest outbox on top")
    pending = [rows[t]["pending"] for t in tables()]
    assert pending == sorted(pending, reverse=True)
    header = page.find_element("css selector", '#fleet-table th[data-key="pending"]')
    assert header.get_attribute("aria-sort") == "descending"
    page.find_element("id", "show-game").click()
    wait_for(page, lambda b: b.find_element("id", "tables").is_displayed(), 10, "the game view again")


def post_ack(
    pit: Pit, body: bytes, content_type: str = "application/json", headers: dict[str, str] | None = None
) -> tuple[int, dict[str, Any]]:
    request = urllib.request.Request(
        f"{pit.url}api/ack",
        data=body,
        headers={"Content-Type": content_type, **(headers or {})},
        method="POST",
    )
    try:
        with urllib.request.urlopen(request, timeout=10) as answer:
            return answer.status, json.loads(answer.read())
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read())


def test_an_acknowledgement_the_table_refuses_comes_back_with_its_reason(page, sim, pit):
    table_id = next(t for t in sim.tables if sim.open_alerts(t) and sim.tables[t].online)
    alert_id = sim.open_alerts(table_id)[0]["alert_id"]
    sim.command(table_id, "ack_alert", alert_id=alert_id)  # acknowledged at the table first ...
    body = json.dumps({"table_id": table_id, "alert_id": alert_id}).encode()
    status, answer = post_ack(pit, body)  # ... so the pit's comes too late
    assert (status, answer["status"], answer["error"]) == (409, "error", f"no open alert {alert_id}")
    assert post_ack(pit, body, "text/plain")[0] == 415
    assert post_ack(pit, b'{"table_id": "a/b", "alert_id": 1}')[1]["error"] == "table_id must be a table id"
    assert (
        post_ack(pit, b'{"table_id": "BAC-01", "alert_id": "1"}')[1]["error"] == "alert_id must be an integer"
    )


FETCH = """
const [path, body, done] = arguments;
const init = body === null ? {} : {method: "POST", headers: {"Content-Type": "application/json"}, body};
fetch(path, init).then((answer) => done(answer.status), (error) => done(String(error)));
"""


def open_pit(driver: Any, pit: Pit) -> None:
    driver.get(pit.url)
    wait_for(driver, lambda b: js(b, "document.body.dataset.conn") == "live", 10, "the page to go live")


def test_a_page_under_a_rebound_name_can_neither_read_the_pit_nor_acknowledge(page, sim, pit):
    """DNS rebinding: evil.example now resolves to the pit's machine, and its page talks to the pit."""
    table_id = next(
        t
        for t in sim.tables
        if sim.tables[t].online and any(a["severity"] == "misdeal" for a in sim.open_alerts(t))
    )
    alert_id = sim.open_alerts(table_id)[0]["alert_id"]
    try:
        page.get(f"http://evil.{REBOUND}:{pit.server.port}/")
        assert "unknown host 'evil.example'" in page.find_element("tag name", "body").text
        assert page.execute_async_script(FETCH, "/api/state", None) == 403
        ack = json.dumps({"table_id": table_id, "alert_id": alert_id})
        assert page.execute_async_script(FETCH, "/api/ack", ack) == 403
    finally:
        open_pit(page, pit)
    assert (table_id, "ack_alert", {"alert_id": alert_id}) not in sim.requests
    assert alert_id in [a["alert_id"] for a in sim.open_alerts(table_id)]


def test_a_pit_serves_its_own_name_and_acknowledges_only_with_its_token(page, sim, pit, tmp_path):
    (tmp_path / "token").write_text("s3cret\n")
    name = f"pit.casino.{REBOUND}"
    settings = MqttSettings(host=sim.client.host, port=sim.client.port)
    guarded = Pit(
        settings, DisplaySettings(listen="127.0.0.1:0", allowed_hosts=[name], token_file=tmp_path / "token")
    )
    guarded.start()
    try:
        origin = f"http://{name}:{guarded.server.port}"
        page.get(f"{origin}/?token=s3cret")
        wait_for(page, lambda b: js(b, "document.body.dataset.conn") == "live", 10, "the page under its name")
        assert page.current_url == f"{origin}/"  # the token left the address for a cookie
        ack = json.dumps({"table_id": "BAC-01", "alert_id": 1})
        assert page.execute_async_script(FETCH, "/api/ack", ack) == 409  # the table's answer: no such alert
        assert post_ack(guarded, ack.encode())[0] == 401  # no token
        foreign = {"Origin": "http://evil.example", "Authorization": "Bearer s3cret"}
        assert post_ack(guarded, ack.encode(), headers=foreign)[0] == 403
    finally:
        guarded.stop()
        open_pit(page, pit)


@pytest.mark.parametrize(("width", "height"), TABLET_SIZES)
def test_a_tablet_scrolls_down_never_sideways_and_everything_stays_readable(page, width, height):
    set_viewport(page, width, height, mobile=True)
    try:
        g = geometry(page)
        assert_readable(g)
        assert columns(g) >= 4
    finally:
        set_viewport(page, *VIEWPORT)


@pytest.mark.parametrize(("width", "height"), (VIEWPORT, *TABLET_SIZES))
def test_axe_core_finds_nothing_serious_on_the_pit(page, width, height):
    """Offline tables, a shoe down, misdeals and warnings open: every state a tile can be in."""
    set_viewport(page, width, height, mobile=(width, height) != VIEWPORT)
    try:
        assert accessibility_findings(page) == []
    finally:
        set_viewport(page, *VIEWPORT)


def test_screenshots(page, tmp_path):
    """The pictures in docs/pit.md; set PIT_SCREENSHOTS=docs to refresh them."""
    target = os.environ.get("PIT_SCREENSHOTS")
    for name, size, mobile in (("pit.png", VIEWPORT, False), ("pit-tablet.png", TABLET_SIZES[0], True)):
        set_viewport(page, *size, mobile=mobile)
        path = tmp_path / name
        screenshot(page, path)
        assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
        if target:
            shutil.copyfile(path, Path(target) / name)
    set_viewport(page, *VIEWPORT)
    page.find_element("id", "show-fleet").click()
    wait_for(page, lambda b: b.find_element("id", "fleet").is_displayed(), 10, "the fleet view")
    screenshot(page, tmp_path / "pit-fleet.png")
    if target:
        shutil.copyfile(tmp_path / "pit-fleet.png", Path(target) / "pit-fleet.png")
    page.find_element("id", "show-game").click()


SAW_OFFLINE = """
window.sawOffline = [];
new EventSource("/events").addEventListener("pit", (e) => {
  for (const t of JSON.parse(e.data).tables) if (t.online === false) window.sawOffline.push(t.table_id);
});
"""


def test_a_pit_that_loses_its_broker_says_so_and_shows_no_table_gone_for_it(
    browser, make_broker, make_publisher
):
    """The broker stops (each table's last will goes with it) and starts again before the tables return."""
    broker = make_broker(persistence=True)
    # The tables come back later than the pit (their backoff is their own), so the pit finds their wills.
    slow = MqttSettings(host=broker.host, port=broker.port, reconnect_min_s=5, reconnect_max_s=5)
    for table_id in ("T1", "T2"):
        make_publisher(slow, table_id, on_request=answer)
    view = Pit(MqttSettings(host=broker.host, port=broker.port), DisplaySettings(listen="127.0.0.1:0"))
    view.start()
    try:
        open_pit(browser, view)
        wait_for(browser, lambda b: js(b, "scannerdPit.view.counts.online") == 2, 10, "both tables online")
        browser.execute_script(SAW_OFFLINE)
        broker.stop()
        wait_for(
            browser, lambda b: "NO BROKER since" in b.find_element("id", "broker").text, 10, "the loss said"
        )
        assert js(browser, "document.body.dataset.conn") == "live"  # the page has its pit: it is the broker
        assert not browser.find_elements("css selector", ".tile[data-state='offline']")
        broker.start()
        wait_for(
            browser, lambda b: "Broker back at" in b.find_element("id", "broker").text, 20, "the return said"
        )
        wait_for(browser, lambda b: js(b, "scannerdPit.view.counts.online") == 2, 30, "both tables back")
        assert js(browser, "window.sawOffline") == []
    finally:
        view.stop()
