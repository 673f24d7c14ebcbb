"""A pyusb backend that is a USB bus with simulated devices plugged into it.

``usb.core.find(backend=bus, ...)`` finds the devices plugged into a
``VirtualUsbBus``, and the real drivers then talk to them through unchanged pyusb
calls. The bus keeps the host side of the rules that real drivers trip over, with
libusb's error codes, so a driver that works here behaves on a real machine:

- a kernel driver is bound to a HID keyboard interface when it is plugged in;
  claiming it (or sending it class requests) fails with EBUSY until it is
  detached, and it stays detached after the handle closes unless reattached;
- an unplugged device fails every call on its old handles with ENODEV (19), a
  read blocked on it wakes up with ENODEV, it leaves ``enumerate_devices`` and,
  when plugged in again, is a new device (a new address unless kept) whose old
  handles stay dead;
- reads wait for packets and time out with ``USBTimeoutError`` (a timeout of 0
  waits forever); a transfer ends on a short packet or a full buffer, and a
  packet larger than the space left is an overflow;
- a halted endpoint fails with EPIPE until ``clear_halt``.

Thread-safe: all device state is changed under the device model's lock.
"""

from __future__ import annotations

import array
import errno
import itertools
import threading
import time
from dataclasses import dataclass, field
from types import SimpleNamespace

import usb.backend
import usb.core

from simulators.usb_descriptors import (
    DESC_CONFIGURATION,
    DESC_DEVICE,
    DESC_STRING,
    EP_BULK,
    EP_INTERRUPT,
    ConfigurationDescriptor,
    InterfaceDescriptor,
    Request,
)
from simulators.usb_devices import (
    RECIPIENT_DEVICE,
    RECIPIENT_INTERFACE,
    REQ_STANDARD,
    REQ_VENDOR,
    Setup,
    Stall,
    VirtualDevice,
)

# libusb error code, errno and libusb_strerror() text, as pyusb's libusb1 backend raises them
_ERRORS = {
    "IO": (-1, errno.EIO, "Input/Output Error"),
    "INVALID_PARAM": (-2, errno.EINVAL, "Invalid parameter"),
    "NO_DEVICE": (-4, errno.ENODEV, "No such device (it may have been disconnected)"),
    "NOT_FOUND": (-5, errno.ENOENT, "Entity not found"),
    "BUSY": (-6, errno.EBUSY, "Resource busy"),
    "TIMEOUT": (-7, errno.ETIMEDOUT, "Operation timed out"),
    "OVERFLOW": (-8, errno.EOVERFLOW, "Overflow"),
    "PIPE": (-9, errno.EPIPE, "Pipe error"),
}


def usb_error(name: str) -> usb.core.USBError:
    code, err, text = _ERRORS[name]
    cls = usb.core.USBTimeoutError if name == "TIMEOUT" else usb.core.USBError
    return cls(text, code, err)


@dataclass(eq=False)
class _Attachment:
    """One stay of a device on the bus, from plug to unplug: pyusb's device identity."""

    device: VirtualDevice
    bus: int
    address: int
    port: int
    live: bool = True
    configuration: int = 1  # the kernel configures a device as it enumerates it
    claims: dict[int, _Handle] = field(default_factory=dict)
    halted: set[int] = field(default_factory=set)


@dataclass(eq=False)
class _Handle:
    attachment: _Attachment
    open: bool = True


