"""The shoe's own sensors: its lid opened, a card jammed. Alerts while they last, cleared when over.

A shoe reports its lid and a jam with every heartbeat. The lid opened while a hand is dealt is how a
card is taken out or put in unseen: the hand is a misdeal, void, and the house may suspend the
table on it (``suspend_on``) until a supervisor resumes. Between hands it is a warning the dealer
clears by closing the lid. A jam is judged the same way: cards pulled out by hand mid-hand may be
any cards. When the shoe says the lid is shut again (or the jam cleared), the table acknowledges
the alert itself, as it does a fault whose cause is gone. Only a change is judged: the sensors'
state is the validator's own, saved with it, so a replay judges the same changes as the table did.
"""

from __future__ import annotations

from typing import Any

from scannerd.contract.alert_catalogue import ALERTS
from scannerd.core.inputs import FaultCleared, ShoeSensed
from scannerd.core.judges.alerts import Alerts
from scannerd.core.judges.builder import EventBuilder
from scannerd.core.judges.deal import Deal
from scannerd.core.judges.table_top import TableTop

SENSORS = (("lid_open", "SHOE_LID_OPEN"), ("jam", "SHOE_JAM"))
"""Each sensor the shoe reports, and the alert it raises while on."""


class ShoeSensors:
    """Judges the lid and a jam; its state: which of them is on (``sensors``, saved while any is)."""

    def __init__(self, events: EventBuilder, top: TableTop, deal: Deal, alerts: Alerts) -> None:
        self.events = events
        self.top = top
        self.deal = deal
        self.alerts = alerts
        self.on = {name: False for name, _ in SENSORS}

    def differs(self, lid_open: bool, jam: bool) -> bool:
        """Whether a report says anything new: only then is it an input to judge."""
        return (lid_open, jam) != (self.on["lid_open"], self.on["jam"])

    def sensed(self, inp: ShoeSensed) -> None:
        reported = {"lid_open": inp.lid_open, "jam": inp.jam}
        for name, code in SENSORS:
            if reported[name] == self.on[name]:
                continue
            self.on[name] = reported[name]
            if reported[name]:
                self._raise(inp.ts, code)
            else:
                self.alerts.fault_cleared(FaultCleared(inp.ts, code))

    def _raise(self, ts: float, code: str) -> None:
        rnd = self.top.round
        dealing = rnd is not None and rnd.phase == "dealing"
        said = ALERTS[code].case("dealing" if dealing else None)  # between hands: its usual case
        self.events.alert(
            ts, code, said.say(), None, rnd.round_id if rnd else None, said.severity, suspends=said.suspends
        )
        if dealing:
            self.deal.void_open(ts, code)

    def saved(self) -> dict[str, Any]:
        return {"sensors": dict(self.on)} if any(self.on.values()) else {}

    def restore(self, snap: dict[str, Any]) -> None:
        self.on.update(snap.get("sensors") or {})
