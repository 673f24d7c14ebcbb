"""Alerts from outside the deal, and every alert's acknowledgement.

A fault (a shoe's alarm, the outbox filling, a lost state, the clock) is raised
as an alert and decides nothing about the deal, but for a lost state, whose
round on the table nobody knows. Misdeals and warnings stay open until
acknowledged: by staff (``ack_alert``, with a PIN where the house asks one), or
by the table itself once a fault's cause is gone (``FaultCleared``). The alerts
held open are the builder's (``EventBuilder.open_alerts``): this judge keeps no
state of its own.
"""

from __future__ import annotations

from typing import Any

from scannerd.contract.alert_catalogue import FAULT_CODES
from scannerd.core.house import HouseRules
from scannerd.core.inputs import Actor, Fault, FaultCleared
from scannerd.core.judges.authority import Authority
from scannerd.core.judges.builder import EventBuilder
from scannerd.core.judges.deal import Deal
from scannerd.core.judges.judge import CommandRejected, Handler
from scannerd.core.judges.table_top import TableTop


class Alerts:
    def __init__(
        self, rules: HouseRules, events: EventBuilder, top: TableTop, deal: Deal, authority: Authority
    ) -> None:
        self.rules = rules
        self.events = events
        self.top = top
        self.deal = deal
        self.authority = authority

    def commands(self) -> dict[str, Handler]:
        return {"ack_alert": self.ack_alert}

    def fault(self, inp: Fault) -> None:
        if inp.code not in FAULT_CODES:
            raise ValueError(f"not a fault code: {inp.code!r}")
        rnd = self.top.round
        alert_id = self.events.next_seq
        self.events.alert(inp.ts, inp.code, inp.message, None, rnd.round_id if rnd else None)
        if inp.code == "STATE_LOST":
            self.deal.state_lost(alert_id)

    def fault_cleared(self, inp: FaultCleared) -> None:
        """Its cause is gone: each of the fault's open alerts is acknowledged by the table itself."""
        for alert_id in [i for i, a in self.events.open_alerts.items() if a["code"] == inp.code]:
            self.events.acknowledge(inp.ts, alert_id, {}, cleared=True)
            self.deal.acknowledged(alert_id)

    def ack_alert(self, ts: float, args: dict[str, Any], actor: Actor | None) -> None:
        alert_id = args.get("alert_id")
        if not isinstance(alert_id, int) or isinstance(alert_id, bool):
            raise CommandRejected("alert_id must be an integer")
        if alert_id not in self.events.open_alerts:
            raise CommandRejected(f"no open alert {alert_id}")
        acted = self.authority.acted(ts, actor, "pin" if self.rules.ack_needs_pin else None)
        self.events.acknowledge(ts, alert_id, acted)
        self.deal.acknowledged(alert_id)
