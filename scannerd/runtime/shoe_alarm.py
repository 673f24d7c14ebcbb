"""The shoe's own alarm: its alert LED and buzzer stay on while any misdeal is unacknowledged.

A dealer looking at the cards, not at a screen, still notices a shoe that
lights up and beeps. The decision (:class:`AlarmState`) is pure: which
misdeals are open, hence whether the alarm should sound. :class:`ShoeAlarm`
is the daemon listener that applies it to the device, and only when it
changes. The framed host driver remembers the last state asked for and
restates it whenever the shoe reconnects or reports otherwise, so a shoe that
was unplugged or rebooted mid-misdeal lights up again without help from here.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

import structlog

from scannerd.contract.events import AlertData, EventData
from scannerd.core.listeners import TableListener

log = structlog.get_logger(__name__)

SetAlert = Callable[[bool, bool], bool]
"""``set_alert(led, buzzer)``: switch the device's outputs; False when it has none."""


class AlarmState:
    """Which misdeals are open; seeded from ``get_state``'s alerts after a restart."""

    def __init__(self, open_alerts: Iterable[Mapping[str, Any]] = ()) -> None:
        self.misdeals = {a["alert_id"] for a in open_alerts if a["severity"] == "misdeal"}

    @property
    def on(self) -> bool:
        return bool(self.misdeals)

    def apply(self, events: Sequence[EventData]) -> bool:
        """Take a batch of events; True when the alarm should now switch (on to off or off to on)."""
        before = self.on
        for event in events:
            if isinstance(event, AlertData) and event.severity == "misdeal":
                if event.acknowledged:
                    self.misdeals.discard(event.alert_id)
                else:
                    self.misdeals.add(event.alert_id)
        return self.on != before


class ShoeAlarm(TableListener):
    """A daemon listener driving the shoe's LED and buzzer from the open misdeals.

    ``set_alert`` should be the device reader's (it serialises writes with the
    reader thread). Call :meth:`start` once: it states the current alarm, so a
    daemon restarted with a misdeal open lights the shoe, and one restarted
    after it was acknowledged puts out a light a crash left on.
    """

    def __init__(self, set_alert: SetAlert, open_alerts: Iterable[Mapping[str, Any]] = ()) -> None:
        self._set_alert = set_alert
        self.state = AlarmState(open_alerts)
        self.supported = True  # until the device says it has no alert outputs

    def start(self) -> None:
        self._switch()

    def on_events(self, events: Sequence[EventData]) -> None:
        if self.state.apply(events):
            self._switch()

    def _switch(self) -> None:
        if not self.supported:
            return
        on = self.state.on
        try:
            self.supported = self._set_alert(on, on)
        except Exception:  # the deal goes on; the driver restates the alarm on reconnect
            log.exception("shoe alarm could not be switched", on=on)
            return
        if not self.supported:
            log.info("the shoe has no alert LED or buzzer: its alarm stays off")
        else:
            log.info("shoe alarm on" if on else "shoe alarm off", misdeals=sorted(self.state.misdeals))
