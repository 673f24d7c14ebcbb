"""A broker cluster's nodes in order, and the one a connection uses now.

The table and the game server's client both move to the next node after a
failure and stay on one that works rather than returning to the first: the
session lives in the cluster, not in one node, and whatever was not
acknowledged comes again, so a move loses nothing (docs/operations.md).
"""

from __future__ import annotations

from collections.abc import Sequence


class BrokerRing:
    """``[mqtt] brokers`` (or one host and port) as paho is pointed at them, one at a time."""

    def __init__(self, endpoints: Sequence[tuple[str, int]]) -> None:
        if not endpoints:
            raise ValueError("no broker to connect to")
        self.endpoints = tuple(endpoints)
        self._at = 0

    @property
    def current(self) -> tuple[str, int]:
        return self.endpoints[self._at]

    def advance(self) -> tuple[str, int] | None:
        """The next node, after a failure; None when there is no other to try."""
        if len(self.endpoints) < 2:
            return None
        self._at = (self._at + 1) % len(self.endpoints)
        return self.current

    def __str__(self) -> str:
        return ", ".join(f"{host}:{port}" for host, port in self.endpoints)
