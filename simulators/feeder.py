"""Simulated devices a daemon's driver connects to, and the feeder that deals on them.

One device class per transport. Serial devices sit behind a real pty
(``simulators.serial_pty``) so the daemon opens them through pyserial; USB
devices are plugged into a ``VirtualUsbBus`` that pyusb drivers are handed as
their backend. What each device sends is ``simulators.wires``; which device
stands for which driver is ``simulators.registry``. :class:`Feeder` runs a
dealer's steps against any of them in real time.
"""

from __future__ import annotations

import tempfile
import threading
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any, Protocol

from drivers.registry import get_driver_class
from simulators.actions import Pause, ServerCommand, Step, Unplug
from simulators.faults import Faults, FaultyPort
from simulators.serial_pty import FramedPtyDevice, PtyPort
from simulators.usb_backend import VirtualUsbBus
from simulators.usb_devices import FramedUsbShoe, HidCardScanner, VirtualDevice
from simulators.wires import CardAction, Wire, device_event, scan_code


class SimDevice(Protocol):
    """A simulated card reader the daemon's driver ``driver`` connects to at ``channel``."""

    driver: str
    driver_options: dict[str, Any]  # what the driver needs to reach it (the USB backend)

    @property
    def channel(self) -> str:
        """Where the driver finds it (a pty's path, a USB match): read only, as the device decides it."""
        ...

    @property
    def reports_cut(self) -> bool:
        """Whether the device tells the host about the cut card: its driver's ``reports_cut_card``."""
        ...

    def emit(self, action: CardAction) -> None: ...
    def unplug(self) -> None: ...
    def plug(self) -> None: ...
    def close(self) -> None: ...


class _Device:
    """What every simulated device has: its driver's name, and that driver's facts."""

    driver: str

    @property
    def reports_cut(self) -> bool:
        return get_driver_class(self.driver).reports_cut_card


# ---------------------------------------------------------------------- serial devices


class _PtyDevice(_Device):
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
    """A device that only talks (a Bee-Tek shoe, a line-code scanner) on a pty, its writes passed
    through ``faults``."""

    def __init__(self, driver: str, port: PtyPort, faults: Faults, wire: Wire) -> None:
        super().__init__(driver, port)
        self._out = FaultyPort(port, faults)
        self._wire = wire

    def emit(self, action: CardAction) -> None:
        frame = self._wire.emit(action)
        if frame and self.port.plugged:
            self._out.write(frame)


class FramedSerialDevice(_PtyDevice):
    """Our own framed shoe on a pty: acknowledged, repeated until acknowledged, faults on the wire."""

    def __init__(self, driver: str, port: PtyPort, faults: Faults) -> None:
        super().__init__(driver, port)
        self.shoe = FramedPtyDevice(FaultyPort(port, faults)).start()  # type: ignore[arg-type]

    def emit(self, action: CardAction) -> None:
        self.shoe.send(device_event(action))

    def close(self) -> None:
        self.shoe.stop()
        super().close()


# ---------------------------------------------------------------------- USB devices


class _UsbDevice(_Device):
    """A device model plugged into a virtual USB bus; ``channel`` is the driver's USB match."""

    def __init__(self, driver: str, bus: VirtualUsbBus, model: VirtualDevice) -> None:
        self.driver = driver
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

    def __init__(self, driver: str, bus: VirtualUsbBus) -> None:
        self.scanner = HidCardScanner()
        super().__init__(driver, bus, self.scanner)

    def emit(self, action: CardAction) -> None:
        if (code := scan_code(action)) is not None:
            self.scanner.scan(code)


class UsbFramedDevice(_UsbDevice):
    """Our framed shoe on USB bulk endpoints."""

    def __init__(self, driver: str, bus: VirtualUsbBus) -> None:
        self.shoe = FramedUsbShoe()
        super().__init__(driver, bus, self.shoe)

    def emit(self, action: CardAction) -> None:
        self.shoe.send(device_event(action))


# ---------------------------------------------------------------------- running


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
        on_command: Callable[[ServerCommand], object] | None = None,
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
