"""One-code-per-line serial card scanners (9600 8N1); option ``table`` picks the code table."""

from __future__ import annotations

from drivers.base import DriverInitError
from drivers.codecs.linecode import LinecodeCodec, make_table
from drivers.serial_transport import USB_SERIAL_ADAPTERS, SerialDriver


class LinecodeDriver(SerialDriver):
    """``table`` is a built-in table name (default ``auto``), a .json file, or a code -> card mapping."""

    name = "linecode"
    family = "one-code-per-line card scanner"
    usb_ids = USB_SERIAL_ADAPTERS

    def make_codec(self) -> LinecodeCodec:
        try:
            return LinecodeCodec(make_table(self.options.get("table", "auto")))
        except (ValueError, OSError) as exc:
            raise DriverInitError(f"linecode table: {exc}") from exc
