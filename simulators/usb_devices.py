"""What the simulated USB devices do on their endpoints.

A device model owns its descriptors and its endpoint queues and nothing about the
bus: ``simulators.usb_backend.VirtualUsbBus`` plugs models in, enforces the host's
side of the rules (claiming, kernel drivers, unplug) and moves packets. All state
is guarded by the model's ``lock`` (a condition the bus waits on), so a test
thread can scan cards while a driver's reader thread is blocked in a read.
"""

from __future__ import annotations

import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass

from drivers.codecs.hid import ENTER_USAGES, KEYS, BootKeyboard
from drivers.events import DeviceCard, DeviceEvent, DeviceHello
from drivers.framed_device import FramedDevice
from simulators.usb_descriptors import (
    BOOT_KEYBOARD_REPORT_DESCRIPTOR,
    DESC_HID,
    DESC_HID_REPORT,
    EP_BULK,
    EP_IN,
    EP_INTERRUPT,
    DeviceDescriptor,
    EndpointDescriptor,
    HidRequest,
    InterfaceDescriptor,
    Request,
    hid_descriptor,
    single_interface_device,
)

# bmRequestType bits
REQ_TYPE_MASK = 0x60
REQ_STANDARD = 0x00
REQ_CLASS = 0x20
REQ_VENDOR = 0x40
REQ_IN = 0x80
RECIPIENT_DEVICE = 0x00
RECIPIENT_INTERFACE = 0x01

# libusb speed codes, as pyusb reports them in Device.speed
SPEED_LOW = 1
SPEED_FULL = 2


class Stall(Exception):
    """The device answered a control request with STALL (the host sees a pipe error)."""


@dataclass(frozen=True)
class Setup:
    """A control request's setup packet."""

    bmRequestType: int
    bRequest: int
    wValue: int
    wIndex: int
    wLength: int

    @property
    def kind(self) -> int:
        return self.bmRequestType & REQ_TYPE_MASK

    @property
    def recipient(self) -> int:
        return self.bmRequestType & 0x1F

    @property
    def device_to_host(self) -> bool:
        return bool(self.bmRequestType & REQ_IN)


class VirtualDevice:
    """Base of a simulated device: descriptors, per-endpoint IN packet queues, and hooks."""

    speed = SPEED_FULL
    # Interfaces a kernel driver binds to when the device is plugged in.
    kernel_interfaces: frozenset[int] = frozenset()

    def __init__(self, descriptor: DeviceDescriptor) -> None:
        self.descriptor = descriptor
        self.lock = threading.Condition()
        self.powered = False  # set by the bus while plugged in
        self.kernel_bound: set[int] = set()  # maintained by the bus
        self._in: dict[int, deque[bytes]] = {
            ep.bEndpointAddress: deque()
            for cfg in descriptor.configurations
            for intf in cfg.interfaces
            for ep in intf.endpoints
            if ep.is_in
        }

    @property
    def serial(self) -> str | None:
        return self.descriptor.strings.get(self.descriptor.iSerialNumber)

    def endpoint(self, address: int) -> EndpointDescriptor:
        for cfg in self.descriptor.configurations:
            for intf in cfg.interfaces:
                for ep in intf.endpoints:
                    if ep.bEndpointAddress == address:
                        return ep
        raise KeyError(address)

    # -- called by the bus with ``lock`` held --------------------------------------------------

    def next_in_packet(self, ep: int) -> bytes | None:
        """The next packet the device has ready on IN endpoint ``ep``, or None (it NAKs)."""
        queue = self._in.get(ep)
        return queue.popleft() if queue else None

    def retry_after(self) -> float | None:
        """Seconds until the device will have something to send without being poked (None: never)."""
        return None

    def receive(self, ep: int, data: bytes) -> None:
        """Host-to-device data on OUT endpoint ``ep``."""

    def control(self, setup: Setup, data: bytes) -> bytes:
        """Class and vendor control requests (standard ones are the bus's); reply for IN requests."""
        raise Stall(f"request {setup.bRequest:#x} not supported")

    def powered_on(self) -> None:
        """Plugged in (again)."""

    def powered_off(self) -> None:
        """Unplugged: forget whatever lives only in powered RAM."""
        for queue in self._in.values():
            queue.clear()

    def kernel_driver_changed(self) -> None:
        """A kernel driver was bound to or unbound from an interface."""

    # -- for tests -------------------------------------------------------------------------------

    def wait_until(self, predicate: Callable[[], bool], timeout: float = 5.0) -> bool:
        """Wait (bounded) until ``predicate`` holds; it is checked with the lock held."""
        with self.lock:
            return self.lock.wait_for(predicate, timeout)


