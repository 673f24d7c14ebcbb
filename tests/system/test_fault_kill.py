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

import random
import signal
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import paho.mqtt.client as mqtt
import pytest

from drivers.events import DeviceCard
from scannerd.core.cards import ALL_CARDS
from simulators.serial_pty import FramedPtyDevice
from tests.support.broker import Broker, assert_complete_in_order, event_seqs, wait_until
from tests.support.fault import deduplicated
from tests.support.process import live_table

KILLS = 12


@contextmanager
def dealing(shoe: FramedPtyDevice, rng: random.Random) -> Iterator[list[str]]:
    """A dealer faster than any, so the shoe has cards waiting whenever a kill lands, until the block
    ends; the cards dealt."""
    dealt: list[str] = []
    stop = threading.Event()

    def deal() -> None:
        while not stop.wait(0.04):
            card = rng.choice(ALL_CARDS)
            dealt.append(card)
            shoe.send(DeviceCard(card))

    dealer = threading.Thread(target=deal, daemon=True)
    dealer.start()
    try:
        yield dealt
    finally:
        stop.set()
        dealer.join(5)


@pytest.mark.timeout(180)
def test_sigkill_at_random_moments_loses_and_repeats_no_acknowledged_card(
    tmp_path: Path, mosquitto: Broker
) -> None:
    rng = random.Random(20)
    log = {"level": "info", "format": "json"}
    with live_table(tmp_path, mosquitto, mqtt={"reconnect_max_s": 1}, log=log) as table:
        shoe, server = table.shoe, table.server
        assert shoe is not None
        table.ready()  # each restart is readied while the daemon before it runs: twelve fit in a short test
        wait_until(lambda: len(shoe.device.acked) >= 1, 30, "the boot hello acknowledged")
        with dealing(shoe, rng) as dealt:
            for _ in range(KILLS):
                acked = len(shoe.device.acked)
                # Live long enough to take some cards, then die at a random point of the card path.
                wait_until(lambda n=acked: len(shoe.device.acked) > n, 30, "the daemon acknowledging cards")
                time.sleep(rng.uniform(0.0, 0.3))
                assert table.kill() == -signal.SIGKILL
                table.start()
                table.ready()
        assert shoe.wait_idle(60), "the shoe still waits for acknowledgements"
        server.wait_for(lambda got: len(published_cards(got)) >= len(dealt), 60)

    assert published_cards(server.received) == dealt, table.log.read_text()[-3000:]
    arrived = event_seqs(server.received)
    assert_complete_in_order(arrived, max(arrived))
    assert len(dealt) > KILLS * 5


def published_cards(messages: list[mqtt.MQTTMessage]) -> list[str]:
    """The cards a game server keeps after dropping repeated seqs."""
    return [e["card"] for e in deduplicated([m.payload for m in messages if m.topic.endswith("/card")])]
