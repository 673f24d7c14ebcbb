"""The shuffle check's history survives the daemon being killed: a preset shoe is still caught.

A real ``scannerd run`` reads a framed shoe on a pty (the shoe repeats each
card until acknowledged, so nothing dealt while the daemon is down is lost).
The game server opens shoe S1, which deals about 120 cards in whole rounds; then S2, loaded in
the same order (a preset shoe). The daemon is SIGKILLed a few cards into S2,
before the evidence is overwhelming, and started again: the alert naming S1
must still come, from the fingerprint of S1 in the saved state.
"""

from __future__ import annotations

import random

from drivers.events import DeviceCard
from scannerd.core.cards import ALL_CARDS
from scannerd.core.games.punto_banco import next_position
from simulators.serial_pty import FramedPtyDevice
from tests.support.broker import Broker, GameServer
from tests.support.fault import deduplicated
from tests.support.process import live_table

BASE = "casino/tables/T1"


def kept(server: GameServer) -> list[dict]:
    return deduplicated(
        [m.payload for m in server.messages() if m.topic.endswith(("/card", "/round", "/alert", "/shoe"))]
    )


def cards_of(server: GameServer, shoe_id: str) -> int:
    return len([e for e in kept(server) if e["kind"] == "card" and e["shoe_id"] == shoe_id])


def whole_rounds(cards: list[str], at_least: int) -> list[str]:
    """The first rounds of a shuffled shoe, ``at_least`` cards: so S1 can end between rounds."""
    random.Random(3).shuffle(cards)
    n = 0
    while n < at_least:
        player: list[str] = []
        banker: list[str] = []
        while (position := next_position(player, banker)) is not None:
            (player if position[0] == "p" else banker).append(cards[n])
            n += 1
    return cards[:n]


def open_shoe(server: GameServer, shoe_id: str) -> None:
    server.request(f"{BASE}/request/new_shoe", {"shoe_id": shoe_id})
    server.wait_for(lambda got: any(e.get("shoe_id") == shoe_id for e in kept(server)))


def deal(shoe: FramedPtyDevice, server: GameServer, shoe_id: str, cards: list[str], before: int = 0) -> None:
    for card in cards:
        shoe.send(DeviceCard(card))
    server.wait_for(lambda got: cards_of(server, shoe_id) == before + len(cards), timeout=60)


def test_a_preset_shoe_is_caught_across_a_sigkill_mid_shoe(tmp_path, mosquitto: Broker) -> None:
    order = whole_rounds([c for c in ALL_CARDS for _ in range(8)], 120)
    with live_table(tmp_path, mosquitto) as table:
        server, shoe = table.server, table.shoe
        assert shoe is not None
        server.wait_online(BASE)
        open_shoe(server, "S1")
        deal(shoe, server, "S1", order)
        open_shoe(server, "S2")
        deal(shoe, server, "S2", order[:8])
        assert shoe.wait_idle(10)
        table.kill()
        table.start()
        deal(shoe, server, "S2", order[8:60], before=8)

    events = kept(server)
    alerts = [e for e in events if e["kind"] == "alert" and e["code"] == "SHUFFLE_SUSPECT"]
    assert len(alerts) == 1, alerts
    (alert,) = alerts
    assert (alert["shoe_id"], alert["shuffle"]["earlier_shoe_id"]) == ("S2", "S1")
    s2_cards = [e for e in events if e["kind"] == "card" and e["shoe_id"] == "S2" and e["seq"] < alert["seq"]]
    assert 8 < len(s2_cards) <= 30  # after the restart, and early
