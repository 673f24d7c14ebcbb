"""The demo's embedded broker: MQTT 3.1.1 served by amqtt, any other version refused at once."""

from __future__ import annotations

import threading

import paho.mqtt.client as mqtt
import pytest
from paho.mqtt.enums import CallbackAPIVersion
from paho.mqtt.packettypes import PacketTypes
from paho.mqtt.properties import Properties

from scannerd.link.embedded_broker import EmbeddedBroker


def connect(broker: EmbeddedBroker, protocol: int) -> tuple[mqtt.Client, list[str], threading.Event]:
    """A client asking for ``protocol`` with the CONNECT properties a consumer sends; the broker's answers."""
    answers: list[str] = []
    answered = threading.Event()
    client = mqtt.Client(CallbackAPIVersion.VERSION2, client_id=f"v{protocol}", protocol=protocol)
    client.reconnect_delay_set(60, 60)  # one answer is what the test is about

    def on_connect(_c: mqtt.Client, _ud: object, _flags: object, reason: object, _props: object) -> None:
        answers.append(str(reason))
        answered.set()

    client.on_connect = on_connect
    if protocol == mqtt.MQTTv5:
        props = Properties(PacketTypes.CONNECT)
        props.SessionExpiryInterval = 0
        props.ReceiveMaximum = 65535
        client.connect_async(broker.host, broker.port, properties=props)
    else:
        client.connect_async(broker.host, broker.port)
    client.loop_start()
    return client, answers, answered


@pytest.mark.timeout(60)
def test_an_mqtt_5_client_is_refused_at_once_not_left_waiting(embedded_broker):
    """Its properties, read as a 3.1.1 client id's length, once left amqtt waiting for bytes."""
    client, answers, answered = connect(embedded_broker, mqtt.MQTTv5)
    try:
        assert answered.wait(30)  # amqtt alone answers only once the client gives up and hangs up
    finally:
        client.disconnect()
        client.loop_stop()
    assert answers == ["Unsupported protocol version"]


def test_an_mqtt_3_1_1_client_is_served_what_it_subscribed_to(embedded_broker):
    """The bytes read to learn the version are handed to amqtt with the rest: the session works."""
    client, answers, answered = connect(embedded_broker, mqtt.MQTTv311)
    subscribed, arrived = threading.Event(), threading.Event()
    got: list[bytes] = []
    client.on_subscribe = lambda *_args: subscribed.set()
    client.on_message = lambda _c, _ud, msg: (got.append(msg.payload), arrived.set())
    try:
        assert answered.wait(30) and answers == ["Success"]
        client.subscribe("casino/#", qos=1)
        assert subscribed.wait(30)
        client.publish("casino/tables/T1/card", b"9H", qos=1)
        assert arrived.wait(30)
    finally:
        client.disconnect()
        client.loop_stop()
    assert got == [b"9H"]
