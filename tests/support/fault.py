"""Helpers for the fault tests: the table's broker settings, and a log of what it stored.

The fault tests break one thing at a time around a whole daemon (the broker,
the process, the device, the disk) and then check the events against what the
shoe dealt. ``EventLog`` is a daemon listener: it sees each batch only after
it is durably in the outbox, in ``seq`` order.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Sequence
from typing import Any

from scannerd.contract.events import AlertData, CardData, EventData, RoundData
from scannerd.core.listeners import TableListener

RECONNECT_1S = {"reconnect_min_s": 1, "reconnect_max_s": 1}
"""A fault test's ``[mqtt]``: the table tries the broker again every second, so an outage spans
several tries."""

NATURAL = ("9H", "2S", "9C", "3D")
"""Player 8 against banker 5: a complete round in four cards."""


class EventLog(TableListener):
    """A daemon listener that tests can wait on."""

    def __init__(self) -> None:
        self.events: list[EventData] = []
        self._cond = threading.Condition()

    def on_events(self, events: Sequence[EventData]) -> None:
        with self._cond:
            self.events.extend(events)
            self._cond.notify_all()

    def wait(self, predicate: Callable[[EventLog], bool], what: str, timeout: float = 15.0) -> None:
        with self._cond:
            if not self._cond.wait_for(lambda: predicate(self), timeout):
                raise AssertionError(
                    f"timed out after {timeout}s waiting for {what}; last: {self.events[-5:]}"
                )

    def cards(self) -> list[str | None]:
        with self._cond:
            return [e.card for e in self.events if isinstance(e, CardData)]

    def alerts(self) -> list[str]:
        with self._cond:
            return [e.code for e in self.events if isinstance(e, AlertData) and not e.acknowledged]

    def round_ends(self) -> list[tuple[str, str | None]]:
        """(phase, void reason) of every round that ended."""
        with self._cond:
            return [
                (e.phase, e.reason)
                for e in self.events
                if isinstance(e, RoundData) and e.phase in ("complete", "void")
            ]


def deduplicated(payloads: Sequence[bytes]) -> list[dict[str, Any]]:
    """What a consumer keeps when it drops every event whose seq it has already seen."""
    kept: list[dict[str, Any]] = []
    highest = 0
    for raw in payloads:
        event = json.loads(raw)
        if event["seq"] > highest:
            kept.append(event)
            highest = event["seq"]
    return kept
