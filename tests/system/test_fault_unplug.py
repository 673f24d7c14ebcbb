"""Fault: the shoe's cable is pulled and put back twenty times, each time in the middle of a round.

Serial: a Bee-Tek shoe and our framed shoe, each on a real pty behind a
stable symlink that comes back on another /dev/pts node each time. USB: our
framed shoe on the virtual pyusb bus. Each time the round being dealt must be void (its cards are not
trusted), the daemon must find the shoe again by itself, and the next round
must be dealt and published as if nothing had happened.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from pathlib import Path

import pytest

from scannerd.runtime.config import Config
from simulators.actions import Draw
from simulators.feeder import SimDevice
from simulators.registry import make_device
from simulators.usb_backend import VirtualUsbBus
from tests.support.broker import Broker, wait_until
from tests.support.fault import NATURAL, EventLog, deduplicated
from tests.support.process import live_table

REPLUGS = 20
PARTIAL = ("AS", "KD")  # player1 and banker1: cards are still due when the cable goes


@pytest.fixture(params=["beetek", "framed", "usb-framed"])
def shoe(request: pytest.FixtureRequest, tmp_path: Path, usb_bus: VirtualUsbBus) -> Iterator[SimDevice]:
    """The simulator's device: serial ones on a pty behind ``tmp_path/shoe``, USB ones on the bus."""
    device = make_device(request.param, random.Random(20), link=tmp_path / "shoe", bus=usb_bus)
    yield device
    device.close()


@pytest.mark.timeout(150)
def test_twenty_replugs_mid_round_void_that_round_and_lose_nothing_else(
    tmp_path: Path, mosquitto: Broker, shoe: SimDevice, usb_bus: VirtualUsbBus
) -> None:
    def on_the_bus(config: Config) -> Config:
        """A USB shoe is found on the simulated bus, an object no config file can name."""
        if not shoe.driver.startswith("usb"):
            return config
        device = config.device.model_copy(update={"options": {"backend": usb_bus}})
        return config.model_copy(update={"device": device})

    log = EventLog()
    dealt: list[str] = []
    with live_table(
        tmp_path,
        mosquitto,
        shoe.driver,
        channel=shoe.channel,
        in_process=True,
        start=False,
        adjust=on_the_bus,
    ) as table:
        daemon, server = table.build(), table.server
        daemon.listeners.append(log)

        def deal(cards: tuple[str, ...]) -> None:
            expected = len(dealt) + len(cards)
            for card in cards:
                shoe.emit(Draw(card))
                dealt.append(card)
            log.wait(lambda lg: len(lg.cards()) >= expected, f"{cards} recorded")

        table.start()
        wait_until(lambda: daemon.reader.link_up, 15, "the shoe found")
        for n in range(1, REPLUGS + 1):
            deal(PARTIAL)
            shoe.unplug()
            log.wait(lambda lg, n=n: len(lg.round_ends()) == 2 * n - 1, "the broken round void")
            shoe.plug()
            log.wait(lambda lg, n=n: lg.alerts().count("DEVICE_RECONNECTED") == n, "the shoe found again")
            deal(NATURAL)
            log.wait(lambda lg, n=n: len(lg.round_ends()) == 2 * n, "the next round complete")
        assert daemon.publisher.flush(30)
        server.wait_for(lambda got: len([m for m in got if m.topic.endswith("/card")]) >= len(dealt))
        assert daemon.check() == []

    assert log.round_ends() == [("void", "DEVICE_DISCONNECTED"), ("complete", None)] * REPLUGS
    assert log.alerts() == ["DEVICE_DISCONNECTED", "DEVICE_RECONNECTED"] * REPLUGS
    assert log.cards() == dealt
    assert [e["card"] for e in deduplicated([m.payload for m in server.messages("/card")])] == dealt
    assert daemon.reader.reconnects == REPLUGS
