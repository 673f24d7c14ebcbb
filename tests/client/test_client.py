"""The game-server client library against a real Mosquitto and a real table publisher."""

from __future__ import annotations

import itertools
import json
import re
import sqlite3
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import paho.mqtt.client as mqtt
import pytest

from scannerd.client import Availability, Forged, Gap, ProtocolRefused, RequestTimeout, TableClient
from scannerd.contract.events import Event
from scannerd.contract.payloads import DevicePayload, StatusPayload
from scannerd.contract.requests import Response
from scannerd.contract.topics import EVENT_KINDS
from scannerd.link.mqtt_settings import MqttSettings
from scannerd.link.publisher import Publisher
from tests.link.test_tls import passwords
from tests.support.broker import (
    Broker,
    GameServer,
    answer_get_state,
    free_port,
    make_tls,
    sample_events,
    store,
    wait_until,
)
from tests.support.process import live_table

FLOOR = int(time.time() * 1000)
"""A new table's first seq: the clock in milliseconds, as docs/mqtt.md says, never 1."""
BASE = "casino/tables/T1"
VOUCHED = FLOOR + 1000
"""What the stand-in table T1 says it has published: every event these tests send under its name."""


class Recorder:
    """A caller's handlers that remember what they were told, in order."""

    def __init__(self) -> None:
        self.log: list[Any] = []
        self.lock = threading.Lock()

    def on_event(self, event: Event, db: sqlite3.Connection) -> None:
        with self.lock:
            self.log.append(event)

    def on_gap(self, gap: Gap) -> None:
        with self.lock:
            self.log.append(gap)

    def events(self) -> list[Event]:
        with self.lock:
            return [e for e in self.log if not isinstance(e, Gap)]


@pytest.fixture
def make_client(tmp_path: Path, mosquitto: Broker):
    made: list[TableClient] = []

    def make(recorder: Recorder, **kwargs: Any) -> TableClient:
        kwargs.setdefault("client_id", "game-server")
        kwargs.setdefault("marks", tmp_path / "marks.sqlite3")
        client = TableClient(
            mosquitto.host, mosquitto.port, on_event=recorder.on_event, on_gap=recorder.on_gap, **kwargs
        )
        client.start()
        made.append(client)
        return client

    yield make
    for client in made:
        client.stop()


def settings(broker: Broker) -> MqttSettings:
    return MqttSettings(host=broker.host, port=broker.port, reconnect_min_s=1, reconnect_max_s=1)


def online(broker: Broker, base: str = BASE) -> None:
    """Wait until the table says online: its request subscription is made by then."""
    watcher = GameServer(broker, [f"{base}/status"])
    watcher.wait_online(base)
    watcher.close()


@pytest.fixture
def table(mosquitto: Broker, make_publisher: Callable[..., Publisher]) -> Publisher:
    """Table T1, answering get_state: the client takes a table's first event only on its word."""
    pub = make_publisher(settings(mosquitto), on_request=answer_get_state(VOUCHED))
    online(mosquitto)
    return pub


def publish(raw: GameServer, events: list[Event]) -> None:
    """Publish as the table does, repeats included: a repeat is what a reconnect gives a consumer."""
    for event in events:
        raw.request(f"casino/tables/{event.table_id}/{event.kind}", event.model_dump(mode="json"))


def test_events_arrive_as_models_once_and_in_order(make_client, table):
    recorder = Recorder()
    client = make_client(recorder)
    pub = table
    events = sample_events(FLOOR, 40)
    for i in range(0, 40, 4):
        store(pub, events[i : i + 4])
    assert pub.flush(20)
    wait_until(lambda: len(recorder.events()) >= 40, 20, "40 events")
    assert recorder.events() == events  # the contract's models, equal field by field
    assert client.high_water("T1") == FLOOR + 39


def test_repeats_and_foreign_messages_are_dropped_and_good_events_still_come(mosquitto, make_client, table):
    recorder = Recorder()
    client = make_client(recorder)
    raw = GameServer(mosquitto, ["unused/topic"])
    events = sample_events(FLOOR, 15)
    try:
        publish(raw, events[:10])
        publish(raw, events[5:10])  # sent again after a reconnect
        raw.request(f"{BASE}/card", b"not json")
        raw.request(f"{BASE}/card", {"seq": FLOOR + 10, "kind": "card"})  # not a card event
        raw.request(f"{BASE}/round", events[10].model_dump(mode="json"))  # a card on the round topic
        publish(raw, events[10:])
        wait_until(lambda: client.high_water("T1") == FLOOR + 14, 20, "the last event")
    finally:
        raw.close()
    assert recorder.events() == events
    assert not any(isinstance(e, Gap) for e in recorder.log)


