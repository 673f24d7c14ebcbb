"""``[mqtt] brokers``: the ordered list of a broker cluster's nodes, read and checked."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from scannerd.link.mqtt_settings import MqttSettings


def test_brokers_are_tried_in_order_and_a_bare_host_takes_port() -> None:
    s = MqttSettings(brokers=["mq1.casino:8883", "mq2.casino", "[fd00::3]:8884"], port=8883)
    assert s.endpoints() == [("mq1.casino", 8883), ("mq2.casino", 8883), ("fd00::3", 8884)]
    assert MqttSettings(host="one", port=1884).endpoints() == [("one", 1884)]


@pytest.mark.parametrize("entry", ["mq1:0", "mq1:http", "mq1:70000", ":1883", "[fd00::3", "a b:1883"])
def test_a_broker_that_is_not_host_port_is_refused_in_words(entry: str) -> None:
    with pytest.raises(ValidationError, match="broker"):
        MqttSettings(brokers=[entry])


def test_host_beside_brokers_is_a_warning_not_silence() -> None:
    s = MqttSettings(host="old", brokers=["mq1:1883"])
    assert s.endpoints() == [("mq1", 1883)]
    assert any("host is not used" in w for w in s.warnings({}))
