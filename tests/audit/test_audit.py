"""``scannerd audit`` over a simulated week of ten tables: what it flags, what it reports, how it exits.

The week (simulators/week.py) is ten tables, seven days, a shoe a day each,
six dealers taking turns, chained and signed as a table's recorder writes
them, six shoes made by a lazy shuffle. The report must flag exactly those
six and no other, hold its figures per table, shoe, dealer and day, show a
file edited after the table wrote it as a broken chain and a table that
published more than its recording accounts for as a replay difference, and
exit 0, 1 or 2 as documented. The page is judged in headless Chromium by
its geometry at 1920x1080.
"""

from __future__ import annotations

import gc
import gzip
import json
import os
import resource
import shutil
import subprocess
import sys
import weakref
import zlib
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from scannerd.audit.aggregate import ChangedWhileAudited, build
from scannerd.audit.facts import FileFacts, collect, lost
from scannerd.core.shuffle_check import SHOES_KEPT
from scannerd.recording.chain import Chain
from scannerd.recording.format import (
    ChainLink,
    CmdLine,
    Header,
    LinkLine,
    RecordingReader,
    RecordingWriter,
    RestartLine,
)
from scannerd.recording.replay_many import each_file
from scannerd.recording.signing import load_private_key, load_public_key, write_key_pair
from simulators.week import WeekShoe, write_week
from simulators.week import main as week_main
from tests.support.browser import VIEWPORT, screenshot
from tests.support.command import scannerd

TABLES, DAYS, LAZY = 10, 7, 6


class Week:
    def __init__(self, root: Path) -> None:
        self.root = root
        self.dir = root / "archive"
        self.key = root / "table.key"
        self.pub = root / "table.key.pub"
        write_key_pair(self.key, self.pub)
        self.shoes: list[WeekShoe] = write_week(
            self.dir, tables=TABLES, days=DAYS, lazy=LAZY, seed=7, key=load_private_key(self.key)
        )
        self.out = root / "report"
        self.options = ("--workers", "2", "--key", str(self.pub))
        run = subprocess.run(
            [sys.executable, "-m", "scannerd", "audit", str(self.dir), "--out", str(self.out), *self.options],
            capture_output=True,
            text=True,
            timeout=240,
        )
        self.status, self.stdout, self.stderr = run.returncode, run.stdout, run.stderr
        self.report: dict[str, Any] = json.loads((self.out / "report.json").read_text())

    @property
    def lazy(self) -> set[tuple[str, str]]:
        return {(s.table_id, s.shoe_id) for s in self.shoes if s.lazy}

    def files_of(self, table_id: str) -> list[Path]:
        return sorted(self.dir.glob(f"{table_id}-*.jsonl.gz"))

    def clean_table(self) -> str:
        """A table none of whose shoes was lazily shuffled."""
        lazy_tables = {t for t, _ in self.lazy}
        return next(f"BAC-{i:02d}" for i in range(1, TABLES + 1) if f"BAC-{i:02d}" not in lazy_tables)


@pytest.fixture(scope="module")
def week(tmp_path_factory: pytest.TempPathFactory) -> Week:
    return Week(tmp_path_factory.mktemp("week"))


def audit(*argv: str | Path) -> int:
    return scannerd("audit", *map(str, argv))


def copy_files(files: list[Path], into: Path) -> Path:
    into.mkdir(parents=True)
    for path in files:
        shutil.copy(path, into / path.name)
    return into


# ------------------------------------------------------------------ the week


def test_the_week_has_lazy_shoes_on_several_tables_and_several_dealers(week):
    assert len(week.shoes) == TABLES * DAYS
    assert len(week.lazy) == LAZY
    assert len({t for t, _ in week.lazy}) >= 3
    assert len({s.dealer_id for s in week.shoes}) >= 4
    assert {s.shuffle for s in week.shoes if s.lazy} == {"preset", "pile", "cut", "strip"}


