"""The example in docs/client.md, run as it stands against a real Mosquitto and a real daemon."""

from __future__ import annotations

import os
import re
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.support.broker import wait_until
from tests.support.fault import NATURAL
from tests.support.frames import beetek
from tests.support.process import live_table

ROOT = Path(__file__).resolve().parents[2]


def example() -> str:
    text = (ROOT / "docs" / "client.md").read_text()
    blocks = re.findall(r"```python\n(.*?)```", text, re.S)
    assert blocks, "docs/client.md has no python example"
    return blocks[0]


@pytest.mark.timeout(60)
def test_the_documented_example_stores_each_round_once(tmp_path, mosquitto):
    (tmp_path / "example.py").write_text(example())
    env = {**os.environ, "MQTT_HOST": mosquitto.host, "MQTT_PORT": str(mosquitto.port), "TABLE": "T1"}
    env["PYTHONPATH"] = str(ROOT)
    with live_table(tmp_path, mosquitto, "beetek", in_process=True) as table:
        daemon = table.daemon
        assert daemon is not None
        out = tmp_path / "out.txt"
        with out.open("w") as sink:
            proc = subprocess.Popen(
                [sys.executable, "example.py"], cwd=tmp_path, env=env, stdout=sink, stderr=subprocess.STDOUT
            )
        try:
            wait_until(lambda: "T1 is at seq" in out.read_text(), 20, "the example's get_state line")
            for card in NATURAL:
                table.port.write(beetek(card))
                time.sleep(0.05)
            last = lambda: daemon.validator.next_seq - 1  # noqa: E731
            wait_until(lambda: f"T1 {last()} " in out.read_text(), 20, "the last event printed")
        finally:
            proc.send_signal(signal.SIGINT)
            code = proc.wait(15)
    printed = out.read_text()
    assert code == 0 and "Traceback" not in printed, printed
    assert "online: True" in printed
    kinds = [line.split()[2] for line in printed.splitlines() if line.startswith("T1 1")]
    assert kinds.count("card") == 4 and "round" in kinds
    with sqlite3.connect(tmp_path / "game-server.sqlite3") as db:
        assert db.execute("SELECT table_id, winner FROM rounds").fetchall() == [("T1", "player")]
