"""``scannerd record --from-sim OUT``: a recording of a simulated table, made in an instant.

The simulated dealer (``simulators``) deals a scenario; each of its actions
becomes what the chosen device would have sent (its wire and wire faults
from ``simulators.registry``: for the framed shoes, the firmware model
talking to a host that acknowledges at once); game-server commands become ``cmd`` lines
and a pulled cable becomes ``link`` lines. Time is the scenario's, not the
wall clock's, so a whole evening at the table is written at once, and a bug
report needs neither a table nor a shoe. ``scannerd replay OUT`` plays it.
"""

from __future__ import annotations

import argparse
import random
import sys
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from pathlib import Path

from drivers.registry import get_driver_class
from scannerd import __version__
from scannerd.commands import arguments
from scannerd.recording import Header, RecordingWriter, whole_second
from simulators.actions import Pause, ServerCommand, Step, Unplug
from simulators.faults import Faults
from simulators.registry import simulated, simulated_drivers
from simulators.scenario import Scenario, ScenarioError, load


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("out", type=Path, metavar="OUT", help="the recording to write (.jsonl or .jsonl.gz)")
    parser.add_argument(
        "--from-sim",
        action="store_true",
        required=True,
        help="record the simulator (the one source so far)",
    )
    parser.add_argument(
        "--driver", choices=simulated_drivers(), default="beetek", help="the device to simulate"
    )
    parser.add_argument("--scenario", type=Path, help="scripted session (docs/simulators.md)")
    parser.add_argument(
        "--shoes",
        type=arguments.positive_int,
        default=1,
        help="whole shoes to deal when the scenario has no steps (default 1)",
    )
    parser.add_argument("--seed", type=int, help="random seed (overrides the scenario's)")
    parser.add_argument(
        "--error-rate", type=arguments.fraction, help="chance a round has a dealer mistake (0-1)"
    )
    arguments.add_shuffle(parser)
    parser.add_argument("--table-id", type=arguments.table_id, default="T1")
    parser.add_argument(
        "--start", help="RFC 3339 time the session begins (default: now), e.g. 2024-05-01T20:00:00Z"
    )


def run(args: argparse.Namespace) -> int:
    try:
        scenario = load(args.scenario) if args.scenario else Scenario()
        given = (("seed", args.seed), ("error_rate", args.error_rate), ("shuffle", args.shuffle))
        changes = {k: v for k, v in given if v is not None}
        scenario = replace(scenario, **changes)
        now = datetime.now(UTC).timestamp()
        started = datetime.fromisoformat(args.start) if args.start else whole_second(now)
        if started.tzinfo is None:
            raise ValueError("--start needs a time zone, e.g. 2024-05-01T20:00:00Z")
    except (ScenarioError, OSError, ValueError) as exc:
        print(f"record: {exc}", file=sys.stderr)
        return 2
    # A scenario without steps deals forever: then --shoes says how long.
    shoes = None if scenario.instructions else args.shoes
    try:
        summary = record_simulation(
            scenario, args.driver, args.out, table_id=args.table_id, started_at=started, shoes=shoes
        )
    except OSError as exc:
        print(f"record: {args.out}: {exc.strerror or exc}", file=sys.stderr)
        return 2
    print(f"wrote {args.out}: {summary.steps} steps, {summary.lines} lines, {summary.seconds:.0f} s of play")
    return 0


@dataclass(frozen=True, slots=True)
class Summary:
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
