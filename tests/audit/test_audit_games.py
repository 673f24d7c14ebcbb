"""``scannerd audit`` over a simulated month of every game: each judged by its own odds and facts.

The month is five tables recorded by ``scannerd record --from-sim`` (a
careless dealer, one round in ten with a mistake): punto banco standard, No
Commission and EZ, and two Dragon Tiger tables. A month is scaled to a shoe
a day: 30 shoes a table, dealt one after another into one file, about 2,300
hands at a punto banco table and 5,500 at a Dragon Tiger one; recording them
takes about 3 s and auditing them about 12 s on two shared cores. A fair
month must sit inside its bands; a Dragon Tiger shoe stacked for Dragon
must be flagged.
"""

from __future__ import annotations

import json
import re
import shutil
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest

from drivers.codecs.beetek import parse_card
from scannerd.audit.stats import FACT_Z
from scannerd.core.games.dragon_tiger import RANK_VALUE
from scannerd.recording.replay import replay
from tests.support.browser import VIEWPORT
from tests.support.command import scannerd

START = "2024-06-01T12:00:00Z"
SHOES = 30
TABLES = {
    "PB-STD": ("--seed", "1"),
    "PB-NC": ("--seed", "2", "--commission", "no_commission"),
    "PB-EZ": ("--seed", "3", "--commission", "ez"),
    "DT-1": ("--seed", "4", "--game", "dragon_tiger"),
    "DT-2": ("--seed", "5", "--game", "dragon_tiger"),
}
GAME_OF = {table: "dragon_tiger" if table.startswith("DT") else "punto_banco" for table in TABLES}


def record(out: Path, table: str, *options: str) -> Path:
    path = out / f"{table}.jsonl"
    dealt = ("--error-rate", "0.1", "--shoes", str(SHOES), "--table-id", table, "--start", START)
    assert scannerd("record", str(path), "--from-sim", *options, *dealt) == 0
    return path


def audit(archive: Path, out: Path) -> tuple[int, dict[str, Any]]:
    status = scannerd("audit", str(archive), "--out", str(out), "--workers", "2")
    return status, json.loads((out / "report.json").read_text())


class Month:
    def __init__(self, root: Path) -> None:
        self.archive = root / "archive"
        self.archive.mkdir()
        self.files = {table: record(self.archive, table, *options) for table, options in TABLES.items()}
        self.out = root / "report"
        self.status, self.report = audit(self.archive, self.out)

    def table(self, key: str) -> dict[str, Any]:
        return next(t for t in self.report["tables"] if t["key"] == key)


@pytest.fixture(scope="module")
def month(tmp_path_factory: pytest.TempPathFactory) -> Month:
    return Month(tmp_path_factory.mktemp("month"))


def test_each_table_is_judged_by_its_own_games_odds(month):
    odds = month.report["odds"]
    assert list(odds) == ["punto_banco", "dragon_tiger"]
    assert odds["dragon_tiger"]["8"] == {"dragon": 0.462651, "tiger": 0.462651, "tie": 0.074699}
    for table, game in GAME_OF.items():
        games = month.table(table)["games"]
        assert list(games) == [game], table
        tally = games[game]
        assert list(tally["results"]) == list(tally["expected"]) == list(odds[game]["8"])
        assert sum(tally["results"].values()) == tally["hands"] == month.table(table)["hands"] > 0
        for result, chance in odds[game]["8"].items():
            assert tally["expected"][result] == pytest.approx(chance * tally["hands"], abs=0.01)


def test_a_group_of_both_games_tests_each_game_on_its_own(month):
    """All tables, the one day and the dealer (none signed in) hold both games: never one test of both."""
    r = month.report
    mixed = [r["totals"], *r["days"], *r["dealers"]]
    for group in mixed:
        assert list(group["games"]) == ["punto_banco", "dragon_tiger"], group["key"]
        for game, tally in group["games"].items():
            tables = [t for t in TABLES if GAME_OF[t] == game]
            assert tally["hands"] == sum(month.table(t)["hands"] for t in tables)
            assert set(tally["results"]) == set(r["odds"][game]["8"])
        assert group["hands"] == sum(t["hands"] for t in group["games"].values())
    assert len(r["totals"]["games"]["dragon_tiger"]["running"][0]) == 4  # n, dragon, tiger, tie


