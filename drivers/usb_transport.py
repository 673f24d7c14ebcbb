"""Native USB transport shared by the USB drivers: one interface of a device, through pyusb.

A channel is ``usb:VID:PID[:SERIAL]`` (hex ids), looked up again at every open,
so a device that comes back at another bus address after a replug is found
again. Opening takes the interface from the kernel if a kernel driver holds it
(a HID keyboard does) and claims it; closing releases it and hands it back, so
the machine's keyboard handling is as it was before the daemon ran.

The ``backend`` option takes a pyusb backend object (tests and simulations pass
``simulators.usb_backend.VirtualUsbBus``); without it pyusb picks libusb.
"""

from __future__ import annotations

import contextlib
import errno
from typing import Any, ClassVar

import usb.backend
import usb.control
import usb.core
import usb.util

from drivers.base import Driver, DriverInitError, DriverOperationError
from drivers.usb_match import UsbPortMatch

WRITE_TIMEOUT_MS = 1000


def find_devices(match: UsbPortMatch, backend: usb.backend.IBackend | None) -> list[usb.core.Device]:
    """The present devices ``match`` names, in bus order."""
    try:
        found = list(
            usb.core.find(find_all=True, backend=backend, idVendor=match.vid, idProduct=match.pid) or ()
        )
    except usb.core.NoBackendError as exc:
        raise DriverInitError("no USB backend: install libusb-1.0") from exc
    if match.serial_number is not None:
        found = [d for d in found if serial_of(d) == match.serial_number]
    return sorted(found, key=lambda d: (d.bus or 0, d.address or 0))


def serial_of(device: usb.core.Device) -> str | None:
    """The device's serial number string, or None if it has none or it cannot be read."""
    try:
        return device.serial_number
    except (usb.core.USBError, ValueError, NotImplementedError):
        return None  # no permission to open it, or no string descriptors


