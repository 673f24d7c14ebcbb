"""``framed`` over a serial port: our shoe firmware on RS-232 or a USB CDC-ACM port."""

from __future__ import annotations

from typing import ClassVar

from drivers.base import UsbId
from drivers.framed_host import FramedHostDriver
from drivers.serial_transport import SerialDriver

# The framed shoe as a CDC-ACM serial port. A pid.codes test id until a product id is allocated.
FRAMED_SHOE_CDC = UsbId(0x1209, 0x0003, "framed card shoe, CDC-ACM serial (pid.codes test id)")


class FramedDriver(FramedHostDriver, SerialDriver):
    """The shoe firmware we control: acknowledged, deduplicated, with alert LED and buzzer."""

    name = "framed"
    family = "shoe firmware we control (docs/protocol.md)"
    usb_ids = (FRAMED_SHOE_CDC,)
    default_baudrate: ClassVar[int] = 115200
