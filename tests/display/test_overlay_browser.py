"""The stream overlay as a studio's mixer shows it, in headless Chromium at 1920x1080 and 1280x720.

Judged by geometry, like the dealer's screen: every panel on the frame and clear of the others,
every card whole inside its side, no word cut off; and by what the mixer composites: a pixel of an
empty area is fully transparent, so the video shows there. Every game the table plays.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from scannerd.display.settings import OverlaySettings
from tests.display.test_display_layout import check_roads
from tests.support.browser import js, open_page, resize, wait_for
from tests.support.display import Table, table_in
from tests.support.overlay import SIZES, over_frame, sample_frame, shot, transparent

OVERLAY = OverlaySettings(listen="127.0.0.1:0")

MEASURE = """
const box = (el) => { const r = el.getBoundingClientRect(); return [r.left, r.top, r.right, r.bottom]; };
const shown = (el) => !el.hidden && getComputedStyle(el).visibility !== 'hidden'
  && getComputedStyle(el).display !== 'none';
const panels = ['badge', 'side0', 'status', 'side1', 'roads']
  .map((id) => document.getElementById(id))
  .filter((el) => shown(el) && !el.closest('[hidden]'))
  .map((el) => ({ id: el.id, box: box(el) }));
const cards = [...document.querySelectorAll('.card.face')].map((el) => ({
  pos: el.dataset.pos, card: box(el), glyphs: [...el.children].map(box), side: box(el.closest('.side')),
}));
const words = [...document.querySelectorAll(
  '#badge span, .side .name, .side .total, .mark, #status-label, #status-value, .count')]
  .filter(shown)
  .map((el) => ({ text: el.textContent, box: box(el), holder: box(el.parentElement),
    cut: el.scrollWidth > el.clientWidth + 1 || el.scrollHeight > el.clientHeight + 1 }));
const roads = ['bead', 'big'].map((id) => {
  const road = document.getElementById(id);
  return { road: box(road), cells: [...road.children].map(box) };
});
const root = document.documentElement;
return { width: innerWidth, height: innerHeight, panels, cards, words, roads,
  scroll: [root.scrollWidth, root.scrollHeight],
  background: [getComputedStyle(root).backgroundColor, getComputedStyle(document.body).backgroundColor] };
"""

EMPTY_AREAS = ((0.5, 0.35), (0.25, 0.5), (0.75, 0.2))
"""Where a frame has only video under the overlay (as fractions of width and height)."""

STATES = {
    "betting": 0,
    "no-more-bets": 0,
    "dealing": 4,
    "tie": 6,
    "last-hand": 4,
    "super-6": 5,
    "ez-dragon-7": 5,
    "squeezed": 4,
    "dragon-tiger-dealing": 1,
    "dragon-tiger-tie": 2,
    "suspended": 4,
}
"""Each state the overlay is judged in, and the cards it shows: every game and variant the table plays."""


def _inside(inner: list[float], outer: list[float]) -> bool:
    return all(inner[i] >= outer[i] - 0.5 for i in (0, 1)) and all(inner[i] <= outer[i] + 0.5 for i in (2, 3))


def _overlap(a: list[float], b: list[float]) -> bool:
    return a[0] < b[2] - 0.5 and b[0] < a[2] - 0.5 and a[1] < b[3] - 0.5 and b[1] < a[3] - 0.5


def check_overlay(driver: Any, cards: int) -> dict[str, Any]:
    """Assert the overlay's rules for the page as it is; returns the measurements."""
    m = driver.execute_script(MEASURE)
    size = f"{m['width']}x{m['height']}"
    frame = [0, 0, m["width"], m["height"]]
    assert m["scroll"][0] <= m["width"] and m["scroll"][1] <= m["height"], (
        f"{size}: the page is larger than the frame"
    )
    assert m["background"] == ["rgba(0, 0, 0, 0)"] * 2, f"{size}: the page paints a background"
    assert len(m["cards"]) == cards, size
    for panel in m["panels"]:
        assert _inside(panel["box"], frame), f"{size}: #{panel['id']} runs off the frame"
        for other in m["panels"]:
            if other is not panel:
                assert not _overlap(panel["box"], other["box"]), f"{size}: #{panel['id']} over #{other['id']}"
    for c in m["cards"]:
        assert _inside(c["card"], c["side"]), f"{size} {c['pos']}: card outside its side"
        for glyph in c["glyphs"]:
            assert _inside(glyph, c["card"]), f"{size} {c['pos']}: rank or suit runs out of the card"
        for other in m["cards"]:
            if other is not c:
                assert not _overlap(c["card"], other["card"]), f"{size} {c['pos']} over {other['pos']}"
    for word in m["words"]:
        assert not word["cut"] and _inside(word["box"], word["holder"]), (
            f"{size}: {word['text']!r} is cut off"
        )
    for road in m["roads"]:
        for cell in road["cells"]:
            assert _inside(cell, road["road"]), f"{size}: a road's cell outside the road"
    picture = shot(driver)
    for fx, fy in EMPTY_AREAS:
        x, y = int(fx * picture.width), int(fy * picture.height)
        assert picture.getpixel((x, y))[3] == 0, f"{size}: the frame is covered at ({x}, {y})"
    return m


@pytest.fixture
def overlay(browser):
    """Show a state's overlay at a size: ``overlay(state, (w, h))``; the table is stopped afterwards."""
    tables: list[Table] = []
    transparent(browser)

    def show(state: str, size: tuple[int, int], settings: OverlaySettings = OVERLAY) -> Table:
        table = table_in(state, settings)
        tables.append(table)
        resize(browser, *size)
        assert table.display.overlay_url is not None
        open_page(browser, table.display.overlay_url)
        return table

    yield show
    for table in tables:
        table.display.stop()