class UsbDriver(Driver):
    """A driver whose device is an interface of a native USB device.

    Subclasses say which interface (``interface_class``) and how much to read at
    once (``packets_per_read`` maximum-size packets), and may ``configure`` the
    claimed interface. Options: ``backend`` (a pyusb backend object).
    """

    transport = "usb"
    interface_class: ClassVar[int]
    packets_per_read: ClassVar[int] = 1

    def __init__(self, channel: str, **options: Any) -> None:
        super().__init__(channel, **options)
        match = UsbPortMatch.parse(channel)
        if match is None:
            raise DriverInitError(f"{self.name} needs a channel usb:VID:PID[:SERIAL], not {channel!r}")
        self.match = match
        self.backend: usb.backend.IBackend | None = options.get("backend")
        self.device: usb.core.Device | None = None
        self._interface = 0
        self._ep_in: usb.core.Endpoint | None = None
        self._ep_out: usb.core.Endpoint | None = None
        self._read_size = 0
        self._detached = False

    def configure(self, device: usb.core.Device, interface: int) -> None:
        """Set the claimed interface up for reading; the default needs nothing."""

    def open(self) -> None:
        self.close()
        self.codec.reset()
        found = find_devices(self.match, self.backend)
        if not found:
            raise DriverInitError(f"no USB device {self.match} present")
        if len(found) > 1:
            serials = ", ".join(serial_of(d) or "?" for d in found)
            raise DriverInitError(f"{self.match} matches several devices (serials {serials}): add the serial")
        self.device = found[0]
        try:
            self._take(self.device)
        except usb.core.USBError as exc:
            self.close()
            raise DriverInitError(f"cannot open {self.match}: {_explain(exc)}") from exc
        except DriverInitError:
            self.close()
            raise

    def _take(self, device: usb.core.Device) -> None:
        if usb.control.get_configuration(device) == 0:
            device.set_configuration()  # the kernel normally configures a device; not here
        intf = usb.util.find_descriptor(
            device.get_active_configuration(), bInterfaceClass=self.interface_class
        )
        if intf is None:
            raise DriverInitError(f"{self.match} has no interface of class {self.interface_class:#04x}")
        self._interface = intf.bInterfaceNumber
        if _kernel_driver_active(device, self._interface):
            device.detach_kernel_driver(self._interface)
            self._detached = True
        usb.util.claim_interface(device, self._interface)
        self._ep_in = _endpoint(intf, usb.util.ENDPOINT_IN)
        self._ep_out = _endpoint(intf, usb.util.ENDPOINT_OUT)
        if self._ep_in is None:
            raise DriverInitError(f"{self.match} interface {self._interface} has no IN endpoint")
        self._read_size = self._ep_in.wMaxPacketSize * self.packets_per_read
        self.configure(device, self._interface)

    def read(self, timeout: float) -> bytes:
        device, ep = self.device, self._ep_in
        if device is None or ep is None:
            raise DriverOperationError(f"{self.match} is not open")
        try:
            # libusb takes 0 ms as "wait forever": never ask for less than 1 ms
            return bytes(device.read(ep.bEndpointAddress, self._read_size, max(1, round(timeout * 1000))))
        except usb.core.USBTimeoutError:
            return b""
        except usb.core.USBError as exc:
            raise DriverOperationError(f"{self.match}: {_explain(exc)}") from exc

    def write(self, data: bytes) -> None:
        device, ep = self.device, self._ep_out
        if device is None:
            raise DriverOperationError(f"{self.match} is not open")
        if ep is None:
            raise DriverOperationError(f"{self.match} has no OUT endpoint")
        try:
            device.write(ep.bEndpointAddress, data, WRITE_TIMEOUT_MS)
        except usb.core.USBError as exc:
            raise DriverOperationError(f"{self.match}: {_explain(exc)}") from exc

    def close(self) -> None:
        device, self.device = self.device, None
        self._ep_in = self._ep_out = None
        if device is None:
            return
        # A vanished device has nothing left to give back: errors here mean just that.
        with contextlib.suppress(usb.core.USBError):
            usb.util.release_interface(device, self._interface)
        if self._detached:
            with contextlib.suppress(usb.core.USBError, NotImplementedError):
                device.attach_kernel_driver(self._interface)
            self._detached = False
        with contextlib.suppress(usb.core.USBError):
            usb.util.dispose_resources(device)

    @property
    def description(self) -> str:
        device = self.device
        where = f" (bus {device.bus} address {device.address})" if device is not None else ""
        return f"{self.name} on {self.match}{where}"

    @classmethod
    def detect(cls) -> list[dict[str, Any]]:
        configs = []
        for usb_id in cls.usb_ids:
            try:
                devices = find_devices(UsbPortMatch(usb_id.vid, usb_id.pid), None)
            except DriverInitError:
                return []  # no libusb on this machine: nothing to detect
            for device in devices:
                match = UsbPortMatch(usb_id.vid, usb_id.pid, serial_of(device))
                configs.append({"driver": cls.name, "channel": str(match), "generic": usb_id.generic})
        return configs


def _kernel_driver_active(device: usb.core.Device, interface: int) -> bool:
    try:
        return bool(device.is_kernel_driver_active(interface))
    except NotImplementedError:
        return False  # platforms without kernel-driver detaching (Windows, macOS)


def _endpoint(intf: usb.core.Interface, direction: int) -> usb.core.Endpoint | None:
    return usb.util.find_descriptor(
        intf, custom_match=lambda e: usb.util.endpoint_direction(e.bEndpointAddress) == direction
    )


def _explain(exc: usb.core.USBError) -> str:
    hints = {
        errno.ENODEV: "device unplugged",
        errno.EACCES: "permission denied (see systemd/ for the udev rule and group)",
        errno.EBUSY: "interface busy (another program or driver holds it)",
    }
    hint = hints.get(exc.errno or 0)
    return f"{exc} ({hint})" if hint else str(exc)
