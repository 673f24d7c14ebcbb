"""The alerting rules shipped for the monitoring host: valid, on the table's metrics, each one explained.

``alerts_test.yml`` beside this file feeds each alert series that should wake
someone and series that should not, and ``promtool test rules`` holds the rules
to both, words included.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

from tests.monitoring.checks import problems
from tests.support.docs import markdown_table

ROOT = Path(__file__).resolve().parents[2]
RULES = ROOT / "systemd" / "prometheus-scannerd-alerts.yml"
UNIT_TESTS = Path(__file__).with_name("alerts_test.yml")
GUIDE = ROOT / "docs" / "operations.md"

promtool = pytest.mark.skipif(
    shutil.which("promtool") is None, reason="promtool not installed (Debian package 'prometheus')"
)


def rules() -> list[dict[str, object]]:
    return [rule for group in yaml.safe_load(RULES.read_text())["groups"] for rule in group["rules"]]


@promtool
def test_promtool_accepts_the_rules() -> None:
    checked = subprocess.run(
        ["promtool", "check", "rules", RULES], capture_output=True, text=True, timeout=60
    )
    assert checked.returncode == 0, checked.stdout + checked.stderr


@promtool
def test_each_alert_fires_when_it_should_and_only_then() -> None:
    tested = subprocess.run(
        ["promtool", "test", "rules", UNIT_TESTS.name],
        cwd=UNIT_TESTS.parent,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert tested.returncode == 0, tested.stdout + tested.stderr


def test_every_alert_is_tested() -> None:
    cases = yaml.safe_load(UNIT_TESTS.read_text())["tests"]
    tested = {check["alertname"] for case in cases for check in case["alert_rule_test"]}
    assert tested == {rule["alert"] for rule in rules()}


def test_every_rule_names_only_what_a_table_serves() -> None:
    assert {rule["alert"]: problems(str(rule["expr"])) for rule in rules()} == {
        rule["alert"]: [] for rule in rules()
    }


def test_every_alert_says_what_it_is_and_how_grave() -> None:
    for rule in rules():
        annotations = rule.get("annotations") or {}
        assert isinstance(annotations, dict)
        assert annotations.get("summary") and annotations.get("description"), rule["alert"]
        labels = rule.get("labels") or {}
        assert isinstance(labels, dict)
        assert labels.get("severity") in {"critical", "warning"}, rule["alert"]


def test_every_alert_names_its_table() -> None:
    """Whoever is woken reads which table first: every summary says it."""
    unnamed = [rule["alert"] for rule in rules() if "$labels.table_id" not in rule["annotations"]["summary"]]
    assert unnamed == []


def test_a_name_no_table_serves_is_caught() -> None:
    assert problems('increase(scannerd_alerts_total{code="SHUFFLE_SUSPCT"}[15m]) > 0') == [
        "scannerd_alerts_total: code is never 'SHUFFLE_SUSPCT'"
    ]
    assert problems("sum by (table_id) (rate(scannerd_card_total[5m]))") == [
        "scannerd_card_total: no table serves it"
    ]
    assert problems('scannerd_rounds_total{outcome="banker"}') == [
        "scannerd_rounds_total: no label 'outcome'"
    ]
    assert (
        problems(
            "histogram_quantile(0.9, sum by (le) (rate(scannerd_card_latency_seconds_bucket[5m])))"
            ' or process_resident_memory_bytes or up{job="scannerd"} offset 1h30m'
        )
        == []
    )


def test_the_guide_says_what_each_alert_means_and_what_to_do() -> None:
    rows = markdown_table(GUIDE, "### What each alert means")
    assert {row[0].strip("`"): row[1] for row in rows} == {
        rule["alert"]: rule["labels"]["severity"] for rule in rules()
    }
    assert all(row[2] and row[3] for row in rows)
