"""Helpers for the USB driver tests: collect what a driver or reader delivers, bounded in time."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

from drivers.base import Driver
from drivers.events import DeviceEvent

Until = Callable[[list[DeviceEvent]], bool]


def pump(driver: Driver, until: Until, timeout: float = 10.0) -> list[DeviceEvent]:
    """Read and decode on this thread until ``until(events)`` holds (or the time is up)."""
    events: list[DeviceEvent] = []
    deadline = time.monotonic() + timeout
    while not until(events) and time.monotonic() < deadline:
        events += driver.decode(driver.read(0.05))
    return events


def cards(events: list[DeviceEvent]) -> list[str | None]:
    return [e.card for e in events if hasattr(e, "card")]


class Collector:
    """A DeviceReader ``on_event`` that tests can wait on."""

    def __init__(self) -> None:
        self.events: list[DeviceEvent] = []
        self._changed = threading.Condition()

    def __call__(self, ts: float, event: DeviceEvent) -> None:
        with self._changed:
            self.events.append(event)
            self._changed.notify_all()

    def wait(self, until: Until, timeout: float = 10.0) -> list[DeviceEvent]:
        with self._changed:
            self._changed.wait_for(lambda: until(self.events), timeout)
            return list(self.events)

    def kinds(self) -> list[str]:
        with self._changed:
            return [type(e).__name__ for e in self.events]
