"""``scannerd devices`` and the driver registry behind it, including third-party plugins."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from serial.tools.list_ports_common import ListPortInfo

from drivers.base import DriverInitError
from drivers.events import DeviceCard
from drivers.registry import create_driver, driver_names, get_driver_class
from scannerd.cli import main
from scannerd.commands.devices import render, survey
from simulators.usb_backend import VirtualUsbBus
from simulators.usb_devices import FramedUsbShoe, HidCardScanner
from tests.support.plugins import install_plugin
from tests.support.serial_port import read_events


def _port(
    device: str, vid: int | None = None, pid: int | None = None, serial: str | None = None
) -> ListPortInfo:
    info = ListPortInfo(device, skip_link_detection=True)
    info.vid, info.pid, info.serial_number = vid, pid, serial
    if vid is not None:
        info.description = "USB serial"
    return info


def test_serial_ports_are_marked_against_the_driver_tables() -> None:
    ports = [
        _port("/dev/ttyUSB0", 0x0403, 0x6001, "A9XK"),
        _port("/dev/ttyACM0", 0x1209, 0x0003, "FS77"),
        _port("/dev/ttyS0"),
    ]
    found = {f.where: f for f in survey(ports, VirtualUsbBus()).serial}
    adapter, shoe, plain = found["/dev/ttyUSB0"], found["/dev/ttyACM0"], found["/dev/ttyS0"]
    assert (adapter.drivers, adapter.generic) == (["beetek", "linecode"], True)
    assert adapter.channel == "usb:0403:6001:A9XK"
    assert (shoe.drivers, shoe.generic, shoe.channel) == (["framed"], False, "usb:1209:0003:FS77")
    assert plain.drivers == [] and plain.channel is None


def test_usb_devices_are_marked_against_the_driver_tables() -> None:
    bus = VirtualUsbBus()
    bus.plug(HidCardScanner(serial="HS9"))
    bus.plug(FramedUsbShoe(serial="FS1"))
    bus.plug(HidCardScanner(vid=0x046D, pid=0xC31C, serial=None))  # somebody's keyboard
    found = survey([], bus)
    by_driver = {tuple(f.drivers): f for f in found.usb}
    assert by_driver[("usb-hid",)].channel == "usb:1209:0001:HS9"
    assert by_driver[("usb-framed",)].channel == "usb:1209:0002:FS1"
    assert by_driver[()].vid == 0x046D
    text = render(found)
    assert "driver: usb-hid   channel: usb:1209:0001:HS9" in text
    assert "Serial ports:\n  (none)" in text


def test_command_runs_on_this_machine(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["devices"]) == 0
    out = capsys.readouterr().out
    assert "Serial ports:" in out and "USB devices:" in out
    assert main(["devices", "--json"]) == 0
    assert set(json.loads(capsys.readouterr().out)) == {"serial", "usb", "problems", "usb_unavailable"}


def test_without_a_usb_backend_it_says_it_could_not_look(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A table PC without libusb: pyusb finds no backend, which is not the same as no device."""
    for name in ("libusb1", "libusb0", "openusb"):  # as on a PC where none of the libraries is installed
        monkeypatch.setattr(f"usb.backend.{name}.get_backend", lambda *args, **kwargs: None)
    assert main(["devices"]) == 0
    out = capsys.readouterr().out
    assert "USB devices:\n  (could not look: no USB backend; install libusb-1.0-0" in out
    assert "(none)" not in out.split("USB devices:")[1]
    assert main(["devices", "--json"]) == 0
    found = json.loads(capsys.readouterr().out)
    assert found["usb"] is None and "libusb-1.0-0" in found["usb_unavailable"]


def test_builtin_drivers_load_lazily_by_name() -> None:
    assert driver_names()[:5] == ["beetek", "linecode", "framed", "usb-hid", "usb-framed"]
    for name in ["beetek", "linecode", "framed", "usb-hid", "usb-framed"]:
        assert get_driver_class(name).name == name
    with pytest.raises(DriverInitError, match="unknown driver 'nope'"):
        get_driver_class("nope")
    with pytest.raises(DriverInitError, match="linecode table"):
        create_driver("linecode", "loop://", table="no-such-table")


