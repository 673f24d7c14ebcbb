"""report.html: the audit for a person, one self-contained page (no script, nothing fetched).

An auditor may open it on a machine without a network, or file it as
evidence, so everything is in the page: the style inline, the plots as
hand-drawn SVG (a few polylines need no plotting library on a table PC). It
shows exactly what report.json holds (it is drawn from the same data), in
the order someone looks: what is flagged, the hands to look at on video
(each with the line to type into the surveillance system), the totals, the running
frequencies of each table inside their band, each game's facts against
their chances, then the tables per table, dealer and day, per staff member
(what the events credit each staff id with), the time each table stood
suspended, per shoe (suspect shoes highlighted), and every file's chain,
signature and replay check.
A figure of a game is always that game's: a report of two games shows each
game's results in columns (and plots) of its own.
"""

from __future__ import annotations

import html
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from scannerd.audit import stats
from scannerd.audit.report_json import write_text
from scannerd.core.games import GAMES

NAME = "report.html"
DASH = "\u2013"  # a figure there is none of
# Each result as its game colours it everywhere (Dragon shares Banker's red: never on one plot).
COLOURS = {result: colour for game in GAMES.values() for result, colour in game.colours.items()}
UNUSUAL_P = 0.01  # a p-value shown highlighted (not flagged: some groups of many are bound to be)
Y_MAX = 0.6  # the plots' frequency axis: a side's win sits near 0.45, a tie near 0.1

STYLE = """
* { box-sizing: border-box; }
body { margin: 0; padding: 16px 24px; font: 14px/1.35 system-ui, sans-serif; color: #1a1a1a;
       background: #fafafa; }
h1 { font-size: 24px; margin: 0 0 4px; }
h2 { font-size: 18px; margin: 24px 0 8px; }
.verdict { font-size: 18px; font-weight: 600; padding: 8px 12px; border-radius: 4px; margin: 8px 0; }
.verdict.bad { background: #c62828; color: #fff; }
.verdict.good { background: #2e7d32; color: #fff; }
.figures { display: flex; flex-wrap: wrap; gap: 12px; margin: 8px 0; }
.figure { background: #fff; border: 1px solid #ddd; border-radius: 4px; padding: 8px 12px; min-width: 150px; }
.figure b { display: block; font-size: 20px; }
.plots { display: grid; grid-template-columns: repeat(auto-fill, minmax(340px, 1fr)); gap: 12px; }
.plots figure { margin: 0; background: #fff; border: 1px solid #ddd; border-radius: 4px; padding: 6px; }
.plots figure.all { grid-column: span 2; }
figcaption { font-weight: 600; }
svg { display: block; width: 100%; height: auto; }
.legend span { margin-right: 14px; white-space: nowrap; }
.legend i { display: inline-block; width: 18px; height: 4px; vertical-align: middle; margin-right: 4px; }
.scroll { max-width: 100%; overflow-x: auto; }
.scroll.tall { max-height: 60vh; overflow-y: auto; }
@media print { .scroll.tall { max-height: none; overflow: visible; } }
td code { white-space: pre; }
table { border-collapse: collapse; background: #fff; width: 100%; }
th, td { border: 1px solid #ddd; padding: 3px 6px; text-align: right; vertical-align: top;
         overflow-wrap: break-word; }
td { white-space: nowrap; }
td.text { white-space: normal; }
td.result { white-space: normal; }
td.key { text-align: left; }
th { background: #eee; position: sticky; top: 0; }
td.text, th.text { text-align: left; }
tr.flag td { background: #fde0e0; }
td.bad { color: #b71c1c; font-weight: 600; }
td.unusual { background: #fff3cd; }
p.note { color: #555; margin: 4px 0; }
"""


def write(report: dict[str, Any], out: Path) -> Path:
    return write_text(out / NAME, render(report))


