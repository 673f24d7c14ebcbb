"""Each serial driver through pyserial on a real pty, and the other pyserial URL transports."""

from __future__ import annotations

import socket
import threading
from pathlib import Path

import pytest
from serial.tools.list_ports_common import ListPortInfo

from drivers.base import DriverInitError, DriverOperationError, DriverTimeout
from drivers.beetek import BeetekDriver
from drivers.events import DeviceCard, DeviceFault
from drivers.framed import FramedDriver
from drivers.registry import create_driver
from drivers.serial_transport import detect_ports
from drivers.usb_match import UsbPortMatch
from simulators.serial_pty import PtyPort
from tests.support.serial_port import read_events


def test_beetek_on_a_pty(tmp_path: Path) -> None:
    with PtyPort(tmp_path / "shoe") as port, create_driver("beetek", port.path) as driver:
        port.write(b" [Game]<Card:4S> \r\n [Manual Burn")
        port.write(b" Cards]<Card:H3> junk [GameAlarm]<Alarm:E3 Card Not Read> ")
        assert read_events(driver, 3) == [
            DeviceCard("4S"),
            DeviceCard("3H", burn=True),
            DeviceFault("E3", "Card Not Read"),
        ]
        assert driver.codec.junk_bytes == 4
        assert driver.set_alert(True, True) is False  # the Bee-Tek shoe has no alert outputs


def test_linecode_on_a_pty_with_a_chosen_table(tmp_path: Path) -> None:
    with PtyPort(tmp_path / "scanner") as port, create_driver("linecode", port.path, table="suit-digit") as d:
        port.write(b"1010\r\n3110\r\nA01\r\n")
        assert read_events(d, 3) == [DeviceCard("AS"), DeviceCard("JC"), DeviceCard(None)]


def test_unplugged_pty_fails_the_read(tmp_path: Path) -> None:
    with PtyPort(tmp_path / "shoe") as port, create_driver("beetek", port.path) as driver:
        port.unplug()
        with pytest.raises(DriverOperationError):
            for _ in range(50):
                driver.read(0.1)


def test_a_device_that_takes_no_bytes_times_the_write_out(tmp_path: Path) -> None:
    with (
        PtyPort(tmp_path / "shoe") as port,
        create_driver("framed", port.path) as driver,
        pytest.raises(DriverTimeout),
    ):
        for _ in range(1000):  # the simulated device never reads: the pty fills up
            driver.write(bytes(4096))


def test_absent_device_fails_the_open(tmp_path: Path) -> None:
    with pytest.raises(DriverInitError):
        create_driver("beetek", str(tmp_path / "nothing-here")).open()


def test_loop_url() -> None:
    with create_driver("linecode", "loop://") as driver:
        driver.write(b"D12\r\n")
        assert read_events(driver, 1) == [DeviceCard("QD")]


def test_socket_url() -> None:
    server = socket.create_server(("127.0.0.1", 0))
    port = server.getsockname()[1]

    def serve() -> None:
        conn, _ = server.accept()
        with conn:
            # pyserial discards what is waiting when it connects: speak once spoken to.
            conn.recv(1)
            conn.sendall(b" [Game]<Card:10D> ")
            conn.recv(1)  # hold the connection until the client closes

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        with create_driver("beetek", f"socket://127.0.0.1:{port}") as driver:
            driver.write(b"?")
            assert read_events(driver, 1) == [DeviceCard("TD")]
    finally:
        thread.join(5)
        server.close()


def _port(device: str, vid: int, pid: int, serial_number: str | None) -> ListPortInfo:
    info = ListPortInfo(device, skip_link_detection=True)
    info.vid, info.pid, info.serial_number = vid, pid, serial_number
    return info


def test_usb_match_finds_the_adapter_whatever_its_node() -> None:
    ports = [
        _port("/dev/ttyUSB0", 0x0403, 0x6001, "AAA"),
        _port("/dev/ttyUSB3", 0x0403, 0x6001, "BBB"),
        _port("/dev/ttyACM0", 0x1209, 0x5C5D, "S1"),
    ]
    assert UsbPortMatch.parse("usb:0403:6001:BBB").find(ports) == "/dev/ttyUSB3"
    assert UsbPortMatch.parse("usb:1209:5c5d").find(ports) == "/dev/ttyACM0"
    assert str(UsbPortMatch.parse("usb:0403:6001:BBB")) == "usb:0403:6001:BBB"
    assert UsbPortMatch.parse("/dev/shoe-1") is None
    with pytest.raises(DriverInitError, match="several"):
        UsbPortMatch.parse("usb:0403:6001").find(ports)
    with pytest.raises(DriverInitError, match="no serial port"):
        UsbPortMatch.parse("usb:0403:6001:CCC").find(ports)
    with pytest.raises(DriverInitError, match="bad USB match"):
        UsbPortMatch.parse("usb:zz")


def test_detect_offers_a_channel_that_survives_renumbering() -> None:
    ports = [_port("/dev/ttyACM2", 0x1209, 0x0003, "FS9"), _port("/dev/ttyUSB0", 0x0403, 0x6001, None)]
    assert detect_ports("framed", FramedDriver.usb_ids, ports) == [
        {"driver": "framed", "channel": "usb:1209:0003:FS9", "device": "/dev/ttyACM2", "generic": False}
    ]
    (adapter,) = detect_ports("beetek", BeetekDriver.usb_ids, ports)
    assert adapter["generic"] and adapter["channel"] == "usb:0403:6001"
    assert isinstance(FramedDriver.detect(), list)  # whatever this machine has
