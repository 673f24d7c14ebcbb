"""The dealer's screen on every table monitor and with any number of open alerts, judged by geometry.

Real headless Chromium, a real validator behind a real Display; each state is built as a table
gets there (``tests.support.display``). What a dealer needs: every card drawn fully on the screen,
inside its own hand, clear of everything else, at least a tenth of the screen high, and nothing
to scroll.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.support.browser import (
    accessibility_findings,
    action,
    banners,
    js,
    open_page,
    resize,
    text,
    wait_for,
)
from tests.support.display import SIZES, table_in

# The page measures itself: every drawn card with its hand, its head (name, marks, total) and
# what else is on screen, plus how far the document reaches.
MEASURE = """
const box = (el) => { const r = el.getBoundingClientRect(); return [r.left, r.top, r.right, r.bottom]; };
const cards = [...document.querySelectorAll('.card.face')].map((el) => ({
  pos: el.dataset.pos,
  card: box(el),
  glyphs: [...el.children].map(box),
  hand: box(el.closest('.hand')),
  head: box(el.closest('.hand').querySelector('.hand-head')),
}));
const others = ['top', 'alerts', 'announce', 'action', 'shoe', 'history']
  .map((id) => document.getElementById(id))
  .filter((el) => el && !el.hidden)
  .map((el) => ({ id: el.id, box: box(el) }));
