"""The usb-hid driver against a simulated keyboard-wedge scanner, through pyusb."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from drivers.base import DriverInitError, DriverOperationError
from drivers.events import DeviceCard, LinkDown, LinkUp
from drivers.reader import DeviceReader
from drivers.registry import create_driver
from drivers.usb_hid import UsbHidDriver
from simulators.usb_backend import VirtualUsbBus
from simulators.usb_devices import HidCardScanner
from tests.support.usb import Collector, cards, pump

CHANNEL = "usb:1209:0001"


@pytest.fixture
def scanner(usb_bus: VirtualUsbBus) -> HidCardScanner:
    device = HidCardScanner(vid=0x1209, pid=0x0001, serial="HS1")
    usb_bus.plug(device)
    return device


@pytest.fixture
def driver(usb_bus: VirtualUsbBus, scanner: HidCardScanner) -> Iterator[UsbHidDriver]:
    with UsbHidDriver(CHANNEL, backend=usb_bus) as drv:
        yield drv


def test_the_registry_builds_it() -> None:
    assert isinstance(create_driver("usb-hid", CHANNEL), UsbHidDriver)


def test_open_takes_the_interface_from_the_kernel_and_close_gives_it_back(
    usb_bus: VirtualUsbBus, scanner: HidCardScanner
) -> None:
    assert scanner.kernel_bound == {0}
    driver = UsbHidDriver(CHANNEL, backend=usb_bus)
    driver.open()
    assert scanner.kernel_bound == set()
    assert usb_bus.claimed(scanner) == {0}
    assert (scanner.protocol, scanner.idle) == (0, 0)  # boot reports, on change only
    driver.close()
    assert scanner.kernel_bound == {0}
    assert usb_bus.claimed(scanner) == set()
    scanner.scan("A1010")
    assert scanner.typed_to_kernel == "A1010\n"  # the keyboard works as before
    driver.close()  # twice is fine


def test_scanned_codes_become_cards(driver: UsbHidDriver, scanner: HidCardScanner) -> None:
    scanner.scan("A1010")
    scanner.scan("B3110", rollover=True)
    scanner.scan("C4130", repeats=3)  # idle-rate repeats of every report
    scanner.scan("A2999")  # not a card
    assert cards(pump(driver, lambda ev: len(ev) >= 4)) == ["AS", "JC", "KD", None]
    assert scanner.typed_to_kernel == ""


def test_the_code_table_is_an_option(usb_bus: VirtualUsbBus, scanner: HidCardScanner) -> None:
    with UsbHidDriver(CHANNEL, backend=usb_bus, table="letter-rank") as driver:
        scanner.scan("D12")
        assert pump(driver, bool) == [DeviceCard("QD")]
    with pytest.raises(DriverInitError):
        UsbHidDriver(CHANNEL, backend=usb_bus, table="no-such-table")


def test_the_serial_picks_one_of_two_scanners(usb_bus: VirtualUsbBus, scanner: HidCardScanner) -> None:
    other = HidCardScanner(vid=0x1209, pid=0x0001, serial="HS2")
    usb_bus.plug(other)
    with pytest.raises(DriverInitError, match="several"):
        UsbHidDriver(CHANNEL, backend=usb_bus).open()
    with UsbHidDriver(CHANNEL + ":HS2", backend=usb_bus) as driver:
        other.scan("A1010")
        scanner.scan("A2010")
        assert pump(driver, bool) == [DeviceCard("AS")]
        assert scanner.typed_to_kernel == "A2010\n"  # the other scanner stayed the kernel's


def test_an_absent_scanner_or_a_bad_channel_is_an_init_error(usb_bus: VirtualUsbBus) -> None:
    with pytest.raises(DriverInitError, match="no USB device"):
        UsbHidDriver(CHANNEL, backend=usb_bus).open()
    with pytest.raises(DriverInitError, match="usb:VID:PID"):
        UsbHidDriver("/dev/ttyUSB0", backend=usb_bus)


def test_unplug_fails_the_read_and_close_still_works(
    usb_bus: VirtualUsbBus, scanner: HidCardScanner, driver: UsbHidDriver
) -> None:
    usb_bus.unplug(scanner)
    with pytest.raises(DriverOperationError, match="unplugged"):
        driver.read(5.0)
    driver.close()
    usb_bus.plug(scanner)
    driver.open()
    scanner.scan("A1010")
    assert pump(driver, bool) == [DeviceCard("AS")]


def test_the_reader_rides_out_an_unplug(usb_bus: VirtualUsbBus, scanner: HidCardScanner) -> None:
    got = Collector()
    driver = UsbHidDriver(CHANNEL, backend=usb_bus)
    reader = DeviceReader(driver, got, backoff_initial=0.01, backoff_max=0.05).start()
    try:
        got.wait(lambda ev: LinkUp in map(type, ev))
        scanner.scan("A1010")
        got.wait(lambda ev: DeviceCard("AS") in ev)

        usb_bus.unplug(scanner)
        got.wait(lambda ev: LinkDown in map(type, ev))
        usb_bus.plug(scanner)
        got.wait(lambda ev: [type(e) for e in ev].count(LinkUp) == 2)
        scanner.scan("B3110")
        events = got.wait(lambda ev: DeviceCard("JC") in ev)
    finally:
        reader.stop(timeout=5)
    assert [type(e).__name__ for e in events] == [
        "LinkUp",
        "DeviceCard",
        "LinkDown",
        "LinkUp",
        "DeviceCard",
    ]
    assert scanner.kernel_bound == {0}  # stopping gave the keyboard back
    assert reader.errors == 0