def test_the_report_flags_exactly_the_lazily_shuffled_shoes(week):
    assert week.status == 1, week.stderr
    flagged = {(f["table_id"], f["shoe_id"]) for f in week.report["flags"] if f["kind"] == "shuffle"}
    assert flagged == week.lazy
    assert [f for f in week.report["flags"] if f["kind"] != "shuffle"] == []
    suspect = {(s["table_id"], s["shoe_id"]) for s in week.report["shoes"] if s["suspect"]}
    assert suspect == week.lazy
    for table, shoe in week.lazy:
        assert f"FLAGGED shuffle: {table} shoe {shoe}:" in week.stdout
    assert week.stderr == ""


def test_each_suspect_shoe_names_the_shoe_before_it_and_its_statistic(week):
    for shoe in (s for s in week.report["shoes"] if s["suspect"]):
        figures = shoe["shuffle"]
        # The shoe before, or one further back when that one was lazily made from it too.
        number = int(shoe["shoe_id"][1:])
        assert figures["earlier_shoe_id"] in {f"S{n}" for n in range(number - SHOES_KEPT, number)}
        assert figures["final"] is True
        assert figures["log10_evidence"] > 6.6
        assert figures["forward"] + figures["backward"] <= figures["pairs"]


def test_the_report_has_the_figures_per_table_shoe_dealer_and_day(week):
    r = week.report
    totals = r["totals"]
    assert [t["key"] for t in r["tables"]] == [f"BAC-{i:02d}" for i in range(1, TABLES + 1)]
    assert len(r["shoes"]) == TABLES * DAYS
    assert len(r["days"]) == DAYS
    assert {d["key"] for d in r["dealers"]} == {s.dealer_id for s in week.shoes}
    for kind in ("tables", "shoes", "dealers", "days"):
        groups = r[kind]
        assert sum(g["hands"] for g in groups) == totals["hands"], kind
        assert sum(g["void_rounds"] for g in groups) == totals["void_rounds"], kind
        for g in groups:
            assert list(g["games"]) == ["punto_banco"]
            game = g["games"]["punto_banco"]
            assert sum(game["results"].values()) == game["hands"] == g["hands"]
            for field in ("chi_square", "p_value", "expected"):
                assert field in game, (kind, field)
            for field in ("misdeals_per_100_hands", "hands_per_hour"):
                assert field in g, (kind, field)
    assert r["odds"] == {"punto_banco": {"8": {"banker": 0.458597, "player": 0.446247, "tie": 0.095156}}}
    game = totals["games"]["punto_banco"]
    assert 0 <= game["p_value"] <= 1
    assert 60 < totals["hands_per_hour"] < 120  # a dealer's card every 5 s: about 90 hands an hour
    assert totals["misdeals"] and totals["all_misdeals_per_100_hands"] > 0
    assert len(game["running"]) <= 120 and game["running"][-1][0] == totals["hands"]
    assert game["fact_hands"] == totals["hands"]  # every hand of the week states its facts
    truth = {(s.table_id, s.shoe_id): s for s in week.shoes}
    for shoe in r["shoes"]:
        dealt = truth[(shoe["table_id"], shoe["shoe_id"])]
        assert shoe["dealers"] == [dealt.dealer_id]
        assert shoe["day"] == dealt.day.isoformat()
    dealer_suspects = {s for d in r["dealers"] for s in d["suspect_shoes"]}
    assert dealer_suspects == {f"{t}/{s}" for t, s in week.lazy}


def test_every_file_is_intact_signed_and_replays_to_the_state_the_table_saved(week):
    files = week.report["files"]
    assert len(files) == TABLES * DAYS
    assert {f["chain"] for f in files} == {"intact"}
    assert {f["signature"] for f in files} == {"verified"}
    last = {week.files_of(f"BAC-{i:02d}")[-1].name for i in range(1, TABLES + 1)}
    for f in files:
        assert f["replay"] == ("matches" if f["name"] not in last else f["replay"]), f
        assert not f["replay_differs"]


# ------------------------------------------------------------------ faults and exit codes


def test_a_table_of_properly_shuffled_shoes_exits_0(week, tmp_path, capsys):
    table = week.clean_table()
    archive = copy_files(week.files_of(table), tmp_path / "archive")
    assert audit(archive, "--out", tmp_path / "out", "--workers", "1", "--key", week.pub) == 0
    report = json.loads((tmp_path / "out" / "report.json").read_text())
    assert report["flagged"] is False and report["flags"] == []
    assert "0 flagged" in capsys.readouterr().out
    assert 'id="verdict">Nothing flagged' in (tmp_path / "out" / "report.html").read_text()