const root = document.documentElement;
const notice = document.getElementById('notice');
return {
  tableIdLines: document.getElementById('table-id').getClientRects().length,
  notice: notice.textContent ? { box: box(notice), shoe: box(document.getElementById('shoe')),
    clipped: notice.scrollHeight > notice.clientHeight + 1 } : null,
  width: innerWidth, height: innerHeight, cards, others,
  scroll: [root.scrollWidth, root.scrollHeight, document.body.scrollWidth, document.body.scrollHeight],
  bottom: Math.max(...others.map((o) => o.box[3])),
};
"""


def _inside(inner: list[float], outer: list[float]) -> bool:
    left, top, right, bottom = inner
    return (
        left >= outer[0] - 0.5
        and top >= outer[1] - 0.5
        and right <= outer[2] + 0.5
        and bottom <= outer[3] + 0.5
    )


def _overlap(a: list[float], b: list[float]) -> bool:
    return a[0] < b[2] - 0.5 and b[0] < a[2] - 0.5 and a[1] < b[3] - 0.5 and b[1] < a[3] - 0.5


def check_layout(driver: Any, expected_cards: int | None) -> dict[str, Any]:
    """Assert the dealer's rules for the page as it is (``None``: any number of cards on show).

    Returns the measurements."""
    m = driver.execute_script(MEASURE)
    size = f"{m['width']}x{m['height']}"
    viewport = [0, 0, m["width"], m["height"]]
    assert expected_cards is None or len(m["cards"]) == expected_cards, size
    assert max(m["scroll"][0], m["scroll"][2]) <= m["width"], f"{size}: the page is wider than the screen"
    assert max(m["scroll"][1], m["scroll"][3]) <= m["height"], f"{size}: the page is taller than the screen"
    assert m["bottom"] <= m["height"] + 0.5, f"{size}: part of the page is below the screen"
    assert m["tableIdLines"] == 1, f"{size}: the table id wraps"
    if m["notice"]:
        assert _inside(m["notice"]["box"], m["notice"]["shoe"]), f"{size}: the shoe notice is cut off"
        assert not m["notice"]["clipped"], f"{size}: the shoe notice is cut off"
    for c in m["cards"]:
        where = f"{size} {c['pos']}"
        assert _inside(c["card"], viewport), f"{where}: card not fully on the screen {c['card']}"
        assert _inside(c["card"], c["hand"]), f"{where}: card outside its hand {c['card']} {c['hand']}"
        assert not _overlap(c["card"], c["head"]), f"{where}: card over its hand's name and total"
        for glyph in c["glyphs"]:
            assert _inside(glyph, c["card"]), f"{where}: rank or suit runs out of the card"
        assert c["card"][3] - c["card"][1] >= m["height"] / 10, f"{where}: card under a tenth of the screen"
        for other in m["cards"]:
            if other is not c:
                assert not _overlap(c["card"], other["card"]), f"{where} overlaps {other['pos']}"
        for part in m["others"]:
            assert not _overlap(c["card"], part["box"]), f"{where} overlaps #{part['id']}"
    return m


@pytest.fixture
def shown(browser):
    """Show a state at a size: ``shown(state, (w, h))``; the table is stopped afterwards."""
    tables = []

    def show(state: str, size: tuple[int, int]):
        table = table_in(state)
        tables.append(table)
        resize(browser, *size)
        open_page(browser, table.display.url)
        return table

    yield show
    for table in tables:
        table.display.stop()


@pytest.mark.parametrize("size", SIZES, ids=[f"{w}x{h}" for w, h in SIZES])
@pytest.mark.parametrize("state", ["tie", "alerts-3", "alerts-6", "alerts-10", "alerts-20"])
def test_every_card_of_a_six_card_tie_is_whole_and_clear_with_any_number_of_alerts(
    browser, shown, state, size
):
    table = shown(state, size)
    count = len(table.state()["alerts"])
    wait_for(browser, lambda b: len(banners(b)) == count, 10, f"{count} alerts on the page")
    check_layout(browser, 6)
    # The tie reads TIE on both hands, and neither wins.
    marks = js(browser, "[...document.querySelectorAll('.hand .mark')].map((m) => m.textContent)")
    assert marks.count("TIE") == 2 and "WINS" not in marks
    assert js(browser, "document.querySelectorAll('.hand[data-winner=\"true\"]').length") == 0


@pytest.mark.parametrize("size", SIZES, ids=[f"{w}x{h}" for w, h in SIZES])
def test_a_hand_being_dealt_fits_every_monitor(browser, shown, size):
    shown("dealing", size)
    wait_for(browser, lambda b: b.find_elements("css selector", ".card.due"), 10, "the third card cue")
    check_layout(browser, 4)
    due = browser.find_element("css selector", ".card.due").get_attribute("data-pos")
    assert due == "player3"


@pytest.mark.parametrize("size", SIZES, ids=[f"{w}x{h}" for w, h in SIZES])
def test_the_countdown_no_more_bets_last_hand_dealer_and_notice_fit_every_monitor(browser, shown, size):
    shown("betting", size)
    wait_for(browser, lambda b: b.find_element("id", "countdown").is_displayed(), 10, "the countdown")
    check_layout(browser, 0)
    shown("no-more-bets", size)
    wait_for(browser, lambda b: action_tone(b) == "nomorebets", 10, "NO MORE BETS")
    check_layout(browser, 0)
    shown("last-hand", size)
    wait_for(browser, lambda b: b.find_element("id", "announce").is_displayed(), 10, "the last hand")
    check_layout(browser, 4)
    shown("dealer", size)
    wait_for(browser, lambda b: "D-117" in b.find_element("id", "dealer").text, 10, "the dealer")
    check_layout(browser, 4)
    shown("cut-card", size)
    wait_for(browser, lambda b: b.find_element("id", "notice").text, 10, "the cut card notice")
    check_layout(browser, None)  # the hand before, and the notice


@pytest.mark.parametrize("size", SIZES, ids=[f"{w}x{h}" for w, h in SIZES])
def test_a_dragon_tiger_table_shows_dragon_and_tiger_one_card_each_on_every_monitor(browser, shown, size):
    shown("dragon-tiger-dealing", size)
    wait_for(browser, lambda b: b.find_elements("css selector", ".card.due"), 10, "Tiger's card cue")
    check_layout(browser, 1)
    assert browser.find_element("css selector", ".card.due").get_attribute("data-pos") == "tiger"
    names = js(browser, "[...document.querySelectorAll('.hand h2')].map((h) => h.textContent)")
    assert names == ["DRAGON", "TIGER"]
    sides = js(browser, "[...document.querySelectorAll('.hand')].map((h) => h.dataset.side)")
    assert sides == ["dragon", "tiger"]
    shown_slots = "[...document.querySelectorAll('.card')].filter((c) => c.offsetParent).length"
    assert js(browser, shown_slots) == 2  # one card a side, the others not drawn at all
    table = shown("dragon-tiger-tie", size)
    wait_for(browser, lambda b: len(banners(b)) == 3, 10, "three alerts on the page")
    check_layout(browser, 2)
    marks = js(browser, "[...document.querySelectorAll('.hand .mark')].map((m) => m.textContent)")
    assert marks.count("TIE") == 2 and "NATURAL" not in marks and "PAIR" not in marks
    assert marks.count("SUITED") == 2  # the fact its side bet reads, called on both hands
    assert called_marks_whole(browser)
    counts = js(browser, "[...document.querySelectorAll('#counts .count')].map((c) => c.className)")
    assert counts[:3] == ["count dragon", "count tiger", "count tie"]  # the hands' order, as everywhere
    letters = "[...document.querySelectorAll('#counts .count span:first-child')].map((s) => s.textContent)"
    assert js(browser, letters)[:3] == ["D", "T", "="]  # Tiger and a tie each a mark of their own
    beads = js(browser, "[...document.querySelectorAll('#bead .disc')].map((d) => d.textContent)")
    assert set(beads) <= {"D", "T", "="} and "=" in beads
    assert table.state()["game"] == "dragon_tiger"


@pytest.mark.parametrize("size", SIZES, ids=[f"{w}x{h}" for w, h in SIZES])
def test_a_squeezed_hand_is_face_down_until_the_game_server_reveals_it(browser, shown, size):
    table = shown("squeezed", size)
    faces = "[...document.querySelectorAll('.card.face')].map((c) => c.dataset.card)"
    wait_for(browser, lambda b: js(b, faces) == ["back"] * 4, 10, "four cards face down")
    check_layout(browser, 4)
    page = browser.page_source
    assert "9H" not in page and "9C" not in page  # the faces are nowhere on the page, not just hidden
    assert (text(browser, "side0-total"), text(browser, "side1-total")) == ("\u2013", "\u2013")
    assert js(browser, "document.querySelectorAll('.hand .mark').length") == 0  # no WINS, no NATURAL yet
    table.command("reveal", position="player1")
    wait_for(browser, lambda b: js(b, faces)[0] == "9H", 10, "Player's first card shown")
    assert text(browser, "side0-total") == "\u2013"  # no partial count while its second card is held
    table.command("reveal", side="player")
    wait_for(browser, lambda b: js(b, faces) == ["9H", "9C", "back", "back"], 10, "Player's cards shown")
    assert text(browser, "side0-total") == "8"
    table.command("reveal")
    # A natural pair that wins: WINS is the one mark that must be seen, whatever room the hand has.
    wait_for(browser, lambda b: "WINS" in text(b, "side0-marks"), 10, "the result once all is shown")
    check_layout(browser, 4)


@pytest.mark.parametrize("size", SIZES, ids=[f"{w}x{h}" for w, h in SIZES])
def test_an_ez_tables_dragon_7_is_called_whole_beside_wins_on_every_monitor(browser, shown, size):
    shown("ez-dragon-7", size)
    marks = "[...document.querySelectorAll('#side1 .mark')].map((m) => m.textContent)"
    wait_for(browser, lambda b: js(b, marks)[:2] == ["WINS", "DRAGON 7"], 10, "Banker's Dragon 7")
    assert "PAIR" in js(browser, marks)
    check_layout(browser, 5)
    assert called_marks_whole(browser)


def called_marks_whole(driver: Any) -> bool:
    """Every result and called fact fully drawn: a mark cut at the hand's edge is not read."""
    return js(
        driver,
        "[...document.querySelectorAll('.mark.win, .mark.tie, .mark.call')].every((m) => {"
        "  const r = m.getBoundingClientRect(), box = m.parentElement.getBoundingClientRect();"
        "  return r.width > 0 && r.left >= box.left - 0.5 && r.right <= box.right + 0.5; })",
    )


