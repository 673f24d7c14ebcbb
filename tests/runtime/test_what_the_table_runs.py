"""A table states what it runs: its software's digest, its config's, and what changed since its last start.

A real ``scannerd run`` on a pty shoe and a real Mosquitto: the retained
status says the version, whether the installed files carry a digest and the
effective configuration's digest; every recording's header says the same;
and a restart under another configuration publishes a ``config`` event
naming the changed keys, a secret by its name alone, numbered in ``seq``
with every other event and made again by a replay of the recording.
"""

from __future__ import annotations

import gzip
import json
import signal
from pathlib import Path
from typing import Any

import pytest

from scannerd.contract.events import ConfigEvent
from scannerd.contract.payloads import HealthPayload, Software, StatusPayload
from scannerd.contract.topics import EVENT_KINDS
from scannerd.recording.format import RecordingReader
from scannerd.recording.replay import replay
from scannerd.runtime import build, config_digest, daemon, software
from scannerd.runtime.config import load_config
from scannerd.runtime.software import Installed
from tests.support.broker import Broker, GameServer, assert_complete_in_order, event_seqs
from tests.support.config import write_config
from tests.support.frames import beetek
from tests.support.process import AUTO, live_table, wait_shoe_open

BASE = "casino/tables/T1"
FIRST_PASSWORD = "first-secret-7f3a"
SECOND_PASSWORD = "second-secret-c41d"


def online_status(server: GameServer, after: int = 0) -> dict[str, Any]:
    """The ``online`` status of the table's start after the first ``after`` ones."""
    server.wait_for(lambda got: len(_online(got)) > after, 30)
    return json.loads(_online(server.messages())[after].payload)


def _online(got: list[Any]) -> list[Any]:
    return [m for m in got if m.topic == f"{BASE}/status" and json.loads(m.payload)["state"] == "online"]


def _bytes_of(path: Path) -> bytes:
    return gzip.decompress(path.read_bytes()) if path.suffix == ".gz" else path.read_bytes()


def shoe_open_again(server: GameServer) -> None:
    """Until the last start has the shoe's port open: its device topic says so after its status."""

    def open_since_online(got: list[Any]) -> bool:
        last = max(i for i, m in enumerate(got) if m in _online(got))
        return any(m.topic.endswith("/device") and json.loads(m.payload)["link"] == "up" for m in got[last:])

    server.wait_for(open_since_online, 30)


def config_events(server: GameServer) -> list[dict[str, Any]]:
    return server.payloads("/config")


def test_status_health_and_every_recording_state_the_software_and_the_config(
    tmp_path: Path, mosquitto: Broker
) -> None:
    record = {"dir": str(tmp_path / "rec")}
    with live_table(tmp_path, mosquitto, "beetek", record=record, mqtt={"health_interval_s": 0.2}) as table:
        server = table.server
        wait_shoe_open(server)
        status = online_status(server)
        StatusPayload.model_validate(status)  # the published payload is the contract's
        expected = config_digest.effective(load_config(table.config), "00" * 16).digest
        # This checkout is an editable install: no recorded hashes, so no digest, said in one field; and
        # whichever build the suite runs on, pure or compiled, is said.
        assert status["software"] == {
            "source": "not_from_a_wheel",
            "digest": None,
            "intact": None,
            "build": build.running(),
        }
        assert status["config_digest"] == expected and status["version"]
        server.wait_for(lambda got: any(m.topic.endswith("/health") for m in got), 30)
        health = server.payloads("/health")[-1]
        HealthPayload.model_validate(health)
        clock = health["clock"]  # this machine's kernel, as it is: read, not judged (the alert is off)
        assert clock is not None and clock["limit_s"] == 0.1
        assert clock["well"] == (clock["synchronised"] and clock["est_error_s"] <= 0.1)
        for card in ("9H", "2S", "9C", "3D"):  # a natural: a hand complete
            table.port.write(beetek(card))
        server.wait_for(lambda got: any(r["phase"] == "complete" for r in server.payloads("/round")), 30)
        assert table.kill(signal.SIGTERM) == 0
    # The settled hand names what judged it: the software, its build and the config, as status says.
    (complete,) = [r for r in server.payloads("/round") if r["phase"] == "complete"]
    assert complete["identity"] == {
        "game": "punto_banco",
        "variant": "standard",
        "version": status["version"],
        "software": status["software"],
        "config_digest": expected,
    }
    files = sorted((tmp_path / "rec").glob("*.jsonl*"))
    assert files
    for path in files:
        with RecordingReader(path) as reader:
            assert reader.header.software == Software(source="not_from_a_wheel", build=build.running())
            assert reader.header.config_digest == expected
    # A replay states what the table stated, from the header: not what replays it. With other rules,
    # it names no config: the hands are judged under rules the table never ran.
    replayed = [json.loads(p.payload) for path in files for p in replay(path) if p.topic.endswith("/round")]
    assert [r["identity"] for r in replayed if r["phase"] == "complete"] == [complete["identity"]]
    what_if = [
        json.loads(p.payload)
        for path in files
        for p in replay(path, rules={"paytable": "WHAT-IF"})
        if p.topic.endswith("/round")
    ]
    (other,) = [r["identity"] for r in what_if if r["phase"] == "complete"]
    assert other == {k: v for k, v in complete["identity"].items() if k != "config_digest"} | {
        "paytable": "WHAT-IF"
    }
    assert config_events(server) == []  # a first start has no last start to differ from