def test_two_events_the_broker_swapped_are_delivered_in_order_not_as_a_gap(mosquitto, make_client, table):
    """Mosquitto was seen to do this to a consumer catching up on a resumed session."""
    recorder = Recorder()
    client = make_client(recorder)
    raw = GameServer(mosquitto, ["unused/topic"])
    events = sample_events(FLOOR, 6)
    try:
        publish(raw, [events[0], events[1], events[3], events[2], events[5], events[4]])
        wait_until(lambda: client.high_water("T1") == FLOOR + 5, 20, "the last event")
    finally:
        raw.close()
    assert recorder.log == events  # no Gap among them


def test_a_gap_resynchronises_with_get_state_and_tells_the_caller_first(
    mosquitto, make_client, make_publisher
):
    make_publisher(settings(mosquitto), on_request=answer_get_state(FLOOR + 7))
    recorder = Recorder()
    make_client(recorder)
    raw = GameServer(mosquitto, [f"{BASE}/status"])
    events = sample_events(FLOOR, 8)
    try:
        raw.wait_online(BASE)
        publish(raw, events[:3] + events[6:])  # events 3 to 5 lost (a broker that lost its store)
        wait_until(lambda: len(recorder.log) >= 6, 20, "the events and the gap")
    finally:
        raw.close()
    gap = recorder.log[3]
    assert isinstance(gap, Gap)
    assert (gap.table_id, gap.expected, gap.received) == ("T1", FLOOR + 3, FLOOR + 6)
    assert gap.state["seq"] == FLOOR + 7
    assert recorder.log[:3] + recorder.log[4:] == events[:3] + events[6:]


def test_request_returns_the_tables_answer_or_a_clear_timeout(mosquitto, make_client, make_publisher):
    make_publisher(settings(mosquitto), on_request=answer_get_state(FLOOR))
    client = make_client(Recorder())
    online(mosquitto)
    response = client.request("T1", "get_state", timeout=10)
    assert response.status == "ok" and response.data is not None and response.data["seq"] == FLOOR
    assert isinstance(response.transaction, str) and response.transaction.startswith("game-server-")
    with pytest.raises(RequestTimeout, match=r"no response from table T9 to get_state within 0.3 s"):
        client.request("T9", "get_state", timeout=0.3)
    with pytest.raises(ValueError, match="cannot be a topic level"):
        client.request("T1/#", "get_state")


def test_each_tables_availability_is_kept_as_state(mosquitto, make_client, make_publisher):
    heard: list[tuple[str, bool]] = []
    told: list[Availability] = []

    def on_availability(table: str, a: Availability) -> None:
        heard.append((table, a.online))
        told.append(a)

    client = make_client(Recorder(), on_availability=on_availability)
    pub = make_publisher(settings(mosquitto).model_copy(update={"health_interval_s": 0.2}))
    pub.set_device(DevicePayload(driver="framed", channel="/dev/shoe-1", link="up"))
    wait_until(lambda: client.availability("T1").device is not None, 10, "the device")
    time.sleep(1)  # five restatements of the same status and device: none is a change
    assert all(a != b for a, b in itertools.pairwise(told)), told
    availability = client.availability("T1")
    assert availability.online and availability.status is not None
    assert availability.status.table_id == "T1"
    assert availability.device is not None and availability.device.link == "up"
    pub.stop()
    wait_until(lambda: not client.availability("T1").online, 10, "offline")
    assert ("T1", True) in heard and heard[-1] == ("T1", False)
    assert list(client.known_tables()) == ["T1"]


