"""The simulated USB bus, seen only through pyusb, behaves as libusb does with real devices."""

from __future__ import annotations

import errno
import struct
import threading
from collections.abc import Callable

import pytest
import usb.core
import usb.util

from drivers.codecs.framed import FrameReader, encode_ack
from simulators.usb_backend import VirtualUsbBus
from simulators.usb_descriptors import BOOT_KEYBOARD_REPORT_DESCRIPTOR
from simulators.usb_devices import SHOE_IN_EP, SHOE_OUT_EP, FramedUsbShoe, HidCardScanner

HID_EP = 0x81


@pytest.fixture
def scanner(usb_bus: VirtualUsbBus) -> HidCardScanner:
    device = HidCardScanner(vid=0x1209, pid=0x0001, serial="HS42")
    usb_bus.plug(device)
    return device


@pytest.fixture
def shoe(usb_bus: VirtualUsbBus) -> FramedUsbShoe:
    device = FramedUsbShoe(serial="FS42", retransmit_after=60.0)
    usb_bus.plug(device)
    return device


def find(usb_bus: VirtualUsbBus, pid: int) -> usb.core.Device:
    device = usb.core.find(backend=usb_bus, idVendor=0x1209, idProduct=pid)
    assert device is not None
    return device


def raises_errno(code: int, call: Callable[[], object]) -> usb.core.USBError:
    with pytest.raises(usb.core.USBError) as info:
        call()
    assert info.value.errno == code, info.value
    return info.value


# -- descriptors ---------------------------------------------------------------------------------


def test_hid_scanner_presents_a_boot_keyboard_interface(
    usb_bus: VirtualUsbBus, scanner: HidCardScanner
) -> None:
    dev = find(usb_bus, 0x0001)
    assert (dev.bus, dev.address, dev.speed) == (1, 2, 1)
    assert (dev.manufacturer, dev.product, dev.serial_number) == (
        "Table Scanners Ltd",
        "Card Scanner HID",
        "HS42",
    )
    intf = dev.get_active_configuration()[(0, 0)]
    assert (intf.bInterfaceClass, intf.bInterfaceSubClass, intf.bInterfaceProtocol) == (3, 1, 1)
    (ep,) = intf.endpoints()
    assert ep.bEndpointAddress == HID_EP
    assert usb.util.endpoint_type(ep.bmAttributes) == usb.util.ENDPOINT_TYPE_INTR
    assert ep.wMaxPacketSize == 8
    # the HID class descriptor follows the interface and points at a 63-byte report descriptor
    hid = bytes(intf.extra_descriptors)
    assert hid[:2] == b"\x09\x21" and struct.unpack_from("<H", hid, 7)[0] == 63


def test_framed_shoe_presents_vendor_bulk_endpoints(usb_bus: VirtualUsbBus, shoe: FramedUsbShoe) -> None:
    dev = find(usb_bus, 0x0002)
    intf = dev.get_active_configuration()[(0, 0)]
    assert intf.bInterfaceClass == 0xFF
    kinds = {(e.bEndpointAddress, usb.util.endpoint_type(e.bmAttributes)) for e in intf}
    assert kinds == {(SHOE_OUT_EP, usb.util.ENDPOINT_TYPE_BULK), (SHOE_IN_EP, usb.util.ENDPOINT_TYPE_BULK)}
    assert dev.serial_number == "FS42"
    assert not dev.is_kernel_driver_active(0)


def test_raw_descriptors_agree_with_the_parsed_ones(usb_bus: VirtualUsbBus, scanner: HidCardScanner) -> None:
    dev = find(usb_bus, 0x0001)
    raw = bytes(dev.ctrl_transfer(0x80, 0x06, 0x0100, 0, 18))
    assert raw[0:2] == b"\x12\x01"
    assert struct.unpack_from("<HH", raw, 8) == (0x1209, 0x0001)
    cfg = bytes(dev.ctrl_transfer(0x80, 0x06, 0x0200, 0, 255))
    assert len(cfg) == struct.unpack_from("<H", cfg, 2)[0] == dev[0].wTotalLength == 9 + 9 + 9 + 7
    # interface, then the HID descriptor, then the endpoint
    assert [cfg[9 + 1], cfg[18 + 1], cfg[27 + 1]] == [0x04, 0x21, 0x05]
    # a short GET_DESCRIPTOR returns just the head, as hosts read wTotalLength first
    assert len(dev.ctrl_transfer(0x80, 0x06, 0x0200, 0, 4)) == 4
    raises_errno(errno.EPIPE, lambda: dev.ctrl_transfer(0x80, 0x06, 0x0309, 0x0409, 255))


# -- kernel driver, claiming ----------------------------------------------------------------------