def test_a_fair_month_of_each_game_sits_inside_its_bands(month):
    """Every table and each game over all tables: the results fit, and no fact's value is far out.

    The results' p-value of a fair game is spread evenly over (0, 1): none of the seven is below
    0.001 (a fair table is there once in a thousand). Every value of every fact is expected often
    enough to be tested, at every table, and lies within 5 standard deviations of its chance.
    """
    r = month.report
    assert [f["kind"] for f in r["flags"]] == ["chain"] * len(TABLES)  # the simulator records no chain
    assert month.status == 1
    groups = [r["totals"], *r["tables"]]
    for group in groups:
        for game, tally in group["games"].items():
            assert tally["p_value"] > 0.001, (group["key"], game)
            assert tally["fact_hands"] == tally["hands"]
            assert {row["fact"] for row in tally["facts"]} == set(r["fact_odds"][game]["8"])
            for row in tally["facts"]:
                assert row["z"] is not None and abs(row["z"]) < FACT_Z, (group["key"], row)
                assert row["far"] is False


def test_the_reports_exact_chances_for_eight_decks(month):
    facts = month.report["fact_odds"]["punto_banco"]["8"]
    assert round(facts["dragon_7"]["true"], 4) == 0.0225
    assert round(facts["panda_8"]["true"], 4) == 0.0345
    assert round(facts["banker_six"]["2"] + facts["banker_six"]["3"], 4) == 0.0539
    tie = month.report["odds"]["dragon_tiger"]["8"]["tie"]
    assert round(tie, 4) == round(float(Fraction(31, 415)), 4) == 0.0747
    rows = month.report["totals"]["games"]["punto_banco"]["facts"]
    assert (
        next(r["chance"] for r in rows if (r["fact"], r["value"]) == ("dragon_7", "true"))
        == (facts["dragon_7"]["true"])
    )


CARD = re.compile(r"\[Game\]<Card:([^>]*)>")


def test_each_table_says_its_pace_as_its_rounds_said_it(month):
    """Hands per hour and the mean time betting and dealing, against the round events' own times.

    One table of each game: the figures are each table's own sums, and replaying all five is most
    of the suite's slowest test for nothing more."""
    for key in ("PB-EZ", "DT-2"):
        path = month.files[key]
        spent: dict[str, list[float]] = {"betting_s": [], "dealing_s": []}
        for message in replay(path):
            event = json.loads(message.payload)
            if message.topic.endswith("/round") and event.get("times"):
                for phase, seconds in event["times"].items():
                    if seconds is not None:
                        spent[phase].append(seconds)
        table = month.table(key)
        for phase, values in spent.items():
            assert values, (key, phase)
            assert table[f"mean_{phase}"] == round(sum(values) / len(values), 1), (key, phase)
        assert table["hands_per_hour"] > 0


def stack_for_dragon(path: Path) -> int:
    """Give Dragon the higher card in every other round Tiger would have won: the shoe stacked for Dragon.

    The same cards in the same shoe, only the two of a round switched, as a dealer who prearranged
    the shoe would deal them; a round with a mistake in it (more or fewer than two cards) is left
    as dealt. The recording is rewritten line for line (the simulator's has no chain to break), so
    the audit sees only the game. Returns the rounds switched.
    """
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    header, body = lines[0], lines[1:]
    switched = tiger_wins = 0
    dealt: list[dict[str, Any]] = []
    for line in [*body, None]:
        if line is not None and line["event"] == "rx" and line["hex"]:
            dealt.append(line)
            continue
        cards = [CARD.fullmatch(bytes.fromhex(d["hex"]).decode().strip()) for d in dealt]
        if len(dealt) == 2 and all(cards):
            dragon, tiger = [parse_card(c.group(1)) or "" for c in cards if c]
            if RANK_VALUE[tiger[0]] > RANK_VALUE[dragon[0]]:
                tiger_wins += 1
                if tiger_wins % 2:
                    dealt[0]["hex"], dealt[1]["hex"] = dealt[1]["hex"], dealt[0]["hex"]
                    switched += 1
        dealt = []
    path.write_text("".join(json.dumps(x, separators=(",", ":")) + "\n" for x in [header, *body]))
    return switched