def test_a_broker_restart_mid_stream_loses_and_repeats_nothing(tmp_path, make_broker, make_publisher):
    broker = make_broker(persistence=True)
    recorder = Recorder()
    client = TableClient(
        broker.host, broker.port, client_id="gs", marks=tmp_path / "m.sqlite3", on_event=recorder.on_event
    )
    client.start()
    pub = make_publisher(settings(broker), on_request=answer_get_state(VOUCHED))
    events = sample_events(FLOOR, 60)
    try:
        store(pub, events[:30])
        wait_until(lambda: len(recorder.events()) >= 10, 20, "the first events")
        broker.restart()  # what it had queued for us, and our session, are on its disk
        store(pub, events[30:])
        wait_until(lambda: client.high_water("T1") == FLOOR + 59, 30, "the last event")
    finally:
        client.stop()
    assert recorder.events() == events


def test_more_tables_than_the_brokers_window_all_get_their_availability_told(mosquitto, make_client):
    """Mosquitto sends at most 20 unacknowledged messages: each must be acknowledged once told."""
    raw = GameServer(mosquitto, ["unused/topic"])
    for n in range(40):
        status = StatusPayload(state="online", version="0.1.0", table_id=f"T{n}")
        raw.request(f"casino/tables/T{n}/status", status.model_dump(mode="json"), retain=True)
    raw.close()
    heard: set[str] = set()
    client = make_client(Recorder(), on_availability=lambda table, a: heard.add(table))
    wait_until(lambda: len(heard) == 40, 20, "every table's status told")
    assert len(client.known_tables()) == 40


def test_a_handler_that_fails_gets_the_same_event_again_and_nothing_is_skipped(mosquitto, tmp_path, table):
    got: list[int] = []
    failures = [FLOOR + 2]

    def on_event(event: Event, db: sqlite3.Connection) -> None:
        db.execute("CREATE TABLE IF NOT EXISTS seen (seq INTEGER)")
        db.execute("INSERT INTO seen VALUES (?)", (event.seq,))
        if event.seq in failures:
            failures.remove(event.seq)
            raise RuntimeError("the ledger is busy")
        got.append(event.seq)

    client = TableClient(
        mosquitto.host, mosquitto.port, client_id="gs", marks=tmp_path / "m.sqlite3", on_event=on_event
    )
    client.start()
    raw = GameServer(mosquitto, ["unused/topic"])
    try:
        publish(raw, sample_events(FLOOR, 5))
        wait_until(lambda: client.high_water("T1") == FLOOR + 4, 20, "the last event")
    finally:
        raw.close()
        client.stop()
    assert got == list(range(FLOOR, FLOOR + 5))
    with sqlite3.connect(tmp_path / "m.sqlite3") as db:  # the failed try's write was rolled back
        assert [s for (s,) in db.execute("SELECT seq FROM seen")] == got


def test_without_a_broker_start_fails_clearly(tmp_path):
    client = TableClient("127.0.0.1", 1, client_id="gs", marks=tmp_path / "m.sqlite3", on_event=print)
    with pytest.raises(ConnectionError, match=r"no MQTT broker answered at 127\.0\.0\.1:1 "):
        client.start(timeout=1.0)


def test_a_broker_that_refuses_the_version_is_named_in_the_start_error_not_as_absent(embedded_broker):
    """The broker answered: "no broker answered" would send whoever reads it looking for a broker."""
    client = TableClient(
        embedded_broker.host, embedded_broker.port, client_id="gs", marks=":memory:", on_event=print
    )
    where = re.escape(f"broker {embedded_broker.host}:{embedded_broker.port}")
    with pytest.raises(ConnectionError, match=rf"^{where} refused MQTT 5: Unsupported protocol version$"):
        client.start(timeout=2.0)


def test_attended_a_refused_version_is_not_retried_and_says_which(embedded_broker):
    client = TableClient(
        embedded_broker.host, embedded_broker.port, client_id="pit", marks=":memory:", on_event=print,
        attended=True,
    )  # fmt: skip
    began = time.monotonic()
    with pytest.raises(ProtocolRefused) as refused:
        client.start(timeout=60)
    assert time.monotonic() - began < 30  # told by the broker's answer, not by the wait running out
    assert refused.value.version == "5" and client.refused.is_set()


def test_unwaited_a_refusal_that_comes_before_start_returns_is_read_not_raised(embedded_broker):
    """A watch's start must not throw the refusal it reads later: that was a traceback, not a line."""
    client = TableClient(
        embedded_broker.host, embedded_broker.port, client_id="pit", marks=":memory:", on_event=print,
        attended=True,
    )  # fmt: skip
    loop_start = client._client.loop_start

    def refused_before_start_returns() -> mqtt.MQTTErrorCode:
        started = loop_start()
        assert client.refused.wait(20), "the broker's refusal"
        return started

    client._client.loop_start = refused_before_start_returns  # type: ignore[method-assign]
    try:
        client.start(timeout=None)
        assert isinstance(client.refusal, ProtocolRefused)
    finally:
        client.stop()


