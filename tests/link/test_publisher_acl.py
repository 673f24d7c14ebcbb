"""The shipped broker setup (systemd/mosquitto-scannerd.conf.example and mosquitto-acl.example) in a
real Mosquitto with password authentication: tables keep to their own topics and their own sessions."""

import json
import threading
import time
from collections.abc import Callable
from pathlib import Path

import paho.mqtt.client as mqtt
import pytest
import structlog

from scannerd.contract.requests import Request, Response
from scannerd.contract.topics import EVENT_KINDS, STATE_TOPICS
from scannerd.display.settings import DisplaySettings
from scannerd.link.mqtt_settings import MqttSettings
from scannerd.link.publisher import Publisher
from scannerd.pit.app import Pit
from tests.link.test_tls import passwords
from tests.support.broker import (
    SHIPPED_LIMITS,
    Broker,
    GameServer,
    event_seqs,
    sample_events,
    store,
    the_other_kinds,
    wait_until,
)

SYSTEMD = Path(__file__).resolve().parents[2] / "systemd"
ACL = SYSTEMD / "mosquitto-acl.example"
CONF = SYSTEMD / "mosquitto-scannerd.conf.example"
USERS = {"T1": "pw-t1", "T2": "pw-t2", "gameserver": "pw-gs", "pit": "pw-pit"}


def shipped_conf(pwfile: Path) -> str:
    """The example broker settings with this test's files, on the test broker's own listener."""
    text = CONF.read_text().replace("/etc/mosquitto/scannerd.passwd", str(pwfile))
    text = text.replace("/etc/mosquitto/scannerd.acl", str(ACL))
    # The test broker has its listener (a free port), per_listener_settings and the limits already.
    return "".join(
        line + "\n"
        for line in text.splitlines()
        if not line.startswith(("listener ", "per_listener_settings ", *SHIPPED_LIMITS))
    )


@pytest.fixture
def broker(make_broker: Callable[..., Broker], tmp_path: Path) -> Broker:
    return make_broker(extra=shipped_conf(passwords(tmp_path / "broker0", USERS)))


@pytest.fixture
def table(
    broker: Broker, make_publisher: Callable[..., Publisher], tmp_path: Path
) -> Callable[..., Publisher]:
    def make(table_id: str, user: str) -> Publisher:
        (tmp_path / user).write_text(USERS[user])
        settings = MqttSettings(
            host=broker.host,
            port=broker.port,
            username=user,
            password_file=tmp_path / user,
            reconnect_max_s=1,
        )
        pub = make_publisher(settings, table_id, on_request=answer, environ={})
        wait_until(lambda: pub.connected, 30, "connection")
        return pub

    return make


def answer(request: Request) -> Response:
    return Response(command=request.command, status="ok", transaction=request.transaction)


def game_server(broker: Broker, topics: list[str]) -> GameServer:
    return GameServer(broker, topics, username="gameserver", password=USERS["gameserver"])


def test_a_table_publishes_its_own_topics_and_answers_the_game_server(
    broker: Broker, table: Callable[..., Publisher]
) -> None:
    """Every kind of event the table publishes goes through the shipped ACL: a kind it left out
    (the dealer's, once) is refused with MQTT 5, and the refused event holds back all after it."""
    gs = game_server(broker, ["casino/tables/#"])
    pub = table("T1", "T1")
    events = [*sample_events(1, 8), *the_other_kinds(9), *sample_events(15, 1)]
    assert {e.kind for e in events} == set(EVENT_KINDS)
    store(pub, events)
    assert pub.flush(30)
    gs.wait_online("casino/tables/T1")
    gs.request("casino/tables/T1/request/get_state", {"transaction": "gs-1"})
    gs.wait_for(lambda got: any("/response/" in m.topic for m in got))
    assert event_seqs(gs.messages()) == list(range(1, 16))
    assert pub.health()["refused"] == 0
    assert gs.payloads("/response/get_state")[0]["transaction"] == "gs-1"
    gs.close()


