"""``usb-framed``: a native USB shoe speaking the framed protocol on vendor bulk endpoints.

The protocol logic (acknowledge only what the consumer stored, drop repeats,
restate the alert after a reconnect) is ``drivers.framed_host``, the same as
for the serial framed shoe; this module only puts it on USB.
"""

from __future__ import annotations

from typing import ClassVar

from drivers.base import UsbId
from drivers.framed_host import FramedHostDriver
from drivers.usb_transport import UsbDriver

VENDOR_SPECIFIC = 0xFF


class UsbFramedDriver(FramedHostDriver, UsbDriver):
    """Channel ``usb:VID:PID[:SERIAL]``; options: ``backend`` (a pyusb backend object)."""

    name: ClassVar[str] = "usb-framed"
    family: ClassVar[str] = "native USB shoe speaking `framed`"
    usb_ids: ClassVar[tuple[UsbId, ...]] = (UsbId(0x1209, 0x0002, "framed card shoe (pid.codes test id)"),)
    interface_class: ClassVar[int] = VENDOR_SPECIFIC
    # A bulk read ends on the first short packet, so a large buffer costs no latency.
    packets_per_read: ClassVar[int] = 8