def test_a_retained_event_is_not_taken_for_the_stream(mosquitto, make_client, table):
    raw = GameServer(mosquitto, ["unused/topic"])
    shoe = next(e for e in sample_events(FLOOR, 4) if e.kind == "shoe")
    raw.request(f"{BASE}/shoe", json.dumps(shoe.model_dump(mode="json")), retain=True)
    recorder = Recorder()
    client = make_client(recorder)
    publish(raw, sample_events(FLOOR + 10, 2))
    wait_until(lambda: client.high_water("T1") == FLOOR + 11, 20, "the live events")
    raw.close()
    assert [e.seq for e in recorder.events()] == [FLOOR + 10, FLOOR + 11]


def test_tls_with_a_client_certificate_and_a_broker_we_do_not_trust_refused(tmp_path, make_broker):
    tls = make_tls(tmp_path / "tls", clients=("gameserver",))
    broker = make_broker(tls=tls)
    cert, key = tls.client("gameserver")

    def client(host: str, ca: Path) -> TableClient:
        return TableClient(
            host, broker.port, client_id="gs", marks=":memory:", on_event=print,
            tls_ca=str(ca), tls_cert=str(cert), tls_key=str(key),
        )  # fmt: skip

    good = client("localhost", tls.ca)
    good.start()
    assert good.connected
    good.stop()
    with pytest.raises(ConnectionError, match="no MQTT broker answered"):
        client("localhost", tls.dir / "stranger-ca.crt").start(timeout=2)


def test_a_client_started_before_its_broker_tells_each_connection_made_and_lost(tmp_path):
    """A screen says whether it is live: the broker comes up late, restarts, and each change is told."""
    broker = Broker(tmp_path / "broker")  # not started yet
    told: list[object] = []
    client = TableClient(
        broker.host, broker.port, client_id="gs", marks=":memory:", on_event=print,
        on_connection=told.append, on_availability=lambda table, a: told.append((table, a.online)),
    )  # fmt: skip
    began = time.monotonic()
    client.start(timeout=None)  # returns at once, and keeps trying
    try:
        assert time.monotonic() - began < 1.0 and not client.connected
        broker.start()
        raw = GameServer(broker, ["unused/topic"])
        status = StatusPayload(state="online", version="0.1.0", table_id="T1")
        raw.request(f"{BASE}/status", status.model_dump(mode="json"), retain=True)
        raw.close()
        wait_until(lambda: ("T1", True) in told, 20, "the connection and the status")
        assert told[0] is True  # the connection is told before anything that came on it
        broker.restart()
        wait_until(lambda: told.count(True) == 2, 20, "the connection made again")
        assert told[told.index(True, 1) - 1] is False  # lost in between
    finally:
        client.stop()
        broker.stop()


@pytest.mark.parametrize("protocol", ["5", "3.1.1"])
def test_a_retained_event_is_handed_over_apart_from_the_stream(mosquitto, make_client, table, protocol):
    """A live screen wants the table's last shoe at once; it is still not the stream's next event."""
    raw = GameServer(mosquitto, ["unused/topic"])
    old_shoe = next(e for e in sample_events(FLOOR - 10, 4) if e.kind == "shoe")
    raw.request(f"{BASE}/shoe", json.dumps(old_shoe.model_dump(mode="json")), retain=True)
    retained: list[Event] = []
    recorder = Recorder()
    client = make_client(recorder, on_retained=retained.append, protocol=protocol, marks=":memory:")
    wait_until(lambda: retained == [old_shoe], 10, "the retained shoe")
    live = sample_events(FLOOR, 8)
    for event in live:  # the table retains each shoe event it sends
        raw.request(f"{BASE}/{event.kind}", event.model_dump(mode="json"), retain=event.kind == "shoe")
    wait_until(lambda: client.high_water("T1") == FLOOR + 7, 20, "the live events")
    raw.close()
    assert recorder.events() == live  # a live shoe is the stream's, retained or not
    assert retained == [old_shoe]