def render(report: dict[str, Any]) -> str:
    totals = report["totals"]
    flags = report["flags"]
    mixed = len(report["odds"]) > 1
    parts = [
        "<!doctype html>",
        '<html lang="en"><head><meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>scannerd audit: {len(report['files'])} recordings</title>",
        f"<style>{STYLE}</style></head><body>",
        f"<h1>Audit of {len(report['files'])} recordings, {len(report['tables'])} tables</h1>",
        f'<p class="note">scannerd {_e(report["scannerd"])}; from {_e(", ".join(report["sources"]))}; '
        f"signatures {_e(_signatures(report['key']))}</p>",
        _verdict(flags),
        _flags(flags),
        _review(report["review"]),
        _figures(report),
        '<h2 id="plots">Running frequency of each result, inside its 95% band</h2>',
        _legend(report),
        '<div class="plots">',
        *(
            _plot(_titled(key, game, mixed), tally, len(group["suspect_shoes"]), number, wide=group is totals)
            for number, (key, game, tally, group) in enumerate(_plotted(report))
        ),
        "</div>",
        *(_fact_table(game, report) for game in totals["games"]),
        _group_table("Per table", "tables", report["tables"], report),
        _group_table("Per dealer", "dealers", report["dealers"], report),
        _group_table("Per day (UTC)", "days", report["days"], report),
        _staff_table(report["staff"]),
        _suspension_tables(report["suspensions"]),
        *(_shoe_table(report, game) for game in _results(report)),
        _file_table(report),
        "".join(f'<p class="note">{_e(n)}</p>' for n in report["notes"]),
        "</body></html>",
    ]
    return "\n".join(parts) + "\n"


def _e(text: object) -> str:
    return html.escape(str(text))


def _title(game: str) -> str:
    return GAMES[game].title if game in GAMES else game


def _titled(key: str, game: str, mixed: bool) -> str:
    """A plot's title: its group, and its game when the report holds more than one."""
    return f"{key}, {_title(game)}" if mixed else key


def _plotted(report: dict[str, Any]) -> list[tuple[str, str, dict[str, Any], dict[str, Any]]]:
    """(title, game, the game's figures, the group) of every plot: all tables first, then each table."""
    groups = [("All tables", report["totals"]), *((t["key"], t) for t in report["tables"])]
    return [(key, game, tally, g) for key, g in groups for game, tally in g["games"].items()]


def _signatures(key: str | None) -> str:
    return f"checked with {_short_key(key)}" if key else "not checked (no --key)"


def _short_key(fingerprint: str) -> str:
    kind, _, digest = fingerprint.partition(":")
    return f"{kind}:{digest[:16]}…" if digest else fingerprint


def _verdict(flags: list[dict[str, Any]]) -> str:
    if not flags:
        return '<p class="verdict good" id="verdict">Nothing flagged</p>'
    kinds = {k: sum(f["kind"] == k for f in flags) for k in _KIND_WORDS}
    said = ", ".join(f"{n} {_KIND_WORDS[k]}" for k, n in kinds.items() if n)
    return f'<p class="verdict bad" id="verdict">FLAGGED: {said}</p>'


_KIND_WORDS = {
    "shuffle": "suspect shuffle(s)",
    "deck_check": "shoe(s) counted short, over or not at all",
    "chain": "file(s) not intact",
    "replay": "replay difference(s)",
    "facts": "fact(s) far from their chance",
}


def _flags(flags: list[dict[str, Any]]) -> str:
    if not flags:
        return ""
    rows = []
    for f in flags:
        if f["kind"] in ("shuffle", "deck_check"):
            where = f"{f['table_id']} shoe {f['shoe_id']} ({f['day']}, dealt by {', '.join(f['dealers'])})"
        elif f["kind"] == "facts":
            where = f"{f['table_id'] or 'all tables'}, {_title(f['game'])}: {f['fact']}"
        else:
            where = f["file"]
        rows.append(
            f'<tr class="flag"><td class="text">{_e(f["kind"])}</td><td class="text">{_e(where)}</td>'
            f'<td class="text">{_e(f["detail"])}</td></tr>'
        )
    head = '<tr><th class="text">what</th><th class="text">where</th><th class="text">why</th></tr>'
    table = f'<table id="flags">{head}{"".join(rows)}</table>'
    return f'<h2 id="flagged">Flagged</h2><div class="scroll">{table}</div>'


