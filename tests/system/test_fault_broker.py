"""Fault: the broker is gone for several reconnect waits in the middle of play.

The dealer does not stop for the broker. Cards dealt during the outage must
wait in the outbox and reach the game server after the restart, before
anything newer, each exactly once after de-duplication by ``seq``.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable

import pytest

from scannerd.core.cards import ALL_CARDS
from tests.support.broker import Broker, assert_complete_in_order, event_seqs, wait_until
from tests.support.fault import RECONNECT_1S, deduplicated
from tests.support.frames import beetek
from tests.support.process import live_table

OUTAGE_S = 6.0  # six times the daemon's longest reconnect wait here (1 s): several failed attempts
CARD_EVERY_S = 0.1


@pytest.mark.timeout(120)
def test_broker_stopped_during_play_loses_and_repeats_nothing(
    tmp_path, make_broker: Callable[..., Broker]
) -> None:
    # Persistence keeps the game server's session (and what is queued for it) across the restart,
    # as a production broker would; the daemon's own guarantee does not depend on it.
    broker = make_broker(persistence=True)
    rng = random.Random(30)
    dealt: list[str] = []
    with live_table(
        tmp_path, broker, "beetek", in_process=True, server_id="game-server", mqtt=RECONNECT_1S
    ) as table:
        daemon, server = table.daemon, table.server
        assert daemon is not None

        def deal(n: int) -> None:
            for _ in range(n):
                card = rng.choice(ALL_CARDS)
                table.port.write(beetek(card))
                dealt.append(card)
                time.sleep(CARD_EVERY_S)

        wait_until(lambda: daemon.publisher.connected and daemon.reader.link_up, 15, "daemon up")
        deal(20)
        broker.stop()
        outage_ends = time.monotonic() + OUTAGE_S
        while time.monotonic() < outage_ends:
            deal(1)
        during = daemon.outbox.health()
        assert not daemon.publisher.connected
        assert during.pending > 0 and during.held == 0  # waiting on disk, not in memory
        assert daemon.check() == []
        broker.start()
        deal(20)

        last = daemon.validator.next_seq - 1
        server.wait_for(lambda got: last in event_seqs(got), timeout=30)
        assert daemon.publisher.flush(15)

    arrived = event_seqs(server.received)
    assert_complete_in_order(arrived, last)
    cards = [e["card"] for e in deduplicated([m.payload for m in server.messages("/card")])]
    assert cards == dealt
    assert len(dealt) > 80  # the outage really was in the middle of play