def test_a_start_from_a_wheel_states_its_digest_and_whether_its_files_are_intact(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(software, "check", lambda: Installed("9.9", "ab" * 32, 120, ["scannerd/cli.py"]))
    said = daemon.installed_software()
    assert said == Software(source="wheel", digest="ab" * 32, intact=False, build=build.running())


@pytest.mark.timeout(120)
def test_a_restart_under_a_changed_config_publishes_the_keys_that_changed_and_never_a_secret(
    tmp_path: Path, mosquitto: Broker
) -> None:
    secret = tmp_path / "mqtt-password"
    secret.write_text(FIRST_PASSWORD + "\n")
    mqtt: dict[str, Any] = {"username": "T1", "password_file": str(secret), "health_interval_s": 30.0}
    record = {"dir": str(tmp_path / "rec")}
    with live_table(tmp_path, mosquitto, "beetek", record=record, mqtt=mqtt) as table:
        server = table.server
        first = online_status(server, 0)
        assert table.kill(signal.SIGTERM) == 0

        # The password's content and an ordinary key change; the file's path does not.
        secret.write_text(SECOND_PASSWORD + "\n")
        changed_mqtt = mqtt | {"health_interval_s": 20.0}
        write_config(
            tmp_path, mosquitto, "beetek", table.port.path, mqtt=changed_mqtt, record=record, rules=AUTO
        )
        table.start()
        second = online_status(server, 1)
        server.wait_for(lambda got: len(config_events(server)) == 1, 30)
        (event,) = config_events(server)
        ConfigEvent.model_validate(event)
        assert event["changed"] == ["mqtt.health_interval_s", "mqtt.password"]
        assert (event["previous_digest"], event["digest"]) == (
            first["config_digest"],
            second["config_digest"],
        )
        assert event["shoe_id"] is None
        assert table.kill(signal.SIGTERM) == 0

        # Only where the password is read from: the same content in another file.
        moved = tmp_path / "moved-password"
        moved.write_text(SECOND_PASSWORD + "\n")
        moved_mqtt = changed_mqtt | {"password_file": str(moved)}
        write_config(
            tmp_path, mosquitto, "beetek", table.port.path, mqtt=moved_mqtt, record=record, rules=AUTO
        )
        table.start()
        third = online_status(server, 2)
        server.wait_for(lambda got: len(config_events(server)) == 2, 30)
        assert config_events(server)[1]["changed"] == ["mqtt.password_file"]
        assert config_events(server)[1]["previous_digest"] == second["config_digest"]
        assert config_events(server)[1]["digest"] == third["config_digest"] != second["config_digest"]
        assert table.kill(signal.SIGTERM) == 0

        # The same config again: nothing to say, before the card dealt after the start or after it.
        table.start()
        online_status(server, 3)
        shoe_open_again(server)
        table.port.write(beetek("9H"))
        server.wait_for(lambda got: len(server.payloads("/card")) == 1, 30)
        assert len(config_events(server)) == 2
        assert table.kill(signal.SIGTERM) == 0

    # A config event is an event like any other: in seq order with the rest, none missing.
    seqs = event_seqs(server.messages())
    assert_complete_in_order(seqs, max(seqs))
    # Nowhere a secret's value: not on the broker, in the recordings, the kept digests or the log.
    kept = config_digest.last_start_path(tmp_path / "outbox.sqlite3")
    places = [m.payload for m in server.messages()]
    places += [kept.read_bytes(), table.log.read_bytes()]
    places += [_bytes_of(p) for p in sorted((tmp_path / "rec").glob("*.jsonl*"))]
    for password in (FIRST_PASSWORD, SECOND_PASSWORD):
        assert not any(password.encode() in place for place in places), password
    # The recordings make the config events again, at the same seq, byte for byte, and every other
    # event: the anchor of a file sealed at a stop is sent and recorded by the next start.
    live = sorted(
        (json.loads(m.payload)["seq"], m.topic, m.payload)
        for m in server.messages()
        if m.topic.rsplit("/", 1)[1] in EVENT_KINDS
    )
    replayed = sorted(
        (json.loads(p.payload)["seq"], p.topic, p.payload)
        for path in sorted((tmp_path / "rec").glob("*.jsonl*"))
        for p in replay(path)
        if p.topic.rsplit("/", 1)[1] in EVENT_KINDS
    )
    assert [e for e in replayed if e[1].endswith("/config")] == [e for e in live if e[1].endswith("/config")]
    assert replayed == live
