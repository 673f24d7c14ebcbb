"""What a broker delivers cannot stop a consumer: the pit, ``watch`` and a game server's client together.

Anyone the broker lets publish under the tables' prefix can send anything. A
card-shaped message on ``casino/tables//card`` once killed the client's
delivery thread, and with it every consumer built on ``scannerd.client``,
silently. Here the whole corpus goes to a real Mosquitto while a table deals,
and after it each consumer still follows the table; what was dropped is
counted, each kind logged once; a callback that fails waits on its own table.
"""

from __future__ import annotations

import json
import socket
import struct
import urllib.request
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import paho.mqtt.client as mqtt
import pytest
import structlog
from paho.mqtt.enums import CallbackAPIVersion

from scannerd.client import TableClient
from scannerd.commands.watch import TableWatch
from scannerd.contract.events import Event
from scannerd.contract.topics import encode_data
from scannerd.display.settings import DisplaySettings
from scannerd.link.mqtt_settings import MqttSettings
from scannerd.pit import Pit
from tests.support.broker import Broker, wait_until
from tests.support.pit import PREFIX, SimulatedPit

TABLE = "BAC-01"
LONGEST = 65535 - len(f"{PREFIX}//card")
"""The longest table level a topic can have (MQTT: 65,535 bytes in all)."""


def raw_publish(broker: Broker, topic: bytes, payload: bytes) -> None:
    """A PUBLISH no client library would send (a wildcard, a NUL, bytes that are no UTF-8), as bytes
    on the wire: MQTT 3.1.1, QoS 0. The broker may drop the connection for it; that is its answer."""

    def packet(kind: int, body: bytes) -> bytes:
        length, encoded = len(body), b""
        while True:
            byte, length = length % 128, length // 128
            encoded += bytes([byte | (0x80 if length else 0)])
            if not length:
                return bytes([kind]) + encoded + body

    def text(value: bytes) -> bytes:
        return struct.pack("!H", len(value)) + value

    connect = text(b"MQTT") + bytes([4, 0x02]) + struct.pack("!H", 30) + text(b"garbage-raw")
    with socket.create_connection((broker.host, broker.port), timeout=5) as sock:
        sock.sendall(packet(0x10, connect))
        assert sock.recv(4)[:1] == b"\x20"  # CONNACK
        sock.sendall(packet(0x30, text(topic) + payload))
        sock.sendall(packet(0xE0, b""))  # DISCONNECT


def corpus(broker: Broker, card: dict[str, Any]) -> int:
    """Publish every kind of garbage under the prefix; how many messages were sent."""
    sender = mqtt.Client(CallbackAPIVersion.VERSION2, protocol=mqtt.MQTTv311)
    sender.connect(broker.host, broker.port)
    sender.loop_start()
    sent = [
        (f"{PREFIX}//card", {**card, "table_id": ""}),  # an empty table level
        (f"{PREFIX}//status", {"state": "online", "version": "x", "table_id": ""}),
        (f"{PREFIX}/{'x' * LONGEST}/card", {**card, "table_id": "x" * LONGEST}),  # a level of 64 KiB
        (f"{PREFIX}/   /card", {**card, "table_id": "   "}),  # only spaces
        (f"{PREFIX}/ /status", {"state": "online", "version": "x", "table_id": " "}),
        (f"{PREFIX}/BAC-02/card", card),  # a table id that differs from its topic
        (f"{PREFIX}/\u202eBAC/card", {**card, "table_id": "\u202eBAC"}),  # a right-to-left override
        (f"{PREFIX}/{TABLE}/card", {"not": "an event"}),
        (f"{PREFIX}/{TABLE}/status", ["not", "a", "status"]),
    ]
    for topic, payload in sent:
        sender.publish(topic, json.dumps(payload), qos=1).wait_for_publish(10)
    sender.publish(f"{PREFIX}/{TABLE}/device", b"\xff\xfe not json", qos=1).wait_for_publish(10)
    sender.disconnect()
    sender.loop_stop()
    body = json.dumps({**card, "table_id": "+"}).encode()
    for topic in (f"{PREFIX}/+/card", f"{PREFIX}/#/card", f"{PREFIX}/T\x00/card"):
        raw_publish(broker, topic.encode(), body)
    raw_publish(broker, f"{PREFIX}/".encode() + b"\xc3\x28/card", body)  # no UTF-8
    return len(sent) + 5