def action_tone(driver: Any) -> str:
    return driver.find_element("id", "action").get_attribute("data-tone")


def test_the_list_of_older_alerts_keeps_each_whole_and_acknowledges_the_oldest(browser, shown):
    table = shown("alerts-20", (1024, 768))  # more than the list has room for: it scrolls
    wait_for(browser, lambda b: len(banners(b)) == 20, 10, "twenty alerts on the page")
    browser.find_element("id", "alert-more").click()
    wait_for(browser, lambda b: b.find_element("id", "alert-list").is_displayed(), 10, "the list")
    boxes = browser.execute_script(
        "return [...document.querySelectorAll('#alert-items .alert')].map((el) => {"
        "  const r = el.getBoundingClientRect(), b = el.querySelector('button.ack').getBoundingClientRect();"
        "  return [[r.left, r.top, r.right, r.bottom], [b.left, b.top, b.right, b.bottom]]; })"
    )
    assert len(boxes) == 19
    for n, (alert, button) in enumerate(boxes):
        assert _inside(button, alert), f"older alert {n}: its button runs out of it"
        assert alert[3] - alert[1] >= button[3] - button[1], f"older alert {n} is squashed"
        for other, _ in boxes[n + 1 :]:
            assert not _overlap(alert, other), f"older alert {n} overlaps another"
    oldest = min(a["alert_id"] for a in table.state()["alerts"])
    banners(browser)[-1].find_element("css selector", "button.ack").click()  # scrolled to, as a finger would
    wait_for(browser, lambda b: len(banners(b)) == 19, 10, "the oldest acknowledged from the list")
    assert oldest not in [a["alert_id"] for a in table.state()["alerts"]]


