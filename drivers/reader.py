"""DeviceReader: the thread that owns a driver, and the only place that reads a clock.

It stamps its clock (``time.time()`` unless the consumer gives its own) on
every chunk as it handles it, so the pure codecs and validator see the
device's time, not their own. A consumer that
takes inputs from other threads too (the daemon: requests, ticks) passes its
lock as ``hold``: the reader then stamps, decodes and delivers each chunk,
and hands over its bytes, under that lock, so no other input falls between a
chunk's time and its events, and the order inputs are judged in is the order
of their times (what a recording replays exactly). It keeps the
link: reports a link-down when the device goes, retries with capped
exponential backoff, and reports a link-up when the device is back (the
driver's channel, a udev symlink or a ``usb:VID:PID:SERIAL`` match, is looked
up again on each open). Nothing it runs may kill it silently: exceptions go
to ``on_error``, the loop starts over, and ``alive``/``last_error`` tell a
watchdog how it is doing.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Callable
from typing import Any, Self

import structlog

from drivers.base import Driver, DriverError, DriverOperationError
from drivers.events import DeviceEvent, LinkDown, LinkUp

log = structlog.get_logger(__name__)

EventCallback = Callable[[float, DeviceEvent], None]
ReadDoneCallback = Callable[[float], None]
RxCallback = Callable[[float, bytes], None]
ErrorCallback = Callable[[BaseException], None]


class DeviceReader:
    def __init__(
        self,
        driver: Driver,
        on_event: EventCallback,
        *,
        on_read_done: ReadDoneCallback | None = None,
        on_rx: RxCallback | None = None,
        on_error: ErrorCallback | None = None,
        hold: contextlib.AbstractContextManager[Any] | None = None,
        clock: Callable[[], float] = time.time,
        read_timeout: float = 0.2,
        backoff_initial: float = 0.1,
        backoff_max: float = 5.0,
    ) -> None:
        self.driver = driver
        self.on_event = on_event
        self.on_read_done = on_read_done  # after the events of one read: a consumer may batch them
        self.on_rx = on_rx
        self.on_error = on_error
        self._hold = hold if hold is not None else contextlib.nullcontext()
        self._clock = clock  # called under ``hold``: the daemon judges a step of the wall clock there
        self.read_timeout = read_timeout
        self.backoff_initial = backoff_initial
        self.backoff_max = backoff_max
        self.last_error: BaseException | None = None
        self.errors = 0  # exceptions reported through on_error
        self.reconnects = 0  # successful opens after the first
        self.backoff = backoff_initial  # the wait before the next open
        self._link_up: bool | None = None  # None until the first open attempt
        self._opens = 0
        self._counters_failed = False  # the driver's counters raised once: said, not said again
        self._lock = threading.Lock()  # the driver is opened/closed under it; writes go through it
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    # ---------------------------------------------------------------- control

    def start(self) -> Self:
        self._stop.clear()
        self._thread = threading.Thread(target=self._run, name=f"reader-{self.driver.name}", daemon=True)
        self._thread.start()
        return self

    def stop(self, timeout: float = 2.0) -> None:
        self._stop.set()
        if self._thread:
            self._thread.join(timeout)

    @property
    def alive(self) -> bool:
        """Whether the thread runs; False before start, after stop, and (a watchdog's cue) if it died."""
        return self._thread is not None and self._thread.is_alive()

    @property
    def link_up(self) -> bool:
        return bool(self._link_up)

    # ------------------------------------------------- calls from other threads

    def write(self, data: bytes) -> None:
        """Raw bytes to the device; DriverOperationError while the link is down."""
        with self._lock:
            self.driver.write(data)

    def acknowledge(self, seq: int) -> None:
        """The event carrying ``ack=seq`` is durably stored: let the device forget it."""
        with self._lock:
            self.driver.acknowledge(seq)

    def set_alert(self, led: bool, buzzer: bool) -> bool:
        """Switch the device's alert LED and buzzer; False if it has none."""
        with self._lock:
            return self.driver.set_alert(led, buzzer)

    def counters(self) -> dict[str, int]:
        """The driver's counters and the reader's own (``errors``, ``reconnects``), for the health topic.

        A driver that cannot give its own (a plugin whose codec counts nothing) leaves them out,
        said once in the log: the health topic, and the events going out with it, never fail on it.
        """
        try:
            driver = self.driver.counters()
        except Exception as exc:
            driver = {}
            if not self._counters_failed:
                self._counters_failed = True
                log.error(
                    "the driver gives no counters: health goes without them",
                    driver=self.driver.name,
                    error=repr(exc),
                )
        return {**driver, "errors": self.errors, "reconnects": self.reconnects}

    # ------------------------------------------------------------- the thread

    def _run(self) -> None:
        try:
            self._loop()
        except BaseException as exc:  # only if the loop itself is broken: leave a trace for the watchdog
            self.last_error = exc
            raise

    def _loop(self) -> None:
        while not self._stop.is_set():
            try:
                if self._connect():
                    up_since = time.monotonic()
                    # A link that worked starts the backoff over; one that opens and fails at
                    # once (a half-dead adapter) must not spin, so its backoff keeps growing.
                    if self._pump() or time.monotonic() - up_since >= self.backoff_max:
                        self.backoff = self.backoff_initial
            except Exception as exc:  # a bug in a codec, driver or callback: report, start over
                self._report(exc)
                self._close(f"reader error: {exc!r}")
            self._stop.wait(self.backoff)
            self.backoff = min(self.backoff * 2, self.backoff_max)
        self._close("stopped")

    def _connect(self) -> bool:
        # The link is reported outside the device lock: reporting takes the consumer's lock, and a
        # consumer holding that may wait for the device lock (an ack, the alarm): the other order.
        with self._lock:
            try:
                self.driver.open()
            except DriverError as exc:
                failure: DriverError | None = exc
            else:
                failure = None
        if failure is not None:
            self.last_error = failure
            self._set_link(False, str(failure))
            return False
        self._opens += 1
        self.reconnects = max(0, self._opens - 1)
        self._set_link(True, self.driver.description)
        return True

    def _pump(self) -> bool:
        """Read until the link fails or the reader is stopped; True if any bytes came."""
        driver, read_timeout = self.driver, self.read_timeout
        received = False
        try:
            while not self._stop.is_set():
                data = driver.read(read_timeout)
                if not data:
                    continue
                received = True
                with self._hold:
                    ts = self._clock()
                    events = driver.decode(data)
                    for event in events:
                        self._deliver(ts, event)
                    if events and self.on_read_done is not None:
                        self._call(self.on_read_done, ts)
                    if self.on_rx is not None:
                        self._call(self.on_rx, ts, data)
        except DriverOperationError as exc:
            self.last_error = exc
            self._close(str(exc))
        return received

    def _deliver(self, ts: float, event: DeviceEvent) -> None:
        if not self._call(self.on_event, ts, event):
            ack = getattr(event, "ack", None)
            if ack is not None:
                self.driver.redeliver(ack)  # not taken: let the device's repeat through

    def _call(self, callback: Callable[..., None], ts: float, *args: object) -> bool:
        try:
            callback(ts, *args)
        except Exception as exc:
            self._report(exc)
            return False
        return True

    def _close(self, detail: str) -> None:
        with self._lock:
            self.driver.close()
        self._set_link(False, detail)

    def _set_link(self, up: bool, detail: str) -> None:
        if self._link_up is up:
            return
        self._link_up = up
        # A link lost is the table's trouble (warning); one let go of at stop, or coming up, is not.
        say = log.warning if not up and not self._stop.is_set() else log.info
        say("device link up" if up else "device link down", driver=self.driver.name, detail=detail)
        with self._hold:
            self._call(self.on_event, self._clock(), LinkUp(detail) if up else LinkDown(detail))

    def _report(self, exc: BaseException) -> None:
        self.last_error = exc
        self.errors += 1
        log.error("device reader error", driver=self.driver.name, error=repr(exc))
        if self.on_error is not None:
            try:
                self.on_error(exc)
            except Exception:
                log.exception("device reader on_error callback failed")