def rewrite_gz(path: Path, edit: Any) -> None:
    lines = gzip.decompress(path.read_bytes()).decode().splitlines(keepends=True)
    path.write_bytes(gzip.compress("".join(edit(lines)).encode(), mtime=0))


def test_a_line_edited_after_the_table_wrote_it_shows_as_a_broken_chain(week, tmp_path, capsys):
    """Someone changes who dealt a shoe in a finished file: the replay would accept it, the chain does not."""
    table = week.clean_table()
    archive = copy_files(week.files_of(table), tmp_path / "archive")
    victim = sorted(archive.iterdir())[3]

    def edit(lines: list[str]) -> list[str]:
        at = next(i for i, line in enumerate(lines) if '"dealer_sign_in"' in line)
        lines[at] = lines[at].replace('"dealer_id":"D', '"dealer_id":"X', 1)
        return lines

    rewrite_gz(victim, edit)
    assert audit(archive, "--out", tmp_path / "out", "--workers", "1", "--key", week.pub) == 1
    report = json.loads((tmp_path / "out" / "report.json").read_text())
    # The chain says the file was changed; the replay, that it no longer leads where the table went on.
    assert [(f["kind"], f["file"]) for f in report["flags"]] == [
        ("chain", victim.name),
        ("replay", victim.name),
    ]
    assert "edited (it does not match its digest)" in report["flags"][0]["detail"]
    assert report["flags"][1]["detail"].startswith("dealer_id: 'X")
    row = next(f for f in report["files"] if f["name"] == victim.name)
    assert row["chain"] != "intact" and row["signature"] == "not verified"
    out = capsys.readouterr().out
    assert f"FLAGGED chain: {victim.name}: line" in out


def test_another_tables_file_under_this_tables_name_is_flagged_as_verify_names_it(week, tmp_path, capsys):
    """Another table's whole, signed file copied in under a name of this table's: its chain checks out and
    the same key signs it, so only its name against its header gives it away, in the audit as in verify."""
    table = week.clean_table()
    other = next(f"BAC-{i:02d}" for i in range(1, TABLES + 1) if f"BAC-{i:02d}" != table)
    archive = copy_files(week.files_of(table), tmp_path / "archive")
    posing = archive / f"{table}-20991231T000000Z.jsonl.gz"
    shutil.copy(week.files_of(other)[-1], posing)
    said = f"holds table {other}'s recording, but its name is table {table}'s"

    capsys.readouterr()
    assert scannerd("verify", str(archive), "--key", str(week.pub)) == 1
    assert f"{posing}: {said}" in capsys.readouterr().out

    assert audit(archive, "--out", tmp_path / "out", "--workers", "1", "--key", week.pub) == 1
    report = json.loads((tmp_path / "out" / "report.json").read_text())
    assert [(f["kind"], f["file"], f["detail"]) for f in report["flags"]] == [("chain", posing.name, said)]
    assert f"FLAGGED chain: {posing.name}: {said}" in capsys.readouterr().out


def resign_with_state(path: Path, key_file: Path, change: Any) -> None:
    """Write ``path`` again as a table whose saved state was ``change``d would have: chained and signed."""
    with RecordingReader(path) as reader:
        header, lines = reader.header, list(reader.lines())
    state = json.loads(json.dumps(header.state))
    change(state["validator"])
    chain: ChainLink = header.chain
    new = header.model_copy(update={"state": state})
    prev = bytes.fromhex(chain.prev) if chain.prev else None
    with RecordingWriter.create(path, new, Chain(prev) if prev else Chain(), load_private_key(key_file)) as w:
        start = header.start_ts
        for line in lines:
            if isinstance(line, CmdLine):
                w.cmd(start + line.t, line.name, line.args)
            elif isinstance(line, LinkLine):
                w.link(start + line.t, line.up, line.detail)
            elif isinstance(line, RestartLine):
                w.restart(start + line.t, line.detail, line.repeats)
            else:
                w.rx(start + line.t, line.data)
        w.seal()