@pytest.mark.parametrize("state_seq", [FLOOR + 5, None], ids=["state", "forgotten"])
def test_events_a_state_taken_has_are_skipped_and_the_next_comes_at_once(
    mosquitto, make_client, table, state_seq: int | None
):
    """A consumer without a lasting session missed events, then loaded get_state (or kept nothing)."""
    recorder = Recorder()
    client = make_client(recorder, marks=":memory:")
    raw = GameServer(mosquitto, ["unused/topic"])
    events = sample_events(FLOOR, 10)
    try:
        publish(raw, events[:3])
        wait_until(lambda: client.high_water("T1") == FLOOR + 2, 20, "the first events")
        if state_seq is None:
            client.forget("T1")  # the next event is its first again, checked with the table
        else:
            client.skip_to("T1", state_seq)  # the state it took includes events 3 to 5, never received
        began = time.monotonic()
        publish(raw, events[6:8])
        wait_until(lambda: client.high_water("T1") == FLOOR + 7, 20, "the events after the state")
        assert time.monotonic() - began < 2.0  # not held as if 3 to 5 were still on their way
        client.skip_to("T1", FLOOR)  # an older state moves nothing back
        publish(raw, events[3:6] + events[8:])  # the skipped ones, late, are repeats
        wait_until(lambda: client.high_water("T1") == FLOOR + 9, 20, "the last events")
    finally:
        raw.close()
    assert recorder.log == events[:3] + events[6:]  # no Gap, nothing twice


@pytest.mark.parametrize(("protocol", "share_group"), [("3.1.1", None), ("5", None), ("5", "workers")])
def test_a_tables_events_come_through_one_filter(protocol: str, share_group: str | None) -> None:
    """A broker cluster may deliver each filter of a subscription on its own (docs/mqtt.md): with a
    filter per kind, a round could overtake its card. Requests never come to the game server."""
    client = TableClient(
        "127.0.0.1",
        1,
        client_id="gs",
        marks=":memory:",
        on_event=Recorder().on_event,
        protocol=protocol,
        share_group=share_group,
        tables=["T1", "BAC-07"],
    )
    filters = [f.split("/", 2)[2] if f.startswith("$share/") else f for f, _ in client._filters()]
    for table in ("T1", "BAC-07"):
        carrying = {
            kind: [f for f in filters if mqtt.topic_matches_sub(f, f"casino/tables/{table}/{kind}")]
            for kind in EVENT_KINDS
        }
        assert {tuple(fs) for fs in carrying.values()} == {(f"casino/tables/{table}/+",)}, carrying
        assert not any(mqtt.topic_matches_sub(f, f"casino/tables/{table}/request/get_state") for f in filters)


def forge(raw: GameServer, table_id: str, seq: int) -> None:
    """A card under the table's name, published by someone else the broker lets write its topics."""
    card = {"seq": seq, "ts": time.time(), "table_id": table_id, "kind": "card", "position": "player1"}
    raw.request(f"casino/tables/{table_id}/card", card | {"card": "AS"})


def test_a_seq_no_database_can_store_is_ignored_and_every_table_goes_on(mosquitto, make_client, table):
    """seq 2**64 on an unknown table's topic: its mark could not be stored, and it was tried for ever."""
    recorder = Recorder()
    client = make_client(recorder)
    raw = GameServer(mosquitto, ["unused/topic"])
    events = sample_events(FLOOR, 53)
    try:
        forge(raw, "T9", 2**64)
        publish(raw, events)
        wait_until(lambda: client.high_water("T1") == FLOOR + 52, 20, "every event of T1")
    finally:
        raw.close()
    assert recorder.events() == events
    assert client.high_water("T9") is None


def test_a_handler_failing_for_one_table_holds_up_no_other(mosquitto, make_client, make_publisher, table):
    make_publisher(settings(mosquitto), table_id="T2", on_request=answer_get_state(VOUCHED, "T2"))
    online(mosquitto, "casino/tables/T2")
    got: list[Event] = []

    def on_event(event: Event, db: sqlite3.Connection) -> None:
        if event.table_id == "T2":
            raise sqlite3.OperationalError("the ledger of T2 is locked")
        got.append(event)

    client = TableClient(mosquitto.host, mosquitto.port, client_id="gs", marks=":memory:", on_event=on_event)
    client.start()
    raw = GameServer(mosquitto, ["unused/topic"])
    try:
        publish(raw, sample_events(FLOOR, 3, "T2"))
        publish(raw, sample_events(FLOOR, 20))
        wait_until(lambda: client.high_water("T1") == FLOOR + 19, 20, "every event of T1")
    finally:
        raw.close()
        client.stop()
    assert got == sample_events(FLOOR, 20)


