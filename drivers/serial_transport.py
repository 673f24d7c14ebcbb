"""Serial transport shared by the serial drivers: pyserial's ``serial_for_url``.

A channel is a pyserial URL (``loop://``, ``socket://host:port``,
``rfc2217://host:port``), a device path (a udev symlink such as
``/dev/shoe-1`` survives re-enumeration), or ``usb:VID:PID[:SERIAL]``, which
is looked up again through ``serial.tools.list_ports`` at every open, so a
USB-serial adapter that comes back as another ``/dev/ttyUSB*`` is still found.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterable
from typing import Any, ClassVar

import serial
from serial.tools import list_ports
from serial.tools.list_ports_common import ListPortInfo

from drivers.base import Driver, DriverInitError, DriverOperationError, DriverTimeout, UsbId
from drivers.usb_match import UsbPortMatch

# Off-the-shelf USB-serial chips that RS-232 shoes and scanners are connected through.
# Matching them says "some serial device", never "a shoe": see UsbId.generic.
USB_SERIAL_ADAPTERS: tuple[UsbId, ...] = (
    UsbId(0x0403, 0x6001, "FTDI FT232R USB-serial adapter", generic=True),
    UsbId(0x0403, 0x6015, "FTDI FT-X USB-serial adapter", generic=True),
    UsbId(0x067B, 0x2303, "Prolific PL2303 USB-serial adapter", generic=True),
    UsbId(0x10C4, 0xEA60, "Silicon Labs CP210x USB-serial adapter", generic=True),
    UsbId(0x1A86, 0x7523, "WCH CH340 USB-serial adapter", generic=True),
)


def resolve_channel(channel: str) -> str:
    """The URL or path to hand to pyserial for ``channel`` right now."""
    match = UsbPortMatch.parse(channel)
    return match.find(list_ports.comports()) if match else channel


def detect_ports(
    driver_name: str, usb_ids: Iterable[UsbId], ports: Iterable[ListPortInfo] | None = None
) -> list[dict[str, Any]]:
    """Configurations for the serial ports (default: those present) whose VID:PID is in ``usb_ids``."""
    ids = {(u.vid, u.pid): u for u in usb_ids}
    configs = []
    for port in list_ports.comports() if ports is None else ports:
        usb_id = ids.get((port.vid, port.pid))
        if usb_id is None:
            continue
        match = UsbPortMatch(usb_id.vid, usb_id.pid, port.serial_number)
        configs.append(
            {"driver": driver_name, "channel": str(match), "device": port.device, "generic": usb_id.generic}
        )
    return configs


class SerialDriver(Driver):
    """A driver whose device is a serial port; options: baudrate, bytesize, parity, stopbits."""

    transport = "serial"
    default_baudrate: ClassVar[int] = 9600

    def __init__(self, channel: str, **options: Any) -> None:
        super().__init__(channel, **options)
        self.port: serial.Serial | None = None
        self.device = ""

    def open(self) -> None:
        self.close()
        self.codec.reset()
        self.device = resolve_channel(self.channel)
        opts = self.options
        try:
            self.port = serial.serial_for_url(
                self.device,
                baudrate=int(opts.get("baudrate", self.default_baudrate)),
                bytesize=int(opts.get("bytesize", serial.EIGHTBITS)),
                parity=str(opts.get("parity", serial.PARITY_NONE)),
                stopbits=float(opts.get("stopbits", serial.STOPBITS_ONE)),
                timeout=0.2,
                write_timeout=1.0,
                # A second reader on the same port would take some of its bytes: half the cards each.
                exclusive=True,
            )
        except (serial.SerialException, OSError, ValueError) as exc:
            raise DriverInitError(f"cannot open {self.device}: {exc}") from exc

    def read(self, timeout: float) -> bytes:
        port = self._port()
        try:
            if port.timeout != timeout:
                port.timeout = timeout  # pyserial reconfigures the port on every set
            waiting = port.in_waiting
            data = port.read(waiting or 1)
            if data and not waiting and (waiting := port.in_waiting):
                data += port.read(waiting)
            return data
        except (serial.SerialException, OSError) as exc:
            raise DriverOperationError(f"{self.device}: {exc}") from exc

    def write(self, data: bytes) -> None:
        port = self._port()
        try:
            port.write(data)
        except serial.SerialTimeoutException as exc:
            raise DriverTimeout(f"{self.device}: no bytes taken in {port.write_timeout} s") from exc
        except (serial.SerialException, OSError) as exc:
            raise DriverOperationError(f"{self.device}: {exc}") from exc

    def close(self) -> None:
        port, self.port = self.port, None
        if port is not None:
            # A vanished device has nothing left to release.
            with contextlib.suppress(serial.SerialException, OSError):
                port.close()

    @property
    def description(self) -> str:
        where = self.channel if self.device in ("", self.channel) else f"{self.channel} ({self.device})"
        return f"{self.name} on {where}"

    @classmethod
    def detect(cls) -> list[dict[str, Any]]:
        return detect_ports(cls.name, cls.usb_ids)

    def _port(self) -> serial.Serial:
        if self.port is None:
            raise DriverOperationError(f"{self.channel} is not open")
        return self.port