def _head(*columns: tuple[str, str]) -> str:
    """A table's header cells from (class, name) pairs: ``text`` for a left-aligned column."""
    return "".join(f'<th class="{cls}">{_e(name)}</th>' for cls, name in columns)


def _review(review: dict[str, Any]) -> str:
    """Each hand to look at on video: who dealt it, what happened, the line to type in the report's zone."""
    title = '<h2 id="review">Hands to review on video</h2>'
    if not review["hands"]:
        return f'{title}<p class="note">No misdeal and no void round: no hand to review.</p>'
    zone = review["zone"]
    head = _head(
        ("text", "table"),
        ("text", "shoe"),
        ("", "hand"),
        ("text", "round"),
        ("text", "dealer"),
        ("text", "what happened"),
        ("", "from (UTC)"),
        ("", "to (UTC)"),
        ("text", f"to type ({zone})"),
    )
    rows = []
    for h in review["hands"]:
        cells = [
            *(f'<td class="key">{_e(h[k] or DASH)}</td>' for k in ("table_id", "shoe_id")),
            f"<td>{DASH if h['hand_no'] is None else h['hand_no']}</td>",
            *(f'<td class="key">{_e(h[k] or DASH)}</td>' for k in ("round_id", "dealer_id")),
            f'<td class="text">{_e(_happened(h))}</td>',
            *(f"<td>{_e(h[k])}</td>" for k in ("from", "to")),
            f'<td class="key"><code>{_e(h["line"])}</code></td>',
        ]
        rows.append(f"<tr>{''.join(cells)}</tr>")
    note = (
        f"From each hand's first event to its last, {review['pad_s']:g} s either side; a misdeal of no round "
        f"(a card between hands, after the shoe's end) at its alert. The line to type is in {zone}; "
        "the UTC times are what scannerd captions --from and --to take."
    )
    return (
        f'{title}<p class="note">{_e(note)}</p><div class="scroll tall"><table id="review-table">'
        f"<tr>{head}</tr>{''.join(rows)}</table></div>"
    )


def _happened(hand: dict[str, Any]) -> str:
    """``misdeal SHORT_DEAL; void SHORT_DEAL by D-2 (gameserver)``: the codes, then the void and who."""
    said = [f"misdeal {code}" for code in hand["misdeals"]]
    if hand["round_id"] is None:
        said[-1] += " (no round)"
    if hand["void"] is not None:
        by = f" by {hand['void_by']} ({hand['void_via']})" if hand["void_by"] else ""
        said.append(f"void {hand['void']}{by}")
    return "; ".join(said)


def _figures(report: dict[str, Any]) -> str:
    t = report["totals"]
    files = [row for row in report["files"] if "error" not in row]
    intact = sum(row["chain"] == "intact" for row in files)
    cells = [
        ("hands", t["hands"]),
        ("shoes", t["shoes"]),
        ("suspect shoes", len(t["suspect_shoes"])),
        *((f"goodness of fit p, {_title(game)}", _p(g["p_value"])) for game, g in t["games"].items()),
        ("misdeals / 100 hands", _num(t["all_misdeals_per_100_hands"])),
        ("void rounds", t["void_rounds"]),
        ("hands / hour", _num(t["hands_per_hour"])),
        ("files intact", f"{intact} of {len(report['files'])}"),
    ]
    body = "".join(f'<div class="figure">{_e(label)}<b>{_e(value)}</b></div>' for label, value in cells)
    return f'<div class="figures" id="figures">{body}</div>'


def _p(p: float | None) -> str:
    if p is None:
        return DASH
    return "<0.0001" if p < 0.0001 else f"{p:.4f}"


def _num(x: float | None) -> str:
    return DASH if x is None else f"{x:g}"


def _results(report: dict[str, Any]) -> dict[str, list[str]]:
    """Each game's results, in the game's order, for the games the report's files deal."""
    return {game: list(next(iter(by_decks.values()))) for game, by_decks in report["odds"].items()}


