"""Bee-Tek card shoe on RS-232 (9600 8N1), usually through a USB-serial adapter."""

from __future__ import annotations

from drivers.codecs.beetek import BeetekCodec
from drivers.serial_transport import USB_SERIAL_ADAPTERS, SerialDriver


class BeetekDriver(SerialDriver):
    """No acknowledgement, no alert outputs: the shoe only talks."""

    name = "beetek"
    family = "Bee-Tek card shoe"
    usb_ids = USB_SERIAL_ADAPTERS

    def make_codec(self) -> BeetekCodec:
        return BeetekCodec()
