"""A shoe counted at its end through a running daemon: the receipt names what was taken out and put in.

A real ``scannerd run`` reads a framed shoe on a pty. The game server opens a
shoe of eight decks, the dealer deals it by the rules to the cut card, then
the game server asks for the deck check and the dealer draws the rest of the
shoe through the reader. One shoe is whole; from the other a king of hearts was
taken out and a seven of clubs put in behind the cut card, where no hand
deals it: only the count finds either.
"""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from drivers.events import DeviceCard
from simulators.shuffles import deal
from tests.support.broker import Broker, GameServer
from tests.support.fault import deduplicated
from tests.support.process import live_table
from tests.system.test_fault_shuffle import BASE, kept, open_shoe
from tests.system.test_first_shoe import CardsRead, dealt


def receipts(server: GameServer) -> list[dict]:
    return deduplicated([m.payload for m in server.messages() if m.topic == f"{BASE}/deck_check"])


def check(server: GameServer, **args: str) -> None:
    server.request(f"{BASE}/request/deck_check", args)


@pytest.mark.parametrize("tampered", [False, True], ids=["whole", "one-out-one-in"])
def test_a_shoe_counted_at_its_end_names_every_card_missing_and_over(
    tmp_path: Path, mosquitto: Broker, tampered: bool
) -> None:
    order = [card for card in (rank + suit for suit in "SHDC" for rank in "A23456789TJQK") for _ in range(8)]
    random.Random(11).shuffle(order)
    if tampered:
        order.remove("KH")
        order.insert(len(order) - 3, "7C")  # behind the cut card: no hand deals it
    with live_table(tmp_path, mosquitto) as table:
        server, shoe = table.server, table.shoe
        assert shoe is not None
        server.wait_online(BASE)
        open_shoe(server, "S1")
        drawn = dealt(shoe, server, "S1", order)
        _, _, rest = deal(order)
        check(server)
        server.wait_for(lambda got: len(receipts(server)) == 1, 30)
        for card in rest:
            shoe.send(DeviceCard(card))
        server.wait_for(CardsRead("S1", len(drawn) + len(rest)), 60)
        check(server, action="end")
        server.wait_for(lambda got: len(receipts(server)) == 2, 30)
    counting, receipt = receipts(server)
    assert (counting["status"], counting["dealt"], counting["counted"]) == ("counting", len(drawn), 0)
    assert (receipt["status"], receipt["counted"], receipt["complete"]) == ("done", len(rest), True)
    assert receipt["device"] == {"model": "SIM-SHOE", "serial": "SIM0001"}
    codes = [e["code"] for e in kept(server) if e["kind"] == "alert" and e["seq"] > receipt["seq"]]
    if tampered:
        assert (receipt["missing"], receipt["surplus"]) == (["KH"], ["7C"])
        assert codes[:2] == ["DECK_SURPLUS", "DECK_SHORT"]
    else:
        assert (receipt["missing"], receipt["surplus"]) == ([], [])
        assert codes == []
