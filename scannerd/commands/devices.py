"""``scannerd devices``: what is plugged in, and which driver would read it.

Serial ports come from ``serial.tools.list_ports``, native USB devices from
pyusb; each is marked against the VID:PID tables the drivers carry. A match
on a generic USB-serial adapter says only "could be": the same chip sits in
many unrelated devices, so the operator confirms before configuring it.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field

import usb.backend
import usb.core
from serial.tools import list_ports
from serial.tools.list_ports_common import ListPortInfo

from drivers.base import DriverInitError, Transport, UsbId
from drivers.registry import driver_names, get_driver_class
from drivers.usb_match import UsbPortMatch


@dataclass
class Found:
    kind: Transport  # where it was found: a serial port, or a native USB device
    where: str  # device path, or bus/address
    vid: int | None = None
    pid: int | None = None
    serial_number: str | None = None
    description: str = ""
    drivers: list[str] = field(default_factory=list)  # drivers whose tables name this VID:PID
    generic: bool = False  # only generic adapter ids matched: "could be"
    channel: str | None = None  # what to put in the config for it


@dataclass(frozen=True, slots=True)
class Known:
    """A VID:PID a driver claims, and how that driver reaches it."""

    driver: str
    transport: Transport
    usb_id: UsbId


KnownIds = dict[tuple[int, int], list[Known]]


def known_ids() -> tuple[KnownIds, list[str]]:
    """VID:PID -> what claims it, from every loadable driver, and the drivers that failed to load."""
    table: KnownIds = {}
    problems = []
    for name in driver_names():
        try:
            cls = get_driver_class(name)
        except DriverInitError as exc:
            problems.append(str(exc))
            continue
        for usb_id in cls.usb_ids:
            table.setdefault((usb_id.vid, usb_id.pid), []).append(Known(name, cls.transport, usb_id))
    return table, problems


def _mark(found: Found, ids: KnownIds) -> Found:
    """Name the drivers that would read ``found`` where it was found: a device a serial driver
    knows shows up as a port, not through pyusb, and the other way round."""
    matches = [k for k in ids.get((found.vid or 0, found.pid or 0), []) if k.transport == found.kind]
    if matches:
        found.drivers = [k.driver for k in matches]
        found.generic = all(k.usb_id.generic for k in matches)
        found.channel = str(UsbPortMatch(found.vid or 0, found.pid or 0, found.serial_number))
        found.description = found.description or matches[0].usb_id.description
    return found


def serial_ports(ports: Iterable[ListPortInfo], ids: KnownIds) -> list[Found]:
    return [
        _mark(
            Found("serial", p.device, p.vid, p.pid, p.serial_number, p.description if p.vid else "(not USB)"),
            ids,
        )
        for p in sorted(ports, key=lambda p: p.device)
    ]


def usb_devices(backend: usb.backend.IBackend | None, ids: KnownIds) -> tuple[list[Found], str | None]:
    """Present USB devices, or an explanation of why they cannot be listed."""
    try:
        devices = list(usb.core.find(find_all=True, backend=backend) or ())
    except usb.core.NoBackendError:
        return [], "no USB backend; install libusb-1.0-0 to list native USB devices"
    out = []
    for dev in devices:
        found = Found("usb", f"bus {dev.bus} address {dev.address}", dev.idVendor, dev.idProduct)
        try:
            found.serial_number = dev.serial_number
            found.description = " ".join(s for s in (dev.manufacturer, dev.product) if s)
        except (usb.core.USBError, ValueError, NotImplementedError):
            pass  # strings need the device opened: no permission is normal without the udev rule
        out.append(_mark(found, ids))
    return out, None


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--json", action="store_true", help="print one JSON object instead of a table")


def _line(found: Found) -> str:
    ids = f"{found.vid:04x}:{found.pid:04x}" if found.vid is not None else "         "
    text = f"  {found.where:<24} {ids}  {found.description}"
    if found.serial_number:
        text += f" (serial {found.serial_number})"
    if found.drivers:
        verdict = "could be" if found.generic else "driver"
        text += f"\n      {verdict}: {', '.join(found.drivers)}   channel: {found.channel}"
    return text


@dataclass
class Survey:
    serial: list[Found]
    usb: list[Found] | None  # None: could not look (``usb_unavailable`` says why), which is not "none"
    problems: list[str]
    usb_unavailable: str | None = None


def survey(ports: Iterable[ListPortInfo], backend: usb.backend.IBackend | None) -> Survey:
    """Everything present, marked against the drivers' tables."""
    ids, problems = known_ids()
    usb_found, usb_problem = usb_devices(backend, ids)
    return Survey(serial_ports(ports, ids), None if usb_problem else usb_found, problems, usb_problem)


def render(found: Survey) -> str:
    lines = ["Serial ports:", *(_line(f) for f in found.serial)]
    if not found.serial:
        lines.append("  (none)")
    lines.append("USB devices:")
    if found.usb is None:
        lines.append(f"  (could not look: {found.usb_unavailable})")
    else:
        lines += [_line(f) for f in found.usb] or ["  (none)"]
    lines += [f"note: {problem}" for problem in found.problems]
    return "\n".join(lines)


def run(args: argparse.Namespace) -> int:
    found = survey(list_ports.comports(), None)
    print(json.dumps(asdict(found), indent=2) if args.json else render(found))
    return 0
