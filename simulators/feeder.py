"""Simulated devices: the dealer's actions as the bytes or USB reports each driver reads.

One device class per transport. Serial devices sit behind a real pty
(``simulators.serial_pty``) so the daemon opens them through pyserial; USB
devices are plugged into a ``VirtualUsbBus`` that pyusb drivers are handed as
their backend. The Bee-Tek and line-code frames are simple text and are
written here; the framed protocol's encoding is the drivers' own
(``drivers.framed_device``), so the device model cannot drift from the host's.
:class:`Feeder` runs a dealer's steps against any of them in real time.
"""

from __future__ import annotations

import random
import tempfile
import threading
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any, Final, Protocol

from drivers.events import DeviceCard, DeviceCutCard
from simulators.actions import CutCard, Draw, Pause, ServerCommand, Step, Unplug, Unreadable
from simulators.faults import FaultRates, Faults, FaultyPort
from simulators.serial_pty import FramedPtyDevice, PtyPort
from simulators.usb_backend import VirtualUsbBus
from simulators.usb_devices import FramedUsbShoe, HidCardScanner, VirtualDevice

DRIVERS: Final = ("beetek", "linecode", "framed", "usb-hid", "usb-framed")

CardAction = Draw | Unreadable | CutCard


class SimDevice(Protocol):
    """A simulated card reader the daemon's driver ``driver`` connects to at ``channel``."""

    driver: str
    channel: str
    reports_cut: bool  # whether the device tells the host about the cut card
    driver_options: dict[str, Any]  # what the driver needs to reach it (the USB backend)

    def emit(self, action: CardAction) -> None: ...
    def unplug(self) -> None: ...
    def plug(self) -> None: ...
    def close(self) -> None: ...


# ---------------------------------------------------------------------- text frames


def beetek_frame(action: CardAction, rng: random.Random, crlf: bool = False) -> bytes | None:
    """A Bee-Tek message for the action, varied the way real firmware varies (docs/devices.md)."""
    if isinstance(action, CutCard):
        return None  # the Bee-Tek shoe has no cut-card message
    tag = "[Manual Burn Cards]" if isinstance(action, Draw) and action.burn else "[Game]"
    if isinstance(action, Unreadable):
        body = "Game"
    else:
        rank, suit = action.card[0], action.card[1]
        if rank == "T" and rng.random() < 0.5:
            rank = "10"
        body = "Card:" + (suit + rank if rng.random() < 0.2 else rank + suit)
    return f" {tag}<{body}> ".encode("ascii") + (b"\r\n" if crlf else b"")


def beetek_junk(rng: random.Random) -> bytes:
    """Noise with no ``[`` in it, so it can never open a frame."""
    return bytes(rng.choice(b"abcxyz0123456789<>:;!? \x7f\x80\xfe") for _ in range(rng.randint(1, 12)))


_LETTER_SUIT: Final = {"S": "A", "H": "H", "C": "C", "D": "D"}
_DIGIT_SUIT: Final = {"S": "1", "H": "2", "C": "3", "D": "4"}
_RANK_NO: Final = {r: f"{i + 1:02d}" for i, r in enumerate("A23456789TJQK")}
NOREAD: Final = "NOREAD"  # what scanners print for a failed read


def letter_rank_code(card: str) -> str:
    """``A01`` is the ace of spades, ``D12`` the queen of diamonds."""
    return _LETTER_SUIT[card[1]] + _RANK_NO[card[0]]


def suit_digit_code(card: str, position_letter: str = "S") -> str:
    """A position letter, suit digit (1=S 2=H 3=C 4=D), two-digit rank, ``0``: ``S1010`` is AS."""
    return position_letter + _DIGIT_SUIT[card[1]] + _RANK_NO[card[0]] + "0"


def linecode_frame(action: CardAction) -> bytes | None:
    if isinstance(action, CutCard):
        return None
    code = NOREAD if isinstance(action, Unreadable) else letter_rank_code(action.card)
    return f"{code}\r\n".encode("ascii")


def linecode_junk(rng: random.Random) -> bytes:
    """A line of noise holding a control byte, so it is counted as noise, never read as a code."""
    noise = bytes(rng.choice(b"\x00\x01\x07\x1b?~#") for _ in range(rng.randint(1, 8)))
    return b"\x00" + noise + b"\r\n"


# ---------------------------------------------------------------------- serial devices


class _PtyDevice:
    def __init__(self, driver: str, port: PtyPort) -> None:
        self.driver = driver
        self.port = port
        self.driver_options: dict[str, Any] = {}

    @property
    def channel(self) -> str:
        return self.port.path

    def unplug(self) -> None:
        self.port.unplug()

    def plug(self) -> None:
        self.port.plug(new_node=True)

    def close(self) -> None:
        self.port.close()


class TextSerialDevice(_PtyDevice):
    """A Bee-Tek shoe or a line-code scanner on a pty, its writes passed through ``faults``."""

    reports_cut = False

    def __init__(self, driver: str, port: PtyPort, faults: Faults, rng: random.Random) -> None:
        super().__init__(driver, port)
        self._out = FaultyPort(port, faults)
        self._rng = rng
        self._crlf = rng.random() < 0.5  # some firmware ends lines, some does not

    def emit(self, action: CardAction) -> None:
        if self.driver == "beetek":
            frame = beetek_frame(action, self._rng, self._crlf)
        else:
            frame = linecode_frame(action)
        if frame is not None and self.port.plugged:
            self._out.write(frame)