def test_a_bound_keyboard_driver_must_be_detached_and_can_be_given_back(
    usb_bus: VirtualUsbBus, scanner: HidCardScanner
) -> None:
    dev = find(usb_bus, 0x0001)
    assert dev.is_kernel_driver_active(0)
    raises_errno(errno.EBUSY, lambda: usb.util.claim_interface(dev, 0))
    raises_errno(errno.EBUSY, lambda: dev.read(HID_EP, 8, 10))  # pyusb claims before reading
    raises_errno(errno.EBUSY, lambda: dev.set_configuration())

    dev.detach_kernel_driver(0)
    raises_errno(errno.ENOENT, lambda: dev.detach_kernel_driver(0))
    usb.util.claim_interface(dev, 0)
    assert usb_bus.claimed(scanner) == {0}
    raises_errno(errno.EBUSY, lambda: dev.attach_kernel_driver(0))

    usb.util.release_interface(dev, 0)
    dev.attach_kernel_driver(0)
    assert dev.is_kernel_driver_active(0)
    assert usb_bus.claimed(scanner) == set()


def test_closing_a_handle_releases_claims_but_not_the_detach(
    usb_bus: VirtualUsbBus, scanner: HidCardScanner
) -> None:
    dev = find(usb_bus, 0x0001)
    dev.detach_kernel_driver(0)
    usb.util.claim_interface(dev, 0)
    usb.util.dispose_resources(dev)
    assert usb_bus.claimed(scanner) == set()
    assert not find(usb_bus, 0x0001).is_kernel_driver_active(0)


def test_a_second_handle_cannot_claim_a_claimed_interface(
    usb_bus: VirtualUsbBus, shoe: FramedUsbShoe
) -> None:
    first, second = find(usb_bus, 0x0002), find(usb_bus, 0x0002)
    usb.util.claim_interface(first, 0)
    raises_errno(errno.EBUSY, lambda: usb.util.claim_interface(second, 0))
    raises_errno(errno.ENOENT, lambda: second.attach_kernel_driver(0))  # no kernel driver for vendor class


def test_while_the_kernel_holds_the_keyboard_it_gets_what_is_typed(
    usb_bus: VirtualUsbBus, scanner: HidCardScanner
) -> None:
    assert scanner.scan("A1010")
    assert scanner.typed_to_kernel == "A1010\n"
    dev = find(usb_bus, 0x0001)
    dev.detach_kernel_driver(0)
    scanner.scan("B3110")
    dev.attach_kernel_driver(0)  # the unread reports go to the kernel as it binds
    assert scanner.typed_to_kernel == "A1010\nB3110\n"


def test_hid_class_requests_reach_the_scanner(usb_bus: VirtualUsbBus, scanner: HidCardScanner) -> None:
    dev = find(usb_bus, 0x0001)
    dev.detach_kernel_driver(0)
    dev.ctrl_transfer(0x21, 0x0B, 0, 0)  # SET_PROTOCOL boot
    dev.ctrl_transfer(0x21, 0x0A, 0, 0)  # SET_IDLE: report on change only
    assert (scanner.protocol, scanner.idle) == (0, 0)
    assert bytes(dev.ctrl_transfer(0x81, 0x06, 0x2200, 0, 255)) == BOOT_KEYBOARD_REPORT_DESCRIPTOR


# -- transfers ------------------------------------------------------------------------------------


def test_an_empty_read_times_out_like_libusb(usb_bus: VirtualUsbBus, shoe: FramedUsbShoe) -> None:
    dev = find(usb_bus, 0x0002)
    dev.read(SHOE_IN_EP, 512, 100)  # the boot hello
    with pytest.raises(usb.core.USBTimeoutError) as info:
        dev.read(SHOE_IN_EP, 512, 10)
    assert info.value.errno == errno.ETIMEDOUT


def test_hid_reports_arrive_one_per_read(usb_bus: VirtualUsbBus, scanner: HidCardScanner) -> None:
    dev = find(usb_bus, 0x0001)
    dev.detach_kernel_driver(0)
    scanner.scan("a")
    assert bytes(dev.read(HID_EP, 8, 100)) == bytes([0, 0, 0x04, 0, 0, 0, 0, 0])
    assert bytes(dev.read(HID_EP, 8, 100)) == bytes(8)  # key up
    assert bytes(dev.read(HID_EP, 8, 100)) == bytes([0, 0, 0x28, 0, 0, 0, 0, 0])  # Enter