class Consumers:
    """The pit, a watch of whatever table it hears first, and a game server's client, on one broker."""

    def __init__(self, broker: Broker, tmp_path: Path) -> None:
        settings = MqttSettings(host=broker.host, port=broker.port, prefix=PREFIX)
        self.events: list[Event] = []
        self.client = TableClient(
            broker.host,
            broker.port,
            client_id="game-server",
            marks=tmp_path / "marks.sqlite3",
            on_event=lambda event, _db: self.events.append(event),
            prefix=PREFIX,
        )
        self.pit = Pit(settings, DisplaySettings(listen="127.0.0.1:0"))
        self.watch = TableWatch(settings, None, get_state=True, lines=True)
        self.client.start()
        self.pit.start()
        self.watch.start()

    def seqs(self) -> tuple[int, int, int]:
        """The last seq each has of the table: the client, the pit, the watch."""
        board = self.pit.board.views.get(TABLE)
        client = max((e.seq for e in self.events if e.table_id == TABLE), default=0)
        return client, board.seq if board is not None else 0, self.watch.view.seq

    def close(self) -> None:
        self.watch.stop()
        self.pit.stop()
        self.client.stop()


@pytest.fixture
def dealt(mosquitto: Broker, tmp_path: Path) -> Iterator[tuple[SimulatedPit, Consumers]]:
    tables = SimulatedPit(mosquitto, 1)
    tables.set_online(TABLE, True)
    tables.command(TABLE, "new_shoe", shoe_id="S1")
    consumers = Consumers(mosquitto, tmp_path)
    try:
        yield tables, consumers
    finally:
        consumers.close()
        tables.close()


def served_text(url: str) -> str:
    with urllib.request.urlopen(url, timeout=10) as resp:
        return resp.read().decode()


def last_seq(tables: SimulatedPit) -> int:
    return tables.published[-1].seq


def test_the_whole_corpus_stops_no_consumer_and_each_follows_the_table(mosquitto, dealt) -> None:
    tables, consumers = dealt
    tables.deal_round(TABLE)
    wait_until(lambda: consumers.seqs() == (last_seq(tables),) * 3, 20, "every consumer on the table")
    card = next(e for e in tables.published if e.kind == "card")
    with structlog.testing.capture_logs() as logged:
        corpus(mosquitto, json.loads(encode_data(card)))
        tables.deal_round(TABLE)
        tables.deal_round(TABLE)
        wait_until(lambda: consumers.seqs() == (last_seq(tables),) * 3, 20, "every consumer after the corpus")
    assert [t["table_id"] for t in consumers.pit.snapshot()["tables"]] == [TABLE]  # no garbage table
    assert consumers.watch.table_id == TABLE
    for client in (consumers.client, consumers.pit.client):
        health = client.health()
        assert health.delivery_restarts == 0
        assert health.ignored.get("not a table's topic", 0) >= 4, health.ignored
    ignored = [line for line in logged if line["event"] == "message ignored"]
    reasons = Counter(line["reason"] for line in ignored)
    assert set(reasons.values()) == {3}, reasons  # each kind logged once per consumer, then counted
    assert all(len(line["topic"]) < 300 for line in ignored)  # a 64 KiB level is not logged whole
    scrape = served_text(consumers.pit.url + "metrics")
    assert 'scannerd_pit_messages_ignored_total{reason="not a table\'s topic"}' in scrape
    assert "scannerd_pit_delivery_restarts_total 0.0" in scrape
