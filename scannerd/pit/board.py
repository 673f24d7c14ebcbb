"""What the pit view shows: every table at a glance, folded from the tables' events.

Each table is a :class:`~scannerd.display.view.TableView`, the very fold the
dealer display and ``scannerd watch`` keep, so the pit can never tell the pit
boss something the dealer's screen does not. The board adds what only the
pit needs: each table's availability from its retained status, and a
compact tile per table. It is pure: no clock, no I/O, no threads.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from scannerd.client import Availability
from scannerd.display.view import TableView
from scannerd.events import Event

ROAD_COLUMNS = 12
"""The big road's last columns that a tile shows: enough for the current streaks, small enough for 50."""


class PitBoard:
    """Every table heard from under the prefix."""

    def __init__(self) -> None:
        self.views: dict[str, TableView] = {}
        self.availability: dict[str, Availability] = {}

    def view(self, table_id: str) -> TableView:
        if table_id not in self.views:
            self.views[table_id] = TableView(table_id)
        return self.views[table_id]

    def apply(self, event: Event) -> bool:
        """One published event; False when it was old news."""
        return self.view(event.table_id).apply(event.model_dump(mode="json"))

    def set_availability(self, table_id: str, availability: Availability) -> None:
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

    def snapshot(self) -> dict[str, Any]:
        """Every tile, in table order (a table keeps its place on the wall), and the pit's totals."""
        tiles = [self.tile(table_id) for table_id in sorted(self.views)]
        return {
            "tables": tiles,
            "counts": {
                "tables": len(tiles),
                "online": sum(t["online"] is True for t in tiles),
                "offline": sum(t["online"] is False for t in tiles),
                "misdeals": sum(a["severity"] == "misdeal" for t in tiles for a in t["alerts"]),
                "warnings": sum(a["severity"] == "warning" for t in tiles for a in t["alerts"]),
            },
        }

    def tile(self, table_id: str) -> dict[str, Any]:
        view = self.views[table_id]
        snap = view.snapshot()
        status = self.availability.get(table_id, Availability()).status
        shoe, rnd, history = snap["shoe"], snap["round"], snap["history"]
        first = max(0, history["big_columns"] - ROAD_COLUMNS)
        last = view.results[-1][1] if view.results else None
        return {
            "table_id": table_id,
            "online": None if status is None else status.state == "online",
            "link": snap["link"],
            "shoe": shoe
            and {k: shoe[k] for k in ("shoe_id", "status", "decks", "cards_dealt", "cards_remaining")},
            "round": rnd and {k: rnd[k] for k in ("round_id", "hand_no", "phase", "winner", "last_hand")},
            "dealer": view.dealer_id,
            "alerts": [
                {k: a[k] for k in ("alert_id", "code", "severity", "message")} for a in snap["alerts"]
            ],
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
