"""report.html: the audit for a person, one self-contained page (no script, nothing fetched).

An auditor may open it on a machine without a network, or file it as
evidence, so everything is in the page: the style inline, the plots as
hand-drawn SVG (a few polylines need no plotting library on a table PC). It
shows exactly what report.json holds (it is drawn from the same data), in
the order someone looks: what is flagged, the totals, the running
frequencies of each table inside their band, then the tables per table,
dealer, day and shoe (suspect shoes highlighted), and every file's chain,
signature and replay check.
"""

from __future__ import annotations

import html
from pathlib import Path
from typing import Any

from scannerd.audit import stats
from scannerd.audit.report_json import write_text

NAME = "report.html"
DASH = "\u2013"  # a figure there is none of
COLOURS = {"banker": "#c62828", "player": "#1565c0", "tie": "#2e7d32"}
UNUSUAL_P = 0.01  # a p-value shown highlighted (not flagged: some groups of many are bound to be)
Y_MAX = 0.6  # the plots' frequency axis: banker and player sit near 0.45, tie near 0.1

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
table { border-collapse: collapse; background: #fff; width: 100%; }
th, td { border: 1px solid #ddd; padding: 3px 6px; text-align: right; vertical-align: top;
         overflow-wrap: break-word; }
td { white-space: nowrap; }
td.text { white-space: normal; }
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
        _figures(report),
        '<h2 id="plots">Running frequency of each result, inside its 95% band</h2>',
        _legend(),
        '<div class="plots">',
        _plot("All tables", totals, report, 0, wide=True),
        *(_plot(g["key"], g, report, i) for i, g in enumerate(report["tables"], start=1)),
        "</div>",
        _group_table("Per table", "tables", report["tables"], report),
        _group_table("Per dealer", "dealers", report["dealers"], report),
        _group_table("Per day (UTC)", "days", report["days"], report),
        _shoe_table(report),
        _file_table(report),
        "".join(f'<p class="note">{_e(n)}</p>' for n in report["notes"]),
        "</body></html>",
    ]
    return "\n".join(parts) + "\n"


def _e(text: object) -> str:
    return html.escape(str(text))


def _signatures(key: str | None) -> str:
    return f"checked with {_short_key(key)}" if key else "not checked (no --key)"


def _short_key(fingerprint: str) -> str:
    kind, _, digest = fingerprint.partition(":")
    return f"{kind}:{digest[:16]}…" if digest else fingerprint


def _verdict(flags: list[dict[str, Any]]) -> str:
    if not flags:
        return '<p class="verdict good" id="verdict">Nothing flagged</p>'
    kinds = {k: sum(f["kind"] == k for f in flags) for k in ("shuffle", "chain", "replay")}
    said = ", ".join(f"{n} {_KIND_WORDS[k]}" for k, n in kinds.items() if n)
    return f'<p class="verdict bad" id="verdict">FLAGGED: {said}</p>'


_KIND_WORDS = {
    "shuffle": "suspect shuffle(s)",
    "chain": "file(s) not intact",
    "replay": "replay difference(s)",
}


def _flags(flags: list[dict[str, Any]]) -> str:
    if not flags:
        return ""
    rows = []
    for f in flags:
        if f["kind"] == "shuffle":
            where = f"{f['table_id']} shoe {f['shoe_id']} ({f['day']}, dealt by {', '.join(f['dealers'])})"
        else:
            where = f["file"]
        rows.append(
            f'<tr class="flag"><td class="text">{_e(f["kind"])}</td><td class="text">{_e(where)}</td>'
            f'<td class="text">{_e(f["detail"])}</td></tr>'
        )
    head = '<tr><th class="text">what</th><th class="text">where</th><th class="text">why</th></tr>'
    table = f'<table id="flags">{head}{"".join(rows)}</table>'
    return f'<h2 id="flagged">Flagged</h2><div class="scroll">{table}</div>'


