"""Simulated tables for the pit view: a real validator per table behind one MQTT connection.

Each table publishes exactly what a daemon would (the validator's events,
retained status and device, answers to requests run through the daemon's own
``parse_request``/``execute``) under its own topics, so the pit sees fifty
tables without fifty processes. The shoes are dealt from shuffled 8-deck
shoes, so every table has its own roads; some tables are offline, some have
lost their shoe, some have a misdeal or a warning open.
"""

from __future__ import annotations

import random
import threading
import time
from collections.abc import Callable
from typing import Any

import paho.mqtt.client as mqtt
from paho.mqtt.enums import CallbackAPIVersion

from scannerd.contract.events import EventData
from scannerd.contract.payloads import ArchiveHealth, ClockHealth, DevicePayload, HealthPayload, StatusPayload
from scannerd.contract.requests import RequestError, parse_request
from scannerd.contract.topics import Topics, encode
from scannerd.core.cards import ALL_CARDS
from scannerd.core.house import HouseRules
from scannerd.core.inputs import Actor, CardDrawn, Command, Fault, LinkChanged, ValidatorInput
from scannerd.core.table import execute as run_request
from tests.support.broker import START_TIMEOUT_S, Broker

PREFIX = "casino/tables"
OFFLINE = ("BAC-17", "BAC-38")
SHOE_DOWN = "BAC-24"


class SimTable:
    """One table: a validator, its clock and its topics."""

    def __init__(
        self, table_id: str, rng: random.Random, first_seq: int, rules: HouseRules | None = None
    ) -> None:
        from scannerd.core.validator import Validator

        self.table_id = table_id
        self.topics = Topics(PREFIX, table_id)
        self.validator = Validator(table_id, rules or HouseRules(burn="none"))
        self.validator.next_seq = first_seq
        self.ts = time.time() - 3600
        self.cards = [c for _ in range(8) for c in ALL_CARDS]
        rng.shuffle(self.cards)
        self.online = True
        self.link = "up"

    def feed(self, inp: ValidatorInput) -> list[EventData]:
        return self.validator.handle(inp)

    def health(self) -> HealthPayload:
        """What the table's health topic says: up for as long as its number says, a few events
        waiting at every fifth table, a clock off at every seventh; every third archives, and every
        ninth's archive is two hours behind."""
        n = int(self.table_id.rsplit("-", 1)[1])
        now = time.time()
        pending = 3 * n if n % 5 == 0 else 0
        synced = n % 7 != 0
        return HealthPayload(
            ts=now,
            table_id=self.table_id,
            connected=True,
            published=100 * n,
            pending=pending,
            in_flight=0,
            outbox_bytes=200 * pending,
            outbox_max_bytes=1 << 28,
            outbox_level="ok",
            reconnects=0,
            refused=0,
            requests=0,
            rejected_requests=0,
            errors=0,
            clock=ClockHealth(
                synchronised=synced,
                est_error_s=0.002 if synced else 16.0,
                max_error_s=0.5,
                limit_s=0.1,
                well=synced,
            ),
            archive=self.archive(n),
            started_at=now - 3600 * n,
            oldest_pending_s=4.0 * n if pending else None,
        )

    def archive(self, n: int) -> ArchiveHealth | None:
        if n % 3:
            return None
        behind = 2 if n % 9 == 0 else 0
        return ArchiveHealth(
            url=f"s3://casino-recordings/tables/{self.table_id}",
            state="retrying" if behind else "shipping",
            behind=behind,
            oldest=f"{self.table_id}-20240501T120000Z-S1.jsonl.gz" if behind else None,
            oldest_age_s=7200.0 if behind else None,
            archived=10 * n,
            errors=3 if behind else 0,
            last_error="s3://casino-recordings: cannot put ...: connection refused" if behind else None,
            alive=True,
        )

    def tick(self) -> float:
        self.ts += 1
        return self.ts


