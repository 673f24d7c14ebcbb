"""The pit view put together: the game server's client for every table, the board, and the web page.

The pit learns of tables from what they publish (their retained status,
their events), asks each one ``get_state`` once so a round already under
way, the shoe's roads and the open alerts show at once, and acknowledges
alerts with ``ack_alert`` on the table's request topic, as the game server
does. Its marks live in memory and its session ends with it: the pit keeps
no books, and on a restart it simply asks every table again.
"""

from __future__ import annotations

import sqlite3
import threading
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import structlog

from scannerd.client import Availability, ClientHealth, Gap, RequestTimeout, TableClient
from scannerd.contract.events import Event
from scannerd.contract.requests import Response
from scannerd.display.settings import DisplaySettings
from scannerd.link.mqtt_settings import MqttSettings
from scannerd.pit.board import RETURN_S, PitBoard
from scannerd.pit.metrics import PitCollector, exposition
from scannerd.pit.server import PitServer
from scannerd.settings.credentials import read_secret

log = structlog.get_logger(__name__)

STATE_TIMEOUT_S = 5.0
STATE_ASKERS = 4
"""get_state requests in flight at once: fifty tables seed in a moment; an offline one holds none up."""
TOKEN_CREDENTIAL = "pit-token"
"""Looked up in ``$CREDENTIALS_DIRECTORY`` when no token file is given."""


class Pit:
    """Every table under the settings' prefix on their broker, served as ``page`` says.

    ``page`` is the dealer display's settings, which the pit's page takes
    for the same guards: where it listens, its connection cap, its allowed
    host names and its token file (read now: an OSError names it).
    """

    def __init__(
        self,
        settings: MqttSettings,
        page: DisplaySettings,
        *,
        client_id: str | None = None,
        environ: dict[str, str] | None = None,
    ) -> None:
        token = read_secret(page.token_file, TOKEN_CREDENTIAL, environ)
        self.board = PitBoard()
        self._lock = threading.Lock()
        self._asked: set[str] = set()  # tables whose get_state is in flight or answered
        self._askers = ThreadPoolExecutor(STATE_ASKERS, thread_name_prefix="pit-state")
        self.client = TableClient.from_settings(
            settings,
            client_id=client_id or f"scannerd-pit-{uuid.uuid4().hex[:8]}",
            marks=":memory:",
            on_event=self._on_event,
            on_gap=self._on_gap,
            on_availability=self._on_availability,
            on_connection=self._on_connection,
            session_expiry_s=0,
            attended=True,
            as_pit=True,
            on_health=self._on_health,
        )
        self.server = PitServer(
            page,
            self.snapshot,
            self.acknowledge,
            self.resume,
            metrics=exposition(PitCollector(self.client.health, self._counts)),
            detail=self.detail,
            token=token.get_secret_value() if token is not None else None,
        )

    def start(self, timeout: float = 10.0) -> None:
        self.server.start()
        try:
            self.client.start(timeout)
        except BaseException:
            self.server.stop()
            raise

    def stop(self) -> None:
        self.client.stop()
        self._askers.shutdown(wait=False, cancel_futures=True)
        self.server.stop()

    @property
    def url(self) -> str:
        return self.server.url

    def snapshot(self) -> dict[str, Any]:
        """The board, and the pit's own client: a delivery that had to restart is said on the page."""
        with self._lock:
            view = self.board.snapshot(time.time())
        health = self.client.health()
        view["client"] = {"restarts": health.delivery_restarts, "last_failure": health.last_failure}
        return view

    def detail(self, table_id: str) -> dict[str, Any] | None:
        """A table's scoreboard as its dealer's screen draws it (the five roads, the ask marks, the
        counts); None for a table the pit has not heard from."""
        with self._lock:
            view = self.board.views.get(table_id)
            if view is None:
                return None
            return {
                "table_id": table_id,
                "game": view.game_view(),
                "history": view.history(),
                "recall": view.recalled(),
            }

    def _counts(self) -> dict[str, int | bool | None]:
        with self._lock:
            counts = self.board.snapshot(time.time())["counts"]
            return {"broker": self.board.broker, "online": counts["online"], "offline": counts["offline"]}

    def acknowledge(self, table_id: str, alert_id: int) -> Response:
        """The pit boss's ACK: the table's answer to ``ack_alert``; the alert leaves when its event comes."""
        return self.client.request(table_id, "ack_alert", {"alert_id": alert_id}, STATE_TIMEOUT_S)

    def resume(self, table_id: str, reason: str) -> Response:
        """The pit boss lets a suspended table deal again; the tile clears when its event comes."""
        return self.client.request(table_id, "resume", {"reason": reason}, STATE_TIMEOUT_S)

    # ------------------------------------------------------------------ the client's delivery thread

    def _on_event(self, event: Event, _db: sqlite3.Connection) -> None:
        with self._lock:
            changed = self.board.apply(event)
        self._seed(event.table_id)
        if changed:
            self.server.changed()

    def _on_connection(self, connected: bool) -> None:
        """The page says the pit lost its broker, and when it has it back; tiles are judged again after."""
        with self._lock:
            self.board.set_connection(connected, time.time())
        self.server.changed()
        if connected:  # the tables still offline once their time to come back is up are shown so
            timer = threading.Timer(RETURN_S + 1, self.server.changed)
            timer.daemon = True
            timer.start()

    def _on_availability(self, table_id: str, availability: Availability) -> None:
        with self._lock:
            self.board.set_availability(table_id, availability, time.time())
        if availability.online:
            self._seed(table_id)
        self.server.changed()

    def _on_health(self, _health: ClientHealth) -> None:
        self.server.changed()  # the header says a delivery that had to restart

    def _on_gap(self, gap: Gap) -> None:
        with self._lock:
            self.board.load_state(gap.table_id, gap.state)
        self.server.changed()

    # ------------------------------------------------------------------ seeding from get_state

    def _seed(self, table_id: str) -> None:
        with self._lock:
            if table_id in self._asked:
                return
            self._asked.add(table_id)
        self._askers.submit(self._ask_state, table_id)

    def _ask_state(self, table_id: str) -> None:
        try:
            response = self.client.request(table_id, "get_state", timeout=STATE_TIMEOUT_S)
        except RequestTimeout as exc:
            log.info(
                "table did not answer get_state; asking again when it is next heard from", error=str(exc)
            )
            with self._lock:
                self._asked.discard(table_id)
            return
        if response.status == "ok" and response.data is not None:
            with self._lock:
                self.board.load_state(table_id, response.data)
            self.server.changed()