def _figures(report: dict[str, Any]) -> str:
    t = report["totals"]
    files = [row for row in report["files"] if "error" not in row]
    intact = sum(row["chain"] == "intact" for row in files)
    cells = [
        ("hands", t["hands"]),
        ("shoes", t["shoes"]),
        ("suspect shoes", len(t["suspect_shoes"])),
        ("goodness of fit p", _p(t["p_value"])),
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


def _legend() -> str:
    items = (
        "".join(f'<span><i style="background:{c}"></i>{r}</span>' for r, c in COLOURS.items())
        + "<span>shaded: 95% band around the exact chance; dashed: the exact chance</span>"
    )
    return f'<p class="legend">{items}</p>'


def _plot(title: str, group: dict[str, Any], report: dict[str, Any], number: int, wide: bool = False) -> str:
    """Running frequencies of banker, player and tie against hands dealt, each in its band."""
    points = group.get("running") or []
    width, height, left, bottom, top, right = (1000 if wide else 500), 240, 44, 24, 8, 10
    plot_w, plot_h = width - left - right, height - top - bottom
    n_max = points[-1][0] if points else 1
    odds = next(iter(report["odds"].values()), None) or dict.fromkeys(stats.RESULTS, 0.0)

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
    for i, result in enumerate(stats.RESULTS, start=1):
        colour, chance = COLOURS[result], float(odds[result])
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
    suspect = group.get("suspect_shoes") or []
    caption = f"{_e(title)}: {group['hands']} hands, p = {_p(group['p_value'])}"
    if suspect:
        caption += f', <span class="bad">{len(suspect)} suspect shoe(s)</span>'
    cls = ' class="all"' if wide else ""
    return f"<figure{cls}><figcaption>{caption}</figcaption>{''.join(svg)}</figure>"


def _flagged(flag: bool) -> str:
    return ' class="flag"' if flag else ""


def _bad(flag: bool) -> str:
    return " bad" if flag else ""


def _codes(report: dict[str, Any]) -> list[str]:
    """The misdeal codes that occur anywhere: a column each."""
    return sorted(report["totals"]["misdeals"])


def _group_cells(g: dict[str, Any], codes: list[str]) -> list[str]:
    r = g["results"]
    cells = [
        str(g["hands"]),
        *(f"{r[k]} ({r[k] / g['hands']:.3f})" if g["hands"] else "0" for k in stats.RESULTS),
        _p(g["p_value"]),
        str(g["void_rounds"]),
        _num(g["all_misdeals_per_100_hands"]),
        *(_num(g["misdeals_per_100_hands"].get(code)) if g["hands"] else DASH for code in codes),
        _num(g["hands_per_hour"]),
        str(g["shoes"]),
    ]
    out = [f"<td>{_e(c)}</td>" for c in cells]
    if g["p_value"] is not None and g["p_value"] < UNUSUAL_P:
        out[4] = f'<td class="unusual" title="unusual, not flagged: docs/audit.md">{_e(cells[4])}</td>'
    return out


def _group_head(first: str, codes: list[str]) -> list[str]:
    names = [
        "hands",
        "banker",
        "player",
        "tie",
        "p (fit)",
        "voids",
        "misdeals /100",
        *(f"{c.replace('_', ' ')} /100" for c in codes),  # spaces: the long codes wrap in their heading
        "hands /hour",
        "shoes",
    ]
    return [f'<th class="text">{_e(first)}</th>', *(f"<th>{_e(n)}</th>" for n in names)]


def _group_table(title: str, kind: str, groups: list[dict[str, Any]], report: dict[str, Any]) -> str:
    codes = _codes(report)
    head = "".join(_group_head(kind.rstrip("s"), codes)) + "<th>suspect shoes</th>"
    rows = []
    for g in groups:
        suspect = ", ".join(g["suspect_shoes"])
        rows.append(
            f'<tr{_flagged(bool(suspect))}><td class="key">{_e(g["key"])}</td>'
            f"{''.join(_group_cells(g, codes))}"
            f'<td class="text">{_e(suspect)}</td></tr>'
        )
    return (
        f'<h2 id="{kind}">{_e(title)}</h2><div class="scroll"><table id="{kind}-table">'
        f"<tr>{head}</tr>{''.join(rows)}</table></div>"
    )


def _shoe_table(report: dict[str, Any]) -> str:
    """Every shoe, the suspect ones first and highlighted."""
    codes = _codes(report)
    shoes = sorted(report["shoes"], key=lambda s: (not s["suspect"], s["table_id"], s["first"] or 0))
    head = (
        '<th class="text">table</th><th class="text">shoe</th><th class="text">day</th>'
        '<th class="text">dealers</th>'
        + "".join(_group_head("", codes)[1:])
        + '<th class="text">shuffle</th><th class="text">chain</th>'
    )
    rows = []
    for s in shoes:
        shuffle = s["shuffle"]
        said = (
            f"keeps shoe {shuffle['earlier_shoe_id']}: 10^{shuffle['log10_evidence']:g} "
            f"({shuffle['pairs']} pairs, {shuffle['forward']} fwd, {shuffle['backward']} back)"
            if shuffle
            else "proper"
        )
        rows.append(
            f'<tr{_flagged(s["suspect"])}><td class="key">{_e(s["table_id"])}</td>'
            f'<td class="key">{_e(s["shoe_id"])}</td>'
            f'<td class="key">{_e(s["day"] or "")}</td><td class="text">{_e(", ".join(s["dealers"]))}</td>'
            f'{"".join(_group_cells(s, codes))}<td class="text{_bad(bool(shuffle))}">{_e(said)}</td>'
            f'<td class="text{_bad(s["chain"] != "intact")}">{_e(s["chain"])}</td></tr>'
        )
    return (
        '<h2 id="shoes">Per shoe (suspect shuffles first)</h2><div class="scroll"><table id="shoes-table">'
        f"<tr>{head}</tr>{''.join(rows)}</table></div>"
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