def test_a_table_that_published_more_than_its_recording_holds_shows_as_a_replay_difference(
    week, tmp_path, capsys
):
    """The table published an alert no recording holds (a stall after the last line): its seq is ahead."""
    table = week.clean_table()
    archive = copy_files(week.files_of(table), tmp_path / "archive")
    *_, before, last = sorted(archive.iterdir())

    def published_one_more(validator: dict[str, Any]) -> None:
        validator["next_seq"] += 1

    resign_with_state(last, week.key, published_one_more)
    assert audit(archive, "--out", tmp_path / "out", "--workers", "1", "--key", week.pub) == 1
    report = json.loads((tmp_path / "out" / "report.json").read_text())
    assert [(f["kind"], f["file"]) for f in report["flags"]] == [("replay", before.name)]
    seq = json.loads(gzip.decompress(last.read_bytes()).split(b"\n")[0])["state"]["validator"]["next_seq"]
    assert report["flags"][0]["detail"] == (
        f"the replay published up to seq {seq - 2}, the table up to seq {seq - 1}"
    )
    assert {f["chain"] for f in report["files"]} == {"intact"}
    assert "FLAGGED replay:" in capsys.readouterr().out


def forged_hands(victim: Path, source: Path) -> bytes:
    """The first quarter of ``source``'s deal, timed to follow ``victim``'s seal: hands made up.

    Unchained, as someone writing lines by hand would leave them: a reader
    that goes on past the seal or the gzip member deals them.
    """
    last_t = json.loads(gzip.decompress(victim.read_bytes()).splitlines()[-1])["t"]
    body = gzip.decompress(source.read_bytes()).decode().splitlines()[1:]
    forged = []
    for text in body[: len(body) // 4]:
        line = {k: v for k, v in json.loads(text).items() if k not in ("n", "h")}
        forged.append(json.dumps(line | {"t": line["t"] + last_t + 1}, separators=(",", ":")) + "\n")
    return "".join(forged).encode()


@pytest.mark.parametrize("how", ["gzip member", "bytes"])
def test_hands_appended_after_a_signed_file_are_flagged_by_verify_replay_and_audit(
    week, tmp_path, capsys, how
):
    """A second gzip member of made-up hands after a sealed, signed file (or bytes after its stream).

    Every reader reads the same bytes: verify names what follows the file's
    end, replay refuses it, and the audit flags the file and counts none of
    the appended hands.
    """
    table = week.clean_table()
    archive = copy_files(week.files_of(table), tmp_path / "archive")
    victim, source = sorted(archive.iterdir())[2:4]
    forged = forged_hands(victim, source)
    with victim.open("ab") as f:
        f.write(gzip.compress(forged, mtime=0) if how == "gzip member" else forged)
    what = "another gzip member" if how == "gzip member" else "bytes that are not part of it"
    after_the_end = f"data after the end of its compressed recording ({what})"

    capsys.readouterr()
    assert scannerd("verify", str(archive), "--key", str(week.pub)) == 1
    assert f"{victim}: {after_the_end}" in capsys.readouterr().out

    assert scannerd("replay", str(victim)) == 2
    said = capsys.readouterr()
    assert said.out == "" and said.err == f"replay: {victim}: {after_the_end}: not the table's, not read\n"

    assert audit(archive, "--out", tmp_path / "out", "--workers", "1", "--key", week.pub) == 1
    report = json.loads((tmp_path / "out" / "report.json").read_text())
    assert [(f["kind"], f["file"]) for f in report["flags"]] == [("chain", victim.name)]
    assert report["flags"][0]["detail"].startswith(after_the_end)
    clean = next(t for t in week.report["tables"] if t["key"] == table)
    assert report["totals"]["hands"] == clean["hands"]
    assert "Traceback" not in capsys.readouterr().err


MEMORY_LIMIT = 512 << 20
"""What the commands below may map: half the memory the 1 GiB line would take only once."""


def gzip_bomb(path: Path, header: str) -> None:
    """About 1 MB at ``path`` that inflates to 1 GiB: a recording's header, then one line that never ends."""
    deflate = zlib.compressobj(9, zlib.DEFLATED, 31)
    parts = [deflate.compress(header.encode() + b'{"t":1.0,"event":"rx","hex":"')]
    block = b"0" * (1 << 20)
    parts += [deflate.compress(block) for _ in range(1024)]
    path.write_bytes(b"".join([*parts, deflate.flush()]))


def limited_memory() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT, MEMORY_LIMIT))


