"""A recording of a simulated table, made in an instant: what ``scannerd record --from-sim`` writes.

The simulated dealer deals a scenario; each of its actions becomes what the
chosen device would have sent (its wire and wire faults from
``simulators.registry``: for the framed shoes, the firmware model talking to
a host that acknowledges at once); game-server commands become ``cmd`` lines
and a pulled cable becomes ``link`` lines. Time is the scenario's, not the
wall clock's, so a whole evening at the table is written at once, and a bug
report needs neither a table nor a shoe. ``scannerd replay OUT`` plays it;
the regression sessions in ``tests/sessions/`` are made the same way.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from drivers.registry import get_driver_class
from scannerd import __version__
from scannerd.recording.format import Header, RecordingWriter
from simulators.actions import Pause, ServerCommand, Step, Unplug
from simulators.faults import Faults
from simulators.registry import simulated
from simulators.scenario import Scenario


@dataclass(frozen=True, slots=True)
class Summary:
    """What was written, for the command's one line: dealer's steps, recording lines, seconds of play."""

    steps: int
    lines: int
    seconds: float


def record_simulation(
    scenario: Scenario,
    driver: str,
    out: Path,
    *,
    table_id: str = "T1",
    started_at: datetime,
    shoes: int | None = None,
) -> Summary:
    """Deal ``scenario`` (or ``shoes`` whole shoes) on a simulated ``driver``; write what the table read."""
    reports_cut = get_driver_class(driver).reports_cut_card
    dealer = scenario.dealer(device_reports_cut=reports_cut)
    steps = dealer.play(shoes=shoes) if shoes else scenario.steps(dealer)
    header = Header(
        table_id=table_id,
        driver=driver,
        started_at=started_at,
        rules=scenario.rules_for(reports_cut),
        scannerd=__version__,
    )
    transcriber = Transcriber(driver, scenario)
    done = 0
    with RecordingWriter.create(out, header) as w:
        now = transcriber.connect(w, header.start_ts)
        for step in steps:
            now = transcriber.write(w, now, step)
            done += 1
        return Summary(done, w.lines, now - header.start_ts)


class Transcriber:
    """What a table records of a simulated dealer's steps: the device's bytes, commands, the link.

    It keeps the wire's state (its faults, the framed shoe's session) from one
    writer to the next, so one session can be written into as many files as a
    table's recorder would make of it (simulators/week.py).
    """

    def __init__(self, driver: str, scenario: Scenario) -> None:
        self.driver = driver
        sim = simulated(driver)
        rng = random.Random(scenario.seed)
        self.faults = Faults(scenario.faults, random.Random(rng.random()), sim.junk)
        self.device = sim.wire(rng)

    def _send(self, w: RecordingWriter, now: float, data: bytes) -> float:
        for write in self.faults.plan(data):
            now += write.delay
            w.rx(now, write.data)
        return now

    def connect(self, w: RecordingWriter, now: float) -> float:
        """The device comes up (plugged in, or the port opened) at ``now``; the time its bytes end."""
        w.link(now, True, f"{self.driver} (simulated)")
        return self._send(w, now, self.device.connect())

    def write(self, w: RecordingWriter, now: float, step: Step) -> float:
        """``step``'s lines, after its delay from ``now``; the time the step ends."""
        now += step.delay
        match step.action:
            case ServerCommand(name=name, args=cmd_args):
                w.cmd(now, name, cmd_args)
            case Unplug(seconds=seconds):
                w.link(now, False, "simulated cable pulled")
                return self.connect(w, now + seconds)
            case Pause(seconds=seconds):
                now += seconds
            case action:
                now = self._send(w, now, self.device.emit(action))
        return now