@pytest.mark.parametrize("size", SIZES, ids=[f"{w}x{h}" for w, h in SIZES])
@pytest.mark.parametrize("state", ["dealing", "alerts-3", "betting", "last-hand-dealer"])
def test_axe_core_finds_nothing_serious_on_the_dealers_screen(browser, shown, state, size):
    table = shown(state, size)
    count = len(table.state()["alerts"])
    wait_for(browser, lambda b: len(banners(b)) == count, 10, f"{count} alerts on the page")
    assert accessibility_findings(browser) == []


# What a dealer must always see: the newest alert's words and its button, and the next move. Each
# as a box, and whether its text is cut (more to it than its box shows). Whatever is open over
# the page (a form, the alert list, the suspended cover), as boxes too.
GUARDED = """
const box = (el) => { const r = el.getBoundingClientRect(); return [r.left, r.top, r.right, r.bottom]; };
const shown = (el) =>
  el && !el.hidden && getComputedStyle(el).display !== 'none' && el.getClientRects().length;
const cut = (el) => el.scrollWidth > el.clientWidth + 1 || el.scrollHeight > el.clientHeight + 1;
const guarded = [...document.querySelectorAll(
  '#alert-main .kind, #alert-main .message, #alert-main button.ack, #action-text, #countdown,'
  + ' #table-id, #hand-no, #round-id, #dealer, #link, #alert-more')]
  .filter(shown).map((el) => ({ what: el.id || el.className, box: box(el), cut: cut(el),
    lines: el.id === 'hand-no' ? el.getClientRects().length : 1, text: el.textContent }));
const open = ['sign-in', 'ack-pin', 'alert-list', 'suspended'].map((id) => document.getElementById(id))
  .filter(shown)
  .map((el) => ({ id: el.id, box: box(el), cut: cut(el) && getComputedStyle(el).overflowY !== 'auto' }));
return { guarded, open, width: innerWidth, height: innerHeight };
"""


