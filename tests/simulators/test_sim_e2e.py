"""Simulator -> real transport -> real driver -> validator, for every driver.

Serial devices are real ptys opened by the drivers through pyserial; USB
devices sit on the virtual pyusb bus. The dealer's expectations come from
the simulator's own rule knowledge, so these pass only if the drivers and
the validator get every card, alert and result right.
"""

import random
from dataclasses import replace
from pathlib import Path

import pytest

from drivers.registry import get_driver_class
from scannerd.contract.events import AlertData
from simulators.faults import FaultRates
from simulators.feeder import Feeder
from simulators.loopback import Loopback
from simulators.registry import make_device, simulated_drivers
from simulators.scenario import Scenario, load, parse
from simulators.usb_backend import VirtualUsbBus
from tests.simulators.test_sim_scenario import EVERY_MISTAKE

SCENARIOS = Path(__file__).parents[2] / "samples" / "scenarios"
DRIVERS = simulated_drivers()
SERIAL = simulated_drivers("serial")  # the wire faults are a serial line's
# Noise every serial protocol must shrug off; framed also gets repeats (it has sequence numbers).
WIRE = FaultRates(junk=0.1, split=0.2, slow=0.02)
FRAMED_WIRE = replace(WIRE, duplicate=0.1, retransmit=0.02)


def session(
    driver: str, scenario: Scenario, tmp_path: Path, *, noisy: bool = True
) -> tuple[Loopback, list[str]]:
    """Run the scenario flat out through the real driver; the alert codes the validator gave."""
    faults = FRAMED_WIRE if get_driver_class(driver).repeats_unacknowledged else WIRE
    if not noisy:
        faults = FaultRates()
    bus = VirtualUsbBus()  # a USB device's; a serial device is on a pty behind the link
    device = make_device(driver, random.Random(scenario.seed), faults, link=tmp_path / "shoe", bus=bus)
    rules = scenario.rules_for(device.reports_cut)
    dealer = scenario.dealer(device_reports_cut=device.reports_cut, pace=0)
    seen: list[str] = []
    loop = Loopback(
        device,
        rules,
        timeout=10.0,
        on_events=lambda step, events: seen.extend(e.code for e in events if isinstance(e, AlertData)),
    )
    try:
        loop.start()
        Feeder(device, after=loop.check).run(scenario.steps(dealer))
    finally:
        loop.stop()
        device.close()
    return loop, seen


@pytest.mark.timeout(120)
@pytest.mark.parametrize("driver", DRIVERS)
def test_each_dealer_mistake_raises_its_alert(driver, tmp_path):
    scenario = replace(load(SCENARIOS / "every-mistake.txt"), unplug_seconds=0.3)
    loop, seen = session(driver, scenario, tmp_path)
    assert loop.problems == []
    assert seen == EVERY_MISTAKE
    assert loop.steps_checked > 50


@pytest.mark.timeout(60)
@pytest.mark.parametrize("driver", DRIVERS)
def test_foreign_card_is_caught(driver, tmp_path):
    loop, seen = session(driver, load(SCENARIOS / "foreign-card.txt"), tmp_path)
    assert loop.problems == []
    assert seen == ["FOREIGN_CARD"]


@pytest.mark.timeout(60)
@pytest.mark.parametrize("driver", DRIVERS)
def test_a_dealer_who_stops_with_a_card_due_stalls_the_round_once(driver, tmp_path):
    loop, seen = session(driver, load(SCENARIOS / "stall.txt"), tmp_path)
    assert loop.problems == []
    assert seen == ["ROUND_STALLED"]


@pytest.mark.timeout(60)
@pytest.mark.parametrize("driver", DRIVERS)
def test_unplug_between_rounds_warns_and_deals_on(driver, tmp_path):
    loop, seen = session(driver, parse("seed 4\nrounds 2\nunplug 0.3\nrounds 2"), tmp_path)
    assert loop.problems == []
    assert seen == ["DEVICE_DISCONNECTED", "DEVICE_RECONNECTED"]


@pytest.mark.timeout(300)
@pytest.mark.parametrize("driver", DRIVERS)
def test_a_whole_shoe_dealt_right_raises_no_alert(driver, tmp_path):
    # On a clean wire: the noise's split and slow writes are real waits (4 s a shoe), and the
    # careless dealer below, the contract test and the codec fuzzing have the wire's faults.
    loop, seen = session(driver, parse("seed 21\nshoes 1"), tmp_path, noisy=False)
    assert loop.problems == []
    assert seen == ["CUT_CARD"]
    assert loop.steps_checked > 500


@pytest.mark.timeout(300)
@pytest.mark.parametrize("driver", SERIAL)
def test_a_careless_dealer_on_a_noisy_wire(driver, tmp_path):
    loop, seen = session(driver, parse("seed 8\nerror-rate 0.25\nunplug-seconds 0.2\nplay 60"), tmp_path)
    assert loop.problems == []
    assert len(set(seen)) >= 4  # several kinds of mistake were made and caught


@pytest.mark.timeout(300)
@pytest.mark.parametrize("driver", DRIVERS)
@pytest.mark.parametrize("house", ["game=dragon_tiger", "commission=ez"])
def test_every_game_through_every_driver_with_a_careless_dealer(driver, house, tmp_path):
    """The driver contract's other axis: each game's deal and misdeals through each real transport."""
    scenario = parse(f"seed 9\nhouse {house}\nerror-rate 0.25\nunplug-seconds 0.2\nplay 30")
    loop, seen = session(driver, scenario, tmp_path)
    assert loop.problems == []
    assert len(set(seen)) >= 3
