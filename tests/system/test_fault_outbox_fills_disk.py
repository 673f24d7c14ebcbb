"""Fault: the outbox itself fills its file system while the broker is away, and the disk stays full.

No ballast file to delete: the only room there will ever be is what the
outbox gives back. A Bee-Tek shoe cannot be held back, so once the disk is
full its events wait in memory. When the broker returns, every acknowledged
row must leave the outbox although the disk is still full, the held events
must follow in order, the ``OUTBOX_FULL`` alert must reach the game server,
and nothing may be sent over and over.
"""

from __future__ import annotations

import contextlib
import random
import signal
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from scannerd.core.cards import ALL_CARDS
from tests.support.broker import Broker, assert_complete_in_order, event_seqs, wait_until
from tests.support.fault import RECONNECT_1S, deduplicated
from tests.support.frames import beetek
from tests.support.process import live_table
from tests.system.test_fault_disk_full import open_alerts, small_disk


@pytest.mark.timeout(180)
@pytest.mark.parametrize("restart", [False, True], ids=["running", "restarted-while-full"])
def test_an_outbox_that_filled_its_disk_drains_with_the_disk_still_full(
    tmp_path: Path, make_broker: Callable[..., Broker], restart: bool
) -> None:
    """``restarted-while-full``: systemd restarts the daemon while events wait in memory: none is lost."""
    # The backlog reaches the game server in one rush: let the broker queue all of it for the game server.
    broker = make_broker(persistence=True, extra="allow_anonymous true\nmax_queued_messages 0\n")
    rng = random.Random(7)
    dealt: list[str] = []
    with contextlib.ExitStack() as stack:
        disk = stack.enter_context(small_disk(tmp_path / "disk", size="4m"))
        box = {"path": str(disk / "outbox.sqlite3"), "max_bytes": 1 << 30}
        table = stack.enter_context(
            live_table(
                tmp_path,
                broker,
                "beetek",
                in_process=True,
                start=False,
                server_id="game-server",
                mqtt=RECONNECT_1S,
                outbox=box,
            )
        )
        server, port = table.server, table.port
        broker.stop()
        daemon = table.build()
        table.start()
        wait_until(lambda: daemon.reader.link_up, 15, "the shoe found")

        def deal(n: int) -> None:
            cards = [rng.choice(ALL_CARDS) for _ in range(n)]
            dealt.extend(cards)
            port.write(beetek(*cards, crlf=False))

        while daemon.outbox.health().level != "full":
            assert len(dealt) < 40_000, "the disk never filled"
            deal(20)
            time.sleep(0.01)
        for _ in range(10):  # more cards once it is full: these wait in memory
            deal(10)
            time.sleep(0.05)
        wait_until(lambda: daemon.outbox.health().held >= 100, 30, "events held in memory")
        assert daemon.check() == []
        wait_until(lambda: "OUTBOX_FULL" in open_alerts(daemon), 15, "the outbox-full alert for the dealer")
        if restart:
            table.kill(signal.SIGTERM)
            assert daemon.outbox.lost_at_close == 0
            daemon = table.build()
            table.start()

        broker.start()  # the disk is still full: nothing but the outbox can make room
        last = daemon.validator.next_seq - 1
        # Tens of thousands of messages: look at the newest only, or the waiting costs more than the test.
        server.wait_for(lambda got: last in event_seqs(got[-50:]), 120)
        assert daemon.publisher.flush(30)
        assert daemon.outbox.health().held == 0
        last = daemon.validator.next_seq - 1  # and whatever the table said since
        server.wait_for(lambda got: last in event_seqs(got[-50:]), 30)
        errors = daemon.publisher.health()["errors"]

    arrived = event_seqs(server.received)
    assert_complete_in_order(arrived, last)
    kept = deduplicated(
        [m.payload for m in server.received if m.topic.endswith(("/card", "/round", "/alert", "/shoe"))]
    )
    assert [e["card"] for e in kept if e["kind"] == "card"] == dealt
    assert "OUTBOX_FULL" in [e["code"] for e in kept if e["kind"] == "alert"]
    assert errors == 0
    repeats = len(arrived) - len(set(arrived))
    assert repeats < 200, f"{repeats} events sent more than once"
