"""A lazy shuffle end to end: ``scannerd record --from-sim --shuffle`` then ``scannerd replay``, as processes.

The simulated dealer deals a shoe, makes the next from its discards the
lazy way, and the framed shoe's bytes are recorded; the replay runs the real
codec and validator over them. The game server would see this.
"""

import json
import subprocess
import sys
from pathlib import Path

import pytest

AT = ("--start", "2024-05-01T20:00:00Z", "--driver", "framed", "--shoes", "2", "--seed", "6")


def scannerd(*argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "scannerd", *argv], capture_output=True, text=True, timeout=300, check=False
    )


def published(tmp_path: Path, shuffle: str) -> list[tuple[str, dict]]:
    out = tmp_path / f"{shuffle}.jsonl"
    made = scannerd("record", "--from-sim", str(out), "--shuffle", shuffle, *AT)
    assert made.returncode == 0, made.stderr
    run = scannerd("replay", "--fast", "--emit", "jsonl", str(out))
    assert run.returncode == 0, run.stderr
    lines = [json.loads(line) for line in run.stdout.splitlines()]
    return [(m["topic"].rsplit("/", 1)[1], m["payload"]) for m in lines]


def test_a_preset_shoe_is_alerted_within_30_cards_and_restated_at_its_end(tmp_path: Path) -> None:
    events = published(tmp_path, "preset")
    alerts = [p for kind, p in events if kind == "alert" and p["code"] == "SHUFFLE_SUSPECT"]
    first, final = alerts
    assert (first["shoe_id"], first["severity"], first["shuffle"]["earlier_shoe_id"]) == (
        "S2",
        "warning",
        "S1",
    )
    cards_before = [
        p for kind, p in events if kind == "card" and p["shoe_id"] == "S2" and p["seq"] < first["seq"]
    ]
    assert len(cards_before) <= 30
    assert final["alert_id"] == first["alert_id"] and final["shuffle"]["final"]
    assert final["shuffle"]["forward"] == final["shuffle"]["pairs"]  # the same order, every pair


@pytest.mark.parametrize("shuffle", ["full", "random"])
def test_a_properly_shuffled_shoe_raises_nothing(tmp_path: Path, shuffle: str) -> None:
    events = published(tmp_path, shuffle)
    assert {p["shoe_id"] for kind, p in events if kind == "card"} == {"S1", "S2"}
    assert not [p for kind, p in events if kind == "alert" and p["code"] == "SHUFFLE_SUSPECT"]


def test_an_unknown_shuffle_is_refused_in_one_line(tmp_path: Path) -> None:
    run = scannerd("record", "--from-sim", str(tmp_path / "x.jsonl"), "--shuffle", "overhand")
    assert run.returncode == 2
    assert "invalid choice: 'overhand'" in run.stderr and "Traceback" not in run.stderr


def first_shoe_alerts(tmp_path: Path, kind: str, *more: str) -> list[dict]:
    out = tmp_path / f"first-{kind}.jsonl"
    made = scannerd("record", "--from-sim", str(out), "--first-shoe", kind, *AT, *more)
    assert made.returncode == 0, made.stderr
    run = scannerd("replay", "--fast", "--emit", "jsonl", str(out))
    assert run.returncode == 0, run.stderr
    payloads = [json.loads(line)["payload"] for line in run.stdout.splitlines()]
    return [p for p in payloads if p.get("code") == "SHUFFLE_SUSPECT"]


@pytest.mark.parametrize(("kind", "within"), [("new", 12), ("riffle", 60)])
def test_a_first_shoe_of_new_decks_unshuffled_or_riffled_once_is_alerted_early(
    tmp_path: Path, kind: str, within: int
) -> None:
    """No earlier shoe to compare with: the shoe's own order gives it away, a few hands in."""
    first, *_ = first_shoe_alerts(tmp_path, kind)
    assert (first["shoe_id"], first["shuffle"]["against"]) == ("S1", "new_decks")
    assert first["shuffle"]["pairs"] < within


def test_a_hundred_properly_shuffled_shoes_raise_nothing_from_their_own_order(tmp_path: Path) -> None:
    replayed = first_shoe_alerts(tmp_path, "random", "--shoes", "100", "--seed", "9")
    assert replayed == []