def test_a_gzip_bomb_is_named_by_verify_and_audit_in_bounded_memory(week, tmp_path):
    """A 1 MB file inflating to 1 GiB among a table's files, checked under a real limit on memory."""
    table = week.clean_table()
    archive = copy_files(week.files_of(table), tmp_path / "archive")
    line = gzip.decompress(week.files_of(table)[-1].read_bytes()).decode().split("\n")[0]
    prev = bytes.fromhex(json.loads(line)["chain"]["prev"])
    header = Chain(prev).extend(line[: line.rindex(',"n":')].replace(table, "BAC-99") + "}")
    bomb = archive / "BAC-99-20240601T000000Z.jsonl.gz"
    gzip_bomb(bomb, header + "\n")
    assert bomb.stat().st_size < 2 << 20
    scannerd_cmd = [sys.executable, "-m", "scannerd"]
    finding = f"{bomb}: line 2: longer than any line a table writes (over 1024 KiB): not read further"

    verify = subprocess.run(
        [*scannerd_cmd, "verify", str(archive), "--key", str(week.pub)],
        capture_output=True,
        text=True,
        timeout=120,
        preexec_fn=limited_memory,
    )
    assert verify.returncode == 1, verify.stderr
    assert verify.stdout.splitlines()[-2:] == [finding, f"NOT intact: 1 problem(s) in {DAYS + 1} file(s)"]
    assert verify.stderr == ""

    out = tmp_path / "out"
    audit = subprocess.run(
        [*scannerd_cmd, "audit", str(archive), "--out", str(out), "--workers", "1", "--key", str(week.pub)],
        capture_output=True,
        text=True,
        timeout=120,
        preexec_fn=limited_memory,
    )
    assert audit.returncode == 1, audit.stderr
    report = json.loads((out / "report.json").read_text())
    assert [(f["kind"], f["file"], f["detail"]) for f in report["flags"]] == [
        ("chain", bomb.name, finding.removeprefix(f"{bomb}: "))
    ]
    assert "Traceback" not in audit.stderr


def test_an_audit_holds_one_tables_files_at_a_time_and_reports_as_if_it_held_them_all(week):
    """A casino's year of files (36,500 of them) does not fit in memory at once: held together, the
    audit of a year grew past 24 GB and the kernel killed it. Each table's facts go once its rows
    are written, and the report is the one the week's audit wrote from every file."""
    paths = [p for p in sorted(week.dir.iterdir()) if p.name.endswith(".jsonl.gz")]
    seen: list[tuple[str, weakref.ref[FileFacts]]] = []
    tables_let_go: list[str] = []

    def facts() -> Iterator[FileFacts]:
        for f in each_file(paths, collect, lost):
            tables = list(dict.fromkeys(t for t, _ in seen))
            if f.table_id not in tables and len(tables) >= 2:  # a third table begins
                gc.collect()
                done = tables[-2]  # the one before the table still being read
                assert all(ref() is None for t, ref in seen if t == done), f"{done}'s files still held"
                tables_let_go.append(done)
            seen.append((f.table_id, weakref.ref(f)))
            yield f

    report = build(facts(), load_public_key(week.pub), sources=[str(week.dir)])
    assert len(tables_let_go) == TABLES - 2
    assert json.loads(json.dumps(report)) == week.report


