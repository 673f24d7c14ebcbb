"""The daemon's card path in one process, checked step by step against the dealer.

A simulated device feeds the real driver through its real transport (a pty
opened by pyserial, or pyusb on the virtual bus); the driver's
``DeviceReader`` hands device events to the daemon's own
``scannerd.core.table.Table``. After each dealer step the
loopback waits for that step's device events, so game-server commands reach
the validator in the order the table saw them, and compares the validator's
output with what the dealer expected. Tests, and ``scannerd simulate
--check``, use it to show the right alerts come out of the real code.
"""

from __future__ import annotations

import queue
import time
from collections.abc import Callable

from drivers.events import DeviceCard, DeviceCutCard, DeviceEvent, LinkDown, LinkUp
from drivers.reader import DeviceReader
from drivers.registry import create_driver
from scannerd.contract.alert_catalogue import PIT_ONLY_CODES
from scannerd.contract.events import AlertData, CardData, EventData, RoundData
from scannerd.contract.requests import Request
from scannerd.core.house import HouseRules
from scannerd.core.inputs import Tick
from scannerd.core.table import Table
from simulators.actions import CutCard, Draw, Pause, ServerCommand, Step, Unplug, Unreadable
from simulators.feeder import SimDevice

_ENDS = ("complete", "void")


def mismatches(step: Step, events: list[EventData], rejected: bool = False) -> list[str]:
    """What differs between ``step.expect`` and the validator's events for that step."""
    exp = step.expect
    problems: list[str] = []
    # The dealer does not judge its own shuffle: the pit's alerts on it are tested on their own
    # (tests/core/test_shuffle_check.py), whatever the simulator was told to shuffle like.
    alerts = tuple(e.code for e in events if isinstance(e, AlertData) and e.code not in PIT_ONLY_CODES)
    if alerts != exp.alerts:
        problems.append(f"alerts {alerts} != expected {exp.alerts}")
    if rejected != exp.rejected:
        problems.append(f"rejected={rejected}, expected {exp.rejected}")
    if isinstance(step.action, Draw | Unreadable):
        positions = [e.position for e in events if isinstance(e, CardData)]
        if positions != [exp.position]:
            problems.append(f"positions {positions} != expected [{exp.position}]")
    ends = [(e.phase, e.winner) for e in events if isinstance(e, RoundData) and e.phase in _ENDS]
    want = [(exp.round_end, exp.winner)] if exp.round_end else []
    if ends != want:
        problems.append(f"round ends {ends} != expected {want}")
    return [f"{step.action}: {p}" for p in problems]


class Loopback:
    """Real driver + reader + table for ``device``; ``check`` is the feeder's ``after`` hook.

    ``timeout`` bounds every wait for the device's answer; a step whose
    events do not come in time is reported as a problem, never waited on forever.
    """

    def __init__(
        self,
        device: SimDevice,
        rules: HouseRules,
        *,
        table_id: str = "SIM",
        timeout: float = 5.0,
        on_events: Callable[[Step, list[EventData]], None] | None = None,
    ) -> None:
        self.device = device
        self.table = Table(table_id, rules, driver=device.driver, channel=device.channel)
        self.timeout = timeout
        self.on_events = on_events
        self.problems: list[str] = []
        self.steps_checked = 0
        self._inbox: queue.Queue[tuple[float, DeviceEvent]] = queue.Queue()
        driver = create_driver(device.driver, device.channel, **device.driver_options)
        self.reader = DeviceReader(
            driver, lambda ts, ev: self._inbox.put((ts, ev)), backoff_initial=0.05, backoff_max=0.2
        )

    def start(self) -> None:
        """Start reading and wait until the driver has the device open."""
        self.reader.start()
        self._until(lambda ev: isinstance(ev, LinkUp))

    def stop(self) -> None:
        self.reader.stop()

    def check(self, step: Step) -> None:
        """Collect the validator's events for ``step`` and record any difference from the expectation."""
        events: list[EventData] = []
        rejected = False
        try:
            match step.action:
                case Draw() | Unreadable():
                    events = self._until(lambda ev: isinstance(ev, DeviceCard))
                case CutCard() if self.device.reports_cut:
                    events = self._until(lambda ev: isinstance(ev, DeviceCutCard))
                case ServerCommand(name=name, args=args):
                    outcome = self.table.request(Request(name, args=dict(args)), time.time())
                    events, rejected = outcome.events, outcome.response.status == "error"  # type: ignore[union-attr]
                case Unplug():
                    events = self._until(lambda ev: isinstance(ev, LinkDown))
                    events += self._until(lambda ev: isinstance(ev, LinkUp))
                case Pause():
                    # The daemon's ticker would have looked at the table during the pause.
                    events = self.table.judge(Tick(time.time())).events
        except TimeoutError as exc:
            self.problems.append(f"{step.action}: {exc}")
            return
        self.steps_checked += 1
        self.problems += mismatches(step, events, rejected)
        if self.on_events is not None:
            self.on_events(step, events)

    def _until(self, wanted: Callable[[DeviceEvent], bool]) -> list[EventData]:
        """Validate device events as they come, up to and including the first ``wanted`` one."""
        out: list[EventData] = []
        deadline = time.monotonic() + self.timeout
        while True:
            try:
                ts, event = self._inbox.get(timeout=max(0.0, deadline - time.monotonic()))
            except queue.Empty:
                raise TimeoutError(f"no device event within {self.timeout} s") from None
            outcome = self.table.device_event(ts, event)
            out += outcome.events
            for ack in outcome.acks:
                self.reader.acknowledge(ack)
            if wanted(event):
                return out
