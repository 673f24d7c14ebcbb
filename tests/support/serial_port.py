"""Helpers for the serial driver and reader tests: a callback sink and a read loop."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

from drivers.base import Codec, Driver
from drivers.events import DeviceCard, DeviceEvent, LinkDown, LinkUp
from tests.support.broker import wait_until


class Collector:
    """Receives a DeviceReader's callbacks from its thread; the test thread waits on it."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.events: list[tuple[float, DeviceEvent]] = []
        self.rx: list[tuple[float, bytes]] = []
        self.errors: list[BaseException] = []

    def on_event(self, ts: float, event: DeviceEvent) -> None:
        with self._lock:
            self.events.append((ts, event))

    def on_rx(self, ts: float, data: bytes) -> None:
        with self._lock:
            self.rx.append((ts, data))

    def on_error(self, exc: BaseException) -> None:
        with self._lock:
            self.errors.append(exc)

    def of(self, *kinds: type) -> list[DeviceEvent]:
        with self._lock:
            return [e for _, e in self.events if isinstance(e, kinds)]

    def cards(self) -> list[str | None]:
        return [e.card for e in self.of(DeviceCard)]  # type: ignore[union-attr]

    def links(self) -> list[str]:
        return ["up" if isinstance(e, LinkUp) else "down" for e in self.of(LinkUp, LinkDown)]

    def wait(self, predicate: Callable[[Collector], bool], what: str, timeout: float = 10.0) -> None:
        wait_until(lambda: predicate(self), timeout, what)


def read_events(driver: Driver, count: int, timeout: float = 10.0) -> list[DeviceEvent]:
    """Read and decode until ``count`` events came (the timeout only bounds a hang)."""
    events: list[DeviceEvent] = []
    deadline = time.monotonic() + timeout
    while len(events) < count:
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out with {events} after {timeout}s; wanted {count} events")
        data = driver.read(0.1)
        if data:
            events += driver.decode(data)
    return events


def read_until(
    driver: Driver, done: Callable[[list[DeviceEvent]], bool], timeout: float = 10.0
) -> list[DeviceEvent]:
    """Read and decode (so the driver answers the device) until ``done(events so far)``."""
    events: list[DeviceEvent] = []
    deadline = time.monotonic() + timeout
    while not done(events):
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out with {events} after {timeout}s")
        events += driver.decode(driver.read(0.05))
    return events


def feed_in_pieces(codec: Codec, data: bytes, cuts: list[int]) -> tuple[list[DeviceEvent], int, int]:
    """Feed ``data`` cut at ``cuts`` (any integers, folded into range): events and the two counters."""
    events: list[DeviceEvent] = []
    start = 0
    for end in [*sorted({c % (len(data) + 1) for c in cuts}), len(data)]:
        events += codec.feed(data[start:end])
        start = end
    return events, codec.junk_bytes, codec.bad_frames
