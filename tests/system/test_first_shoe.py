"""A first shoe judged by its own order through a running daemon: no earlier shoe to compare with.

A real ``scannerd run`` reads a framed shoe on a pty; the game server opens a
shoe on a table that has dealt nothing before, and the dealer deals it by the
rules (burn, then whole hands to the cut card). New decks dealt as they come
out of the box, or riffled once, must be alerted within the shoe, a few hands
in; shoes shuffled properly must raise nothing, the first or any after it.
"""

from __future__ import annotations

import random
from pathlib import Path

import pytest
from paho.mqtt.client import MQTTMessage

from drivers.events import DeviceCard
from simulators.serial_pty import FramedPtyDevice
from simulators.shuffles import deal, first_shoe
from tests.support.broker import Broker, GameServer
from tests.support.process import live_table
from tests.system.test_fault_shuffle import BASE, cards_of, kept, open_shoe

SHOES = 5
"""Proper shoes dealt through the daemon, one after another; the hundred the false-alarm figure asks
for are dealt by the simulator and replayed (tests/recording/test_shuffle_sim.py), faster."""


class CardsRead:
    """Waits for ``count`` cards of a shoe, looking at each message once without parsing it: a wait that
    went through every message again at each would take longer than the dealing by the tenth shoe."""

    def __init__(self, shoe_id: str, count: int) -> None:
        self.mark, self.count = f'"shoe_id":"{shoe_id}"'.encode(), count
        self.seen = self.read = 0

    def __call__(self, got: list[MQTTMessage]) -> bool:
        self.read += sum(m.topic.endswith("/card") and self.mark in m.payload for m in got[self.seen :])
        self.seen = len(got)
        return self.read >= self.count


def dealt(shoe: FramedPtyDevice, server: GameServer, shoe_id: str, order: list[str]) -> list[str]:
    """The shoe dealt by the rules to its cut card, each card read by the daemon: what was drawn."""
    drawn, _, _ = deal(order)
    for card in drawn:
        shoe.send(DeviceCard(card))
    server.wait_for(CardsRead(shoe_id, len(drawn)), 120)
    assert cards_of(server, shoe_id) == len(drawn)
    return drawn


def own_order_alerts(server: GameServer) -> list[dict]:
    return [e for e in kept(server) if e["kind"] == "alert" and e["code"] == "SHUFFLE_SUSPECT"]


@pytest.mark.parametrize(("kind", "within"), [("new", 12), ("riffle", 60)])
def test_a_first_shoe_of_new_decks_unshuffled_or_riffled_once_is_alerted_within_it(
    tmp_path: Path, mosquitto: Broker, kind: str, within: int
) -> None:
    order = first_shoe(random.Random(42), kind, 8)
    assert order is not None
    with live_table(tmp_path, mosquitto) as table:
        server, shoe = table.server, table.shoe
        assert shoe is not None
        server.wait_online(BASE)
        open_shoe(server, "S1")
        dealt(shoe, server, "S1", order)
    (alert,) = own_order_alerts(server)
    assert (alert["shoe_id"], alert["shuffle"]["against"]) == ("S1", "new_decks")
    assert "earlier_shoe_id" not in alert["shuffle"]
    before = [e for e in kept(server) if e["kind"] == "card" and e["seq"] < alert["seq"]]
    assert len(before) < within


def test_properly_shuffled_shoes_raise_nothing_from_their_own_order(
    tmp_path: Path, mosquitto: Broker
) -> None:
    rng = random.Random(7)
    cards = first_shoe(rng, "new", 8)
    assert cards is not None
    with live_table(tmp_path, mosquitto) as table:
        server, shoe = table.server, table.shoe
        assert shoe is not None
        server.wait_online(BASE)
        for n in range(1, SHOES + 1):
            rng.shuffle(cards)
            open_shoe(server, f"S{n}")
            dealt(shoe, server, f"S{n}", cards)
    assert own_order_alerts(server) == []
