"""``scannerd record --from-sim OUT``: a recording of a simulated table, made in an instant.

The simulated dealer (``simulators``) deals a scenario; each of its actions
becomes what the chosen device would have sent (the simulator's own frame
makers, its wire faults, and for ``framed`` the firmware model talking to a
host that acknowledges at once); game-server commands become ``cmd`` lines
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

from drivers.codecs.framed import FramedCodec
from drivers.events import DeviceEvent, DeviceHello
from drivers.framed_device import FramedDevice
from drivers.framed_host import FramedSession
from scannerd import __version__
from scannerd.commands import arguments
from scannerd.recording import Header, RecordingWriter, whole_second
from simulators.actions import CutCard, Draw, Pause, ServerCommand, Step, Unplug, Unreadable
from simulators.faults import Faults
from simulators.feeder import (
    beetek_frame,
    beetek_junk,
    device_event,  # the serial and USB shoes' own mapping
    linecode_frame,
    linecode_junk,
)
from simulators.scenario import Scenario, ScenarioError, load

DRIVERS = ("beetek", "linecode", "framed")
REPORTS_CUT = {"beetek": False, "linecode": False, "framed": True}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("out", type=Path, metavar="OUT", help="the recording to write (.jsonl or .jsonl.gz)")
    parser.add_argument(
        "--from-sim",
        action="store_true",
        required=True,
        help="record the simulator (the one source so far)",
    )
    parser.add_argument("--driver", choices=DRIVERS, default="beetek", help="the device to simulate")
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
    reports_cut = REPORTS_CUT[driver]
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
        rng = random.Random(scenario.seed)
        junk = {"beetek": beetek_junk, "linecode": linecode_junk}.get(driver)
        self.faults = Faults(scenario.faults, random.Random(rng.random()), junk)
        self.device = _SimulatedWire(driver, rng)

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


class _SimulatedWire:
    """The device's bytes for each action; for ``framed``, with a host answering as the daemon does."""

    def __init__(self, driver: str, rng: random.Random) -> None:
        self.driver = driver
        self.rng = rng
        self.crlf = rng.random() < 0.5
        self.framed: _FramedLink | None = _FramedLink() if driver == "framed" else None

    def connect(self) -> bytes:
        return self.framed.connect() if self.framed else b""

    def emit(self, action: Draw | Unreadable | CutCard) -> bytes:
        if self.framed:
            return self.framed.send(device_event(action))
        frame = (
            beetek_frame(action, self.rng, self.crlf) if self.driver == "beetek" else linecode_frame(action)
        )
        return frame or b""


class _FramedLink:
    """The shoe firmware model and a host session that stores and acknowledges at once.

    Only the device's bytes are kept (they are what a recording holds); the
    host's answers go straight back into the device, so it sends its next
    message as it would on a healthy link.
    """

    def __init__(self) -> None:
        self.device = FramedDevice(DeviceHello("SIM-SHOE", "SIM0001", "1.0.0", boot_id=1))
        self.codec = FramedCodec()
        self.session = FramedSession()
        self._booted = False

    def connect(self) -> bytes:
        """The host opened the port: it asks who is there; at power-up the shoe also says hello."""
        self.codec.reset()
        out = b"" if self._booted else self.device.start(0.0)
        self._booted = True
        return self._exchange(out + self.device.receive(self.session.start(), 0.0))

    def send(self, event: DeviceEvent) -> bytes:
        return self._exchange(self.device.send(event, 0.0))

    def _exchange(self, data: bytes) -> bytes:
        wire = b""
        while data:
            wire += data
            replies = b""
            for seq, event in self.codec.feed_seq(data):
                delivered, reply = self.session.receive(seq, event)
                replies += reply
                if delivered is not None and seq:
                    replies += self.session.acknowledge(seq)
            data = self.device.receive(replies, 0.0) if replies else b""
        return wire