@pytest.mark.parametrize("where", ["after-events", "first"])
def test_an_event_beyond_what_the_table_published_is_refused_and_the_stream_goes_on(
    mosquitto, make_client, table, where: str
):
    """A card a billion above the real seq: the mark jumped and every later real event was a repeat."""
    recorder = Recorder()
    forged: list[Forged] = []
    client = make_client(recorder, on_forged=forged.append)
    raw = GameServer(mosquitto, ["unused/topic"])
    events = sample_events(FLOOR, 30)
    try:
        if where == "after-events":
            store(table, events[:10])
            wait_until(lambda: client.high_water("T1") == FLOOR + 9, 20, "the first events")
        forge(raw, "T1", FLOOR + 10**9)
        store(table, events if where == "first" else events[10:])
        wait_until(lambda: forged != [], 30, "the forged event refused")
        wait_until(lambda: client.high_water("T1") == FLOOR + 29, 20, "every real event")
    finally:
        raw.close()
    assert recorder.log == events  # no Gap, nothing skipped
    assert [(f.table_id, f.event.seq, f.published) for f in forged] == [("T1", FLOOR + 10**9, VOUCHED)]


@pytest.mark.timeout(120)
def test_a_gap_under_load_is_resynchronised_with_the_tables_state(make_client, table):
    """About 20 events a second: the events held for the gap filled the broker's window of
    unacknowledged messages, and the table's answer queued behind them until it timed out."""
    recorder = Recorder()
    client = make_client(recorder)
    events = sample_events(FLOOR, 240)
    sent = events[:20] + events[23:]  # 20 to 22 lost upstream
    stop = threading.Event()

    def flood() -> None:
        for event in sent:
            store(table, [event])
            if stop.wait(0.05):
                return

    dealer = threading.Thread(target=flood, daemon=True)
    dealer.start()
    try:
        wait_until(lambda: client.high_water("T1") == FLOOR + 239, 60, "the last event")
    finally:
        stop.set()
        dealer.join(10)
    gaps = [g for g in recorder.log if isinstance(g, Gap)]
    assert [(g.expected, g.received) for g in gaps] == [(FLOOR + 20, FLOOR + 23)]
    assert gaps[0].state["seq"] == VOUCHED
    assert recorder.events() == sent


def answer_once_all_ask(raw: GameServer, tables: set[str], stop: threading.Event) -> None:
    """A stand-in for many tables that answers get_state only while every one of them is asking.

    A client that resynchronises one table at a time never gets an answer from it."""
    answered: set[str] = set()
    while not stop.wait(0.05):
        asking = {
            json.loads(m.payload)["transaction"]: m.topic.split("/")[2]
            for m in raw.messages("/request/get_state")
        }
        asking = {tx: t for tx, t in asking.items() if tx not in answered}
        if set(asking.values()) != tables:
            continue
        for tx, t in asking.items():
            state = {"table_id": t, "seq": VOUCHED, "shoe": None, "round": None, "alerts": []}
            response = Response(command="get_state", status="ok", transaction=tx, data=state)
            raw.client.publish(f"casino/tables/{t}/response/get_state", response.model_dump_json(), qos=1)
            answered.add(tx)


@pytest.mark.timeout(120)
def test_gaps_in_many_tables_are_resynchronised_together(mosquitto, make_client):
    """A pit paused under 50 tables resynchronised them one at a time, 5 s each, every one timing out."""
    tables = {f"T{n}" for n in range(12)}
    recorder = Recorder()
    make_client(recorder)
    raw = GameServer(mosquitto, ["casino/tables/+/request/get_state"])
    stop = threading.Event()
    tables_thread = threading.Thread(target=answer_once_all_ask, args=(raw, tables, stop), daemon=True)
    tables_thread.start()
    try:
        for t in sorted(tables):
            publish(raw, sample_events(FLOOR, 3, t))
        wait_until(lambda: len(recorder.events()) == 3 * len(tables), 30, "the events before the gaps")
        for t in sorted(tables):
            publish(raw, sample_events(FLOOR + 6, 2, t))  # 3 to 5 lost upstream
        wait_until(
            lambda: len([g for g in recorder.log if isinstance(g, Gap)]) == len(tables), 90, "the gaps"
        )
        wait_until(lambda: len(recorder.events()) == 5 * len(tables), 20, "every event")
    finally:
        stop.set()
        tables_thread.join(10)
        raw.close()
    gaps = [g for g in recorder.log if isinstance(g, Gap)]
    assert {(g.table_id, g.expected, g.received, g.state["seq"]) for g in gaps} == {
        (t, FLOOR + 3, FLOOR + 6, VOUCHED) for t in tables
    }


