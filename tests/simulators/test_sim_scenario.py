from pathlib import Path

import pytest

from scannerd.core.house import HouseRules
from simulators.actions import Pause, Unplug
from simulators.faults import FaultRates
from simulators.scenario import (
    PauseStep,
    PlayStep,
    RoundsStep,
    RoundStep,
    Scenario,
    ScenarioError,
    ShoesStep,
    ShoeStep,
    UnplugStep,
    load,
    parse,
)

# The alerts samples/scenarios/every-mistake.txt must raise, in order.
EVERY_MISTAKE = [
    "CARD_BEFORE_BETS_CLOSED",
    "EXTRA_CARD",
    "SHORT_DEAL",
    "UNREADABLE_CARD",
    "DEVICE_DISCONNECTED",
    "DEVICE_RECONNECTED",
    "BURN_MISMATCH",
]
SAMPLES = sorted((Path(__file__).parents[2] / "samples" / "scenarios").glob("*.txt"))


def alerts(steps):
    return [code for s in steps for code in s.expect.alerts]


def run(scenario: Scenario, reports_cut=True):
    return list(scenario.steps(scenario.dealer(device_reports_cut=reports_cut, pace=0)))


def test_settings_and_steps_are_read():
    sc = parse(
        """
        # a comment line
        seed 42            # trailing comment
        house decks=6 burn=3 last_hand=one-more cut_card_remaining=20
        cut 10-30
        pace 0.5
        error-rate 0.1
        mistakes early-card unreadable
        unplug-seconds 0.5
        faults junk=0.1 split=0.25
        shoe skip-burn
        rounds 3
        round extra-card
        unplug 2
        pause 1.5
        play 10
        shoes 1
        """
    )
    assert sc.seed == 42
    assert sc.house == HouseRules(decks=6, burn=3, last_hand="one-more", cut_card_remaining=20, suspend_on=())
    assert sc.cut == (10, 30)
    assert (sc.pace, sc.error_rate, sc.unplug_seconds) == (0.5, 0.1, 0.5)
    assert sc.mistakes == ("early-card", "unreadable")
    assert sc.faults == FaultRates(junk=0.1, split=0.25)
    assert sc.instructions == (  # each argument converted as the file is read, not when it is played
        ShoeStep(skip_burn=True),
        RoundsStep(3),
        RoundStep("extra-card"),
        UnplugStep(2.0),
        PauseStep(1.5),
        PlayStep(10),
        ShoesStep(1),
    )


@pytest.mark.parametrize(
    ("text", "complaint"),
    [
        ("dance 3", "line 1: unknown word 'dance'"),
        ("rounds 3\nseed 4", "line 2: 'seed' after the first step"),
        ("round spill-coffee", "unknown mistake 'spill-coffee'"),
        ("rounds -1", "positive whole number"),
        ("rounds", "takes 1 argument"),
        ("unplug soon", "'soon' is not a number"),
        ("unplug inf", "'inf' is not a finite number"),
        ("pace nan", "'nan' is not a finite number"),
        ("error-rate 2", "line 1: bad 'error-rate': a chance is from 0 to 1"),
        ("house decks=99", "line 1: bad 'house'"),
        ("house decks", "expected key=value"),
        ("cut 10-", "cut is N, A-B or none"),
        ("faults junk=2", "line 1: bad 'faults'"),
        ("faults gremlins=0.1", "unknown faults"),
        ("shoe now", "only 'skip-burn'"),
        ("mistakes early-card nap", "unknown mistakes"),
    ],
)
def test_bad_lines_are_named(text, complaint):
    with pytest.raises(ScenarioError, match=complaint):
        parse(text)


def test_the_issue_example_runs_as_written():
    sc = parse("rounds 3\nround extra-card\nunplug 2")
    steps = run(sc)
    assert alerts(steps) == ["EXTRA_CARD", "DEVICE_DISCONNECTED", "DEVICE_RECONNECTED"]
    assert steps[-1].action == Unplug(2.0)
    assert sum(1 for s in steps if s.expect.round_end == "complete") == 4


def test_the_same_scenario_gives_the_same_session():
    text = "seed 5\nerror-rate 0.3\nplay 30"
    assert run(parse(text)) == run(parse(text))
    assert run(parse(text)) != run(parse(text.replace("seed 5", "seed 6")))


def test_pause_is_a_step():
    (step,) = run(parse("pause 1.5"))
    assert step.action == Pause(1.5)


def test_devices_without_a_cut_card_sensor_get_the_virtual_one():
    sc = parse("cut 20")
    assert sc.rules_for(device_reports_cut=True).cut_card_remaining is None
    assert sc.rules_for(device_reports_cut=False).cut_card_remaining == 20
    assert parse("house cut_card_remaining=none").rules_for(False).cut_card_remaining == 14


@pytest.mark.parametrize("sample", SAMPLES, ids=lambda p: p.stem)
def test_samples_load(sample):
    sc = load(sample)
    assert sc.instructions


def test_every_mistake_sample_raises_every_dealer_alert_in_order():
    steps = run(load(Path(__file__).parents[2] / "samples" / "scenarios" / "every-mistake.txt"))
    assert alerts(steps) == EVERY_MISTAKE


def test_a_file_error_names_the_file(tmp_path):
    bad = tmp_path / "bad.txt"
    bad.write_text("rounds 1\nwobble\n")
    with pytest.raises(ScenarioError, match=r"bad\.txt: line 2"):
        load(bad)
