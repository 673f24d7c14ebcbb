"""Fault: the outbox has no room left, while the broker is away and the framed shoe deals on.

Two ways to run out: the configured budget (``outbox.max_bytes``) and a real
file system that is full (a small tmpfs, so SQLite itself answers
SQLITE_FULL; needs root to mount, skipped otherwise). Either way the daemon
must say so (an ``OUTBOX_FULL`` alert, the ``outbox level`` log warning and
``outbox_level`` in health),
keep running, hold back the shoe's acknowledgement for a card it could not
store (the shoe keeps it and repeats it: nothing is lost even if the process
died now), and carry on by itself, losing nothing, once there is room again.
"""

from __future__ import annotations

import contextlib
import os
import random
import subprocess
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
import structlog

from drivers.events import DeviceCard
from scannerd.core.cards import ALL_CARDS
from scannerd.runtime.daemon import Daemon
from tests.support.broker import Broker, assert_complete_in_order, event_seqs, wait_until
from tests.support.fault import RECONNECT_1S, deduplicated
from tests.support.process import live_table

BUDGET = 64 * 1024  # the smallest budget the settings allow


@contextlib.contextmanager
def small_disk(where: Path, size: str = "16m") -> Iterator[Path]:
    where.mkdir()
    mounted = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(where)], capture_output=True, check=False
    )
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {mounted.stderr.decode().strip()}")
    try:
        yield where
    finally:
        subprocess.run(["umount", "-l", str(where)], check=False)


def fill(disk: Path, leave: int) -> Path:
    """A ballast file taking all but ``leave`` bytes of the file system."""
    ballast = disk / "ballast"
    st = os.statvfs(disk)
    with ballast.open("wb") as f:
        f.write(b"\0" * max(0, st.f_bavail * st.f_frsize - leave))
    return ballast


@pytest.mark.timeout(120)
@pytest.mark.parametrize("limit", ["budget", "file-system"])
def test_a_full_outbox_holds_the_shoe_back_and_recovers_when_room_returns(
    tmp_path: Path, make_broker: Callable[..., Broker], limit: str
) -> None:
    broker = make_broker(persistence=True)
    with contextlib.ExitStack() as stack:
        if limit == "budget":
            box: dict[str, object] = {"max_bytes": BUDGET}
        else:
            disk = stack.enter_context(small_disk(tmp_path / "disk"))
            box = {"path": str(disk / "outbox.sqlite3")}
        # The game server's session outlives the broker's absence, as in production.
        table = stack.enter_context(
            live_table(
                tmp_path,
                broker,
                in_process=True,
                start=False,
                server_id="game-server",
                mqtt=RECONNECT_1S,
                outbox=box,
            )
        )
        server, shoe = table.server, table.shoe
        assert shoe is not None
        broker.stop()  # the game server is away: events pile up in the outbox
        daemon = table.build()
        if limit == "file-system":
            ballast = fill(disk, leave=96 * 1024)
        logs = stack.enter_context(structlog.testing.capture_logs())
        table.start()
        rng = random.Random(64)
        dealt: list[str] = []

        def deal(n: int) -> None:
            for _ in range(n):
                dealt.append(rng.choice(ALL_CARDS))
                shoe.send(DeviceCard(dealt[-1]))

        wait_until(lambda: daemon.reader.link_up, 15, "the shoe found")
        deal(600)  # far more than fits
        wait_until(lambda: daemon.outbox.health().level == "full", 60, "the outbox full")
        # Held back, not lost: the card that did not fit is not acknowledged, so the shoe keeps it.
        stuck = shoe.device.in_flight
        assert stuck is not None
        wait_until(lambda: shoe.device.retransmissions > 3, 10, "the shoe repeating the card")
        assert shoe.device.in_flight == stuck
        assert stuck not in shoe.device.acked
        assert daemon.check() == []
        assert daemon.publisher.health()["outbox_level"] == "full"
        wait_until(lambda: "OUTBOX_FULL" in open_alerts(daemon), 15, "the outbox-full alert for the dealer")
        # Each tick retries the store; with nothing new to say, a retry holds nothing more in memory
        # (it held an empty batch a second for as long as the disk stayed full).
        time.sleep(2.2)
        assert [b for b in daemon.outbox._held if not b.messages] == []
        levels = [e["outbox_level"] for e in logs if e["event"] == "outbox level"]
        assert levels[-1] == "full"
        if limit == "budget":
            assert levels == ["warn", "full"]

        # Room again: the game server is back (the budget drains) or the ballast goes.
        if limit == "file-system":
            ballast.unlink()
        broker.start()
        assert shoe.wait_idle(60), "the shoe never got its acknowledgements"
        assert daemon.publisher.flush(30)
        last = daemon.validator.next_seq - 1
        server.wait_for(lambda got: last in event_seqs(got), 30)
        assert daemon.outbox.health().level == "ok"
        assert daemon.check() == []

    arrived = event_seqs(server.received)
    assert_complete_in_order(arrived, last)
    assert [e["card"] for e in deduplicated([m.payload for m in server.messages("/card")])] == dealt


@pytest.mark.timeout(90)
def test_a_disk_that_fills_under_an_empty_outbox_recovers_by_itself(
    tmp_path: Path, mosquitto: Broker
) -> None:
    """The broker is there and everything is delivered, so no acknowledgement will come to free room:
    once the disk has space again, only the daemon's own retry can store the held card and let the
    shoe go on. (A stalled round would raise an alert and store something; the stall time is set far
    off so that it cannot stand in for the retry.)"""
    rules = {"round_control": "auto", "burn": "none", "stall_timeout_s": 3600}
    with contextlib.ExitStack() as stack:
        disk = stack.enter_context(small_disk(tmp_path / "disk"))
        outbox = {"path": str(disk / "ob.db")}
        table = stack.enter_context(
            live_table(tmp_path, mosquitto, in_process=True, rules=rules, outbox=outbox)
        )
        daemon, server, shoe = table.daemon, table.server, table.shoe
        assert daemon is not None and shoe is not None
        dealt = ["AS", "KD", "9H", "2S", "9C", "3D", "QH", "7C"]
        wait_until(lambda: daemon.reader.link_up and daemon.publisher.connected, 15, "the daemon up")
        for card in dealt[:4]:
            shoe.send(DeviceCard(card))
        assert shoe.wait_idle(15)
        assert daemon.publisher.flush(15)

        ballast = fill(disk, leave=0)
        for card in dealt[4:]:
            shoe.send(DeviceCard(card))
        # The OUTBOX_FULL alert is an event too, and storing it would retry the held card: let that
        # attempt fail first. get_state runs under the daemon's lock, so it answers after the attempt.
        wait_until(lambda: "OUTBOX_FULL" in open_alerts(daemon), 15, "the outbox-full alert")
        assert daemon.outbox.health().held > 0
        assert not shoe.device.idle
        ballast.unlink()
        assert shoe.wait_idle(30), "nothing retried the held card once there was room"
        assert daemon.publisher.flush(15)
        server.wait_for(lambda got: len([m for m in got if m.topic.endswith("/card")]) >= len(dealt))
    assert [e["card"] for e in deduplicated([m.payload for m in server.messages("/card")])] == dealt


def open_alerts(daemon: Daemon) -> list[str]:
    response = daemon.request("get_state", {})
    assert response.data is not None
    return [a["code"] for a in response.data["alerts"]]
