"""``usb-hid``: a keyboard-wedge card scanner read directly with pyusb.

Reading the scanner ourselves, rather than as keystrokes through the console,
means taking its interface from the kernel's keyboard driver; closing gives it
back. The scanner is switched to the boot protocol (the 8-byte reports the
codec reads) and told to report on change only, so a held key is not repeated
by the idle rate; the codec copes if a device ignores either request.
"""

from __future__ import annotations

import errno
from typing import ClassVar

import usb.core

from drivers.base import DriverInitError, UsbId
from drivers.codecs.hid import HidScannerCodec
from drivers.codecs.linecode import make_table
from drivers.usb_transport import UsbDriver

HID_CLASS = 0x03
# HID class requests (HID 1.11, 7.2), sent to the interface
CLASS_INTERFACE_OUT = 0x21
SET_IDLE, SET_PROTOCOL = 0x0A, 0x0B
BOOT_PROTOCOL = 0


class UsbHidDriver(UsbDriver):
    """Channel ``usb:VID:PID[:SERIAL]``; options: ``table`` (as for ``linecode``, default
    ``suit-digit``), ``backend`` (a pyusb backend object)."""

    name: ClassVar[str] = "usb-hid"
    family: ClassVar[str] = "USB keyboard-wedge card scanner"
    usb_ids: ClassVar[tuple[UsbId, ...]] = (UsbId(0x1209, 0x0001, "HID card scanner (pid.codes test id)"),)
    interface_class: ClassVar[int] = HID_CLASS

    def make_codec(self) -> HidScannerCodec:
        try:
            return HidScannerCodec(make_table(self.options.get("table", "suit-digit")))
        except (ValueError, OSError) as exc:
            raise DriverInitError(f"usb-hid table: {exc}") from exc

    def configure(self, device: usb.core.Device, interface: int) -> None:
        for request, value in ((SET_PROTOCOL, BOOT_PROTOCOL), (SET_IDLE, 0)):
            try:
                device.ctrl_transfer(CLASS_INTERFACE_OUT, request, value, interface)
            except usb.core.USBError as exc:
                if exc.errno != errno.EPIPE:
                    raise  # a stall means "not supported": the codec copes without either
