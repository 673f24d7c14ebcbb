"""``usb:VID:PID[:SERIAL]``: naming a USB device by what it is rather than where it sits today.

Both transports take such a channel: the serial one finds the USB-serial port
it names among ``serial.tools.list_ports``, the native one the device among
pyusb's. It is looked up again at every open, so a device that comes back on
another ``/dev`` node or bus address after a replug is still found. Neither
pyserial nor pyusb is needed here, so a machine without one still parses the
other's channels.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Protocol

from drivers.base import DriverInitError


class ListedPort(Protocol):
    """What a serial port listing says about a port (``serial.tools.list_ports``' ``ListPortInfo``)."""

    device: str
    vid: int | None
    pid: int | None
    serial_number: str | None


@dataclass(frozen=True, slots=True)
class UsbPortMatch:
    """Which USB device (or its serial port) to open, whatever its node or address is today."""

    vid: int
    pid: int
    serial_number: str | None = None

    @classmethod
    def parse(cls, channel: str) -> UsbPortMatch | None:
        """The match a channel names, or None if it is a path or URL."""
        if not channel.startswith("usb:"):
            return None
        parts = channel[4:].split(":", 2)
        try:
            return cls(int(parts[0], 16), int(parts[1], 16), parts[2] if len(parts) > 2 else None)
        except (IndexError, ValueError) as exc:
            raise DriverInitError(f"bad USB match {channel!r}: expected usb:VID:PID[:SERIAL] in hex") from exc

    def matches(self, port: ListedPort) -> bool:
        return (
            port.vid == self.vid
            and port.pid == self.pid
            and (self.serial_number is None or port.serial_number == self.serial_number)
        )

    def find(self, ports: Iterable[ListedPort]) -> str:
        """The device path of the one matching serial port; DriverInitError if none or several."""
        found = sorted(p.device for p in ports if self.matches(p))
        if not found:
            raise DriverInitError(f"no serial port {self} present")
        if len(found) > 1:
            raise DriverInitError(f"{self} matches several ports ({', '.join(found)}): add the serial number")
        return found[0]

    def __str__(self) -> str:
        tail = f":{self.serial_number}" if self.serial_number else ""
        return f"usb:{self.vid:04x}:{self.pid:04x}{tail}"
