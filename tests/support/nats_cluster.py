"""A real three-node NATS cluster with JetStream and MQTT, on loopback, for the broker-cluster tests.

What a casino runs instead of one Mosquitto: the nodes route to each other,
and MQTT sessions, QoS 1 messages and retained messages are kept in JetStream
streams replicated on every node, so a table can move to another node and
find its session there. NATS speaks MQTT 3.1.1 only.
"""

from __future__ import annotations

import shutil
import signal
import socket
import subprocess
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

import paho.mqtt.client as mqtt
from paho.mqtt.enums import CallbackAPIVersion

from tests.support.broker import free_port

NATS_SERVER = shutil.which("nats-server") or "/usr/sbin/nats-server"


@dataclass
class Node:
    name: str
    dir: Path
    client_port: int = field(default_factory=free_port)
    cluster_port: int = field(default_factory=free_port)
    mqtt_port: int = field(default_factory=free_port)
    proc: subprocess.Popen[bytes] | None = None

    host = "127.0.0.1"
    tls = None  # what tests.support.broker.GameServer asks of a broker

    @property
    def port(self) -> int:
        return self.mqtt_port

    @property
    def address(self) -> str:
        return f"{self.host}:{self.mqtt_port}"

    @property
    def log(self) -> str:
        path = self.dir / "nats.log"
        return path.read_text(errors="replace") if path.exists() else ""


class NatsCluster:
    def __init__(self, where: Path, size: int = 3) -> None:
        self.nodes = [Node(f"n{i + 1}", where / f"n{i + 1}") for i in range(size)]

    def _config(self, node: Node) -> str:
        routes = ", ".join(f"nats://127.0.0.1:{n.cluster_port}" for n in self.nodes if n is not node)
        return (
            f"server_name: {node.name}\n"
            f"listen: 127.0.0.1:{node.client_port}\n"
            f"jetstream {{ store_dir: {node.dir / 'js'} }}\n"
            f"cluster {{ name: casino, listen: 127.0.0.1:{node.cluster_port}, routes: [{routes}] }}\n"
            f"mqtt {{ listen: 127.0.0.1:{node.mqtt_port}, stream_replicas: {len(self.nodes)} }}\n"
        )

    def start(self) -> NatsCluster:
        for node in self.nodes:
            node.dir.mkdir(parents=True, exist_ok=True)
            conf = node.dir / "nats.conf"
            conf.write_text(self._config(node))
            with (node.dir / "nats.log").open("ab") as out:
                node.proc = subprocess.Popen([NATS_SERVER, "-c", str(conf)], stdout=out, stderr=out)
        deadline = time.monotonic() + 30
        for node in self.nodes:
            while not _listens(node.mqtt_port):
                if time.monotonic() > deadline or (node.proc and node.proc.poll() is not None):
                    raise RuntimeError(f"NATS node {node.name} did not start:\n{node.log[-3000:]}")
                time.sleep(0.05)
        # Ready when MQTT sessions can be kept: the first persistent subscription makes the cluster
        # create its replicated streams, which waits for a JetStream leader.
        while not all(_session_ok(node) for node in self.nodes):
            if time.monotonic() > deadline:
                raise RuntimeError("the NATS cluster keeps no MQTT session:\n" + self.nodes[0].log[-3000:])
            time.sleep(0.5)
        return self

    def kill(self, node: Node) -> None:
        """A node dies the hard way: no goodbye to its clients or its routes."""
        if node.proc is not None:
            node.proc.send_signal(signal.SIGKILL)
            node.proc.wait(10)
            node.proc = None

    def stop(self) -> None:
        for node in self.nodes:
            if node.proc is not None:
                node.proc.terminate()
                try:
                    node.proc.wait(10)
                except subprocess.TimeoutExpired:
                    node.proc.kill()
                node.proc = None


def _session_ok(node: Node) -> bool:
    """A persistent session subscribes on ``node`` within a few seconds."""
    subscribed = threading.Event()
    client = mqtt.Client(CallbackAPIVersion.VERSION2, client_id=f"probe-{node.name}", clean_session=False)
    client.on_connect = lambda c, *_: c.subscribe("probe/#", 1)
    client.on_subscribe = lambda *_: subscribed.set()
    try:
        client.connect(node.host, node.port, 10)
    except OSError:
        return False
    client.loop_start()
    try:
        return subscribed.wait(5)
    finally:
        client.disconnect()
        client.loop_stop()


def _listens(port: int) -> bool:
    try:
        socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
    except OSError:
        return False
    return True