def packetize(payload: bytes, packet_size: int, max_packet: int) -> list[bytes]:
    """One transfer as packets: ends on a short packet, adding an empty one if it would not."""
    size = min(packet_size, max_packet)
    packets = [payload[i : i + size] for i in range(0, len(payload), size)]
    if not packets or len(packets[-1]) == max_packet:
        packets.append(b"")
    return packets


# ----------------------------------------------------------------------------------------------
# HID keyboard-wedge card scanner
# ----------------------------------------------------------------------------------------------

HID_REPORT_EP = EP_IN | 1

# character -> (modifier byte, usage): the inverse of the decoder's US keymap, first usage wins
# (so digits type on the main row, not the keypad, as wedge scanners do by default).
_TYPING: dict[str, tuple[int, int]] = {}
for _usage, (_plain, _shifted) in sorted(KEYS.items()):
    _TYPING.setdefault(_plain, (0, _usage))
    _TYPING.setdefault(_shifted, (0x02, _usage))
_TYPING["\n"] = (0, min(ENTER_USAGES))


def hid_scanner_descriptor(vid: int, pid: int, serial: str | None) -> DeviceDescriptor:
    report_ep = EndpointDescriptor(HID_REPORT_EP, EP_INTERRUPT, wMaxPacketSize=8, bInterval=10)
    interface = InterfaceDescriptor(
        bInterfaceNumber=0,
        bInterfaceClass=3,  # HID
        bInterfaceSubClass=1,  # boot interface
        bInterfaceProtocol=1,  # keyboard
        endpoints=(report_ep,),
        extra=hid_descriptor(len(BOOT_KEYBOARD_REPORT_DESCRIPTOR)),
    )
    return single_interface_device(vid, pid, interface, "Table Scanners Ltd", "Card Scanner HID", serial)


class HidCardScanner(VirtualDevice):
    """A keyboard-wedge table scanner: types each code, then Enter, as boot keyboard reports.

    While the kernel's keyboard driver is bound, what the scanner types goes to the
    kernel (collected in ``typed_to_kernel``), as it would land on the console.
    """

    speed = SPEED_LOW
    kernel_interfaces = frozenset({0})

    def __init__(self, vid: int = 0x1209, pid: int = 0x0001, serial: str | None = "HS0001") -> None:
        super().__init__(hid_scanner_descriptor(vid, pid, serial))
        self.typed_to_kernel = ""
        self.protocol = 1  # report protocol until the host asks for boot
        self.idle = 125  # 500 ms, the HID default for keyboards, in 4 ms units
        self.leds = 0

    def type_text(self, text: str, *, rollover: bool = False, repeats: int = 1) -> bool:
        """Type ``text`` as key reports. False if unplugged (nothing typed, as with no power).

        ``rollover`` presses each key before releasing the previous one (a fast
        typist's pattern); ``repeats`` sends each report that many times (the idle
        rate re-sending a held key). Neither may change what the host reads.
        """
        return self.type_reports(key_reports(text, rollover=rollover), repeats=repeats)

    def scan(self, code: str, *, rollover: bool = False, repeats: int = 1) -> bool:
        """Scan one card: its code, then Enter."""
        return self.type_text(code + "\n", rollover=rollover, repeats=repeats)

    def type_reports(self, reports: list[bytes], *, repeats: int = 1) -> bool:
        """Send raw 8-byte reports (for junk, error-rollover and odd devices)."""
        with self.lock:
            if not self.powered:
                return False
            for report in reports:
                for _ in range(repeats):
                    self._send_report(report)
            self._drain_to_kernel()
            return True

    def _send_report(self, report: bytes) -> None:
        # A report is exactly one full packet: no short packet follows it.
        self._in[HID_REPORT_EP].append(bytes(report))
        self.lock.notify_all()

    def kernel_driver_changed(self) -> None:
        self._drain_to_kernel()

    def _drain_to_kernel(self) -> None:
        if 0 not in self.kernel_bound:
            return
        keyboard = BootKeyboard()  # standing in for the kernel's keyboard driver
        queue = self._in[HID_REPORT_EP]
        while queue:
            self.typed_to_kernel += keyboard.feed(queue.popleft())

    def control(self, setup: Setup, data: bytes) -> bytes:
        if setup.kind == REQ_STANDARD and setup.bRequest == Request.GET_DESCRIPTOR:
            kind = setup.wValue >> 8
            if kind == DESC_HID_REPORT:
                return BOOT_KEYBOARD_REPORT_DESCRIPTOR
            if kind == DESC_HID:
                return hid_descriptor(len(BOOT_KEYBOARD_REPORT_DESCRIPTOR))
        if setup.kind == REQ_CLASS:
            match setup.bRequest:
                case HidRequest.SET_PROTOCOL:
                    self.protocol = setup.wValue & 1
                    return b""
                case HidRequest.GET_PROTOCOL:
                    return bytes([self.protocol])
                case HidRequest.SET_IDLE:
                    self.idle = setup.wValue >> 8
                    return b""
                case HidRequest.GET_IDLE:
                    return bytes([self.idle])
                case HidRequest.SET_REPORT:  # the keyboard LEDs (num/caps/scroll lock)
                    self.leds = data[0] if data else 0
                    return b""
                case HidRequest.GET_REPORT:  # nothing held
                    return bytes(8)
        return super().control(setup, data)


