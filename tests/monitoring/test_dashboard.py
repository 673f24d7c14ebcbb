"""The Grafana dashboard shipped for the monitoring host: imports anywhere, every panel on a real metric.

A panel whose query names a metric the table does not serve is blank, not
broken, and nobody notices until the night it was needed; this holds every
query to the metric list the table serves.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from tests.monitoring.checks import problems
from tests.support.promql import selectors

ROOT = Path(__file__).resolve().parents[2]
DASHBOARD = ROOT / "systemd" / "grafana-scannerd-dashboard.json"


def dashboard() -> dict[str, Any]:
    loaded = json.loads(DASHBOARD.read_text())
    assert isinstance(loaded, dict)
    return loaded


def panels() -> list[dict[str, Any]]:
    every = []
    for panel in dashboard()["panels"]:
        every.append(panel)
        every.extend(panel.get("panels", []))  # a collapsed row keeps its panels inside it
    return every


def queries() -> list[tuple[str, str]]:
    return [(panel["title"], target["expr"]) for panel in panels() for target in panel.get("targets", [])]


def test_panel_ids_are_unique() -> None:
    ids = [panel["id"] for panel in panels()]
    assert len(ids) == len(set(ids))


def test_panels_fit_the_grid_and_do_not_overlap() -> None:
    taken: dict[tuple[int, int], str] = {}
    for panel in panels():
        grid = panel["gridPos"]
        assert grid["x"] >= 0 and grid["w"] > 0 and grid["x"] + grid["w"] <= 24, panel["title"]
        for x in range(grid["x"], grid["x"] + grid["w"]):
            for y in range(grid["y"], grid["y"] + grid["h"]):
                assert (x, y) not in taken, f"{panel['title']} overlaps {taken[(x, y)]}"
                taken[(x, y)] = panel["title"]


def test_every_panel_but_a_row_has_a_query_of_a_known_metric() -> None:
    for panel in panels():
        if panel["type"] == "row":
            continue
        assert panel.get("targets"), f"{panel['title']}: no query"
        for target in panel["targets"]:
            assert selectors(target["expr"]), f"{panel['title']}: {target['expr']} names no metric"
    assert {title: problems(expr) for title, expr in queries() if problems(expr)} == {}


def test_the_datasource_is_chosen_on_import() -> None:
    """No datasource of the machine it was made on: each query uses the dashboard's variable."""
    variables = {v["name"]: v for v in dashboard()["templating"]["list"]}
    assert variables["datasource"]["type"] == "datasource"
    assert variables["datasource"]["query"] == "prometheus"
    for panel in panels():
        for holder in [panel, *panel.get("targets", [])]:
            if "datasource" in holder and panel["type"] != "row":
                assert holder["datasource"] == {"type": "prometheus", "uid": "${datasource}"}, panel["title"]
    assert "__inputs" not in dashboard()
    assert not re.search(r'"uid": "(?!\$\{datasource\}|-- Grafana --|scannerd-tables)', DASHBOARD.read_text())


def test_one_table_or_the_fleet() -> None:
    """The table chosen at the top narrows the table's panels; the fleet's see every table."""
    table_id = {v["name"]: v for v in dashboard()["templating"]["list"]}["table_id"]
    assert table_id["multi"] and table_id["includeAll"] and table_id["allValue"] == ".*"
    assert "scannerd_build_info" in table_id["definition"]
    rows = [panel for panel in dashboard()["panels"] if panel["type"] == "row"]
    assert [row["title"] for row in rows] == ["Fleet: every table", "Table: $table_id"]
    table_row_y = rows[1]["gridPos"]["y"]
    for panel in panels():
        if panel["type"] == "row":
            continue
        narrowed = [t["expr"] for t in panel["targets"] if 'table_id=~"$table_id"' in t["expr"]]
        if panel["gridPos"]["y"] > table_row_y:
            assert len(narrowed) == len(panel["targets"]), panel["title"]
        else:
            assert narrowed == [], panel["title"]


def test_it_shows_what_the_floor_asks_for() -> None:
    every = " ".join(expr for _, expr in queries())
    for wanted in (
        "scannerd_cards_total",
        "scannerd_rounds_total",
        'scannerd_alerts_total{severity="misdeal"}',
        "scannerd_outbox_events",
        "scannerd_outbox_oldest_age_seconds",
        "scannerd_device_link_up",
        "scannerd_broker_connected",
        "histogram_quantile(0.99",
        "scannerd_card_latency_seconds_bucket",
        "scannerd_clock_estimated_error_seconds",
        "scannerd_suspended",
    ):
        assert wanted in every, wanted