def _legend(report: dict[str, Any]) -> str:
    shown = dict.fromkeys(r for names in _results(report).values() for r in names)
    items = (
        "".join(f'<span><i style="background:{COLOURS[r]}"></i>{r}</span>' for r in shown)
        + "<span>shaded: 95% band around the exact chance; dashed: the exact chance</span>"
    )
    return f'<p class="legend">{items}</p>'


def _plot(title: str, tally: dict[str, Any], suspect: int, number: int, wide: bool = False) -> str:
    """Running frequencies of a game's results against hands dealt, each in its band.

    The chance a line is judged against is the group's expected count over its hands: the exact
    chance of its tables' shoes, hand by hand, whatever their deck counts.
    """
    points = tally["running"]
    width, height, left, bottom, top, right = (1000 if wide else 500), 240, 44, 24, 8, 10
    plot_w, plot_h = width - left - right, height - top - bottom
    n_max = points[-1][0] if points else 1

    def x(n: float) -> float:
        return left + plot_w * (n / n_max)

    def y(f: float) -> float:
        return top + plot_h * (1 - min(max(f, 0.0), Y_MAX) / Y_MAX)

    clip = f"plot-area-{number}"
    svg = [
        f'<svg viewBox="0 0 {width} {height}" role="img" aria-label="{_e(title)}: running frequencies">',
        f'<defs><clipPath id="{clip}"><rect x="{left}" y="{top}" width="{plot_w}" height="{plot_h}"/>'
        "</clipPath></defs>",
        f'<rect x="{left}" y="{top}" width="{plot_w}" height="{plot_h}" fill="#fff" stroke="#999"/>',
    ]
    for tick in (0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6):
        svg.append(
            f'<line x1="{left}" x2="{left + plot_w}" y1="{y(tick):.1f}" y2="{y(tick):.1f}" stroke="#eee"/>'
            f'<text x="{left - 4}" y="{y(tick) + 4:.1f}" font-size="11" text-anchor="end">{tick:.1f}</text>'
        )
    for n, anchor in ((0, "start"), (n_max // 2, "middle"), (n_max, "end")):
        svg.append(f'<text x="{x(n):.1f}" y="{height - 6}" font-size="11" text-anchor="{anchor}">{n}</text>')
    svg.append(f'<text x="{x(n_max * 0.75):.1f}" y="{height - 6}" font-size="11">hands</text>')
    ns = [p[0] for p in points]
    for i, (result, expected) in enumerate(tally["expected"].items(), start=1):
        colour, chance = COLOURS[result], expected / max(tally["hands"], 1)
        if ns:
            bands = [stats.band(chance, n) for n in ns]
            upper = " ".join(f"{x(n):.1f},{y(hi):.1f}" for n, (_, hi) in zip(ns, bands, strict=True))
            lower = " ".join(
                f"{x(n):.1f},{y(lo):.1f}" for n, (lo, _) in reversed(list(zip(ns, bands, strict=True)))
            )
            svg.append(
                f'<polygon clip-path="url(#{clip})" points="{upper} {lower}" '
                f'fill="{colour}" fill-opacity="0.12"/>'
            )
            line = " ".join(f"{x(p[0]):.1f},{y(p[i]):.1f}" for p in points)
            svg.append(
                f'<polyline clip-path="url(#{clip})" points="{line}" fill="none" stroke="{colour}" '
                'stroke-width="1.6"/>'
            )
        svg.append(
            f'<line x1="{left}" x2="{left + plot_w}" y1="{y(chance):.1f}" y2="{y(chance):.1f}" '
            f'stroke="{colour}" stroke-dasharray="4 3" stroke-width="1"/>'
        )
    svg.append("</svg>")
    caption = f"{_e(title)}: {tally['hands']} hands, p = {_p(tally['p_value'])}"
    if suspect:
        caption += f', <span class="bad">{suspect} suspect shoe(s)</span>'
    cls = ' class="all"' if wide else ""
    return f"<figure{cls}><figcaption>{caption}</figcaption>{''.join(svg)}</figure>"


def _flagged(flag: bool) -> str:
    return ' class="flag"' if flag else ""


def _bad(flag: bool) -> str:
    return " bad" if flag else ""


def _codes(report: dict[str, Any]) -> list[str]:
    """The misdeal codes that occur anywhere: a column each."""
    return sorted(report["totals"]["misdeals"])


def _game_cells(g: dict[str, Any], results: dict[str, list[str]]) -> list[str]:
    """Each game's results and p-value in the group (dashes for a game it has no hands of)."""
    out: list[str] = []
    # A count and its frequency may go on two lines when a report of two games has twice the columns.
    wrap = ' class="result"' if len(results) > 1 else ""
    for game, names in results.items():
        tally = g["games"].get(game)
        if tally is None:
            out += [f"<td>{DASH}</td>"] * (len(names) + 1)
            continue
        r, p = tally["results"], tally["p_value"]
        out += [f"<td{wrap}>{r[k]} ({r[k] / tally['hands']:.3f})</td>" for k in names]
        if p is not None and p < UNUSUAL_P:
            out.append(f'<td class="unusual" title="unusual, not flagged: docs/audit.md">{_p(p)}</td>')
        else:
            out.append(f"<td>{_e(_p(p))}</td>")
    return out


def _group_cells(g: dict[str, Any], codes: list[str], results: dict[str, list[str]]) -> list[str]:
    cells = [
        str(g["void_rounds"]),
        _num(g["all_misdeals_per_100_hands"]),
        *(_num(g["misdeals_per_100_hands"].get(code)) if g["hands"] else DASH for code in codes),
        _num(g["hands_per_hour"]),
        _num(g["mean_betting_s"]),
        _num(g["mean_dealing_s"]),
        str(g["shoes"]),
    ]
    return [f"<td>{g['hands']}</td>", *_game_cells(g, results), *(f"<td>{_e(c)}</td>" for c in cells)]


def _group_head(first: str, codes: list[str], results: dict[str, list[str]]) -> list[str]:
    mixed = len(results) > 1
    names = [
        "hands",
        *(
            f"{name} ({_title(game)})" if mixed else name
            for game, names in results.items()
            for name in (*names, "p (fit)")
        ),
        "voids",
        "misdeals /100",
        *(f"{c.replace('_', ' ')} /100" for c in codes),  # spaces: the long codes wrap in their heading
        "hands /hour",
        "betting s /round",
        "dealing s /round",
        "shoes",
    ]
    return [f'<th class="text">{_e(first)}</th>', *(f"<th>{_e(n)}</th>" for n in names)]


def _group_table(title: str, kind: str, groups: list[dict[str, Any]], report: dict[str, Any]) -> str:
    codes, results = _codes(report), _results(report)
    head = "".join(_group_head(kind.rstrip("s"), codes, results)) + "<th>suspect shoes</th>"
    rows = []
    for g in groups:
        suspect = ", ".join(g["suspect_shoes"])
        rows.append(
            f'<tr{_flagged(bool(suspect))}><td class="key">{_e(g["key"])}</td>'
            f"{''.join(_group_cells(g, codes, results))}"
            f'<td class="text">{_e(suspect)}</td></tr>'
        )
    return (
        f'<h2 id="{kind}">{_e(title)}</h2><div class="scroll"><table id="{kind}-table">'
        f"<tr>{head}</tr>{''.join(rows)}</table></div>"
    )


ACTIONS = (("acknowledged", "acks"), ("voids", "voids"), ("sign_ins", "sign-ins"), ("resumes", "resumes"))
NOT_NAMED = "(no one named)"


def _named(staff: list[dict[str, Any]]) -> bool:
    """Whether any action says who took it: recordings from before actions carried it do not."""
    return any(via != "unknown" for row in staff for name, _ in ACTIONS for via in row[f"{name}_via"])


def _listed(counts: dict[str, int]) -> str:
    return ", ".join(f"{k} {n}" for k, n in counts.items())


def _staff_table(staff: list[dict[str, Any]]) -> str:
    """Per staff id: hands, misdeals by code, and each action with the channels it came through.

    Recordings made before actions carried who took them name no one but the dealers, whose
    hands and misdeals the table per dealer already shows: the page says so instead.
    """
    title = '<h2 id="staff">Per staff member</h2>'
    if not _named(staff):
        note = (
            "No action in these recordings names who took it (recorded before actions did): see per dealer."
        )
        return f'{title}<p class="note">{_e(note)}</p>'
    rows = [_staff_row(r) for r in staff]
    note = (
        "Hands and misdeals are the dealer's signed in when the round opened (a misdeal of no round: "
        "when it was raised); acknowledgements, voids and resumes are whoever the event names (by), "
        "sign-ins the dealer signed in. Seconds to acknowledge: from the alert's first publication."
    )
    return (
        f'{title}<p class="note">{_e(note)}</p><div class="scroll"><table id="staff-table">'
        f"<tr>{_head(*STAFF_COLUMNS)}</tr>{''.join(rows)}</table></div>"
    )


STAFF_COLUMNS = (
    ("text", "staff"),
    ("text", "tables"),
    ("", "hands"),
    ("", "misdeals"),
    ("", "misdeals /100"),
    ("text", "misdeals by code"),
    ("", "of no round"),
    ("", "acks"),
    ("", "mean s to ack"),
    ("", "max s to ack"),
    ("", "voids"),
    ("", "sign-ins"),
    ("", "resumes"),
    ("text", "through"),
)


def _staff_row(r: dict[str, Any]) -> str:
    through = "; ".join(f"{said}: {_listed(r[f'{name}_via'])}" for name, said in ACTIONS if r[name])
    cells = [
        f'<td class="key">{_e(r["staff_id"] or NOT_NAMED)}</td>',
        f'<td class="text">{_e(", ".join(r["tables"]))}</td>',
        *(f"<td>{_e(c)}</td>" for c in (r["hands"], r["all_misdeals"], _num(r["misdeals_per_100_hands"]))),
        f'<td class="text">{_e(_listed(r["misdeals"]))}</td>',
        *(
            f"<td>{_e(c)}</td>"
            for c in (
                r["misdeals_outside_rounds"],
                r["acknowledged"],
                _num(r["mean_ack_s"]),
                _num(r["max_ack_s"]),
                r["voids"],
                r["sign_ins"],
                r["resumes"],
            )
        ),
        f'<td class="text">{_e(through)}</td>',
    ]
    return f"<tr>{''.join(cells)}</tr>"


def _duration(seconds: float) -> str:
    whole = round(seconds)
    return f"{whole // 3600}:{whole % 3600 // 60:02d}:{whole % 60:02d}"


def _utc(ts: float) -> str:
    return datetime.fromtimestamp(ts, UTC).strftime("%Y-%m-%d %H:%M:%S")


def _suspension_tables(suspended: dict[str, Any]) -> str:
    """Time suspended per table and cause, then each suspension: open ones (never resumed) highlighted."""
    title = '<h2 id="suspended">Time suspended</h2>'
    if not suspended["count"]:
        return f'{title}<p class="note">No table was suspended.</p>'
    causes = list(suspended["causes"])
    head = (
        '<th class="text">table</th><th>suspensions</th><th>time suspended</th><th>still open</th>'
        + "".join(f"<th>{_e(c.replace('_', ' '))}</th>" for c in causes)
    )
    rows = []
    for t in [*suspended["tables"], {"table_id": "all tables", **suspended}]:
        by_cause = [t["causes"].get(c) for c in causes]
        rows.append(
            f'<tr{_flagged(bool(t["open"]))}><td class="key">{_e(t["table_id"])}</td><td>{t["count"]}</td>'
            f"<td>{_duration(t['seconds'])}</td><td>{t['open']}</td>"
            + "".join(f"<td>{_e(_cause_cell(c))}</td>" for c in by_cause)
            + "</tr>"
        )
    period_head = (
        '<th class="text">table</th><th class="text">cause</th><th>alert</th><th>since (UTC)</th>'
        '<th>until (UTC)</th><th>time</th><th class="text">resumed by</th><th class="text">reason</th>'
    )
    periods = []
    for p in suspended["periods"]:
        resumed = "still suspended at the last event" if p["open"] else f"{p['by'] or NOT_NAMED} ({p['via']})"
        periods.append(
            f'<tr{_flagged(p["open"])}><td class="key">{_e(p["table_id"])}</td>'
            f'<td class="key">{_e(p["cause"])}</td><td>{p["alert_id"]}</td><td>{_utc(p["since"])}</td>'
            f"<td>{_utc(p['until'])}</td><td>{_duration(p['seconds'])}</td>"
            f'<td class="text">{_e(resumed)}</td><td class="text">{_e(p["reason"] or "")}</td></tr>'
        )
    note = (
        "Per cause: the time and, in brackets, how many times. "
        "A suspension never resumed counts to its table's last event."
    )
    return (
        f'{title}<p class="note">{_e(note)}</p><div class="scroll"><table id="suspended-table">'
        f"<tr>{head}</tr>{''.join(rows)}</table></div>"
        '<div class="scroll"><table id="suspensions-table">'
        f"<tr>{period_head}</tr>{''.join(periods)}</table></div>"
    )


def _cause_cell(cause: dict[str, Any] | None) -> str:
    return DASH if cause is None else f"{_duration(cause['seconds'])} ({cause['count']})"


def _fact_table(game: str, report: dict[str, Any]) -> str:
    """A game's facts over all tables, value by value, and where a value is far out (flagged).

    Recordings from before tables chose their game state no facts: the table says so rather than
    showing a row of zeros against every chance.
    """
    totals = report["totals"]["games"][game]
    title = f"Facts of {_title(game)}: each value against its exact chance"
    hands = totals["fact_hands"]
    if not hands:
        note = "No hand states its facts: recorded before tables chose their game."
        return f'<h2 id="facts-{game}">{_e(title)}</h2><p class="note">{_e(note)}</p>'
    far: dict[tuple[str, str], list[str]] = {}
    for key, g in [("all tables", report["totals"]), *((t["key"], t) for t in report["tables"])]:
        for row in g["games"].get(game, {}).get("facts", []):
            if row["far"]:
                far.setdefault((row["fact"], row["value"]), []).append(f"{key} (z = {row['z']:+.2f})")
    rows = []
    for row in totals["facts"]:
        where = far.get((row["fact"], row["value"]), [])
        observed = f"{row['observed']} ({row['observed'] / hands:.4f})"
        z = DASH if row["z"] is None else f"{row['z']:+.2f}"
        rows.append(
            f'<tr{_flagged(bool(where))}><td class="key">{_e(row["fact"])}</td>'
            f'<td class="key">{_e(row["value"])}</td><td>{row["chance"]:.4f}</td><td>{_e(observed)}</td>'
            f"<td>{row['expected']:g}</td><td>{_e(z)}</td>"
            f'<td class="text{_bad(bool(where))}">{_e(", ".join(where))}</td></tr>'
        )
    head = (
        '<th class="text">fact</th><th class="text">value</th><th>chance</th><th>observed</th>'
        '<th>expected</th><th>z (all tables)</th><th class="text">far out at</th>'
    )
    note = (
        f"{hands} hands state their facts. A value is far out, and flagged, at |z| >= {report['fact_z']:g} "
        f"at a table or over all tables (docs/audit.md)."
    )
    return (
        f'<h2 id="facts-{game}">{_e(title)}</h2><p class="note">{_e(note)}</p>'
        f'<div class="scroll"><table id="facts-{game}-table"><tr>{head}</tr>{"".join(rows)}</table></div>'
    )


def _deck_cell(check: dict[str, Any] | None) -> str:
    """A shoe's count at its end: its verdict, with the cards when short or over."""
    if check is None:
        return '<td class="text"></td>'
    status = check["status"].replace("_", " ")
    cards = " ".join([*check.get("missing", []), *check.get("surplus", [])][:12])
    bad = check["status"] in ("short", "surplus") or (check["status"] == "not_done" and check["required"])
    return f'<td class="text{_bad(bad)}">{_e(status + (": " + cards if cards else ""))}</td>'


def _shoe_table(report: dict[str, Any], game: str) -> str:
    """Every shoe of a game, the suspect ones first and highlighted: a shoe is dealt one game."""
    codes, results = _codes(report), {game: _results(report)[game]}
    dealt = [s for s in report["shoes"] if s["game"] == game]
    shoes = sorted(dealt, key=lambda s: (not s["suspect"], s["table_id"], s["first"] or 0))
    # A house that neither counts its shoes nor requires it has no column of it.
    counted = any(
        c and (c["status"] != "not_done" or c["required"]) for c in (s["deck_check"] for s in shoes)
    )
    head = (
        '<th class="text">table</th><th class="text">shoe</th><th class="text">day</th>'
        '<th class="text">dealers</th>'
        + "".join(_group_head("", codes, results)[1:])
        + '<th class="text">shuffle</th>'
        + ('<th class="text">deck check</th>' if counted else "")
        + '<th class="text">chain</th>'
    )
    rows = []
    for s in shoes:
        shuffle = s["shuffle"]
        said = (
            f"keeps {shuffle['kept']}: 10^{shuffle['log10_evidence']:g} "
            f"({shuffle['pairs']} pairs, {shuffle['forward']} fwd, {shuffle['backward']} back)"
            if shuffle
            else "proper"
        )
        rows.append(
            f'<tr{_flagged(s["suspect"])}><td class="key">{_e(s["table_id"])}</td>'
            f'<td class="key">{_e(s["shoe_id"])}</td>'
            f'<td class="key">{_e(s["day"] or "")}</td><td class="text">{_e(", ".join(s["dealers"]))}</td>'
            f'{"".join(_group_cells(s, codes, results))}<td class="text{_bad(bool(shuffle))}">{_e(said)}</td>'
            f"{_deck_cell(s['deck_check']) if counted else ''}"
            f'<td class="text{_bad(s["chain"] != "intact")}">{_e(s["chain"])}</td></tr>'
        )
    return (
        f'<h2 id="shoes-{game}">Per shoe of {_e(_title(game))} (suspect shuffles first)</h2>'
        f'<div class="scroll"><table id="shoes-{game}-table"><tr>{head}</tr>{"".join(rows)}</table></div>'
    )


def _file_table(report: dict[str, Any]) -> str:
    head = (
        '<th class="text">file</th><th class="text">table</th><th>chain no.</th><th>lines</th>'
        '<th class="text">chain</th><th class="text">signature</th><th class="text">replay vs. table</th>'
    )
    rows = []
    for f in report["files"]:
        name, table = _e(f["name"]), _e(f["table_id"] or "")
        if "error" in f:
            rows.append(
                f'<tr class="flag"><td class="key">{name}</td><td class="key">{table}</td><td></td>'
                f'<td></td><td class="text bad" colspan="3">{_e(f["error"])}</td></tr>'
            )
            continue
        signature = f["signature"] + (f" ({_short_key(f['signed_by'])})" if f["signed_by"] else "")
        chain_bad, replay_bad = f["chain"] != "intact", f["replay_differs"]
        rows.append(
            f'<tr{_flagged(chain_bad or replay_bad)}><td class="key">{name}</td>'
            f'<td class="key">{table}</td>'
            f"<td>{_e(f['chain_file'] or DASH)}</td><td>{f['lines'] or 0}</td>"
            f'<td class="text{_bad(chain_bad)}">{_e(f["chain"])}</td><td class="text">{_e(signature)}</td>'
            f'<td class="text{_bad(replay_bad)}">{_e(f["replay"])}</td></tr>'
        )
    return (
        '<h2 id="files">Files: chain, signature, replay</h2><div class="scroll"><table id="files-table">'
        f"<tr>{head}</tr>{''.join(rows)}</table></div>"
    )
