"""The simulator's devices by driver name, beside the drivers' own registry (``drivers.registry``).

Each driver has one simulated device here, in three forms: its ``wire`` (the
bytes it sends for each dealer's action, made instantly: recordings and the
driver contract test use it), its ``junk`` (line noise its codec must step
over, for the wire faults), and its ``live`` device (on a real pty, or on the
virtual USB bus, for a daemon's driver to open). What the device *is* (its
transport, whether it reports the cut card) is its driver class's, never
repeated here. A driver without an entry cannot be simulated, recorded from
the simulator or pass tests/drivers/test_driver_contract.py.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from drivers.base import Transport
from drivers.registry import get_driver_class
from simulators.faults import FaultRates, Faults, random_junk
from simulators.feeder import (
    FramedSerialDevice,
    SimDevice,
    TextSerialDevice,
    UsbFramedDevice,
    UsbHidDevice,
)
from simulators.serial_pty import PtyPort
from simulators.usb_backend import VirtualUsbBus
from simulators.wires import (
    FramedWire,
    Wire,
    beetek_junk,
    beetek_wire,
    hid_junk,
    hid_wire,
    linecode_junk,
    linecode_wire,
)


@dataclass(frozen=True, slots=True)
class Socket:
    """Where a live device is plugged in: what ``make_device`` was given."""

    driver: str
    rng: random.Random
    faults: FaultRates
    junk: Callable[[random.Random], bytes]
    link: str | Path | None
    bus: VirtualUsbBus | None

    def pty(self) -> tuple[PtyPort, Faults]:
        """A pty (behind ``link`` if given) and the wire faults its writes go through."""
        faults = Faults(self.faults, random.Random(self.rng.random()), self.junk)
        return PtyPort(self.link), faults

    def usb(self) -> VirtualUsbBus:
        if self.bus is None:
            raise ValueError(f"{self.driver} needs a VirtualUsbBus")
        return self.bus


@dataclass(frozen=True, slots=True)
class Simulated:
    """One driver's simulated device (see the module docstring)."""

    wire: Callable[[random.Random], Wire]
    junk: Callable[[random.Random], bytes]
    live: Callable[[Socket], SimDevice]


def _talker(wire: Callable[[random.Random], Wire]) -> Callable[[Socket], SimDevice]:
    """A device that only talks, on a pty: its live frames are its wire's."""

    def live(socket: Socket) -> SimDevice:
        port, faults = socket.pty()
        return TextSerialDevice(socket.driver, port, faults, wire(socket.rng))

    return live


SIMULATED: dict[str, Simulated] = {
    "beetek": Simulated(beetek_wire, beetek_junk, _talker(beetek_wire)),
    "linecode": Simulated(linecode_wire, linecode_junk, _talker(linecode_wire)),
    "framed": Simulated(FramedWire, random_junk, lambda s: FramedSerialDevice(s.driver, *s.pty())),
    "usb-hid": Simulated(hid_wire, hid_junk, lambda s: UsbHidDevice(s.driver, s.usb())),
    "usb-framed": Simulated(FramedWire, random_junk, lambda s: UsbFramedDevice(s.driver, s.usb())),
}


def simulated_drivers(transport: Transport | None = None) -> list[str]:
    """The drivers the simulator has a device for (only those on ``transport``, if given)."""
    return [n for n in SIMULATED if transport is None or get_driver_class(n).transport == transport]


def simulated(driver: str) -> Simulated:
    """The simulated device for ``driver``; ValueError if there is none."""
    try:
        return SIMULATED[driver]
    except KeyError:
        raise ValueError(
            f"no simulated device for driver {driver!r}; simulated: {', '.join(SIMULATED)}"
        ) from None


def make_device(
    driver: str,
    rng: random.Random,
    faults: FaultRates | None = None,
    *,
    link: str | Path | None = None,
    bus: VirtualUsbBus | None = None,
) -> SimDevice:
    """The live simulated device for ``driver``.

    Serial devices get a pty (behind the symlink ``link`` if given, so the
    daemon's channel survives unplugs); USB ones are plugged into ``bus``.
    Wire faults apply to serial devices; the USB models have their own.
    """
    sim = simulated(driver)
    return sim.live(Socket(driver, rng, faults or FaultRates(), sim.junk, link, bus))
