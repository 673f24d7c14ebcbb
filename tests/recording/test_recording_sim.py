"""``scannerd record --from-sim``: a simulated table's recording replays as the dealer's model expects."""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path

import pytest

from drivers.registry import get_driver_class
from scannerd.recording.format import RecordingReader
from scannerd.recording.replay import replay
from simulators.actions import Draw, Unreadable
from simulators.faults import FaultRates
from simulators.recording import record_simulation
from simulators.registry import simulated_drivers
from simulators.scenario import Scenario, load, parse
from tests.support.command import scannerd

ROOT = Path(__file__).parents[2]
SCENARIOS = ROOT / "samples" / "scenarios"
START = datetime(2024, 5, 1, 20, 0, 0, tzinfo=UTC)
AT = ("--start", "2024-05-01T20:00:00Z")


def expected(scenario: Scenario, driver: str) -> tuple[list[str], list[str]]:
    """Alert codes and card positions the dealer's own model says a correct table gives, in order."""
    dealer = scenario.dealer(device_reports_cut=get_driver_class(driver).reports_cut_card)
    steps = list(scenario.steps(dealer))
    alerts = [code for step in steps for code in step.expect.alerts]
    positions = [str(s.expect.position) for s in steps if isinstance(s.action, Draw | Unreadable)]
    return alerts, positions


def replayed(path: Path) -> tuple[list[str], list[str]]:
    messages = [(m.topic.rsplit("/", 1)[1], json.loads(m.payload)) for m in replay(path)]
    alerts = [p["code"] for kind, p in messages if kind == "alert" and not p["acknowledged"]]
    return alerts, [p["position"] for kind, p in messages if kind == "card"]


@pytest.mark.parametrize("driver", simulated_drivers())
def test_every_mistake_comes_back_out_of_the_replay(tmp_path: Path, driver: str) -> None:
    scenario = load(SCENARIOS / "every-mistake.txt")
    # A noisy wire: junk and split frames for all; repeats only where sequence numbers make them harmless.
    repeats = 0.1 if get_driver_class(driver).repeats_unacknowledged else 0.0
    faults = FaultRates(junk=0.1, split=0.3, duplicate=repeats)
    scenario = replace(scenario, faults=faults)
    out = tmp_path / "session.jsonl.gz"
    record_simulation(scenario, driver, out, started_at=START)
    assert replayed(out) == expected(scenario, driver)
    with RecordingReader(out) as r:
        kinds = {line.event for line in r.lines()}
        assert r.header.driver == driver and r.header.started_at == START
    assert kinds == {"rx", "cmd", "link"}


def test_the_command_writes_a_whole_shoe(tmp_path: Path, capsys) -> None:
    out = tmp_path / "shoe.jsonl"
    assert scannerd("record", "--from-sim", str(out), "--driver", "framed", "--seed", "5", *AT) == 0
    assert "wrote" in capsys.readouterr().out
    alerts, positions = replayed(out)
    assert alerts == ["CUT_CARD"]
    assert len(positions) > 300  # 416 cards less the cut-off rest and an unfinished last round


def test_a_scenario_file_is_followed(tmp_path: Path) -> None:
    scenario_file = tmp_path / "s.txt"
    scenario_file.write_text("seed 3\nhouse decks=1\ncut 10\nrounds 2\nround foreign-card\n")
    out = tmp_path / "foreign.jsonl"
    assert scannerd("record", "--from-sim", str(out), "--scenario", str(scenario_file), *AT) == 0
    assert replayed(out)[0] == ["FOREIGN_CARD"]
    assert replayed(out) == expected(parse(scenario_file.read_text()), "beetek")


def test_bad_arguments_are_refused_clearly(tmp_path: Path, capsys) -> None:
    out = str(tmp_path / "x.jsonl")
    assert scannerd("record", "--from-sim", out, "--start", "2024-05-01T20:00:00") == 2
    assert "time zone" in capsys.readouterr().err
    assert scannerd("record", "--from-sim", out, "--scenario", str(tmp_path / "nope")) == 2
    assert "nope" in capsys.readouterr().err
    (tmp_path / "binary").write_bytes(b"\x7fELF\xd0\xff")
    assert scannerd("record", "--from-sim", out, "--scenario", str(tmp_path / "binary")) == 2
    assert "binary: not a scenario" in capsys.readouterr().err
    assert scannerd("record", "--from-sim", str(tmp_path / "no-dir" / "x.jsonl")) == 2
    assert "no-dir/x.jsonl: No such file or directory" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("option", "value", "text"),
    [
        ("--shoes", "0", "must be at least 1"),  # 0 once meant "deal forever", writing without end
        ("--error-rate", "2", "from 0 to 1"),
        ("--table-id", "T/1", "not a table id"),  # a recording replay could not read
        ("--table-id", "T1\n", "not a table id"),  # a final newline, which "$" in a pattern lets by
    ],
)
def test_bad_option_values_are_refused_before_anything_is_written(
    tmp_path: Path, capsys, option: str, value: str, text: str
) -> None:
    with pytest.raises(SystemExit) as exit_:
        scannerd("record", "--from-sim", str(tmp_path / "x.jsonl"), option, value)
    assert exit_.value.code == 2
    assert text in capsys.readouterr().err
    assert not (tmp_path / "x.jsonl").exists()


SAMPLES = Path(__file__).parents[2] / "samples"
# The commands that made the shipped samples (docs/recording.md).
SAMPLE_COMMANDS = {
    "clean-shoe.jsonl.gz": ["--driver", "beetek", "--seed", "1", "--start", "2024-05-01T20:00:00Z"],
    "shoe-with-misdeals.jsonl.gz": [
        *("--driver", "framed", "--seed", "4", "--error-rate", "0.2", "--start", "2024-05-01T21:00:00Z"),
    ],
}


@pytest.mark.parametrize("name", sorted(SAMPLE_COMMANDS))
def test_the_shipped_samples_are_what_their_documented_command_writes(tmp_path: Path, name: str) -> None:
    assert scannerd("record", "--from-sim", str(tmp_path / name), *SAMPLE_COMMANDS[name]) == 0
    assert (tmp_path / name).read_bytes() == (SAMPLES / name).read_bytes()


def test_the_clean_shoe_is_clean_and_the_other_is_not() -> None:
    alerts, positions = replayed(SAMPLES / "clean-shoe.jsonl.gz")
    assert alerts == ["CUT_CARD"] and len(positions) > 300
    alerts, _ = replayed(SAMPLES / "shoe-with-misdeals.jsonl.gz")
    misdeals = {"CARD_BEFORE_BETS_CLOSED", "EXTRA_CARD", "SHORT_DEAL", "UNREADABLE_CARD", "FOREIGN_CARD"}
    assert misdeals <= set(alerts)


def test_the_simulation_recorder_stands_without_the_command_line() -> None:
    # The regression sessions (and any other simulation) write recordings through it, not through a command.
    probe = "import sys, simulators.recording; print([m for m in sys.modules if 'scannerd.commands' in m])"
    out = subprocess.run(
        [sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True, check=True, timeout=60
    )
    assert out.stdout.strip() == "[]"
