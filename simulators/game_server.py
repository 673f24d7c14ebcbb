"""A stand-in for the casino's game server, over MQTT: it runs the betting, nothing else.

It sends the dealer's game-server commands as requests on
``{prefix}/{table_id}/request/<cmd>`` and paces itself by the daemon's
round events, as the real server does: betting opens only once the daemon
has reported the previous round ``complete`` or ``void`` (or ``round_wait``
ran out: a short-dealt round never completes), and closes only after
``betting_time`` seconds. It answers no requests and settles no bets.
"""

from __future__ import annotations

import json
import threading
import time
import uuid
from typing import Any

import paho.mqtt.client as mqtt
import structlog
from paho.mqtt.enums import CallbackAPIVersion

from scannerd.house import MAX_BETTING_TIME_S
from scannerd.topics import Topics
from simulators.actions import ServerCommand

log = structlog.get_logger(__name__)

DEFAULT_PREFIX = "casino/tables"


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
    ) -> None:
        self.host, self.port = host, port
        self.topics = Topics(prefix, table_id)
        self.betting_time = betting_time
        self.round_wait = round_wait
        self.response_timeout = response_timeout
        self.round_phases: dict[str, str] = {}  # round_id -> last phase the daemon reported
        self.responses: dict[str, dict[str, Any]] = {}  # transaction -> response payload
        self._open_round: str | None = None
        self._opened_at = 0.0
        self._cond = threading.Condition()
        self._connected = threading.Event()
        self.client = mqtt.Client(
            CallbackAPIVersion.VERSION2, client_id=f"sim-game-server-{uuid.uuid4().hex[:8]}"
        )
        self.client.on_connect = self._on_connect
        self.client.on_subscribe = lambda *args: self._connected.set()
        self.client.on_message = self._on_message

    # ---------------------------------------------------------------- connection
    def start(self, timeout: float = 10.0) -> None:
        self.client.connect_async(self.host, self.port)
        self.client.loop_start()
        if not self._connected.wait(timeout):
            self.stop()
            raise ConnectionError(f"no MQTT broker answered at {self.host}:{self.port} within {timeout} s")

    def stop(self) -> None:
        self.client.disconnect()
        self.client.loop_stop()

    def _on_connect(self, client: mqtt.Client, userdata: Any, flags: Any, reason: Any, props: Any) -> None:
        if reason.is_failure:
            log.error("game server stand-in refused by broker", reason=str(reason))
            return
        client.subscribe([(self.topics.of("round"), 1), (self.topics.response("+"), 1)])

    def _on_message(self, client: mqtt.Client, userdata: Any, msg: mqtt.MQTTMessage) -> None:
        try:
            payload = json.loads(msg.payload)
        except ValueError:
            log.warning("game server stand-in got a non-JSON message", topic=msg.topic)
            return
        if not isinstance(payload, dict):
            return
        with self._cond:
            if msg.topic == self.topics.of("round") and "round_id" in payload:
                self.round_phases[str(payload["round_id"])] = str(payload.get("phase"))
            elif "transaction" in payload:
                self.responses[str(payload["transaction"])] = payload
            self._cond.notify_all()

    # ---------------------------------------------------------------- commands
    def perform(self, command: ServerCommand) -> dict[str, Any] | None:
        """Send one command when its time has come; returns the daemon's response (None if none came)."""
        if command.name == "betting_open":
            self._wait_round_over()
        elif command.name == "betting_close":
            left = self._opened_at + self.betting_time - time.monotonic()
            if left > 0:
                time.sleep(left)
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

    def request(self, name: str, **args: Any) -> dict[str, Any] | None:
        """Publish a request and wait (bounded) for its response."""
        transaction = uuid.uuid4().hex
        payload = json.dumps({"transaction": transaction, **args})
        self.client.publish(self.topics.request(name), payload, qos=1)
        with self._cond:
            self._cond.wait_for(lambda: transaction in self.responses, timeout=self.response_timeout)
            response = self.responses.pop(transaction, None)
        if response is None:
            log.warning("no response from the daemon", command=name)
        elif response.get("status") != "ok":
            log.warning("daemon refused a command", command=name, error=response.get("error"))
        return response