class SimulatedPit:
    """``n`` tables ``BAC-01``...; ``deal_round``/``misdeal`` change a table and publish what it published."""

    def __init__(
        self, broker: Broker, n: int = 50, seed: int = 50, houses: dict[str, HouseRules] | None = None
    ) -> None:
        """``houses``: tables of other ids and rules (a Dragon Tiger table, a long id), besides the ``n``."""
        self.rng = random.Random(seed)
        floor = int(time.time() * 1000)
        named = [(f"BAC-{i + 1:02d}", None) for i in range(n)] + list((houses or {}).items())
        self.tables = {
            table_id: SimTable(table_id, self.rng, floor + i * 10**6, rules)
            for i, (table_id, rules) in enumerate(named)
        }
        self.requests: list[tuple[str, str, dict[str, Any]]] = []  # (table, command, payload) as they came
        self.published: list[EventData] = []  # every event the tables published, in order
        self.lock = threading.Lock()
        self._subscribed = threading.Event()
        self.client = mqtt.Client(CallbackAPIVersion.VERSION2, protocol=mqtt.MQTTv311)
        # The game server's request topics, and the pits' own (a pit sends as its broker user).
        self.client.on_connect = lambda c, *a: c.subscribe(
            [(f"{PREFIX}/+/request/+", 1), (f"{PREFIX}/+/request/+/pit/+", 1)]
        )
        self.client.on_subscribe = lambda *a: self._subscribed.set()
        self.client.on_message = self._on_request
        self.client.connect(broker.host, broker.port)
        self.client.loop_start()
        if not self._subscribed.wait(START_TIMEOUT_S):
            raise AssertionError("the simulated tables could not subscribe")

    def across(self, outage: Callable[[], None]) -> None:
        """Run ``outage`` (the broker restarted, say); return once the tables take requests again."""
        self._subscribed.clear()
        outage()
        if not self._subscribed.wait(START_TIMEOUT_S * 3):
            raise AssertionError("the simulated tables did not subscribe again")

    def close(self) -> None:
        self.client.disconnect()
        self.client.loop_stop()

    # ------------------------------------------------------------------ publishing as a daemon does

    def _publish(self, table: SimTable, events: list[EventData]) -> None:
        self.published += events
        for message in table.topics.messages(events):
            self.client.publish(message.topic, message.payload, qos=1, retain=message.retain)

    def _state(self, table: SimTable) -> None:
        status = StatusPayload(
            state="online" if table.online else "offline", version="0.1.0", table_id=table.table_id
        )
        self.client.publish(table.topics.status, encode(status), qos=1, retain=True)
        device = DevicePayload(driver="framed", channel="/dev/shoe-1", link=table.link, model="SIM-SHOE")  # type: ignore[arg-type]
        self.client.publish(table.topics.device, encode(device), qos=1, retain=True).wait_for_publish(10)
        health = encode(table.health())
        self.client.publish(table.topics.health, health, qos=1, retain=True).wait_for_publish(10)

    def _on_request(self, _client: mqtt.Client, _ud: Any, msg: mqtt.MQTTMessage) -> None:
        table_id = msg.topic[len(PREFIX) + 1 :].split("/")[0]
        table = self.tables.get(table_id)
        if table is None or not table.online:
            return  # nobody there to answer
        named = table.topics.command_of(msg.topic)
        assert named is not None
        command, pit_user = named
        with self.lock:
            try:
                request = parse_request(command, msg.payload)
            except RequestError as exc:
                response, events = exc.response(), []
            else:
                self.requests.append((table_id, command, dict(request.args)))
                actor = Actor("pit", pit_user) if pit_user else Actor("gameserver", "gameserver")
                response, events = run_request(request, table.validator, table.tick(), actor)
            self._publish(table, events)
            self.client.publish(table.topics.response(command), encode(response), qos=1)

    # ------------------------------------------------------------------ what happens at the tables

    def command(self, table_id: str, name: str, **args: Any) -> None:
        table = self.tables[table_id]
        with self.lock:
            self._publish(table, table.feed(Command(table.tick(), name, args)))  # type: ignore[arg-type]

    def card(self, table_id: str, card: str | None = None) -> None:
        table = self.tables[table_id]
        with self.lock:
            code = card if card is not None else table.cards.pop()
            self._publish(table, table.feed(CardDrawn(table.tick(), code)))

    def deal_round(self, table_id: str) -> None:
        """Betting opened and closed, and the round dealt to its end, as the game server and dealer do."""
        self.command(table_id, "betting_open")
        self.command(table_id, "betting_close")
        table = self.tables[table_id]
        while (table.validator.state()["round"] or {}).get("phase") == "dealing":
            self.card(table_id)

    def fault(self, table_id: str, code: str, text: str) -> None:
        """A fault from outside the deal (the shoe's alarm): its alert, and the suspension it brings."""
        table = self.tables[table_id]
        with self.lock:
            self._publish(table, table.feed(Fault(table.tick(), code, text)))

    def set_link(self, table_id: str, up: bool) -> None:
        table = self.tables[table_id]
        with self.lock:
            table.link = "up" if up else "down"
            self._publish(table, table.feed(LinkChanged(table.tick(), up, "" if up else "unplugged")))
            self._state(table)

    def set_online(self, table_id: str, online: bool) -> None:
        table = self.tables[table_id]
        with self.lock:
            table.online = online
            self._state(table)

    def open_alerts(self, table_id: str) -> list[dict[str, Any]]:
        with self.lock:
            return list(self.tables[table_id].validator.state()["alerts"])

    def populate(self) -> None:
        """A pit in full swing: every shoe started, 0 to 45 hands in, the odd table in trouble."""
        for n, table_id in enumerate(self.tables):
            self._state(self.tables[table_id])
            self.command(table_id, "new_shoe", shoe_id=f"S-{4100 + n}")
            for _ in range(self.rng.randrange(0, 46)):
                self.deal_round(table_id)
            if n % 7 == 3:  # a card too many after the round ended: a misdeal left open
                self.card(table_id)
            elif n % 11 == 5:  # a card while betting is open: dealt too early
                self.command(table_id, "betting_open")
                self.card(table_id)
            elif n % 5 == 1:  # betting open, half a round dealt
                self.command(table_id, "betting_open")
                self.command(table_id, "betting_close")
                self.card(table_id)
                self.card(table_id)

    def trouble(self) -> None:
        """Two tables go offline and one loses its shoe, as the pit watches."""
        for table_id in OFFLINE:
            self.set_online(table_id, False)
        self.set_link(SHOE_DOWN, False)
