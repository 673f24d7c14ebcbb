"""The audit's deck checks: each shoe's count at its end, and a shoe counted short, over, or not at all.

Shoes are dealt by the simulated dealer of a house that requires the count
(``[rules] deck_check_required``), recorded as the table records them, and
audited; then the recording is changed the ways a count goes wrong at a
table: a counted card read as another (one missing, one over), or no count at
all where the house requires one.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.support.command import scannerd

SCENARIO = """# Shoes counted at their end, as a house that requires it has its dealers do.
seed 3
pace 1
house decks=8 round_control=server deck_check_required=true
shoes 3
"""


@pytest.fixture(scope="module")
def counted(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Three shoes: the first two counted at their end, the third still dealt when the file ends."""
    where = tmp_path_factory.mktemp("counted")
    (where / "counted.txt").write_text(SCENARIO)  # the scenario file, as a developer writes one
    assert (
        scannerd("record", "--from-sim", str(where / "T1.jsonl"), "--scenario", str(where / "counted.txt"))
        == 0
    )
    return where / "T1.jsonl"


def audited(path: Path, out: Path) -> dict[str, Any]:
    assert scannerd("audit", str(path), "--out", str(out), "--workers", "1") in (0, 1)
    return json.loads((out / "report.json").read_text())


def deck_checks(report: dict[str, Any]) -> dict[str, Any]:
    return {s["shoe_id"]: s["deck_check"] for s in report["shoes"]}


def deck_flags(report: dict[str, Any]) -> list[tuple[str, str]]:
    return [(f["shoe_id"], f["detail"]) for f in report["flags"] if f["kind"] == "deck_check"]


def rewritten(source: Path, into: Path, edit: Any) -> Path:
    lines = [json.loads(line) for line in source.read_text().splitlines()]
    into.write_text("".join(json.dumps(line, separators=(",", ":")) + "\n" for line in edit(lines)))
    return into


def test_every_finished_shoe_is_reported_counted_and_clean(counted: Path, tmp_path: Path) -> None:
    report = audited(counted, tmp_path / "out")
    checks = deck_checks(report)
    assert checks["S1"]["status"] == checks["S2"]["status"] == "clean"
    assert checks["S1"]["required"] is True and checks["S3"] is None  # the shoe still dealt: not over
    assert deck_flags(report) == []
    assert '<th class="text">deck check</th>' in (tmp_path / "out" / "report.html").read_text()


def test_a_counted_card_read_as_another_flags_the_shoe_one_short_one_over(
    counted: Path, tmp_path: Path
) -> None:
    def misread(lines: list[dict[str, Any]]) -> list[dict[str, Any]]:
        start = next(i for i, line in enumerate(lines) if line.get("name") == "deck_check")
        rx = next(line for line in lines[start:] if line.get("event") == "rx")
        frame = bytes.fromhex(rx["hex"])
        card = frame.split(b"<Card:")[1][:2].decode()
        other = "2C" if card != "2C" else "3C"
        rx["hex"] = frame.replace(card.encode(), other.encode()).hex()
        return lines

    report = audited(rewritten(counted, tmp_path / "T1.jsonl", misread), tmp_path / "out")
    (check,) = [c for c in deck_checks(report).values() if c and c["status"] != "clean"]
    assert check["status"] == "surplus" and len(check["missing"]) == len(check["surplus"]) == 1
    ((shoe, detail),) = deck_flags(report)
    assert shoe == "S1" and detail.startswith("deck check surplus: missing ")


def test_a_shoe_closed_without_the_count_the_house_requires_is_flagged(counted: Path, tmp_path: Path) -> None:
    def uncounted(lines: list[dict[str, Any]]) -> list[dict[str, Any]]:
        first = [i for i, line in enumerate(lines) if line.get("name") == "deck_check"][:2]
        return [line for i, line in enumerate(lines) if i not in first]

    report = audited(rewritten(counted, tmp_path / "T1.jsonl", uncounted), tmp_path / "out")
    assert deck_checks(report)["S1"] == {"status": "not_done", "required": True}
    assert deck_flags(report) == [("S1", "closed without a deck check, which the house requires")]
