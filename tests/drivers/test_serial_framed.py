"""The framed driver against a simulated shoe on a real pty: acks, repeats, dedup, restarts, alerts."""

from __future__ import annotations

import json

from drivers.events import DeviceButton, DeviceCard, DeviceCutCard, DeviceHello, DeviceStatus
from drivers.framed import FramedDriver
from drivers.registry import create_driver
from simulators.serial_pty import FramedPtyDevice
from tests.support.broker import wait_until
from tests.support.serial_port import read_events, read_until


def open_driver(shoe: FramedPtyDevice, state: dict | None = None) -> FramedDriver:
    driver = create_driver("framed", shoe.port.path)
    assert isinstance(driver, FramedDriver)
    if state:
        driver.restore_state(state)
    driver.open()
    return driver


def game_events(driver: FramedDriver, count: int) -> list:
    """The next ``count`` events that are not hellos or heartbeats."""
    events: list = []
    while len(events) < count:
        events += [e for e in read_events(driver, 1) if not isinstance(e, DeviceHello | DeviceStatus)]
    return events


def test_card_is_repeated_until_acknowledged_and_delivered_once(shoe: FramedPtyDevice) -> None:
    driver = open_driver(shoe)
    try:
        shoe.send(DeviceCard("AS"))
        assert game_events(driver, 1) == [DeviceCard("AS", ack=2)]
        wait_until(lambda: shoe.device.retransmissions >= 3, 10, "repeats of the unacknowledged card")
        for _ in range(5):  # drain the repeats: none may come out as a second card
            data = driver.read(0.1)
            assert [e for e in driver.decode(data) if isinstance(e, DeviceCard)] == []
        assert driver.session.duplicates >= 1
        assert shoe.device.acked == [1]  # only the boot hello: no ack on receipt
        driver.acknowledge(2)
        assert shoe.wait_idle(10)
        assert shoe.device.acked == [1, 2]
    finally:
        driver.close()


def test_every_reliable_message_kind_round_trips(shoe: FramedPtyDevice) -> None:
    driver = open_driver(shoe)
    try:
        sent = [DeviceCard("KD", burn=True), DeviceCard(None), DeviceCutCard(), DeviceButton("new_shoe")]
        got = []
        for event in sent:
            shoe.send(event)
            (received,) = game_events(driver, 1)
            driver.acknowledge(received.ack)
            got.append(received)
        assert [type(e) for e in got] == [type(e) for e in sent]
        assert [e.ack for e in got] == [2, 3, 4, 5]
        assert got[0] == DeviceCard("KD", burn=True, ack=2)
        assert got[3] == DeviceButton("new_shoe", ack=5)
        assert shoe.wait_idle(10)
    finally:
        driver.close()


def test_lost_ack_is_repeated_when_the_device_repeats(shoe: FramedPtyDevice) -> None:
    driver = open_driver(shoe)
    shoe.send(DeviceCard("7C"))
    assert game_events(driver, 1) == [DeviceCard("7C", ack=2)]
    shoe.port.unplug()
    driver.acknowledge(2)  # stored, but the ack cannot reach the shoe
    assert shoe.device.in_flight == 2
    driver.close()
    shoe.port.replug()
    driver.open()
    try:
        events = read_until(driver, lambda _: shoe.device.idle)  # the repeat got our ack again...
        assert shoe.device.acked == [1, 2]
        assert [e for e in events if isinstance(e, DeviceCard)] == []  # ...and was not a second card
        assert driver.session.duplicates >= 1
    finally:
        driver.close()


def test_daemon_restart_with_saved_state(shoe: FramedPtyDevice) -> None:
    first = open_driver(shoe)
    shoe.send(DeviceCard("2H"))
    assert game_events(first, 1) == [DeviceCard("2H", ack=2)]
    first.acknowledge(2)
    assert shoe.wait_idle(10)
    saved = first.saved_state()
    assert saved == {"boot_id": 1, "acked": 2}
    shoe.send(DeviceCard("3H"))
    assert game_events(first, 1) == [DeviceCard("3H", ack=3)]
    first.close()  # crashed before the 3H was stored: never acknowledged

    second = open_driver(shoe, json.loads(json.dumps(saved)))  # as the outbox keeps it
    try:
        assert game_events(second, 1) == [DeviceCard("3H", ack=3)]  # the shoe's repeat is delivered
        second.acknowledge(3)
        assert shoe.wait_idle(10)
    finally:
        second.close()


def test_reboot_of_the_shoe_resets_duplicate_memory(shoe: FramedPtyDevice) -> None:
    driver = open_driver(shoe)
    try:
        shoe.send(DeviceCard("4S"))
        assert game_events(driver, 1) == [DeviceCard("4S", ack=2)]
        driver.acknowledge(2)
        assert shoe.wait_idle(10)
        shoe.reboot(boot_id=2)
        shoe.send(DeviceCard("5S"))  # seq 2 again, in the new boot: a new card, not a repeat
        assert game_events(driver, 1) == [DeviceCard("5S", ack=2)]
        assert driver.saved_state()["boot_id"] == 2
    finally:
        driver.close()


def test_alert_led_and_buzzer(shoe: FramedPtyDevice) -> None:
    driver = open_driver(shoe)
    try:
        assert driver.set_alert(True, True)
        wait_until(lambda: (shoe.device.led, shoe.device.buzzer) == (True, True), 10, "alert on")
        driver.set_alert(False, True)
        wait_until(lambda: (shoe.device.led, shoe.device.buzzer) == (False, True), 10, "led off")
    finally:
        driver.close()


def test_alert_is_restated_after_a_reconnect(shoe: FramedPtyDevice) -> None:
    driver = open_driver(shoe)
    shoe.port.unplug()
    driver.set_alert(True, False)  # the command is lost on the way
    driver.close()
    shoe.reboot(boot_id=5)  # and the shoe forgot its outputs anyway
    shoe.port.replug()
    driver.open()
    try:
        wait_until(lambda: shoe.device.led, 10, "alert restated on reconnect")
    finally:
        driver.close()


def test_heartbeat_mismatch_restates_the_alert(shoe: FramedPtyDevice) -> None:
    driver = open_driver(shoe)
    try:
        driver.set_alert(True, True)
        wait_until(lambda: shoe.device.led, 10, "alert on")
        shoe.device.led = shoe.device.buzzer = False  # the outputs dropped out (a brown-out, say)
        shoe.heartbeat(lid_open=True)
        events = read_until(driver, lambda _: shoe.device.led and shoe.device.buzzer)
        assert DeviceStatus(lid_open=True, alert_led=False, buzzer=False) in events
    finally:
        driver.close()