def test_from_settings_connects_to_the_brokers_in_order_and_fails_over(tmp_path, make_broker, make_publisher):
    """``[mqtt] brokers`` was ignored: the client went to host and port (here, nothing listens)."""
    first, second = make_broker(), make_broker()
    cluster = MqttSettings(
        host="127.0.0.1",
        port=free_port(),
        brokers=[f"{b.host}:{b.port}" for b in (first, second)],
        reconnect_min_s=1,
        reconnect_max_s=1,
    )
    pub = make_publisher(cluster, on_request=answer_get_state(VOUCHED))
    recorder = Recorder()
    client = TableClient.from_settings(cluster, client_id="gs", marks=":memory:", on_event=recorder.on_event)
    client.start()
    events = sample_events(FLOOR, 10)
    try:
        store(pub, events[:5])
        wait_until(lambda: client.high_water("T1") == FLOOR + 4, 20, "the events through the first broker")
        first.stop()
        wait_until(lambda: client.connected and client.port == second.port and pub.connected, 30, "failover")
        online(second)
        store(pub, events[5:])
        wait_until(lambda: client.high_water("T1") == FLOOR + 9, 20, "the events through the second broker")
    finally:
        client.stop()
    assert recorder.events() == events


@pytest.mark.timeout(120)
def test_a_request_to_a_killed_table_is_not_run_when_it_comes_back_after_the_timeout(tmp_path, mosquitto):
    """The broker queued it in the table's session and the table ran it whenever it came back."""
    with live_table(tmp_path, mosquitto) as table:
        client = TableClient(mosquitto.host, mosquitto.port, client_id="gs", marks=":memory:", on_event=print)
        client.start()
        try:
            online(mosquitto)
            table.kill()  # SIGKILL: its session, and its subscription to requests, stay with the broker
            sent = time.time()
            with pytest.raises(RequestTimeout):
                client.request("T1", "dealer_sign_in", {"dealer_id": "D-LATE"}, timeout=1.0)
            # The broker counts expiry in whole seconds: the request is past it once two have passed.
            wait_until(lambda: time.time() > sent + 2.5, 10, "the request to expire")
            table.start()
            state = client.request("T1", "get_state", timeout=30).data
        finally:
            client.stop()
    assert state is not None and "dealer_id" not in state
    assert "D-LATE" not in table.log.read_text()