def check_guarded(driver: Any, opened: str | None) -> dict[str, Any]:
    """Nothing open hides what the dealer must see, and none of it is cut or off the screen."""
    m = driver.execute_script(GUARDED)
    size = f"{m['width']}x{m['height']}"
    viewport = [0, 0, m["width"], m["height"]]
    if opened is not None:
        assert opened in [o["id"] for o in m["open"]], f"{size}: #{opened} did not open"
    for part in m["guarded"]:
        where = f"{size} {part['what']} {part['text'][:40]!r}"
        assert _inside(part["box"], viewport), f"{where}: off the screen {part['box']}"
        assert not part["cut"], f"{where}: cut"
        assert part["lines"] == 1, f"{where}: the hand's number wraps"
        for over in m["open"]:
            assert not _overlap(part["box"], over["box"]), f"{where}: hidden by #{over['id']}"
    for over in m["open"]:
        assert _inside(over["box"], viewport), f"{size} #{over['id']}: off the screen"
        assert not over["cut"], f"{size} #{over['id']}: cut"
    return m


OPENERS = {
    "sign-in": "document.getElementById('dealer').click()",
    "ack-pin": "document.querySelector('#alert-main button.ack').click()",
    "alert-list": "document.getElementById('alert-more').click()",
    "suspended": "",
}


@pytest.mark.parametrize("size", SIZES, ids=[f"{w}x{h}" for w, h in SIZES])
@pytest.mark.parametrize(
    ("state", "opened"),
    [
        ("dealing", "sign-in"),  # a clean deal: the next move stays in sight
        ("alerts-3", "sign-in"),
        ("alerts-3-pin", "sign-in"),  # with a staff list: the PIN field too
        ("alerts-3-pin", "ack-pin"),
        ("alerts-20", "alert-list"),
        ("suspended", "suspended"),
    ],
)
def test_no_form_dialog_or_cover_hides_an_alert_its_button_or_the_next_move(
    browser, shown, state: str, opened: str, size
):
    table = shown(state, size)
    count = len(table.state()["alerts"])
    wait_for(browser, lambda b: len(banners(b)) == count, 10, f"{count} alerts on the page")
    browser.execute_script(OPENERS[opened])
    check_guarded(browser, opened)
    if opened == "ack-pin":  # it names the alert it acknowledges as the banner does, not by a number
        title = text(browser, "ack-pin-title")
        assert (
            title.startswith("ACKNOWLEDGE EXTRA CARD")
            and str(table.state()["alerts"][0]["alert_id"]) not in title
        )


@pytest.mark.parametrize("size", SIZES, ids=[f"{w}x{h}" for w, h in SIZES])
@pytest.mark.parametrize("state", ["longest-alerts", "card-before-bets-closed"])
def test_every_word_of_the_longest_instruction_is_shown_at_every_size(browser, shown, state: str, size):
    table = shown(state, size)
    count = len(table.state()["alerts"])
    wait_for(browser, lambda b: len(banners(b)) == count, 10, f"{count} alerts on the page")
    check_guarded(browser, None)
    check_layout(browser, None)


def test_the_list_of_older_alerts_is_as_tall_as_it_needs_and_says_a_misdeal_in_red(browser, shown):
    shown("alerts-3", (1080, 1920))
    wait_for(browser, lambda b: len(banners(b)) == 3, 10, "three alerts on the page")
    assert browser.find_element("id", "alert-more").get_attribute("data-severity") == "misdeal"
    browser.execute_script(OPENERS["alert-list"])
    m = check_guarded(browser, "alert-list")
    (listed,) = [o["box"] for o in m["open"]]
    assert listed[3] - listed[1] < m["height"] / 3, "two older alerts in a list a screen high"


ROADS = """
const box = (el) => { const r = el.getBoundingClientRect(); return [r.left, r.top, r.right, r.bottom]; };
const panel = document.querySelector(arguments[0]);
return {
  panel: box(panel),
  roads: ['bead', 'big', 'big_eye_boy', 'small_road', 'cockroach_pig'].map((id) => {
    const road = document.getElementById(id);
    return { id, box: box(road), cells: [...road.querySelectorAll('.cell')].length,
             marks: [...road.querySelectorAll('.cell')].map(box) };
  }),
  ask: box(document.getElementById('ask')),
};
"""