def test_a_file_whose_header_changed_while_it_was_audited_is_named_not_a_traceback(tmp_path):
    """A table's files are put in order by their headers, then audited: a file the table was still
    writing had none at first, and its table's files came apart in the stream."""
    paths = []
    for table, day in (("T1", 6), ("T2", 6), ("T1", 7)):
        start = datetime(2024, 5, day, 12, tzinfo=UTC)
        paths.append(tmp_path / f"{table}-{start:%Y%m%dT%H%M%SZ}.jsonl")
        with RecordingWriter.create(
            paths[-1], Header(table_id=table, driver="beetek", started_at=start)
        ) as w:
            w.link(start.timestamp() + 1, True, "beetek on /dev/shoe")
    with pytest.raises(ChangedWhileAudited) as refused:
        build((collect(p) for p in paths), None, sources=[str(tmp_path)])
    assert str(refused.value) == (
        f"{paths[2]}: changed while it was audited (a table still writing it?): audit again"
    )


def test_tables_whose_files_hold_no_hand_are_counted_as_tables(tmp_path, capsys):
    """Three tables, two files each, the shoe never dealt: the summary counts three tables, not none."""
    (tmp_path / "archive").mkdir()
    for table in ("T1", "T2", "T3"):
        for day in (6, 7):
            start = datetime(2024, 5, day, 12, tzinfo=UTC)
            path = tmp_path / "archive" / f"{table}-{start:%Y%m%dT%H%M%SZ}.jsonl"
            with RecordingWriter.create(path, Header(table_id=table, driver="beetek", started_at=start)) as w:
                w.link(start.timestamp() + 1, True, "beetek on /dev/shoe")
    assert audit(tmp_path / "archive", "--out", tmp_path / "out", "--workers", "1") == 1
    out = capsys.readouterr().out
    assert (
        out.splitlines()[-1]
        == f"audit: 6 file(s), 3 table(s), 0 shoe(s), 0 hands: 6 flagged; report in {tmp_path / 'out'}"
    )


def test_a_file_that_is_not_a_recording_is_named_in_one_line_and_exits_2(week, tmp_path, capsys):
    table = week.clean_table()
    archive = copy_files(week.files_of(table)[:2], tmp_path / "archive" / table)
    (archive / "notes.jsonl").write_text('{"written by": "a person"}\n')
    assert audit(tmp_path / "archive", "--out", tmp_path / "out", "--workers", "1") == 2
    err = capsys.readouterr().err
    assert err.splitlines() == [f"scannerd audit: {archive / 'notes.jsonl'}:1: not a scannerd recording"]
    assert "Traceback" not in err
    report = json.loads((tmp_path / "out" / "report.json").read_text())
    assert report["totals"]["hands"] > 0  # the good files are still reported


@pytest.mark.parametrize(
    ("argv", "said"),
    [
        (["missing-dir"], "missing-dir: no such file or directory"),
        (["empty"], "empty: no recordings (.jsonl, .jsonl.gz) in this directory"),
        (["empty", "--key", "not-a-key"], "not-a-key: is not an Ed25519 public key in PEM"),
        (
            ["empty", "--tz", "Mars/Olympus"],
            "--tz Mars/Olympus: no such time zone (an IANA name such as Europe/Berlin)",
        ),
        (
            ["empty", "--tz", "/etc/localtime"],
            "--tz /etc/localtime: no such time zone (an IANA name such as Europe/Berlin)",
        ),
    ],
)
def test_unusable_input_exits_2_with_one_line(tmp_path, capsys, argv, said, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "empty").mkdir()
    (tmp_path / "not-a-key").write_text("hello\n")
    assert audit(*argv, "--out", "out") == 2
    err = capsys.readouterr().err
    assert err == f"scannerd audit: {said}\n"


# ------------------------------------------------------------------ the page


GEOMETRY = """
const box = (e) => e.getBoundingClientRect().toJSON();
return {
  width: innerWidth,
  height: innerHeight,
  pageWidth: document.documentElement.scrollWidth,
  plots: [...document.querySelectorAll('svg')].map(box),
  tables: [...document.querySelectorAll('table')].map((t) => ({
    id: t.id, box: box(t), width: t.scrollWidth, room: t.parentElement.clientWidth})),
  flagged: box(document.getElementById('flagged')),
  verdict: document.getElementById('verdict').textContent,
  firstPlot: box(document.querySelector('.plots')),
  shoeRows: [...document.querySelectorAll('#shoes-punto_banco-table tr')].slice(1).map((r) => ({
    flag: r.classList.contains('flag'), table: r.cells[0].textContent, shoe: r.cells[1].textContent})),
  external: [...document.querySelectorAll('[src], link[href], script')].length,
};
"""