def test_the_acl_lets_a_table_write_every_topic_it_publishes() -> None:
    """Read from the one list of the table's topics (scannerd.contract.topics), not from memory."""
    lines = {line.strip() for line in ACL.read_text().splitlines()}
    for name in (*EVENT_KINDS, *STATE_TOPICS, "response/+"):
        assert f"pattern write casino/tables/%u/{name}" in lines, name


def test_a_table_cannot_write_another_tables_topics_and_the_refusal_keeps_the_events(
    broker: Broker, table: Callable[..., Publisher]
) -> None:
    gs = game_server(broker, ["casino/tables/T2/#"])
    impostor = table("T2", "T1")  # table T2's topics, user T1: MQTT 5 PUBACK "not authorized"
    with structlog.testing.capture_logs() as logs:
        store(impostor, sample_events(1, 3, table_id="T2"))
        wait_until(lambda: impostor.health()["refused"] >= 3, 30, "the event refused at each retry")
    assert impostor.outbox.health().pending == 3  # nothing given up
    assert event_seqs(gs.messages()) == []
    # Said once, with its reason; the retries are counted (health), not logged again.
    assert [e["event"] for e in logs if e["log_level"] == "error"] == ["broker refused an event"]
    gs.close()


def test_only_the_game_server_may_send_requests(broker: Broker, table: Callable[..., Publisher]) -> None:
    gs = game_server(broker, ["casino/tables/T1/response/+", "casino/tables/T1/status"])
    table("T1", "T1")
    gs.wait_online("casino/tables/T1")
    other = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2, client_id="rogue")
    other.username_pw_set("T2", USERS["T2"])
    other.connect(broker.host, broker.port)
    other.loop_start()
    try:
        # Same-client order is kept, so once the game server's answer is in, the rogue one would be too.
        other.publish(
            "casino/tables/T1/request/new_shoe", json.dumps({"transaction": "rogue"}), qos=1
        ).wait_for_publish(10)
        gs.request("casino/tables/T1/request/get_state", {"transaction": "real"})
        gs.wait_for(lambda got: any("/response/" in m.topic for m in got))
        assert [p["transaction"] for p in gs.payloads("/response/get_state")] == ["real"]
        assert gs.payloads("/response/new_shoe") == []
    finally:
        other.disconnect()
        other.loop_stop()
        gs.close()


def test_a_table_cannot_take_another_tables_client_id(
    broker: Broker, table: Callable[..., Publisher]
) -> None:
    """T2, with its own valid password, asks for T1's client id: with ids bound to user names it
    gets a session of its own, and T1 is neither disconnected nor disturbed."""
    gs = game_server(broker, ["casino/tables/T1/#"])
    t1 = table("T1", "T1")
    store(t1, sample_events(1, 4))
    assert t1.flush(30)
    connected = threading.Event()
    intruder = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2, client_id="scannerd-T1", clean_session=False)
    intruder.username_pw_set("T2", USERS["T2"])
    intruder.on_connect = lambda *args: connected.set()
    intruder.connect(broker.host, broker.port)
    intruder.loop_start()
    try:
        assert connected.wait(10), "the intruder could not connect at all"
        intruder.publish("casino/tables/T2/status", "{}", qos=1).wait_for_publish(10)  # fully in
        store(t1, sample_events(5, 8))
        assert t1.flush(30)
        assert t1.connected and t1.health()["reconnects"] == 0, "T1 was knocked off the broker"
        gs.wait_for(lambda got: event_seqs(got)[-1:] == [12])
        assert event_seqs(gs.messages()) == list(range(1, 13))
    finally:
        intruder.disconnect()
        intruder.loop_stop()
        gs.close()


