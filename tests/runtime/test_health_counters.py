"""The shoe's and the recorder's counters reach the game server on the health topic, and move.

A real ``scannerd run`` reads a shoe on a pty and publishes to a real
Mosquitto. Line noise on the cable (bytes that are no frame, frames that make
no sense) is counted, not logged one by one, so the health topic is the only
place anyone sees it; the good cards around the noise still go out.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import paho.mqtt.client as mqtt

from drivers.events import DeviceCard
from drivers.registry import ENTRY_POINT_GROUP
from scannerd.contract.payloads import HealthPayload
from tests.support.broker import Broker, GameServer
from tests.support.frames import beetek
from tests.support.process import live_table, log_lines, wait_shoe_open

FAST_HEALTH = {"health_interval_s": 0.2}
NOISE = b"\x07\x1b~~ line noise ~~\xff\xfe"  # a cable picking up a motor: no frame anywhere in it


def latest_health(server: GameServer) -> dict[str, Any]:
    (health,) = server.payloads("/health")[-1:] or [{}]
    return health


def health_where(server: GameServer, ok: Any) -> dict[str, Any]:
    """The first health message from now on for which ``ok(health)`` holds."""

    def found(got: list[mqtt.MQTTMessage]) -> bool:
        return any(m.topic.endswith("/health") and ok(json.loads(m.payload)) for m in got)

    server.wait_for(found, 30)
    return next(h for h in server.payloads("/health") if ok(h))


def test_line_noise_and_recorded_lines_are_counted_on_the_health_topic(
    tmp_path: Path, mosquitto: Broker
) -> None:
    record = {"dir": str(tmp_path / "rec")}
    with live_table(tmp_path, mosquitto, "beetek", mqtt=FAST_HEALTH, record=record) as table:
        server, shoe = table.server, table.port
        wait_shoe_open(server)
        quiet = health_where(server, lambda h: h.get("reader") is not None)
        HealthPayload.model_validate(quiet)  # the published payload is the contract's
        reader = quiet["reader"]
        assert (reader["junk_bytes"], reader["bad_frames"], reader["errors"]) == (0, 0, 0)
        assert reader["unknown_cards"] is None and reader["duplicates"] is None  # framed shoes only
        assert quiet["recorder"]["alive"] and quiet["recorder"]["files"] == 1

        shoe.write(beetek("9H") + NOISE + b"<Shuffle:now>\r\n" + beetek("2C"))
        server.wait_for(lambda ms: len(server.payloads("/card")) >= 2, 30)
        noisy = health_where(server, lambda h: h["reader"]["junk_bytes"] > 0)["reader"]
        assert noisy["junk_bytes"] >= len(NOISE.replace(b" ", b""))  # spaces between frames are no junk
        assert noisy["bad_frames"] == 1  # <Shuffle:now>: a frame, but of nothing this shoe says
        recorder = health_where(server, lambda h: h["recorder"]["lines"] >= 2)["recorder"]
        assert recorder["dropped"] == recorder["errors"] == 0
        table.running()
    assert [p["card"] for p in server.payloads("/card")] == ["9H", "2C"]  # the noise cost no card


def test_a_framed_shoe_adds_its_session_counters(tmp_path: Path, mosquitto: Broker) -> None:
    with live_table(tmp_path, mosquitto, mqtt=FAST_HEALTH) as table:
        server, port, shoe = table.server, table.port, table.shoe
        assert shoe is not None
        wait_shoe_open(server)
        first = health_where(server, lambda h: h.get("reader") is not None)["reader"]
        assert all(isinstance(first[k], int) for k in ("unknown_cards", "duplicates", "unsynced_drops"))
        assert latest_health(server)["recorder"] is None  # not recording
        port.write(b"\x00" + NOISE + b"\x00")  # between two frame delimiters: a frame that fails its check
        shoe.send(DeviceCard("AS"))
        server.wait_for(lambda ms: len(server.payloads("/card")) >= 1, 30)
        noisy = health_where(server, lambda h: h["reader"]["bad_frames"] > 0)["reader"]
        assert noisy["bad_frames"] == 1 and noisy["junk_bytes"] >= len(NOISE)
        assert [p["card"] for p in server.payloads("/card")] == ["AS"]


def test_a_driver_that_counts_nothing_leaves_health_and_cards_going(
    tmp_path: Path, mosquitto: Broker
) -> None:
    """A third-party driver whose codec keeps no counters, installed as a plugin: health goes out
    without the driver's counts (the reader's own are there), the log says so once, cards flow."""
    plugin = tmp_path / "plugin"
    dist = plugin / "quiet_shoe-1.0.dist-info"
    dist.mkdir(parents=True)
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: quiet-shoe\nVersion: 1.0\n")
    (dist / "entry_points.txt").write_text(f"[{ENTRY_POINT_GROUP}]\nquiet = quiet_shoe:QuietDriver\n")
    (plugin / "quiet_shoe.py").write_text(
        "from drivers.linecode import LinecodeDriver\n"
        "class Uncounted:\n"
        "    '''Decodes like the linecode codec and counts nothing.'''\n"
        "    def __init__(self, inner):\n"
        "        self._inner = inner\n"
        "    def feed(self, data):\n"
        "        return self._inner.feed(data)\n"
        "    def reset(self):\n"
        "        self._inner.reset()\n"
        "class QuietDriver(LinecodeDriver):\n"
        "    name = 'quiet'\n"
        "    def make_codec(self):\n"
        "        return Uncounted(super().make_codec())\n"
    )
    with live_table(tmp_path, mosquitto, "quiet", env={"PYTHONPATH": str(plugin)}, mqtt=FAST_HEALTH) as table:
        server, log = table.server, table.log
        wait_shoe_open(server)
        table.port.write(b"A01\r\nD12\r\n")
        server.wait_for(lambda ms: len(server.payloads("/card")) >= 2, 30)
        before = len(server.payloads("/health"))
        server.wait_for(lambda ms: len(server.payloads("/health")) >= before + 3, 30)
        reader = latest_health(server)["reader"]
        assert (reader["junk_bytes"], reader["bad_frames"], reader["errors"]) == (None, None, 0)
        assert [p["card"] for p in server.payloads("/card")] == ["AS", "QD"]
        table.running()
    said = [line for line in log_lines(log) if line["event"].startswith("the driver gives no counters")]
    assert len(said) == 1 and said[0]["driver"] == "quiet", said