@pytest.fixture(scope="module")
def page(browser: Any, week: Week) -> Iterator[Any]:
    browser.get((week.out / "report.html").as_uri())
    yield browser


def test_the_page_shows_the_flagged_shoes_first_and_a_plot_for_every_table(page, week):
    g = page.execute_script(GEOMETRY)
    assert g["external"] == 0, "the page must not fetch anything"
    assert g["verdict"] == f"FLAGGED: {LAZY} suspect shuffle(s)"
    assert g["flagged"]["top"] < g["firstPlot"]["top"]
    assert g["flagged"]["bottom"] <= VIEWPORT[1], "the flagged shoes are on the first screen"
    assert len(g["plots"]) == TABLES + 1
    for plot in g["plots"]:
        assert plot["width"] >= 300 and plot["height"] >= 120, plot
        assert plot["left"] >= 0 and plot["right"] <= g["width"], plot
    rows = g["shoeRows"]
    assert [r["flag"] for r in rows] == [True] * LAZY + [False] * (len(rows) - LAZY)
    assert {(r["table"], r["shoe"]) for r in rows if r["flag"]} == week.lazy


def test_nothing_on_the_page_is_wider_than_a_1920_screen(page):
    g = page.execute_script(GEOMETRY)
    assert g["width"] == VIEWPORT[0]
    assert g["pageWidth"] <= g["width"], "the page scrolls sideways"
    for table in g["tables"]:
        assert table["width"] <= table["room"] + 1, f"{table['id']} is wider than the page"
        assert table["box"]["right"] <= g["width"], table["id"]
        assert table["box"]["height"] > 0 and table["box"]["width"] > 0, f"{table['id']} is not shown"
    assert {t["id"] for t in g["tables"]} == {
        "flags",
        "review-table",
        "facts-punto_banco-table",
        "tables-table",
        "dealers-table",
        "days-table",
        "shoes-punto_banco-table",
        "files-table",
    }


def test_screenshot(page, tmp_path):
    """The picture in docs/audit.md; set AUDIT_SCREENSHOTS=docs/audit to refresh it."""
    path = tmp_path / "report.png"
    screenshot(page, path)
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    target = os.environ.get("AUDIT_SCREENSHOTS")
    if target:
        shutil.copyfile(path, Path(target) / "report.png")


def test_an_unchained_recording_is_flagged_and_a_shoe_id_used_again_is_another_shoe(tmp_path, capsys):
    """The shipped samples: two sessions of table T1, recorded without a chain, each calling its shoe S1."""
    samples = Path(__file__).parents[2] / "samples"
    assert audit(samples, "--out", tmp_path, "--workers", "1") == 1
    report = json.loads((tmp_path / "report.json").read_text())
    assert [(f["kind"], f["detail"]) for f in report["flags"]] == [
        ("chain", "has no chain (recorded without one): nothing to verify")
    ] * 2
    shoes = [(s["shoe_id"], s["files"], s["hands"]) for s in report["shoes"]]
    assert shoes == [("S1", ["clean-shoe.jsonl.gz"], 79), ("S1 (2)", ["shoe-with-misdeals.jsonl.gz"], 76)]
    assert report["totals"]["hands"] == 79 + 76
    capsys.readouterr()


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (["--tables", "0"], "tables must be at least 1, not 0"),
        (["--shoes-per-day", "-2"], "shoes per day must be at least 1, not -2"),
        (["--lazy", "-1"], "lazy shoes cannot be fewer than none, not -1"),
    ],
)
def test_a_week_that_cannot_be_written_is_one_line_naming_the_count(tmp_path, capsys, args, said) -> None:
    with pytest.raises(SystemExit) as stopped:
        week_main([str(tmp_path / "week"), *args])
    assert stopped.value.code == 2
    assert capsys.readouterr().err.splitlines()[-1].endswith(f"error: {said}")
    assert not (tmp_path / "week").exists()