@pytest.mark.parametrize("callback", ["on_availability", "on_retained", "on_connection"])
def test_a_failing_callback_other_than_on_event_holds_up_no_other_table(
    mosquitto, make_publisher, table, callback: str
):
    """Each table's notices wait on their own, as its events do: T2's failing one stops only T2's."""
    make_publisher(settings(mosquitto), table_id="T2", on_request=answer_get_state(VOUCHED, "T2"))
    online(mosquitto, "casino/tables/T2")
    raw = GameServer(mosquitto, ["unused/topic"])
    kept = sample_events(FLOOR, 1)[0]  # the broker's retained copy of the table's last event of a kind
    raw.request(f"casino/tables/T1/{kept.kind}", kept.model_dump(mode="json"), retain=True)
    told: list[str] = []
    failing = threading.Event()
    failing.set()

    def on_availability(table_id: str, _a: Availability) -> None:
        if table_id == "T2" and failing.is_set():
            raise sqlite3.OperationalError("the screen's ledger of T2 is locked")
        told.append(table_id)

    def on_retained(event: Event) -> None:
        if failing.is_set():
            raise sqlite3.OperationalError("the retained shoe cannot be kept")
        told.append(f"retained {event.table_id}")

    def on_connection(connected: bool) -> None:
        if failing.is_set():
            raise sqlite3.OperationalError("the screen cannot say it is connected")
        told.append(f"connected {connected}")

    callbacks: dict[str, Any] = {
        "on_availability": on_availability,
        "on_retained": on_retained,
        "on_connection": on_connection,
    }
    got: list[Event] = []
    client = TableClient(
        mosquitto.host,
        mosquitto.port,
        client_id="gs",
        marks=":memory:",
        on_event=lambda event, _db: got.append(event),
        **{callback: callbacks[callback]},
    )
    client.start()
    try:
        publish(raw, sample_events(FLOOR + 1, 20))
        wait_until(lambda: client.high_water("T1") == FLOOR + 20, 20, "every event of T1, meanwhile")
        if callback == "on_availability":
            wait_until(lambda: "T1" in told, 10, "T1's availability, meanwhile")
        failing.clear()  # the caller's fault is put right: what waited is told, in order, not skipped
        expected = {"on_availability": "T2", "on_retained": "retained T1", "on_connection": "connected True"}
        wait_until(lambda: expected[callback] in told, 10, "what waited, once it can be told")
    finally:
        raw.request(f"casino/tables/T1/{kept.kind}", b"", retain=True)  # the broker keeps it no longer
        raw.close()
        client.stop()
    assert got == sample_events(FLOOR + 1, 20)
    assert client.health().delivery_restarts == 0


def test_a_delivery_that_fails_anyway_is_reported_and_started_again(mosquitto, make_client, table):
    """A handler that raises past ``Exception`` ended the delivery thread in silence: now it comes back."""
    failures = iter([SystemExit("a handler called sys.exit")])
    got: list[Event] = []
    told: list[Any] = []

    def on_event(event: Event, _db: sqlite3.Connection) -> None:
        failure = next(failures, None)
        if failure is not None:
            raise failure
        got.append(event)

    client = TableClient(
        mosquitto.host,
        mosquitto.port,
        client_id="gs",
        marks=":memory:",
        on_event=on_event,
        on_health=told.append,
    )
    client.start()
    raw = GameServer(mosquitto, ["unused/topic"])
    try:
        publish(raw, sample_events(FLOOR, 10))
        wait_until(lambda: client.high_water("T1") == FLOOR + 9, 20, "every event, after the restart")
    finally:
        raw.close()
        client.stop()
    assert got == sample_events(FLOOR, 10)  # the event that failed came again: nothing skipped
    health = client.health()
    assert (health.delivery_restarts, health.last_failure) == (1, "SystemExit: a handler called sys.exit")
    assert told and told[-1].delivery_restarts == 1


def test_a_client_that_may_not_ask_never_waits_on_the_tables_word(make_broker, tmp_path):
    """Under an ACL that forbids it every request, a viewer still takes a table's first event and goes
    on past a gap (the gap told, with no state), rather than wait for an answer that cannot come."""
    acl = tmp_path / "viewer.acl"
    acl.write_text("user T1\ntopic write casino/tables/T1/#\nuser viewer\ntopic read casino/tables/#\n")
    logins = {"T1": "pw-t1", "viewer": "pw-viewer"}
    conf = f"password_file {passwords(tmp_path / 'broker0', logins)}\nacl_file {acl}\nallow_anonymous false\n"
    broker = make_broker(extra=conf)
    recorder = Recorder()
    client = TableClient(
        broker.host,
        broker.port,
        client_id="viewer",
        marks=":memory:",
        on_event=recorder.on_event,
        on_gap=recorder.on_gap,
        username="viewer",
        password=logins["viewer"],
        ask_state=False,
    )
    client.start()
    raw = GameServer(broker, ["unused/topic"], username="T1", password=logins["T1"])
    try:
        events = sample_events(FLOOR, 10)
        publish(raw, events[:4])
        wait_until(lambda: client.high_water("T1") == FLOOR + 3, 10, "the first events, unasked")
        publish(raw, events[6:])  # 4 and 5 lost on the way
        wait_until(lambda: client.high_water("T1") == FLOOR + 9, 20, "the events past the gap")
    finally:
        raw.close()
        client.stop()
    (gap,) = [g for g in recorder.log if isinstance(g, Gap)]
    assert (gap.expected, gap.received, gap.state) == (FLOOR + 4, FLOOR + 6, {})
    assert recorder.events() == events[:4] + events[6:]