def check_roads(driver: Any, panel: str) -> None:
    """Every road inside its panel, clear of the others, with marks drawn; the ask marks too."""
    m = driver.execute_script(ROADS, panel)
    for road in m["roads"]:
        assert _inside(road["box"], m["panel"]), f"#{road['id']} runs out of {panel}"
        assert road["cells"] > 0, f"#{road['id']} draws nothing"
        for other in m["roads"]:
            if other is not road:
                assert not _overlap(road["box"], other["box"]), f"#{road['id']} over #{other['id']}"
    assert _inside(m["ask"], m["panel"]), f"the ask marks run out of {panel}"


@pytest.mark.parametrize("size", SIZES, ids=[f"{w}x{h}" for w, h in SIZES])
def test_a_long_shoe_draws_all_five_roads_inside_the_scoreboard_at_every_size(browser, shown, size):
    shown("long-shoe", size)
    wait_for(
        browser, lambda b: b.find_elements("css selector", "#cockroach_pig .cell"), 10, "the derived roads"
    )
    check_roads(browser, "#history")
    check_layout(browser, None)


@pytest.mark.parametrize("size", SIZES, ids=[f"{w}x{h}" for w, h in SIZES])
def test_a_finished_shoe_is_counted_from_the_display_and_its_receipt_fits_every_monitor(browser, shown, size):
    table = shown("shoe-finished", size)
    button = browser.find_element("id", "count")
    wait_for(browser, lambda b: button.is_displayed(), 10, "the count button")
    assert button.text == "COUNT SHOE"
    check_layout(browser, 4)
    assert count_button_whole(browser)
    button.click()
    wait_for(browser, lambda b: button.text == "END COUNT", 10, "count mode")
    assert action(browser) == "DECK CHECK: 0 COUNTED - DRAW THE REST"
    table.card("2S", "3S", "4S")
    wait_for(browser, lambda b: action(b) == "DECK CHECK: 3 COUNTED - DRAW THE REST", 10, "three counted")
    check_layout(browser, 4)
    assert count_button_whole(browser)
    button.click()
    wait_for(browser, lambda b: "missing" in b.find_element("id", "notice").text, 10, "the receipt")
    assert "deck_check" not in table.state()
    check_layout(browser, None)  # the receipt's notice whole in the shoe's panel
    assert not button.is_displayed()  # counted: not offered again, room for the receipt


def count_button_whole(browser) -> bool:
    """The count button lies inside the shoe's panel, its words on it."""
    return browser.execute_script(
        """const b = document.getElementById('count').getBoundingClientRect();
        const s = document.getElementById('shoe').getBoundingClientRect();
        const el = document.getElementById('count');
        return b.left >= s.left - 0.5 && b.right <= s.right + 0.5 && b.top >= s.top - 0.5
          && b.bottom <= s.bottom + 0.5 && el.scrollWidth <= el.clientWidth + 1;"""
    )


RECALL = """
const box = (el) => { const r = el.getBoundingClientRect(); return [r.left, r.top, r.right, r.bottom]; };
const panel = document.getElementById('recall');
const cover = document.getElementById('suspended');
const items = [...document.querySelectorAll('#recall-items li')];
const list = document.getElementById('recall-items');
const top = document.elementFromPoint((box(panel)[0] + box(panel)[2]) / 2, box(panel)[1] + 5);
return {
  width: innerWidth, height: innerHeight, panel: box(panel), stage: box(document.getElementById('stage')),
  onTop: top !== null && top.closest('#recall') !== null,
  coverShown: getComputedStyle(cover).display !== 'none',
  items: items.length, cut: items.filter((li) => li.scrollWidth > li.clientWidth + 1).length,
  scrolls: list.scrollHeight > list.clientHeight + 1, closeBox: box(document.getElementById('recall-close')),
  firstText: items.length ? items[0].textContent : '',
};
"""


