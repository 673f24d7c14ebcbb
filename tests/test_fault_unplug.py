"""Fault: the shoe's cable is pulled and put back twenty times, each time in the middle of a round.

Serial: a Bee-Tek shoe and our framed shoe, each on a real pty behind a
stable symlink that comes back on another /dev/pts node each time. USB: our
framed shoe on the virtual pyusb bus. Each time the round being dealt must be void (its cards are not
trusted), the daemon must find the shoe again by itself, and the next round
must be dealt and published as if nothing had happened.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any, Protocol

import pytest

from drivers.events import DeviceCard
from scannerd.daemon import Daemon
from simulators.serial_pty import FramedPtyDevice, PtyPort
from simulators.usb_backend import VirtualUsbBus
from simulators.usb_devices import FramedUsbShoe
from tests.broker import Broker, GameServer, wait_until
from tests.fault_support import NATURAL, EventLog, config, deduplicated

REPLUGS = 20
PARTIAL = ("AS", "KD")  # player1 and banker1: cards are still due when the cable goes


class Shoe(Protocol):
    driver: str
    channel: str
    options: dict[str, Any]

    def deal(self, card: str) -> None: ...
    def unplug(self) -> None: ...
    def plug(self) -> None: ...
    def close(self) -> None: ...


class SerialShoe:
    """A Bee-Tek shoe: text frames, no acknowledgements."""

    driver = "beetek"

    def __init__(self, tmp_path: Path) -> None:
        self.port = PtyPort(tmp_path / "shoe")
        self.channel = self.port.path
        self.options: dict[str, Any] = {}

    def deal(self, card: str) -> None:
        self.port.write(f" [Game]<Card:{card}> \r\n".encode())

    def unplug(self) -> None:
        self.port.unplug()

    def plug(self) -> None:
        self.port.plug(new_node=True)

    def close(self) -> None:
        self.port.close()


class SerialFramedShoe(SerialShoe):
    """Our framed shoe firmware on a serial port: it repeats each card until acknowledged."""

    driver = "framed"

    def __init__(self, tmp_path: Path) -> None:
        super().__init__(tmp_path)
        self.device = FramedPtyDevice(self.port, retransmit_after=0.05).start()

    def deal(self, card: str) -> None:
        self.device.send(DeviceCard(card))

    def close(self) -> None:
        self.device.stop()
        super().close()


class UsbShoe:
    """Our framed shoe on native USB, on the virtual bus."""

    driver = "usb-framed"
    channel = "usb:1209:0002:FS7"

    def __init__(self, bus: VirtualUsbBus) -> None:
        self.bus = bus
        self.shoe = FramedUsbShoe(serial="FS7", retransmit_after=0.05)
        self.options = {"backend": bus}
        bus.plug(self.shoe)

    def deal(self, card: str) -> None:
        assert self.shoe.send(DeviceCard(card))

    def unplug(self) -> None:
        self.bus.unplug(self.shoe)

    def plug(self) -> None:
        self.bus.plug(self.shoe)

    def close(self) -> None:
        if self.bus.is_plugged(self.shoe):
            self.bus.unplug(self.shoe)


@pytest.fixture(params=["serial-beetek", "serial-framed", "usb-framed"])
def shoe(request: pytest.FixtureRequest, tmp_path: Path, usb_bus: VirtualUsbBus) -> Iterator[Shoe]:
    made: Shoe = {
        "serial-beetek": lambda: SerialShoe(tmp_path),
        "serial-framed": lambda: SerialFramedShoe(tmp_path),
        "usb-framed": lambda: UsbShoe(usb_bus),
    }[request.param]()
    yield made
    made.close()


@pytest.mark.timeout(150)
def test_twenty_replugs_mid_round_void_that_round_and_lose_nothing_else(
    tmp_path: Path, mosquitto: Broker, shoe: Shoe
) -> None:
    server = GameServer(mosquitto, ["casino/tables/T1/card"])
    daemon = Daemon(config(tmp_path, mosquitto, shoe.driver, shoe.channel, options=shoe.options))
    log = EventLog()
    daemon.listeners.append(log)
    dealt: list[str] = []

    def deal(cards: tuple[str, ...]) -> None:
        expected = len(dealt) + len(cards)
        for card in cards:
            shoe.deal(card)
            dealt.append(card)
        log.wait(lambda lg: len(lg.cards()) >= expected, f"{cards} recorded")

    daemon.start()
    try:
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
        server.wait_for(lambda got: len(got) >= len(dealt))
        assert daemon.check() == []
    finally:
        daemon.stop()
        server.close()

    assert log.round_ends() == [("void", "DEVICE_DISCONNECTED"), ("complete", None)] * REPLUGS
    assert log.alerts() == ["DEVICE_DISCONNECTED", "DEVICE_RECONNECTED"] * REPLUGS
    assert log.cards() == dealt
    assert [e["card"] for e in deduplicated([m.payload for m in server.messages()])] == dealt
    assert daemon.reader.reconnects == REPLUGS
