"""The usb-framed driver against a simulated native USB shoe, through pyusb."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from drivers.events import DeviceCard, DeviceEvent, DeviceHello, LinkDown, LinkUp
from drivers.reader import DeviceReader
from drivers.registry import create_driver
from drivers.usb_framed import UsbFramedDriver
from simulators.usb_backend import VirtualUsbBus
from simulators.usb_devices import FramedUsbShoe
from tests.support.usb import Collector, cards, pump

CHANNEL = "usb:1209:0002:FS7"


def plugged(usb_bus: VirtualUsbBus, **faults: object) -> FramedUsbShoe:
    shoe = FramedUsbShoe(serial="FS7", retransmit_after=0.05, **faults)  # type: ignore[arg-type]
    usb_bus.plug(shoe)
    return shoe


@pytest.fixture
def shoe(usb_bus: VirtualUsbBus) -> FramedUsbShoe:
    return plugged(usb_bus)


@pytest.fixture
def driver(usb_bus: VirtualUsbBus, shoe: FramedUsbShoe) -> Iterator[UsbFramedDriver]:
    with UsbFramedDriver(CHANNEL, backend=usb_bus) as drv:
        yield drv


def card_events(events: list[DeviceEvent]) -> list[DeviceCard]:
    return [e for e in events if isinstance(e, DeviceCard)]


def test_the_registry_builds_it() -> None:
    assert isinstance(create_driver("usb-framed", CHANNEL), UsbFramedDriver)


def test_cards_arrive_once_and_only_acknowledged_ones_leave_the_shoe(
    driver: UsbFramedDriver, shoe: FramedUsbShoe
) -> None:
    shoe.card("AS")
    first = card_events(pump(driver, lambda ev: bool(card_events(ev))))
    assert [(c.card, c.burn) for c in first] == [("AS", False)]
    # not acknowledged: the shoe repeats it, and the host drops the repeats
    repeats_seen = pump(driver, lambda ev: shoe.protocol.retransmissions >= 3)  # type: ignore[union-attr]
    assert shoe.protocol.retransmissions >= 3  # type: ignore[union-attr]
    assert card_events(repeats_seen) == []
    assert not shoe.idle

    driver.acknowledge(first[0].ack)  # type: ignore[arg-type]
    assert shoe.wait_until(lambda: shoe.idle)
    assert first[0].ack in shoe.acked
    shoe.card("KH", burn=True)
    second = card_events(pump(driver, lambda ev: bool(card_events(ev))))
    assert [(c.card, c.burn) for c in second] == [("KH", True)]


def test_the_shoe_sends_the_next_card_only_after_the_ack(
    driver: UsbFramedDriver, shoe: FramedUsbShoe
) -> None:
    for card in ("AS", "2H", "3C"):
        shoe.card(card)
    delivered: list[DeviceCard] = []
    while len(delivered) < 3:
        batch = card_events(pump(driver, lambda ev: bool(card_events(ev))))
        assert len(batch) == 1
        delivered += batch
        driver.acknowledge(batch[0].ack)  # type: ignore[arg-type]
    assert [c.card for c in delivered] == ["AS", "2H", "3C"]


def test_duplicated_split_and_noisy_frames_still_give_each_card_once(usb_bus: VirtualUsbBus) -> None:
    shoe = plugged(usb_bus, duplicate=True, packet_size=7)
    with UsbFramedDriver(CHANNEL, backend=usb_bus) as driver:
        delivered: list[str | None] = []
        for card in ("9D", "TC", "QS"):
            shoe.inject(b"\x13\x37 line noise \xff")
            shoe.card(card)
            batch = card_events(pump(driver, lambda ev: bool(card_events(ev))))
            delivered += [c.card for c in batch]
            driver.acknowledge(batch[0].ack)  # type: ignore[arg-type]
        assert delivered == ["9D", "TC", "QS"]
        assert driver.codec.junk_bytes > 0


def test_alert_commands_reach_the_shoe(driver: UsbFramedDriver, shoe: FramedUsbShoe) -> None:
    assert driver.set_alert(True, False)
    assert shoe.wait_until(lambda: shoe.led and not shoe.buzzer)
    driver.set_alert(True, True)
    assert shoe.wait_until(lambda: shoe.led and shoe.buzzer)
    driver.set_alert(False, False)
    assert shoe.wait_until(lambda: not shoe.led and not shoe.buzzer)


def test_a_rebooted_shoe_gets_its_alert_back_on_reconnect(usb_bus: VirtualUsbBus) -> None:
    shoe = plugged(usb_bus, bus_powered=True)
    with UsbFramedDriver(CHANNEL, backend=usb_bus) as driver:
        driver.set_alert(True, True)
        assert shoe.wait_until(lambda: shoe.led)
        usb_bus.replug(shoe)  # bus powered: it boots again, LED off
        assert not shoe.led
        driver.close()
        driver.open()
        assert shoe.wait_until(lambda: shoe.led and shoe.buzzer)


def test_the_reader_rides_out_an_unplug_without_losing_or_doubling_cards(usb_bus: VirtualUsbBus) -> None:
    shoe = plugged(usb_bus)
    got = Collector()
    reader = DeviceReader(
        UsbFramedDriver(CHANNEL, backend=usb_bus), got, backoff_initial=0.01, backoff_max=0.05
    ).start()
    try:
        got.wait(lambda ev: LinkUp in map(type, ev))
        shoe.card("AS")
        (pending,) = card_events(got.wait(lambda ev: len(card_events(ev)) == 1))

        usb_bus.unplug(shoe)  # before the daemon stored (acknowledged) the ace
        got.wait(lambda ev: LinkDown in map(type, ev))
        shoe.card("KD")  # dealt while the cable is out: the self-powered shoe keeps it
        usb_bus.plug(shoe)
        got.wait(lambda ev: [type(e) for e in ev].count(LinkUp) == 2)
        repeats = shoe.protocol.retransmissions  # type: ignore[union-attr]
        # the shoe repeats the unacknowledged ace; the host drops the repeats
        assert shoe.wait_until(lambda: shoe.protocol.retransmissions >= repeats + 2)  # type: ignore[union-attr]
        reader.acknowledge(pending.ack)  # type: ignore[arg-type]
        events = got.wait(lambda ev: len(card_events(ev)) == 2)
        reader.acknowledge(card_events(events)[1].ack)  # type: ignore[arg-type]
        assert shoe.wait_until(lambda: shoe.idle)
    finally:
        reader.stop(timeout=5)
    assert cards(events) == ["AS", "KD"]
    kinds = [type(e).__name__ for e in events if not isinstance(e, DeviceHello)]
    assert kinds == ["LinkUp", "DeviceCard", "LinkDown", "LinkUp", "DeviceCard"]
    assert reader.errors == 0


def test_a_bus_powered_shoe_says_hello_again_after_a_replug(usb_bus: VirtualUsbBus) -> None:
    shoe = plugged(usb_bus, bus_powered=True)
    got = Collector()
    reader = DeviceReader(
        UsbFramedDriver(CHANNEL, backend=usb_bus), got, backoff_initial=0.01, backoff_max=0.05
    ).start()
    try:
        got.wait(lambda ev: any(isinstance(e, DeviceHello) for e in ev))
        usb_bus.replug(shoe)
        got.wait(lambda ev: any(isinstance(e, DeviceHello) and e.boot_id == 2 for e in ev))
        shoe.card("7S")
        events = got.wait(lambda ev: len(card_events(ev)) == 1)
    finally:
        reader.stop(timeout=5)
    assert cards(events) == ["7S"]
    assert LinkDown in map(type, events)