class FramedSerialDevice(_PtyDevice):
    """Our own framed shoe on a pty: acknowledged, repeated until acknowledged, faults on the wire."""

    reports_cut = True

    def __init__(self, port: PtyPort, faults: Faults) -> None:
        super().__init__("framed", port)
        self.shoe = FramedPtyDevice(FaultyPort(port, faults)).start()  # type: ignore[arg-type]

    def emit(self, action: CardAction) -> None:
        self.shoe.send(device_event(action))

    def close(self) -> None:
        self.shoe.stop()
        super().close()


def device_event(action: CardAction) -> DeviceCard | DeviceCutCard:
    if isinstance(action, CutCard):
        return DeviceCutCard()
    if isinstance(action, Unreadable):
        return DeviceCard(None)
    return DeviceCard(action.card, burn=action.burn)


# ---------------------------------------------------------------------- USB devices


class _UsbDevice:
    """A device model plugged into a virtual USB bus; ``channel`` is the driver's USB match."""

    def __init__(self, bus: VirtualUsbBus, model: VirtualDevice) -> None:
        self.bus = bus
        self.model = model
        self.driver_options: dict[str, Any] = {"backend": bus}
        d = model.descriptor
        self.channel = f"usb:{d.idVendor:04x}:{d.idProduct:04x}" + (
            f":{model.serial}" if model.serial else ""
        )
        bus.plug(model)

    def unplug(self) -> None:
        self.bus.unplug(self.model)

    def plug(self) -> None:
        self.bus.plug(self.model)

    def close(self) -> None:
        if self.bus.is_plugged(self.model):
            self.bus.unplug(self.model)


class UsbHidDevice(_UsbDevice):
    """A keyboard-wedge scanner typing suit-digit codes; it cannot see the cut card."""

    driver = "usb-hid"
    reports_cut = False

    def __init__(self, bus: VirtualUsbBus) -> None:
        self.scanner = HidCardScanner()
        super().__init__(bus, self.scanner)

    def emit(self, action: CardAction) -> None:
        if not isinstance(action, CutCard):
            self.scanner.scan(NOREAD if isinstance(action, Unreadable) else suit_digit_code(action.card))


class UsbFramedDevice(_UsbDevice):
    """Our framed shoe on USB bulk endpoints."""

    driver = "usb-framed"
    reports_cut = True

    def __init__(self, bus: VirtualUsbBus) -> None:
        self.shoe = FramedUsbShoe()
        super().__init__(bus, self.shoe)

    def emit(self, action: CardAction) -> None:
        self.shoe.send(device_event(action))


# ---------------------------------------------------------------------- making and running


def make_device(
    driver: str,
    rng: random.Random,
    faults: FaultRates | None = None,
    *,
    link: str | Path | None = None,
    bus: VirtualUsbBus | None = None,
) -> SimDevice:
    """The simulated device for ``driver``.

    Serial devices get a pty (behind the symlink ``link`` if given, so the
    daemon's channel survives unplugs); USB ones are plugged into ``bus``.
    Wire faults apply to serial devices; the USB models have their own.
    """
    if driver in ("usb-hid", "usb-framed"):
        if bus is None:
            raise ValueError(f"{driver} needs a VirtualUsbBus")
        return UsbHidDevice(bus) if driver == "usb-hid" else UsbFramedDevice(bus)
    if driver not in DRIVERS:
        raise ValueError(f"unknown driver {driver!r}; simulated: {', '.join(DRIVERS)}")
    junk = {"beetek": beetek_junk, "linecode": linecode_junk}.get(driver)
    wire = Faults(faults or FaultRates(), random.Random(rng.random()), junk)
    port = PtyPort(link)
    if driver == "framed":
        return FramedSerialDevice(port, wire)
    return TextSerialDevice(driver, port, wire, rng)


def default_link() -> Path:
    """A fresh symlink path for a simulated serial device."""
    return Path(tempfile.mkdtemp(prefix="scannerd-sim-")) / "shoe"


class Feeder:
    """Performs a dealer's steps on a device in real time.

    ``on_command`` gets the game-server commands (to publish them, or to hand
    them to a validator); ``after`` is called once each step is done (tests
    use it to wait for the daemon's answer). ``stop`` ends a run early.
    """

    def __init__(
        self,
        device: SimDevice,
        on_command: Callable[[ServerCommand], None] | None = None,
        after: Callable[[Step], None] | None = None,
        stop: threading.Event | None = None,
    ) -> None:
        self.device = device
        self.on_command = on_command
        self.after = after
        self.stop = stop or threading.Event()

    def _wait(self, seconds: float) -> None:
        if seconds > 0:
            self.stop.wait(seconds)

    def run(self, steps: Iterable[Step]) -> int:
        """Perform ``steps`` until they end or ``stop`` is set; returns how many were done."""
        done = 0
        for step in steps:
            self._wait(step.delay)
            if self.stop.is_set():
                break
            action = step.action
            match action:
                case ServerCommand():
                    if self.on_command is not None:
                        self.on_command(action)
                case Unplug(seconds=seconds):
                    self.device.unplug()
                    self._wait(seconds)
                    self.device.plug()
                case Pause(seconds=seconds):
                    self._wait(seconds)
                case _:
                    self.device.emit(action)
            done += 1
            if self.after is not None:
                self.after(step)
        return done
