"""The daemon's watchers: what the ticker asks once a second, each on its own, what it should judge.

A sentry keeps what it watches (the kernel's clock, the shoe's heartbeats) and answers with the
input the table must judge, or nothing; it judges nothing itself, so the daemon keeps one place
where inputs are judged and stored, in order, under its lock. A new watcher is one more module's
class here and one more line in the ticker.
"""

from __future__ import annotations

import time

import structlog

from drivers.events import DeviceEvent, DeviceStatus, LinkDown, LinkUp
from scannerd.contract.alert_catalogue import message
from scannerd.contract.payloads import ClockHealth
from scannerd.core.inputs import Fault, FaultCleared
from scannerd.runtime import clock_sync
from scannerd.runtime.clock_sync import ClockSettings

log = structlog.get_logger(__name__)


class ClockSentry:
    """The kernel's clock state, read once a tick: ``CLOCK_UNSYNCED`` raised and cleared as it changes.

    Raised when the clock stops being synchronised or its estimated error passes the house limit,
    unless one is open already (from before a restart); cleared by the table itself, each one
    open, when it is well again: synchronised and back under a margin below the limit
    (``clock_sync.CLEAR_BELOW``), so an error sitting at the limit raises it once and does not flap.
    """

    def __init__(self, settings: ClockSettings) -> None:
        self.settings = settings
        self.health: ClockHealth | None = None
        """The last reading and the table's judgement of it: what the alert was judged on (any thread)."""

    def check(self, now: float, raised: bool) -> Fault | FaultCleared | None:
        """What the table must judge after reading the clock now; ``raised``: the alert is open."""
        reading = clock_sync.read()
        limit = self.settings.max_error_s
        was = self.health.well if self.health is not None else None
        if reading is None:
            self.health = None
            return None
        well = reading.well(limit, off=was is False or (was is None and raised))
        self.health = ClockHealth(
            synchronised=reading.synchronised,
            est_error_s=reading.est_error_s,
            max_error_s=reading.max_error_s,
            limit_s=limit,
            well=well,
        )
        if well == was or not self.settings.alert:
            return None
        if well:
            if was is not None or raised:
                log.info("the clock is well again", est_error_s=reading.est_error_s)
            return FaultCleared(now, "CLOCK_UNSYNCED") if raised else None
        log.warning(
            "the clock is not synchronised or off by more than the house limit",
            synchronised=reading.synchronised,
            est_error_s=reading.est_error_s,
            limit_s=limit,
        )
        if raised:
            return None
        return Fault(now, "CLOCK_UNSYNCED", message("CLOCK_UNSYNCED", clock=reading.say(), limit=limit))


class SilenceSentry:
    """A shoe that sends heartbeats and has gone quiet is as good as unplugged.

    The reader only sees an unplug when a read fails; a cable pulled at the shoe end of a
    USB-serial adapter never fails a read. Only devices that have shown they send heartbeats on
    this connection are judged, so a quiet Bee-Tek between rounds is not mistaken for a dead one.
    Times are monotonic: a step of the wall clock is no silence.
    """

    def __init__(self, stale_after_s: float) -> None:
        self.stale_after_s = stale_after_s
        self._heard_at = 0.0
        self._beats = False  # it has sent a heartbeat on this connection
        self._silent = False  # it has been judged disconnected for its silence

    def heard(self, event: DeviceEvent) -> LinkUp | None:
        """The device said ``event``: a link back to judge first, when it had been judged silent."""
        back = None
        if self._silent:
            self._silent = False
            if not isinstance(event, LinkDown | LinkUp):
                back = LinkUp("the shoe speaks again")
        self._heard_at = time.monotonic()
        if isinstance(event, LinkUp | LinkDown):
            self._beats = False  # a new connection must show again that it sends heartbeats
        elif isinstance(event, DeviceStatus):
            self._beats = True
        return back

    def check(self, link_up: bool) -> LinkDown | None:
        """The link judged down, once the device that sent heartbeats has been quiet too long."""
        if not (self._beats and not self._silent and link_up):
            return None
        if time.monotonic() - self._heard_at <= self.stale_after_s:
            return None
        detail = f"no heartbeat from the shoe for {self.stale_after_s:g} s"
        log.warning("device silent", detail=detail)
        self._beats = False
        self._silent = True
        return LinkDown(detail)
