"""The example ACL (systemd/mosquitto-acl.example) in a real Mosquitto: tables keep to their own topics."""

import json
from collections.abc import Callable
from pathlib import Path

import paho.mqtt.client as mqtt
import pytest

from scannerd.mqtt_settings import MqttSettings
from scannerd.publisher import Publisher
from scannerd.requests import Request, Response
from tests.broker import Broker, GameServer, event_seqs, sample_events, wait_until
from tests.test_tls import passwords

ACL = Path(__file__).resolve().parent.parent / "systemd" / "mosquitto-acl.example"
USERS = {"T1": "pw-t1", "T2": "pw-t2", "gameserver": "pw-gs"}


@pytest.fixture
def broker(make_broker: Callable[..., Broker], tmp_path: Path) -> Broker:
    pwfile = passwords(tmp_path / "broker0", USERS)
    return make_broker(extra=f"allow_anonymous false\npassword_file {pwfile}\nacl_file {ACL}\n")


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
            reconnect_max_s=2,
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
    gs = game_server(broker, ["casino/tables/#"])
    pub = table("T1", "T1")
    pub.submit(sample_events(1, 8))
    assert pub.flush(30)
    gs.wait_online("casino/tables/T1")
    gs.request("casino/tables/T1/request/get_state", {"transaction": "gs-1"})
    gs.wait_for(lambda got: any("/response/" in m.topic for m in got))
    assert event_seqs(gs.messages()) == list(range(1, 9))
    assert gs.payloads("/response/get_state")[0]["transaction"] == "gs-1"
    gs.close()


def test_a_table_cannot_write_another_tables_topics_and_the_refusal_keeps_the_events(
    broker: Broker, table: Callable[..., Publisher]
) -> None:
    gs = game_server(broker, ["casino/tables/T2/#"])
    impostor = table("T2", "T1")  # table T2's topics, user T1: MQTT 5 PUBACK "not authorized"
    impostor.submit(sample_events(1, 3, table_id="T2"))
    wait_until(lambda: impostor.health()["refused"] >= 1, 30, "a refusal")
    assert impostor.outbox.health().pending == 3  # nothing given up
    assert event_seqs(gs.messages()) == []
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