def test_third_party_driver_through_the_entry_point_group(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    install_plugin(
        tmp_path,
        monkeypatch,
        "from drivers.linecode import LinecodeDriver\n"
        "class AcmeDriver(LinecodeDriver):\n"
        "    name = 'acme'\n"
        "class NotADriver:\n"
        "    pass\n",
        {"acme": "AcmeDriver", "broken": "NotADriver"},
    )
    assert {"acme", "broken"} <= set(driver_names())
    with create_driver("acme", "loop://") as driver:
        driver.write(b"A01\r\n")
        assert read_events(driver, 1) == [DeviceCard("AS")]
    with pytest.raises(DriverInitError, match="not a Driver subclass"):
        get_driver_class("broken")


def test_a_plugin_serial_driver_marks_serial_ports_not_usb_devices(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A third-party shoe on a USB-serial chip of its own is found as the port it is, like ours."""
    install_plugin(
        tmp_path,
        monkeypatch,
        "from drivers.base import UsbId\n"
        "from drivers.linecode import LinecodeDriver\n"
        "class AcmeDriver(LinecodeDriver):\n"
        "    name = 'acme'\n"
        "    usb_ids = (UsbId(0x1209, 0x0ACE, 'Acme card shoe'),)\n",
        {"acme": "AcmeDriver"},
    )
    bus = VirtualUsbBus()
    bus.plug(HidCardScanner(vid=0x1209, pid=0x0ACE, serial="AC1"))  # the same shoe as pyusb lists it
    found = survey([_port("/dev/ttyUSB4", 0x1209, 0x0ACE, "AC1")], bus)
    (port,) = found.serial
    assert (port.drivers, port.generic, port.channel) == (["acme"], False, "usb:1209:0ace:AC1")
    (device,) = found.usb
    assert device.drivers == []
    assert "driver: acme   channel: usb:1209:0ace:AC1" in render(found).split("USB devices:")[0]


def test_a_plugin_driver_that_declares_no_transport_is_refused_by_name(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    install_plugin(
        tmp_path,
        monkeypatch,
        "from drivers.base import Driver\n"
        "from drivers.codecs.linecode import LinecodeCodec\n"
        "class Homemade(Driver):\n"
        "    name = 'homemade'\n"
        "    make_codec = LinecodeCodec\n"
        "    open = read = write = close = lambda self, *args: None\n",
        {"homemade": "Homemade"},
    )
    with pytest.raises(
        DriverInitError, match=r"driver 'homemade' \(acme_shoe:Homemade\) declares no transport"
    ):
        get_driver_class("homemade")
    assert main(["devices"]) == 0  # the other drivers still mark what they know
    assert "note: driver 'homemade' (acme_shoe:Homemade) declares no transport" in capsys.readouterr().out


RULES = Path(__file__).parents[2] / "systemd" / "99-scannerd-shoe.rules"
_KEY = re.compile(r'(\w+)(?:\{(\w+)\})?(==|\+=|=)"([^"]*)"')


def _rules(text: str) -> list[dict[str, str]]:
    """Each active rule line as {key or key{attr}: value}."""
    rules = []
    for line in text.splitlines():
        if line.strip() and not line.startswith("#") and "idVendor" in line:
            rules.append({f"{k}{{{a}}}" if a else k: v for k, a, _, v in _KEY.findall(line)})
    return rules


def _serial_rule(rule: dict[str, str]) -> tuple[str, str, str]:
    attr = "ATTRS" if rule["SUBSYSTEM"] == "tty" else "ATTR"
    return rule[f"{attr}{{idVendor}}"], rule[f"{attr}{{idProduct}}"], rule.get(f"{attr}{{serial}}", "")


def test_udev_rules_match_vid_pid_and_serial_and_give_the_service_group() -> None:
    text = RULES.read_text()
    rules = _rules(text)
    assert rules
    for rule in rules:
        vid, pid, serial = _serial_rule(rule)
        assert vid and pid and serial, rule  # never the VID:PID alone
        assert rule["GROUP"] == "scannerd" and rule["MODE"] == "0660"
        assert rule["SYMLINK"].startswith("shoe-")
    # the commented example for adapters is a complete rule once uncommented
    example = [line[1:] for line in text.splitlines() if line.startswith("#SUBSYSTEM")]
    assert len(example) == 1 and _serial_rule(_rules(example[0])[0])[2]


def test_udev_rules_cover_every_device_id_a_driver_owns() -> None:
    covered = {(int(v, 16), int(p, 16)) for v, p, _ in map(_serial_rule, _rules(RULES.read_text()))}
    owned = {
        (usb_id.vid, usb_id.pid)
        for name in driver_names()
        for usb_id in get_driver_class(name).usb_ids
        if not usb_id.generic
    }
    assert owned <= covered
    generic = {(u.vid, u.pid) for u in get_driver_class("beetek").usb_ids}
    assert not generic & covered  # adapters only through per-shoe lines that name a serial