def test_a_dragon_tiger_shoe_stacked_for_dragon_is_flagged(month, tmp_path, capsys):
    """Half of Tiger's wins turned into Dragon's: the results' p-value falls and the sizes are flagged."""
    archive = tmp_path / "archive"
    archive.mkdir()
    stacked = shutil.copy(month.files["DT-1"], archive)
    assert stack_for_dragon(Path(stacked)) > 1000
    capsys.readouterr()
    status, report = audit(archive, tmp_path / "out")
    assert status == 1
    tally = report["tables"][0]["games"]["dragon_tiger"]
    assert tally["results"]["dragon"] > 1.2 * tally["expected"]["dragon"]
    assert tally["p_value"] < 1e-6
    far = {(f["table_id"], f["fact"]) for f in report["flags"] if f["kind"] == "facts"}
    assert {("DT-1", "dragon_size"), ("DT-1", "tiger_size"), (None, "dragon_size")} <= far
    out = capsys.readouterr().out
    assert "FLAGGED facts: DT-1 dragon_tiger dragon_size: big " in out
    assert "FLAGGED facts: all tables dragon_tiger dragon_size: big " in out
    page = (tmp_path / "out" / "report.html").read_text()
    assert "fact(s) far from their chance" in page
    assert '<td class="text bad">all tables (z = ' in page


def test_a_recording_from_before_tables_chose_their_game_is_judged_without_facts(tmp_path, capsys):
    """A committed session recorded before games: punto banco, its hands counted, no facts to count."""
    archive = tmp_path / "archive"
    archive.mkdir()
    shutil.copy(Path(__file__).parents[1] / "sessions" / "beetek-clean.jsonl", archive)
    status, report = audit(archive, tmp_path / "out")
    assert status == 1  # recorded without a chain
    assert [f["kind"] for f in report["flags"]] == ["chain"]
    tally = report["totals"]["games"]["punto_banco"]
    assert tally["hands"] == report["totals"]["hands"] > 0
    assert tally["fact_hands"] == 0 and tally["facts"] == []
    assert report["totals"]["mean_betting_s"] is None and report["totals"]["mean_dealing_s"] is None
    page = (tmp_path / "out" / "report.html").read_text()
    assert "No hand states its facts: recorded before tables chose their game." in page
    capsys.readouterr()


PAGE = """
const box = (e) => e.getBoundingClientRect().toJSON();
return {
  pageWidth: document.documentElement.scrollWidth,
  captions: [...document.querySelectorAll('figcaption')].map((c) => c.textContent),
  tables: [...document.querySelectorAll('table')].map((t) => ({
    id: t.id, box: box(t), width: t.scrollWidth, room: t.parentElement.clientWidth,
    rows: t.rows.length - 1})),
  heads: [...document.querySelectorAll('#tables-table th')].map((th) => th.textContent),
};
"""


def test_the_page_of_both_games_keeps_them_apart_and_fits_the_screen(browser, month):
    browser.get((month.out / "report.html").as_uri())
    g = browser.execute_script(PAGE)
    assert g["pageWidth"] <= VIEWPORT[0]
    for table in g["tables"]:
        assert table["width"] <= table["room"] + 1, table["id"]
        assert table["box"]["right"] <= VIEWPORT[0], table["id"]
    facts = {t["id"]: t["rows"] for t in g["tables"] if t["id"].startswith("facts-")}
    odds = month.report["fact_odds"]
    assert facts == {
        f"facts-{game}-table": sum(len(values) for values in odds[game]["8"].values()) for game in odds
    }
    assert [c.split(":")[0] for c in g["captions"]] == [
        "All tables, punto banco",
        "All tables, Dragon Tiger",
        *(
            f"{t}, {'Dragon Tiger' if GAME_OF[t] == 'dragon_tiger' else 'punto banco'}"
            for t in sorted(TABLES)
        ),
    ]
    assert "dragon (Dragon Tiger)" in g["heads"] and "banker (punto banco)" in g["heads"]
    shoes = {t["id"]: t["rows"] for t in g["tables"] if t["id"].startswith("shoes-")}
    assert shoes == {"shoes-punto_banco-table": 3 * SHOES, "shoes-dragon_tiger-table": 2 * SHOES}
