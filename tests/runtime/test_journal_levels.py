"""What ``journalctl -p warning -u scannerd`` shows: the table's trouble, and nothing from a clean stop.

A real ``scannerd run`` writes to a file the test passes off as journald's
stream (``$JOURNAL_STREAM`` names it), so every line carries the syslog
priority prefix journald files it under. A beetek shoe on a real pty and a
real Mosquitto stand in for the table; the broker is stopped and the shoe
unplugged the way they go on a real table.
"""

from __future__ import annotations

import json
import signal
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from tests.support.broker import Broker, wait_until
from tests.support.fault import NATURAL
from tests.support.frames import beetek
from tests.support.process import LiveTable, live_table, wait_shoe_open

WARNING = 4
"""syslog's priority for warning; ``journalctl -p warning`` shows this and every lower number."""


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
def journaled(tmp_path: Path, broker: Broker, **sections: Any) -> Iterator[LiveTable]:
    """A live table on a beetek shoe, its log "the journal": ``$JOURNAL_STREAM`` names the file as
    journald names the stream it gives a unit. Stopped with SIGTERM at the end, exit 0."""
    with live_table(tmp_path, broker, "beetek", start=False, **sections) as table:
        table.log.touch()  # named by its device and inode before the daemon starts, so made first
        st = table.log.stat()
        table.env = {"JOURNAL_STREAM": f"{st.st_dev}:{st.st_ino}"}
        table.start()
        yield table
        assert table.kill(signal.SIGTERM) == 0, table.log.read_text()[-2000:]


def logged(log: Path, predicate: Callable[[dict[str, Any]], bool], what: str) -> None:
    def found() -> bool:
        lines = [json.loads(text[3:]) for text in log.read_text().splitlines() if text.endswith("}")]
        return any(predicate(line) for line in lines)

    wait_until(found, 20, what)


def test_a_clean_stop_logs_nothing_at_warning(tmp_path: Path, mosquitto: Broker) -> None:
    with journaled(tmp_path, mosquitto) as table:
        server, log = table.server, table.log
        wait_shoe_open(server)  # online comes before the shoe is open, and a card sent before is lost
        table.port.write(beetek(*NATURAL))
        server.wait_for(lambda ms: len(server.payloads("/card")) == 4)
    entries = journal(log)
    assert shown(entries) == [], "a clean stop and a good round are no trouble"
    events = [line["event"] for _, line in entries]
    assert "stop requested" in events and "stopped" in events
    assert (6, "mqtt disconnected") in [(p, line["event"]) for p, line in entries], "logged, at info"


def test_misdeals_link_losses_and_outbox_warnings_are_at_warning(
    tmp_path: Path, make_broker: Callable[..., Broker]
) -> None:
    broker = make_broker()
    # The smallest outbox budget, warned at 3 KiB: a few rounds waiting for the broker.
    outbox = {"max_bytes": 64 * 1024, "warn_fraction": 0.05}
    with journaled(tmp_path, broker, outbox=outbox) as table:
        server, shoe, log = table.server, table.port, table.log
        wait_shoe_open(server)
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
