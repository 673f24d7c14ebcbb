"""Fault: the daemon is SIGKILLed at random moments while a ``framed`` shoe deals.

``scannerd run`` runs as a real process, so the kill is real: no handler,
no flush, no goodbye. The shoe (the protocol's device end on a pty) repeats
each card until the host acknowledges it, and the host acknowledges only
once the card's events are in the outbox. So whatever moment the kill
lands on, every card the shoe saw acknowledged must reach the game server
exactly once after de-duplication by ``seq``, and cards the daemon never
acknowledged come again and are published then.
"""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import paho.mqtt.client as mqtt
import pytest

from drivers.events import DeviceCard
from scannerd.core.cards import ALL_CARDS
from simulators.serial_pty import FramedPtyDevice, PtyPort
from tests.support.broker import Broker, GameServer, assert_complete_in_order, event_seqs, wait_until
from tests.support.fault import deduplicated

KILLS = 12


def write_config(tmp_path: Path, broker: Broker, port: str) -> Path:
    path = tmp_path / "scannerd.toml"
    path.write_text(
        'table_id = "T1"\n'
        f'[device]\ndriver = "framed"\nport = "{port}"\n'
        '[rules]\nround_control = "auto"\nburn = "none"\n'
        f'[mqtt]\nhost = "{broker.host}"\nport = {broker.port}\nreconnect_max_s = 1\n'
        f'[outbox]\npath = "{tmp_path / "outbox.sqlite3"}"\n'
        "[display]\nenabled = false\n"
        '[log]\nlevel = "info"\nformat = "json"\n'
    )
    return path


# ``scannerd run`` itself (``cli.main``), in a process that has done its imports and waits for the word
# to start: readied while the previous daemon still runs, so twenty restarts fit in a short test.
_SPARE = (
    "import sys, scannerd.cli, scannerd.runtime.daemon\n"
    "sys.stdin.readline()\n"
    "sys.exit(scannerd.cli.main(sys.argv[1:]))"
)


def spare(config: Path, log: Path) -> subprocess.Popen[bytes]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SCANNERD_", "NOTIFY_SOCKET"))}
    with log.open("ab") as out:
        return subprocess.Popen(
            [sys.executable, "-c", _SPARE, "run", "--config", str(config)],
            stdin=subprocess.PIPE,
            stdout=out,
            stderr=out,
            env=env,
        )


def go(proc: subprocess.Popen[bytes]) -> subprocess.Popen[bytes]:
    assert proc.stdin is not None
    proc.stdin.write(b"\n")
    proc.stdin.close()
    return proc


@pytest.mark.timeout(180)
def test_sigkill_at_random_moments_loses_and_repeats_no_acknowledged_card(tmp_path, mosquitto) -> None:
    rng = random.Random(20)
    port = PtyPort(tmp_path / "shoe", baudrate=115200)
    shoe = FramedPtyDevice(port, retransmit_after=0.05).start()
    server = GameServer(mosquitto, ["casino/tables/T1/#"])
    config = write_config(tmp_path, mosquitto, port.path)
    log = tmp_path / "scannerd.log"
    dealt: list[str] = []
    stop_dealing = threading.Event()

    def dealer() -> None:
        # Faster than a dealer, so the shoe has cards waiting whenever a kill lands.
        while not stop_dealing.wait(0.04):
            card = rng.choice(ALL_CARDS)
            dealt.append(card)
            shoe.send(DeviceCard(card))

    proc = go(spare(config, log))
    waiting = spare(config, log)
    dealing = threading.Thread(target=dealer, daemon=True)
    try:
        wait_until(lambda: len(shoe.device.acked) >= 1, 30, "the boot hello acknowledged")
        dealing.start()
        for _ in range(KILLS):
            acked = len(shoe.device.acked)
            # Live long enough to take some cards, then die at a random point of the card path.
            wait_until(lambda n=acked: len(shoe.device.acked) > n, 30, "the daemon acknowledging cards")
            time.sleep(rng.uniform(0.0, 0.3))
            proc.send_signal(signal.SIGKILL)
            assert proc.wait(10) == -signal.SIGKILL
            proc, waiting = go(waiting), spare(config, log)
        stop_dealing.set()
        dealing.join(5)
        assert shoe.wait_idle(60), "the shoe still waits for acknowledgements"
        server.wait_for(lambda got: len(published_cards(got)) >= len(dealt), 60)
    finally:
        stop_dealing.set()
        waiting.kill()
        proc.send_signal(signal.SIGTERM)
        proc.wait(15)
        waiting.wait(15)
        shoe.stop()
        port.close()
        server.close()

    assert published_cards(server.received) == dealt, log.read_text()[-3000:]
    arrived = event_seqs(server.received)
    assert_complete_in_order(arrived, max(arrived))
    assert len(dealt) > KILLS * 5


def published_cards(messages: list[mqtt.MQTTMessage]) -> list[str]:
    """The cards a game server keeps after dropping repeated seqs."""
    return [e["card"] for e in deduplicated([m.payload for m in messages if m.topic.endswith("/card")])]