def boot_report(modifier: int, *usages: int) -> bytes:
    """One boot keyboard report: the modifier byte, a reserved byte, up to six keys held down."""
    return bytes([modifier, 0, *usages]).ljust(8, b"\0")


def key_reports(text: str, *, rollover: bool = False) -> list[bytes]:
    """The reports a US-layout keyboard sends typing ``text`` (``\\n`` is Enter)."""
    strokes = [_TYPING[c] for c in text]
    reports: list[bytes] = []
    held: tuple[int, int] | None = None
    for modifier, usage in strokes:
        if rollover and held is not None and held[1] != usage:
            # next key goes down while the previous is still held, then the previous comes up
            reports.append(boot_report(modifier, held[1], usage))
        elif held is not None:
            reports.append(boot_report(0))
        reports.append(boot_report(modifier, usage))
        held = (modifier, usage)
    if held is not None:
        reports.append(boot_report(0))
    return reports


# ----------------------------------------------------------------------------------------------
# Native USB shoe speaking the framed protocol
# ----------------------------------------------------------------------------------------------

SHOE_OUT_EP = 0x01
SHOE_IN_EP = EP_IN | 0x01


def framed_shoe_descriptor(vid: int, pid: int, serial: str | None) -> DeviceDescriptor:
    interface = InterfaceDescriptor(
        bInterfaceNumber=0,
        bInterfaceClass=0xFF,  # vendor specific: no kernel driver wants it
        bInterfaceSubClass=0,
        bInterfaceProtocol=0,
        endpoints=(
            EndpointDescriptor(SHOE_OUT_EP, EP_BULK, wMaxPacketSize=64),
            EndpointDescriptor(SHOE_IN_EP, EP_BULK, wMaxPacketSize=64),
        ),
    )
    return single_interface_device(vid, pid, interface, "scannerd", "Framed Card Shoe", serial)


