"""What the pit view shows: every table at a glance, folded from the tables' events.

Each table is a :class:`~scannerd.display.view.TableView`, the very fold the
dealer display and ``scannerd watch`` keep, so the pit can never tell the pit
boss something the dealer's screen does not. The board adds what only the
pit needs: each table's availability from its retained status, and a
compact tile per table, and whether the pit itself has its broker. It is
pure: no I/O, no threads, and no clock of its own (the time is handed in).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from scannerd.client import Availability
from scannerd.contract.events import Event
from scannerd.display.view import TableView

ROAD_COLUMNS = 12
"""The big road's last columns that a tile shows: enough for the current streaks, small enough for 50."""
RETURN_S = 60.0
"""After the pit has its broker back, how long a table that was online before may take to say so again.

A broker that goes down sends every table's last will (``offline``, retained)
and the tables come back with their own reconnect backoff (up to 30 s): an
``offline`` heard in that time says the broker went, not the table. Past it,
a table still offline is shown so.
"""
WILLS_S = 5.0
"""How long before the pit notices its broker gone the wills it sends as it shuts down may come."""


class PitBoard:
    """Every table heard from under the prefix."""

    def __init__(self) -> None:
        self.views: dict[str, TableView] = {}
        self.availability: dict[str, Availability] = {}
        self.broker: bool | None = None  # the pit's own connection; None before the first
        self.lost_at: float | None = None
        self.back_at: float | None = None
        self._offline_since: dict[str, float] = {}  # when each table's status last turned offline
        self._last_card: dict[str, float] = {}  # the time of each table's latest card event

    def set_connection(self, connected: bool, now: float) -> None:
        """The pit's own broker connection was made or lost at ``now`` (epoch seconds)."""
        if connected == self.broker:
            return
        if not connected:
            self.lost_at = now
        elif self.broker is False:
            self.back_at = now
        self.broker = connected

    def view(self, table_id: str) -> TableView:
        if table_id not in self.views:
            self.views[table_id] = TableView(table_id)
        return self.views[table_id]

    def apply(self, event: Event) -> bool:
        """One published event; False when it was old news."""
        applied = self.view(event.table_id).apply(event.model_dump(mode="json"))
        if applied and event.kind == "card":
            self._last_card[event.table_id] = event.ts
        return applied

    def set_availability(self, table_id: str, availability: Availability, now: float) -> None:
        """The table's retained status and device, heard at ``now``."""
        was = self.availability.get(table_id, Availability())
        if availability.status is not None and availability.status.state == "offline" and was.online:
            self._offline_since[table_id] = now
        self.availability[table_id] = availability
        if availability.device is not None:
            self.view(table_id).set_device(availability.device.model_dump(mode="json"))
        else:
            self.view(table_id)

    def load_state(self, table_id: str, state: Mapping[str, Any]) -> bool:
        """A ``get_state`` answer; ignored when events newer than it were applied meanwhile."""
        view = self.view(table_id)
        if state.get("seq", 0) < view.seq:
            return False
        view.load_state(state)
        return True

    def returning(self, now: float) -> bool:
        """Whether the tables may still be coming back after the pit got its broker back."""
        return self.broker is True and self.back_at is not None and now - self.back_at < RETURN_S

    def snapshot(self, now: float) -> dict[str, Any]:
        """Every tile, in table order (a table keeps its place on the wall), the pit's totals and broker."""
        tiles = [self.tile(table_id, now) for table_id in sorted(self.views)]
        return {
            "broker": {
                "connected": self.broker,
                "lost_at": self.lost_at,
                "back_at": self.back_at,
                "returning": self.returning(now),
            },
            "tables": tiles,
            "fleet": [self.fleet_row(table_id, now) for table_id in sorted(self.views)],
            "counts": {
                "tables": len(tiles),
                "online": sum(t["online"] is True for t in tiles),
                "offline": sum(t["online"] is False for t in tiles),
                "misdeals": sum(a["severity"] == "misdeal" for t in tiles for a in t["alerts"]),
                "warnings": sum(a["severity"] == "warning" for t in tiles for a in t["alerts"]),
            },
        }

    def fleet_row(self, table_id: str, now: float) -> dict[str, Any]:
        """The table as its operations team sees it: what its status, device and health topics say.

        The same facts the health topic carries, so the pit needs no monitoring system of its
        own; times are ages at ``now``, so a row sorts by them.
        """
        availability = self.availability.get(table_id, Availability())
        status, device, health = availability.status, availability.device, availability.health
        clock = health.clock if health is not None else None
        archive = health.archive if health is not None else None
        started = health.started_at if health is not None else None
        last_card = self._last_card.get(table_id)
        return {
            "table_id": table_id,
            "online": self.online(table_id, now),
            "version": status.version if status is not None else None,
            "uptime_s": now - started if started is not None else None,
            "link": device.link if device is not None else None,
            "device": device and " ".join(filter(None, (device.driver, device.model, device.firmware))),
            "broker": health.connected if health is not None else None,
            "pending": health.pending if health is not None else None,
            "oldest_pending_s": health.oldest_pending_s if health is not None else None,
            "outbox_level": health.outbox_level if health is not None else None,
            "archive_state": archive.state if archive is not None else None,
            "archive_behind": archive.behind if archive is not None else None,
            "archive_oldest_s": archive.oldest_age_s if archive is not None else None,
            "clock_synchronised": clock.synchronised if clock is not None else None,
            "clock_error_s": clock.est_error_s if clock is not None else None,
            "clock_well": clock.well if clock is not None else None,
            "last_card_s": now - last_card if last_card is not None else None,
            "health_s": now - health.ts if health is not None else None,
            "suspended": self.view(table_id).suspended is not None,
        }

    def online(self, table_id: str, now: float) -> bool | None:
        """The table's retained status; None (not known) where the broker's going may have said it.

        That is an ``offline`` heard from just before the pit lost its broker (the wills it sent
        as it went) until the tables' time to come back is up.
        """
        status = self.availability.get(table_id, Availability()).status
        if status is None:
            return None
        if status.state == "online":
            return True
        since = self._offline_since.get(table_id)
        with_the_broker = self.lost_at is not None and since is not None and since >= self.lost_at - WILLS_S
        return None if with_the_broker and (self.broker is False or self.returning(now)) else False

    def tile(self, table_id: str, now: float) -> dict[str, Any]:
        view = self.views[table_id]
        snap = view.snapshot()
        shoe, rnd, history = snap["shoe"], snap["round"], snap["history"]
        first = max(0, history["big_columns"] - ROAD_COLUMNS)
        last = view.results[-1][1] if view.results else None
        # Misdeals before warnings, newest first within each (the sort is stable): the tile shows the first.
        alerts = sorted(snap["alerts"], key=lambda a: a["severity"] != "misdeal")
        return {
            "table_id": table_id,
            "game": view.game.name,
            "badge": view.game.badge,
            "marks": dict(view.game.marks),
            "online": self.online(table_id, now),
            "link": snap["link"],
            "shoe": shoe
            and {k: shoe[k] for k in ("shoe_id", "status", "decks", "cards_dealt", "cards_remaining")},
            "round": rnd and {k: rnd[k] for k in ("round_id", "hand_no", "phase", "winner", "last_hand")},
            "dealer": view.dealer_id,
            "suspended": view.suspended and {k: view.suspended[k] for k in ("cause", "message", "since")},
            # As the dealer reads it (cards as Q\u2666, the hand it concerns); alert_id is for the ACK.
            "alerts": [{k: a[k] for k in ("alert_id", "code", "severity", "text", "hand")} for a in alerts],
            "last_result": last
            and {
                "winner": last.winner,
                "natural": last.natural,
                "player_pair": last.player_pair,
                "banker_pair": last.banker_pair,
            },
            "road": {
                "rows": history["rows"],
                "columns": min(history["big_columns"], ROAD_COLUMNS),
                "cells": [
                    {"col": c["col"] - first, "row": c["row"], "winner": c["winner"], "ties": c["ties"]}
                    for c in history["big"]
                    if c["col"] >= first
                ],
            },
            "counts": history["counts"],
        }