def test_the_pit_logs_in_as_its_own_user_and_leaves_the_game_server_alone(
    broker: Broker, table: Callable[..., Publisher], tmp_path: Path
) -> None:
    """Client ids are bound to user names: a pit logged in as the game server took the game
    server's connection every few seconds and ended its persistent session."""
    gs = GameServer(
        broker,
        ["casino/tables/T1/#"],
        client_id="gameserver",
        username="gameserver",
        password=USERS["gameserver"],
    )
    pub = table("T1", "T1")
    store(pub, sample_events(1, 4))
    assert pub.flush(30)
    (tmp_path / "pit-password").write_text(USERS["pit"])
    settings = MqttSettings(
        host=broker.host, port=broker.port, username="pit", password_file=tmp_path / "pit-password"
    )
    pit = Pit(settings, DisplaySettings(listen="127.0.0.1:0"))
    pit.start()
    try:
        tiles = lambda: pit.snapshot()["tables"]  # noqa: E731
        wait_until(lambda: any(t["table_id"] == "T1" and t["online"] for t in tiles()), 20, "T1 on the pit")
        assert pit.acknowledge("T1", 3).status == "ok"  # its requests reach the table
        store(pub, sample_events(5, 4))
        assert pub.flush(30)
        gs.wait_for(lambda got: event_seqs(got)[-1:] == [8])
        time.sleep(2)  # the takeovers came every couple of seconds
        assert event_seqs(gs.messages()) == list(range(1, 9))
        assert gs.connections == 1
    finally:
        pit.stop()
        gs.close()


def test_a_pit_acts_under_its_own_broker_user_and_no_one_else_can(
    broker: Broker, make_publisher: Callable[..., Publisher], tmp_path: Path
) -> None:
    """The table records as who acted the pit user its request topic names; the shipped ACL lets only
    that user write there, and only the commands a pit sends. Any other try never reaches the table."""
    heard: list[tuple[object, str | None]] = []

    def record(request: Request) -> Response:
        heard.append((request.transaction, request.pit_user))
        return answer(request)

    (tmp_path / "T1").write_text(USERS["T1"])
    settings = MqttSettings(
        host=broker.host, port=broker.port, username="T1", password_file=tmp_path / "T1", reconnect_max_s=1
    )
    pub = make_publisher(settings, "T1", on_request=record, environ={})
    wait_until(lambda: pub.connected, 30, "connection")
    gs = game_server(broker, ["casino/tables/T1/response/+"])
    # Client ids are bound to user names: the game server's own connection makes its try.
    clients = {"gameserver": gs.client}
    for user in ("pit", "T2"):
        client = clients[user] = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2, protocol=mqtt.MQTTv5)
        client.username_pw_set(user, USERS[user])
        client.connect(broker.host, broker.port)
        client.loop_start()
    base = "casino/tables/T1/request"
    try:
        tries = [
            ("pit", f"{base}/ack_alert/pit/pit", "pit-own"),
            ("pit", f"{base}/ack_alert/pit/boss", "pit-as-another-user"),
            ("pit", f"{base}/new_shoe/pit/pit", "pit-sending-what-a-pit-does-not"),
            ("gameserver", f"{base}/ack_alert/pit/pit", "game-server-as-the-pit"),
            ("T2", f"{base}/ack_alert/pit/T2", "a-table-as-a-pit"),
            ("pit", f"{base}/resume/pit/pit", "pit-resumes"),
        ]
        needs = {"ack_alert": {"alert_id": 1}, "resume": {"reason": "checked"}, "new_shoe": {}}
        for user, topic, transaction in tries:
            body = json.dumps({"transaction": transaction, **needs[topic.split("/")[4]]})
            clients[user].publish(topic, body, qos=1).wait_for_publish(10)  # the broker has judged it
        clients["pit"].publish(f"{base}/get_state/pit/pit", json.dumps({"transaction": "last"}), qos=1)
        gs.wait_for(lambda got: any(b'"last"' in m.payload for m in got))
        assert heard == [("pit-own", "pit"), ("pit-resumes", "pit"), ("last", "pit")]
    finally:
        for user in ("pit", "T2"):
            clients[user].disconnect()
            clients[user].loop_stop()
        gs.close()