def test_a_bulk_transfer_ends_on_a_short_packet(usb_bus: VirtualUsbBus, shoe: FramedUsbShoe) -> None:
    dev = find(usb_bus, 0x0002)
    hello = bytes(dev.read(SHOE_IN_EP, 512, 100))
    assert len(FrameReader().feed(hello)) == 1
    shoe.inject(bytes(range(1, 65)) + b"xy")  # a full packet, then a short one
    assert len(dev.read(SHOE_IN_EP, 512, 100)) == 66
    shoe.inject(bytes(64))  # exactly one full packet: the device adds a zero-length one
    assert len(dev.read(SHOE_IN_EP, 512, 100)) == 64
    shoe.inject(bytes(64))
    raises_errno(errno.EOVERFLOW, lambda: dev.read(SHOE_IN_EP, 32, 100))


def test_a_shoe_can_split_frames_across_reads(usb_bus: VirtualUsbBus) -> None:
    shoe = FramedUsbShoe(packet_size=5)
    usb_bus.plug(shoe)
    dev = find(usb_bus, 0x0002)
    frames, pieces = FrameReader(), []
    while not (decoded := frames.feed(pieces[-1] if pieces else b"")):
        pieces.append(bytes(dev.read(SHOE_IN_EP, 512, 100)))
    assert len(decoded) == 1
    assert len(pieces) > 3 and all(len(p) <= 5 for p in pieces)


def test_a_halted_endpoint_fails_until_cleared(usb_bus: VirtualUsbBus, shoe: FramedUsbShoe) -> None:
    dev = find(usb_bus, 0x0002)
    usb_bus.halt(shoe, SHOE_IN_EP)
    raises_errno(errno.EPIPE, lambda: dev.read(SHOE_IN_EP, 512, 100))
    dev.clear_halt(SHOE_IN_EP)
    assert dev.read(SHOE_IN_EP, 512, 100)


def test_writes_reach_the_device(usb_bus: VirtualUsbBus, shoe: FramedUsbShoe) -> None:
    dev = find(usb_bus, 0x0002)
    assert dev.write(SHOE_OUT_EP, encode_ack(1), 100) == len(encode_ack(1))
    assert shoe.acked == [1]


# -- unplug and replug ----------------------------------------------------------------------------


def test_unplug_wakes_a_blocked_read_with_enodev(usb_bus: VirtualUsbBus, scanner: HidCardScanner) -> None:
    dev = find(usb_bus, 0x0001)
    dev.detach_kernel_driver(0)
    usb.util.claim_interface(dev, 0)
    failures: list[BaseException] = []

    def reader() -> None:
        try:
            dev.read(HID_EP, 8, 60_000)
        except usb.core.USBError as exc:
            failures.append(exc)

    thread = threading.Thread(target=reader)
    thread.start()
    usb_bus.unplug(scanner)
    thread.join(timeout=10)
    assert not thread.is_alive()
    assert [getattr(f, "errno", None) for f in failures] == [errno.ENODEV]
    assert "disconnected" in str(failures[0])


def test_an_unplugged_device_leaves_the_bus_and_its_handles_stay_dead(
    usb_bus: VirtualUsbBus, scanner: HidCardScanner
) -> None:
    dev = find(usb_bus, 0x0001)
    dev.detach_kernel_driver(0)
    usb_bus.unplug(scanner)
    assert usb.core.find(backend=usb_bus, find_all=True) is not None
    assert list(usb.core.find(backend=usb_bus, find_all=True)) == []
    raises_errno(errno.ENODEV, lambda: dev.read(HID_EP, 8, 10))
    raises_errno(errno.ENODEV, lambda: dev.attach_kernel_driver(0))
    assert not scanner.scan("A1010")  # no power, no scan

    usb_bus.plug(scanner)
    again = find(usb_bus, 0x0001)
    assert again.address != dev.address
    assert again.is_kernel_driver_active(0)  # the kernel binds its driver anew
    raises_errno(errno.ENODEV, lambda: dev.read(HID_EP, 8, 10))


def test_replug_can_keep_the_address(usb_bus: VirtualUsbBus, shoe: FramedUsbShoe) -> None:
    before = find(usb_bus, 0x0002).address
    usb_bus.replug(shoe, keep_address=True)
    assert find(usb_bus, 0x0002).address == before
    usb_bus.replug(shoe)
    assert find(usb_bus, 0x0002).address != before


def test_scans_from_another_thread_reach_a_blocked_reader(
    usb_bus: VirtualUsbBus, scanner: HidCardScanner
) -> None:
    dev = find(usb_bus, 0x0001)
    dev.detach_kernel_driver(0)
    typist = threading.Thread(target=lambda: [scanner.scan(f"A{i:04d}") for i in range(20)])
    typist.start()
    reports = []
    while len(reports) < 20 * 12:
        reports.append(bytes(dev.read(HID_EP, 8, 5000)))
    typist.join(timeout=10)
    assert reports.count(bytes([0, 0, 0x28, 0, 0, 0, 0, 0])) == 20
