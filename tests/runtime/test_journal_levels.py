"""What ``journalctl -p warning -u scannerd`` shows: the table's trouble, and nothing from a clean stop.

A real ``scannerd run`` writes to a file the test passes off as journald's
stream (``$JOURNAL_STREAM`` names it), so every line carries the syslog
priority prefix journald files it under. A beetek shoe on a real pty and a
real Mosquitto stand in for the table; the broker is stopped and the shoe
unplugged the way they go on a real table.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from simulators.serial_pty import PtyPort
from tests.support.broker import Broker, GameServer, wait_until
from tests.support.config import write_config
from tests.support.fault import NATURAL
from tests.support.frames import beetek

WARNING = 4
"""syslog's priority for warning; ``journalctl -p warning`` shows this and every lower number."""

AUTO = {"burn": "none", "round_control": "auto"}


def journal(path: Path) -> list[tuple[int, dict[str, Any]]]:
    """(priority, line) for every line the daemon wrote; a line without a prefix fails the test."""
    entries = []
    for text in path.read_text().splitlines():
        assert text.startswith("<") and text[2] == ">", f"no priority prefix: {text}"
        entries.append((int(text[1]), json.loads(text[3:])))
    return entries


def shown(entries: list[tuple[int, dict[str, Any]]]) -> list[dict[str, Any]]:
    """The lines ``journalctl -p warning`` shows."""
    return [line for priority, line in entries if priority <= WARNING]


@contextmanager
def daemon(config: Path, log: Path) -> Iterator[subprocess.Popen[bytes]]:
    """``scannerd run`` as under systemd, its stderr being "the journal"; stopped with SIGTERM, exit 0."""
    env = {k: v for k, v in os.environ.items() if not k.upper().startswith(("SCANNERD_", "NOTIFY_"))}
    with log.open("w") as stderr:
        st = os.fstat(stderr.fileno())
        env["JOURNAL_STREAM"] = f"{st.st_dev}:{st.st_ino}"
        proc = subprocess.Popen(
            [sys.executable, "-m", "scannerd", "run", "--config", str(config)],
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=stderr,
        )
    try:
        yield proc
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=30) == 0, log.read_text()[-2000:]
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(timeout=30)


def logged(log: Path, predicate: Callable[[dict[str, Any]], bool], what: str) -> None:
    def found() -> bool:
        lines = [json.loads(text[3:]) for text in log.read_text().splitlines() if text.endswith("}")]
        return any(predicate(line) for line in lines)

    wait_until(found, 20, what)


def test_a_clean_stop_logs_nothing_at_warning(tmp_path: Path, mosquitto: Broker) -> None:
    server = GameServer(mosquitto, ["casino/tables/T1/#"])
    log = tmp_path / "journal"
    with PtyPort(link=tmp_path / "shoe-1") as shoe:
        config = write_config(tmp_path, mosquitto, "beetek", shoe.path, rules=AUTO)
        with daemon(config, log):
            server.wait_online("casino/tables/T1")
            shoe.write(beetek(*NATURAL))
            server.wait_for(lambda ms: len(server.payloads("/card")) == 4)
    server.close()
    entries = journal(log)
    assert shown(entries) == [], "a clean stop and a good round are no trouble"
    events = [line["event"] for _, line in entries]
    assert "stop requested" in events and "stopped" in events
    assert (6, "mqtt disconnected") in [(p, line["event"]) for p, line in entries], "logged, at info"


def test_misdeals_link_losses_and_outbox_warnings_are_at_warning(
    tmp_path: Path, make_broker: Callable[..., Broker]
) -> None:
    broker = make_broker()
    server = GameServer(broker, ["casino/tables/T1/#"])
    log = tmp_path / "journal"
    with PtyPort(link=tmp_path / "shoe-1") as shoe:
        # The smallest outbox budget, warned at 3 KiB: a few rounds waiting for the broker.
        outbox = {"max_bytes": 64 * 1024, "warn_fraction": 0.05}
        config = write_config(tmp_path, broker, "beetek", shoe.path, rules=AUTO, outbox=outbox)
        with daemon(config, log):
            server.wait_online("casino/tables/T1")
            shoe.write(beetek("9H", "1S"))  # a card the shoe could not read in a round: a misdeal
            logged(log, lambda line: line.get("code") == "UNREADABLE_CARD", "the misdeal in the log")
            server.close()
            broker.stop()  # the game server's broker goes away
            logged(log, lambda line: line["event"] == "mqtt disconnected", "the link to the broker lost")
            shoe.write(beetek(*NATURAL * 3))  # three rounds wait in the outbox
            logged(log, lambda line: line.get("code") == "OUTBOX_NEARLY_FULL", "the outbox warning")
            shoe.unplug()  # the shoe's cable pulled
            logged(log, lambda line: line["event"] == "device link down", "the shoe's link lost")
            broker.start()
            logged(log, lambda line: line.get("outbox_level") == "ok", "the outbox drained")
    entries = journal(log)
    trouble = [(line["event"], line.get("code") or line.get("outbox_level")) for line in shown(entries)]
    # A reconnection tried while the broker is away says why it failed (once), whenever it falls.
    assert trouble.count(("mqtt connection failed", None)) <= 1, trouble
    trouble = [t for t in trouble if t != ("mqtt connection failed", None)]
    assert trouble == [
        ("alert", "UNREADABLE_CARD"),
        ("mqtt disconnected", None),
        ("outbox level", "warn"),
        ("alert", "OUTBOX_NEARLY_FULL"),
        ("device link down", None),
        ("alert", "DEVICE_DISCONNECTED"),
    ], trouble
    levels = {(line["event"], line.get("outbox_level")): priority for priority, line in entries}
    assert levels[("outbox level", "ok")] == 6, "the outbox drained again is good news, at info"
