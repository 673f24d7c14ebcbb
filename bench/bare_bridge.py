"""The latency baseline: the least a serial-to-MQTT bridge can do, and nothing more.

It reads a line from the port with pyserial and publishes it with paho at
QoS 1, from the same kind of process as the daemon, over the same pty and
broker. No decoding, no validation, no outbox, no acknowledgement awaited:
whatever the daemon's latency is above this figure is what checking the deal
and keeping it on disk cost.

    python -m bench.bare_bridge PORT HOST BROKER_PORT TOPIC
"""

from __future__ import annotations

import sys

import paho.mqtt.client as mqtt
import serial
from paho.mqtt.enums import CallbackAPIVersion


def main() -> None:
    port, host, broker_port, topic = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
    client = mqtt.Client(CallbackAPIVersion.VERSION2, client_id=f"bare-bridge-{topic.replace('/', '-')}")
    client.connect(host, broker_port, 60)
    client.loop_start()
    with serial.serial_for_url(port, baudrate=9600, timeout=None) as ser:
        while True:
            line = ser.readline()
            if line.strip():
                client.publish(topic, line, qos=1)


if __name__ == "__main__":
    main()