@pytest.mark.parametrize("size", SIZES, ids=[f"{w}x{h}" for w, h in SIZES])
def test_the_last_ten_hands_are_recalled_at_a_touch_while_the_table_is_suspended(browser, shown, size):
    table = shown("suspended", size)
    wait_for(browser, lambda b: js(b, "document.body.dataset.suspended") == "true", 10, "the suspended cover")
    browser.find_element("id", "recall-open").click()
    wait_for(browser, lambda b: b.find_element("id", "recall").is_displayed(), 10, "the recall panel")
    m = browser.execute_script(RECALL)
    where = f"{m['width']}x{m['height']}"
    assert m["coverShown"] and m["onTop"], f"{where}: the recall is under the suspended cover"
    assert m["items"] == 10, where
    assert m["cut"] == 0, f"{where}: a recalled hand's words run out of its line"
    assert _inside(m["panel"], m["stage"]) and _inside(m["closeBox"], [0, 0, m["width"], m["height"]]), where
    newest = table.state()["recall"][-1]
    assert m["firstText"].startswith(f"#{newest['hand_no']}") and "VOID DEVICE FAULT" in m["firstText"]
    browser.find_element("id", "recall-close").click()
    wait_for(browser, lambda b: not b.find_element("id", "recall").is_displayed(), 10, "the panel closed")


DECLARE = """
const box = (el) => { const r = el.getBoundingClientRect(); return [r.left, r.top, r.right, r.bottom]; };
const shoe = box(document.getElementById('shoe'));
return [...document.querySelectorAll('#declare button')].map((b) => ({
  winner: b.dataset.winner, text: b.textContent, box: box(b), shoe,
  cut: b.scrollWidth > b.clientWidth + 1 || b.scrollHeight > b.clientHeight + 1,
}));
"""


@pytest.mark.parametrize("size", SIZES, ids=[f"{w}x{h}" for w, h in SIZES])
def test_the_dealer_declares_the_winner_at_the_display_on_every_monitor(browser, shown, size):
    table = shown("confirming", size)
    wait_for(browser, lambda b: b.find_element("id", "declare").is_displayed(), 10, "the winner's buttons")
    assert action(browser) == "DECLARE THE WINNER"
    buttons = browser.execute_script(DECLARE)
    assert [(b["winner"], b["text"]) for b in buttons] == [
        ("player", "PLAYER"),
        ("banker", "BANKER"),
        ("tie", "TIE"),
    ]
    for b in buttons:
        assert _inside(b["box"], b["shoe"]) and not b["cut"], f"{size}: {b['text']} cut or out of its panel"
        assert b["box"][3] - b["box"][1] >= 44, f"{size}: {b['text']} under a finger's height"
    check_layout(browser, 6)  # the widest hands and the buttons, none over another
    assert "WINS" not in text(browser, "side0-marks") + text(browser, "side1-marks")  # no result yet
    browser.find_element("css selector", "#declare button[data-winner='player']").click()
    wait_for(browser, lambda b: len(banners(b)) == 1, 10, "the mismatch")
    assert "player declared, the cards say tie" in banners(browser)[0].text
    assert table.state()["round"]["phase"] == "confirming"
    check_layout(browser, 6)
    browser.find_element("css selector", "#declare button[data-winner='tie']").click()
    wait_for(browser, lambda b: not b.find_element("id", "declare").is_displayed(), 10, "the word taken")
    marks = js(browser, "[...document.querySelectorAll('.hand .mark')].map((m) => m.textContent)")
    assert marks.count("TIE") == 2
    (complete,) = [
        e for e in table.events if e.kind == "round" and e.round_id == "R31" and e.phase == "complete"
    ]
    assert complete["confirmed_via"] == "display"


@pytest.mark.parametrize("size", SIZES, ids=[f"{w}x{h}" for w, h in SIZES])
def test_dragon_tigers_winner_buttons_are_whole_on_every_monitor(browser, shown, size):
    shown("confirming-dragon-tiger", size)
    wait_for(browser, lambda b: b.find_element("id", "declare").is_displayed(), 10, "the winner's buttons")
    buttons = browser.execute_script(DECLARE)
    assert [b["text"] for b in buttons] == ["DRAGON", "TIGER", "TIE"]
    for b in buttons:
        assert _inside(b["box"], b["shoe"]) and not b["cut"], f"{size}: {b['text']} cut or out of its panel"
    check_layout(browser, 2)