class VirtualUsbBus(usb.backend.IBackend):
    """The pyusb backend: a bus where tests plug, unplug and replug simulated devices."""

    def __init__(self, bus_number: int = 1) -> None:
        super().__init__()
        self.bus_number = bus_number
        self._lock = threading.Lock()
        self._attached: dict[VirtualDevice, _Attachment] = {}
        self._ports: dict[VirtualDevice, int] = {}
        self._addresses = itertools.cycle(range(2, 128))  # address 1 is the root hub

    # -- the test's side: plugging ----------------------------------------------------------------

    def plug(self, device: VirtualDevice, *, address: int | None = None, port: int | None = None) -> None:
        """Plug ``device`` in; its kernel drivers bind. ``address``/``port`` default to fresh/its own."""
        with self._lock:
            if device in self._attached:
                raise ValueError("device is already plugged in")
            if port is not None:
                self._ports[device] = port
            attachment = _Attachment(
                device,
                bus=self.bus_number,
                address=address if address is not None else self._free_address(),
                port=self._ports.setdefault(device, len(self._ports) + 1),
            )
            with device.lock:
                device.powered = True
                device.kernel_bound = set(device.kernel_interfaces)
                device.powered_on()
                device.kernel_driver_changed()
                device.lock.notify_all()
            self._attached[device] = attachment

    def unplug(self, device: VirtualDevice) -> None:
        """Pull the cable: open handles die with ENODEV and blocked reads wake up."""
        with self._lock:
            attachment = self._attached.pop(device, None)
            if attachment is None:
                raise ValueError("device is not plugged in")
            with device.lock:
                attachment.live = False
                device.powered = False
                device.kernel_bound.clear()
                device.powered_off()
                device.lock.notify_all()

    def replug(self, device: VirtualDevice, *, keep_address: bool = False) -> None:
        """Unplug and plug back in, by default getting a new address as Linux gives it."""
        with self._lock:
            old = self._attached[device].address
        self.unplug(device)
        self.plug(device, address=old if keep_address else None)

    def _free_address(self) -> int:
        used = {a.address for a in self._attached.values()}
        return next(a for a in self._addresses if a not in used)

    def is_plugged(self, device: VirtualDevice) -> bool:
        with self._lock:
            return device in self._attached

    def claimed(self, device: VirtualDevice) -> set[int]:
        """Interface numbers some handle has claimed on the plugged-in ``device``."""
        with self._lock:
            attachment = self._attached.get(device)
        if attachment is None:
            return set()
        with device.lock:
            return set(attachment.claims)

    def halt(self, device: VirtualDevice, ep: int) -> None:
        """Stall endpoint ``ep``: transfers fail with EPIPE until the host clears the halt."""
        with self._lock:
            attachment = self._attached[device]
        with device.lock:
            attachment.halted.add(ep)
            device.lock.notify_all()

    # -- IBackend: enumeration and descriptors ----------------------------------------------------

    def enumerate_devices(self) -> list[_Attachment]:
        with self._lock:
            return list(self._attached.values())

    def get_parent(self, dev: _Attachment) -> None:
        return None

    def get_device_descriptor(self, dev: _Attachment) -> SimpleNamespace:
        d = dev.device.descriptor
        return SimpleNamespace(
            **{name: getattr(d, name) for name in _DEVICE_FIELDS},
            bus=dev.bus,
            address=dev.address,
            port_number=dev.port,
            port_numbers=(dev.port,),
            speed=dev.device.speed,
        )

    def get_configuration_descriptor(self, dev: _Attachment, config: int) -> ConfigurationDescriptor:
        return self._configuration(dev, config)

    def get_interface_descriptor(
        self, dev: _Attachment, intf: int, alt: int, config: int
    ) -> InterfaceDescriptor:
        if alt != 0:
            raise IndexError("no alternate settings")
        return self._configuration(dev, config).interfaces[intf]

    def get_endpoint_descriptor(self, dev: _Attachment, ep: int, intf: int, alt: int, config: int):
        return self.get_interface_descriptor(dev, intf, alt, config).endpoints[ep]

    @staticmethod
    def _configuration(dev: _Attachment, config: int) -> ConfigurationDescriptor:
        try:
            return dev.device.descriptor.configurations[config]
        except IndexError:
            raise usb_error("NOT_FOUND") from None

    # -- IBackend: handles, configuration, interfaces, kernel drivers ----------------------------

    def open_device(self, dev: _Attachment) -> _Handle:
        with dev.device.lock:
            _alive(dev)
            return _Handle(dev)

    def close_device(self, dev_handle: _Handle) -> None:
        attachment = dev_handle.attachment
        with attachment.device.lock:
            dev_handle.open = False
            for intf in [i for i, h in attachment.claims.items() if h is dev_handle]:
                del attachment.claims[intf]

    def set_configuration(self, dev_handle: _Handle, config_value: int) -> None:
        attachment = dev_handle.attachment
        with attachment.device.lock:
            _alive(attachment, dev_handle)
            values = {c.bConfigurationValue for c in attachment.device.descriptor.configurations}
            if config_value not in values | {0}:
                raise usb_error("INVALID_PARAM")
            if attachment.claims or attachment.device.kernel_bound:
                raise usb_error("BUSY")
            attachment.configuration = config_value

    def get_configuration(self, dev_handle: _Handle) -> int:
        attachment = dev_handle.attachment
        with attachment.device.lock:
            _alive(attachment, dev_handle)
            return attachment.configuration

    def set_interface_altsetting(self, dev_handle: _Handle, intf: int, altsetting: int) -> None:
        attachment = dev_handle.attachment
        with attachment.device.lock:
            _alive(attachment, dev_handle)
            if attachment.claims.get(intf) is not dev_handle:
                raise usb_error("NOT_FOUND")
            if altsetting != 0:
                raise usb_error("NOT_FOUND")

    def claim_interface(self, dev_handle: _Handle, intf: int) -> None:
        attachment = dev_handle.attachment
        with attachment.device.lock:
            _alive(attachment, dev_handle)
            self._claim(dev_handle, intf)

    def release_interface(self, dev_handle: _Handle, intf: int) -> None:
        attachment = dev_handle.attachment
        with attachment.device.lock:
            _alive(attachment, dev_handle)
            if attachment.claims.get(intf) is not dev_handle:
                raise usb_error("NOT_FOUND")
            del attachment.claims[intf]

    def is_kernel_driver_active(self, dev_handle: _Handle, intf: int) -> bool:
        attachment = dev_handle.attachment
        with attachment.device.lock:
            _alive(attachment, dev_handle)
            return intf in attachment.device.kernel_bound

    def detach_kernel_driver(self, dev_handle: _Handle, intf: int) -> None:
        device = dev_handle.attachment.device
        with device.lock:
            _alive(dev_handle.attachment, dev_handle)
            if intf not in device.kernel_bound:
                raise usb_error("NOT_FOUND")
            device.kernel_bound.discard(intf)
            device.kernel_driver_changed()

    def attach_kernel_driver(self, dev_handle: _Handle, intf: int) -> None:
        attachment = dev_handle.attachment
        device = attachment.device
        with device.lock:
            _alive(attachment, dev_handle)
            if intf not in device.kernel_interfaces:
                raise usb_error("NOT_FOUND")  # no kernel driver wants this interface
            if intf in device.kernel_bound or intf in attachment.claims:
                raise usb_error("BUSY")
            device.kernel_bound.add(intf)
            device.kernel_driver_changed()

    def _claim(self, dev_handle: _Handle, intf: int) -> None:
        attachment = dev_handle.attachment
        if intf not in {i.bInterfaceNumber for i in self._active(attachment).interfaces}:
            raise usb_error("NOT_FOUND")
        if intf in attachment.device.kernel_bound:
            raise usb_error("BUSY")
        holder = attachment.claims.setdefault(intf, dev_handle)
        if holder is not dev_handle:
            raise usb_error("BUSY")

    @staticmethod
    def _active(attachment: _Attachment) -> ConfigurationDescriptor:
        for cfg in attachment.device.descriptor.configurations:
            if cfg.bConfigurationValue == attachment.configuration:
                return cfg
        raise usb_error("NOT_FOUND")  # unconfigured: no interfaces

    # -- IBackend: transfers ----------------------------------------------------------------------

    def bulk_write(self, dev_handle: _Handle, ep: int, intf: int, data: array.array, timeout: int) -> int:
        return self._write(dev_handle, ep, intf, data, EP_BULK)

    def intr_write(self, dev_handle: _Handle, ep: int, intf: int, data: array.array, timeout: int) -> int:
        return self._write(dev_handle, ep, intf, data, EP_INTERRUPT)

    def bulk_read(self, dev_handle: _Handle, ep: int, intf: int, buff: array.array, timeout: int) -> int:
        return self._read(dev_handle, ep, intf, buff, timeout, EP_BULK)

    def intr_read(self, dev_handle: _Handle, ep: int, intf: int, buff: array.array, timeout: int) -> int:
        return self._read(dev_handle, ep, intf, buff, timeout, EP_INTERRUPT)

    def _write(self, dev_handle: _Handle, ep: int, intf: int, data: array.array, kind: int) -> int:
        device = dev_handle.attachment.device
        with device.lock:
            self._ready(dev_handle, ep, intf, kind)
            payload = data.tobytes()
            device.receive(ep, payload)
            device.lock.notify_all()
            return len(payload)

    def _read(
        self, dev_handle: _Handle, ep: int, intf: int, buff: array.array, timeout: int, kind: int
    ) -> int:
        device = dev_handle.attachment.device
        deadline = None if timeout == 0 else time.monotonic() + timeout / 1000
        size = len(buff) * buff.itemsize
        view = memoryview(buff).cast("B")
        got = 0
        with device.lock:
            max_packet = self._ready(dev_handle, ep, intf, kind).wMaxPacketSize
            while True:
                packet = device.next_in_packet(ep)
                if packet is not None:
                    if len(packet) > size - got:
                        raise usb_error("OVERFLOW")
                    view[got : got + len(packet)] = packet
                    got += len(packet)
                    if got == size or len(packet) < max_packet:
                        return got
                    continue
                left = _left(deadline)
                if left is not None and left <= 0:
                    if got:
                        return got  # libusb hands back what arrived before the time-out
                    raise usb_error("TIMEOUT")
                waits = [w for w in (left, device.retry_after()) if w is not None]
                device.lock.wait(min(waits) if waits else None)
                self._ready(dev_handle, ep, intf, kind)

    def _ready(self, dev_handle: _Handle, ep: int, intf: int, kind: int):
        """Check a transfer may run now (device lock held); claims the interface as usbfs does."""
        attachment = dev_handle.attachment
        _alive(attachment, dev_handle)
        cfg = self._active(attachment)
        endpoint = next(
            (
                e
                for i in cfg.interfaces
                if i.bInterfaceNumber == intf
                for e in i.endpoints
                if e.bEndpointAddress == ep
            ),
            None,
        )
        if endpoint is None or endpoint.bmAttributes & 0x03 != kind:
            raise usb_error("INVALID_PARAM")
        self._claim(dev_handle, intf)
        if ep in attachment.halted:
            raise usb_error("PIPE")
        return endpoint

    def ctrl_transfer(
        self,
        dev_handle: _Handle,
        bmRequestType: int,
        bRequest: int,
        wValue: int,
        wIndex: int,
        data: array.array,
        timeout: int,
    ) -> int:
        attachment = dev_handle.attachment
        device = attachment.device
        setup = Setup(bmRequestType, bRequest, wValue, wIndex, len(data) * data.itemsize)
        with device.lock:
            _alive(attachment, dev_handle)
            if setup.recipient == RECIPIENT_INTERFACE and setup.kind != REQ_VENDOR:
                self._claim(dev_handle, wIndex & 0xFF)
            try:
                reply = self._standard(attachment, setup)
                if reply is None:
                    reply = device.control(setup, b"" if setup.device_to_host else data.tobytes())
            except Stall:
                raise usb_error("PIPE") from None
            if not setup.device_to_host:
                return setup.wLength
            reply = reply[: setup.wLength]
            memoryview(data).cast("B")[: len(reply)] = reply
            return len(reply)

    def _standard(self, attachment: _Attachment, setup: Setup) -> bytes | None:
        """Answer the standard device requests every device answers alike (None: not one of them)."""
        if setup.kind != REQ_STANDARD or setup.recipient != RECIPIENT_DEVICE:
            if setup.kind == REQ_STANDARD and setup.bRequest == Request.CLEAR_FEATURE and setup.wValue == 0:
                attachment.halted.discard(setup.wIndex)  # ENDPOINT_HALT
                return b""
            return None
        descriptor = attachment.device.descriptor
        match setup.bRequest:
            case Request.GET_DESCRIPTOR:
                kind, index = setup.wValue >> 8, setup.wValue & 0xFF
                if kind == DESC_DEVICE:
                    return descriptor.to_bytes()
                if kind == DESC_CONFIGURATION and index < len(descriptor.configurations):
                    return descriptor.configurations[index].to_bytes()
                if kind == DESC_STRING:
                    string = descriptor.string_descriptor(index)
                    if string is not None:
                        return string
                raise Stall("no such descriptor")
            case Request.GET_CONFIGURATION:
                return bytes([attachment.configuration])
            case Request.GET_STATUS:
                return b"\0\0"
            case Request.SET_CONFIGURATION:
                if attachment.claims or attachment.device.kernel_bound:
                    raise usb_error("BUSY")
                attachment.configuration = setup.wValue & 0xFF
                return b""
        return None

    def clear_halt(self, dev_handle: _Handle, ep: int) -> None:
        attachment = dev_handle.attachment
        with attachment.device.lock:
            _alive(attachment, dev_handle)
            attachment.halted.discard(ep)

    def reset_device(self, dev_handle: _Handle) -> None:
        attachment = dev_handle.attachment
        with attachment.device.lock:
            _alive(attachment, dev_handle)
            attachment.halted.clear()


_DEVICE_FIELDS = (
    "bLength",
    "bDescriptorType",
    "bcdUSB",
    "bDeviceClass",
    "bDeviceSubClass",
    "bDeviceProtocol",
    "bMaxPacketSize0",
    "idVendor",
    "idProduct",
    "bcdDevice",
    "iManufacturer",
    "iProduct",
    "iSerialNumber",
    "bNumConfigurations",
)


def _alive(attachment: _Attachment, handle: _Handle | None = None) -> None:
    if not attachment.live:
        raise usb_error("NO_DEVICE")
    if handle is not None and not handle.open:
        raise usb_error("INVALID_PARAM")


def _left(deadline: float | None) -> float | None:
    return None if deadline is None else deadline - time.monotonic()
