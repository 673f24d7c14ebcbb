"""A stand-in for the casino's game server, over MQTT: it runs the betting, nothing else.

It is built on the game server's client library (:mod:`scannerd.client`), as
a real game server would be. It sends the dealer's game-server commands as
requests and paces itself by the daemon's round events, as the real server
does: betting opens only once the daemon has reported the previous round
``complete`` or ``void`` (or ``round_wait`` ran out: a short-dealt round
never completes), and closes only after ``betting_time`` seconds. At a
squeeze table (``reveal_after``) it reveals a completed round's cards that
many seconds after the round completed, before the next command, as the
players' squeeze would end. It answers no requests and settles no bets, so
it keeps no state across runs: its marks live in memory and its session
ends with it. Given ``anchors``, it keeps the table's anchors there, as a
real game server must (docs/client.md).
"""

from __future__ import annotations

import sqlite3
import threading
import time
import uuid
from pathlib import Path
from typing import Any

import structlog

from scannerd.client import RequestTimeout, TableClient, keep_anchor
from scannerd.contract.events import AnchorEvent, Event, RoundEvent
from scannerd.contract.topics import DEFAULT_PREFIX
from scannerd.core.house import MAX_BETTING_TIME_S
from simulators.actions import ServerCommand

log = structlog.get_logger(__name__)

__all__ = ["GameServer"]


class GameServer:
    def __init__(
        self,
        host: str,
        port: int,
        table_id: str,
        *,
        prefix: str = DEFAULT_PREFIX,
        betting_time: float = 5.0,
        round_wait: float = 15.0,
        response_timeout: float = 5.0,
        anchors: Path | None = None,
        reveal_after: float | None = None,
    ) -> None:
        self.table_id = table_id
        self.anchors = anchors
        self.betting_time = betting_time
        self.round_wait = round_wait
        self.response_timeout = response_timeout
        self.reveal_after = reveal_after
        self.round_phases: dict[str, str] = {}  # round_id -> last phase the daemon reported
        self._completed_at: dict[str, float] = {}  # round_id -> when the daemon reported it complete
        self._open_round: str | None = None
        self._opened_at = 0.0
        self._cond = threading.Condition()
        self.client = TableClient(
            host,
            port,
            client_id=f"sim-game-server-{uuid.uuid4().hex[:8]}",
            marks=":memory:",
            on_event=self._on_event,
            prefix=prefix,
            tables=[table_id],
            session_expiry_s=0,
            protocol="3.1.1",  # the demo's embedded broker speaks nothing newer
        )

    # ---------------------------------------------------------------- connection
    def start(self, timeout: float = 10.0) -> None:
        self.client.start(timeout)

    def stop(self) -> None:
        self.client.stop()

    def _on_event(self, event: Event, _db: sqlite3.Connection) -> None:
        if isinstance(event, RoundEvent):
            with self._cond:
                self.round_phases[event.round_id] = event.phase
                if event.phase == "complete":
                    self._completed_at[event.round_id] = time.monotonic()
                self._cond.notify_all()
        elif isinstance(event, AnchorEvent) and self.anchors is not None:
            keep_anchor(event, self.anchors)

    # ---------------------------------------------------------------- commands
    def perform(self, command: ServerCommand) -> dict[str, Any] | None:
        """Send one command when its time has come; returns the daemon's response (None if none came)."""
        if command.name == "betting_open":
            self._wait_round_over()
        elif command.name == "betting_close":
            left = self._opened_at + self.betting_time - time.monotonic()
            if left > 0:
                time.sleep(left)
        if command.name in ("betting_open", "new_shoe"):
            self._reveal()
        args = dict(command.args)
        if command.name == "betting_open" and self.betting_time > 0:
            # The dealer's screen counts it down; a longer pause than any table's is no betting time.
            args.setdefault("betting_time_s", min(self.betting_time, MAX_BETTING_TIME_S))
        response = self.request(command.name, **args)
        if command.name == "betting_open":
            self._open_round = command.args.get("round_id")
            self._opened_at = time.monotonic()
        elif command.name == "new_shoe":
            self._open_round = None
        return response

    def _wait_round_over(self) -> None:
        round_id = self._open_round
        if round_id is None:
            return
        with self._cond:
            over = self._cond.wait_for(
                lambda: self.round_phases.get(round_id) in ("complete", "void"), timeout=self.round_wait
            )
        if not over:
            log.warning("round not reported over; opening the next anyway", round_id=round_id)

    def _reveal(self) -> None:
        """At a squeeze table, show the last round's cards once its squeeze has had its time.

        Only a round reported complete: a void or short-dealt one's cards show as the next opens.
        """
        round_id = self._open_round
        if self.reveal_after is None or round_id is None:
            return
        with self._cond:
            completed_at = self._completed_at.pop(round_id, None)
        if completed_at is None:
            return
        left = completed_at + self.reveal_after - time.monotonic()
        if left > 0:
            time.sleep(left)
        self.request("reveal", round_id=round_id)

    def request(self, name: str, **args: Any) -> dict[str, Any] | None:
        """Send a request and wait (bounded) for its response, as a dict."""
        try:
            response = self.client.request(self.table_id, name, args, self.response_timeout)
        except RequestTimeout:
            log.warning("no response from the daemon", command=name)
            return None
        if response.status != "ok":
            log.warning("daemon refused a command", command=name, error=response.error)
        return response.model_dump(mode="json")