def cards_shown(driver: Any) -> list[str]:
    return js(driver, "[...document.querySelectorAll('.card.face')].map((c) => c.dataset.card)")


def status(driver: Any) -> str:
    return js(
        driver,
        "document.getElementById('status').dataset.state + ' ' + document.getElementById('status').innerText",
    )


@pytest.mark.parametrize("size", SIZES, ids=[f"{w}x{h}" for w, h in SIZES])
@pytest.mark.parametrize("state", list(STATES))
def test_every_game_fits_the_frame_and_leaves_the_video_clear(browser, overlay, state, size) -> None:
    overlay(state, size)
    wait_for(browser, lambda b: len(cards_shown(b)) == STATES[state], 10, f"{STATES[state]} cards")
    check_overlay(browser, STATES[state])


def test_the_round_is_drawn_as_it_is_dealt_with_the_betting_time_and_the_result(browser, overlay) -> None:
    table = overlay("betting", SIZES[1])
    wait_for(browser, lambda b: status(b).startswith("bets PLACE YOUR BETS\n"), 10, "the countdown")
    assert 55 <= int(status(browser).split("\n")[1]) <= 60
    table.command("betting_close")
    wait_for(browser, lambda b: status(b) == "stop NO MORE BETS", 10, "NO MORE BETS")
    dealt: list[str] = []
    for card in ("2H", "KS", "3C", "4D", "2C", "5S"):
        table.card(card)
        dealt.append(card)
        count = len(dealt)
        wait_for(browser, lambda b, n=count: len(cards_shown(b)) == n, 10, f"{card} on the overlay")
        assert sorted(cards_shown(browser)) == sorted(dealt)
    wait_for(browser, lambda b: status(b) == "result BANKER WINS", 10, "the result")
    assert js(browser, "document.getElementById('side1-total').textContent") == "9"
    check_overlay(browser, 6)


def test_a_squeezed_hand_shows_its_backs_until_the_reveal(browser, overlay) -> None:
    table = overlay("squeezed", SIZES[0])
    wait_for(browser, lambda b: cards_shown(b) == ["back"] * 4, 10, "four backs")
    assert status(browser).split(" ")[0] == ""  # no result while the cards are down
    assert js(browser, "document.getElementById('side0-total').textContent") == ""
    table.command("reveal")
    wait_for(browser, lambda b: "back" not in cards_shown(b), 10, "the faces")
    wait_for(browser, lambda b: status(b).startswith("result "), 10, "the result after the reveal")


def test_a_studio_theme_sets_the_overlays_colours(browser, overlay, tmp_path: Path) -> None:
    theme = tmp_path / "theme.css"
    theme.write_text(":root { --overlay-banker: rgb(1, 2, 3); --overlay-panel: rgba(10, 20, 30, 0.5); }\n")
    overlay("tie", SIZES[0], OverlaySettings(listen="127.0.0.1:0", theme_file=theme))
    side = "getComputedStyle(document.getElementById('side1'))"
    assert js(browser, f"{side}.borderTopColor") == "rgb(1, 2, 3)"
    assert js(browser, f"{side}.backgroundColor") == "rgba(10, 20, 30, 0.5)"


def test_without_the_tables_stream_the_overlay_steps_aside(browser, overlay) -> None:
    table = overlay("tie", SIZES[0])
    table.display.stop()
    wait_for(browser, lambda b: js(b, "document.body.dataset.conn") != "live", 20, "the lost stream")
    assert js(browser, "getComputedStyle(document.getElementById('stage')).visibility") == "hidden"


def test_composited_over_a_frame_the_overlay_keeps_the_frame_where_it_is_empty(browser, overlay) -> None:
    overlay("tie", SIZES[0])
    wait_for(browser, lambda b: len(cards_shown(b)) == 6, 10, "the tie")
    picture = shot(browser)
    composite = over_frame(picture)
    frame = sample_frame(*picture.size)
    for fx, fy in EMPTY_AREAS:
        at = (int(fx * picture.width), int(fy * picture.height))
        assert composite.getpixel(at) == frame.getpixel(at)
    card = js(
        browser,
        "(() => { const r = document.querySelector('.card.face').getBoundingClientRect(); "
        "return [Math.round(r.left + r.width / 2), Math.round(r.top + r.height / 2)]; })()",
    )
    assert composite.getpixel(tuple(card)) != frame.getpixel(tuple(card))


def test_a_page_left_open_loads_itself_again_after_the_server_is_upgraded(
    browser, overlay, monkeypatch
) -> None:
    """The stream every page follows (shared/live.js) reloads it when the server's version moves."""
    table = overlay("betting", SIZES[1])
    browser.execute_script("window.before_upgrade = true")
    monkeypatch.setattr("scannerd.display.stream.__version__", "99.0.0")
    table.command("betting_close")  # a new view, from the upgraded server
    wait_for(browser, lambda b: js(b, "window.before_upgrade === undefined"), 10, "the page to reload")
    wait_for(
        browser,
        lambda b: js(b, "window.scannerdOverlay.view && window.scannerdOverlay.view.server_version"),
        10,
        "a view",
    )
    assert js(browser, "window.scannerdOverlay.view.server_version") == "99.0.0"


@pytest.mark.parametrize("size", SIZES, ids=[f"{w}x{h}" for w, h in SIZES])
def test_a_long_shoe_draws_all_five_roads_inside_the_overlays_panel(browser, overlay, size) -> None:
    overlay("long-shoe", size)
    drawn = lambda b: b.find_elements("css selector", "#cockroach_pig .cell")  # noqa: E731
    wait_for(browser, drawn, 10, "the derived roads")
    check_roads(browser, "#roads")