class FramedUsbShoe(VirtualDevice):
    """Shoe firmware speaking ``framed`` on vendor bulk endpoints.

    The protocol behaviour is ``drivers.framed_device.FramedDevice``, the one
    reference of what shoe firmware does (one reliable message in flight,
    repeated until acknowledged; the boot hello first); this model puts it
    behind USB endpoints. A repeat is only made when the host has read
    everything before it, as a device with one IN buffer would.

    A self-powered shoe (the default) keeps running while the cable is out, so
    cards dealt meanwhile arrive after the replug; a ``bus_powered`` one boots
    afresh on every plug-in (new boot id, sequence numbers from 1, queue lost)
    and reads no card while unplugged. Device faults for tests: ``duplicate``
    sends every frame twice in one transfer; ``packet_size`` cuts frames into
    short packets, so one frame reaches the host over several reads; ``inject``
    puts raw bytes (junk) on the wire.
    """

    def __init__(
        self,
        vid: int = 0x1209,
        pid: int = 0x0002,
        serial: str | None = "FS0001",
        *,
        model: str = "FS-1",
        firmware: str = "1.0.0",
        retransmit_after: float = 0.25,
        bus_powered: bool = False,
        duplicate: bool = False,
        packet_size: int = 64,
    ) -> None:
        super().__init__(framed_shoe_descriptor(vid, pid, serial))
        self.model, self.firmware_version = model, firmware
        self.retransmit_after = retransmit_after
        self.bus_powered = bus_powered
        self.duplicate = duplicate
        self.packet_size = packet_size
        self.boot_id = 0
        self.lid_open = self.jam = self.sensor_dirty = False
        self._outbox: deque[bytes] = deque()  # transfers ready to go
        self._packets: deque[bytes] = deque()  # what is left of the transfer being sent
        self.protocol: FramedDevice | None = None
        if not bus_powered:
            with self.lock:
                self.protocol = self._boot()

    # -- what the dealer and the firmware do ------------------------------------------------------

    def card(self, card: str | None, *, burn: bool = False) -> bool:
        """A card passes the sensor (None: it could not be read). False if the shoe is off."""
        return self.send(DeviceCard(card, burn))

    def send(self, event: DeviceEvent) -> bool:
        """Have the firmware send a device event. False if the shoe is off."""
        with self.lock:
            if self.protocol is None:
                return False
            self._emit(self.protocol.send(event, time.monotonic()))
            return True

    def status(self) -> None:
        """Send a heartbeat with the shoe's state."""
        with self.lock:
            if self.protocol is not None:
                self._emit(self.protocol.status(self.lid_open, self.jam, self.sensor_dirty))

    def inject(self, raw: bytes) -> None:
        """Put raw bytes on the wire as one transfer (line noise, hand-made frames)."""
        with self.lock:
            self._emit(raw)

    def reboot(self) -> None:
        """Power-cycle the firmware: new boot id, sequence numbers from 1, unsent messages lost."""
        with self.lock:
            self._outbox.clear()
            self._packets.clear()
            self.protocol = self._boot()

    @property
    def led(self) -> bool:
        return self.protocol is not None and self.protocol.led

    @property
    def buzzer(self) -> bool:
        return self.protocol is not None and self.protocol.buzzer

    @property
    def acked(self) -> list[int]:
        """Sequence numbers the host acknowledged since the last boot, in order."""
        return list(self.protocol.acked) if self.protocol else []

    @property
    def idle(self) -> bool:
        """Everything the firmware sent reliably has been acknowledged."""
        return self.protocol is None or self.protocol.idle

    # -- the bus's side ---------------------------------------------------------------------------

    def powered_on(self) -> None:
        if self.bus_powered:
            self.protocol = self._boot()

    def powered_off(self) -> None:
        self._packets.clear()  # the transfer in progress is lost with the link
        self._outbox.clear()
        if self.bus_powered:
            self.protocol = None

    def next_in_packet(self, ep: int) -> bytes | None:
        if not self._packets:
            frame = self._outbox.popleft() if self._outbox else self._repeat()
            if not frame:
                return None
            if self.duplicate:
                frame += frame
            self._packets.extend(packetize(frame, self.packet_size, self.endpoint(ep).wMaxPacketSize))
        return self._packets.popleft()

    def retry_after(self) -> float | None:
        # The firmware keeps its own clock; look in a few times per repeat interval.
        busy = self.protocol is not None and self.protocol.in_flight is not None
        return self.retransmit_after / 4 if busy else None

    def receive(self, ep: int, data: bytes) -> None:
        if self.protocol is not None:
            self._emit(self.protocol.receive(data, time.monotonic()))
        self.lock.notify_all()

    # -- inside -----------------------------------------------------------------------------------

    def _boot(self) -> FramedDevice:
        self.boot_id += 1
        hello = DeviceHello(self.model, self.serial or "", self.firmware_version, self.boot_id)
        protocol = FramedDevice(hello, self.retransmit_after)
        self._emit(protocol.start(time.monotonic()))
        return protocol

    def _repeat(self) -> bytes:
        repeat = self.protocol.poll(time.monotonic()) if self.protocol is not None else b""
        if repeat:
            self.lock.notify_all()  # tests wait on the repeat count
        return repeat

    def _emit(self, data: bytes) -> None:
        if data:
            self._outbox.append(data)
            self.lock.notify_all()
