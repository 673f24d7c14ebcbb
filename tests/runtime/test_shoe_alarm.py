"""The shoe's alarm: LED and buzzer on while a misdeal is open, through the real framed driver."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from drivers.reader import DeviceReader
from drivers.registry import create_driver
from scannerd.core.house import HouseRules
from scannerd.core.inputs import CardDrawn, Command
from scannerd.core.validator import Validator
from scannerd.runtime.shoe_alarm import AlarmState, ShoeAlarm
from simulators.serial_pty import FramedPtyDevice, PtyPort
from tests.support.broker import wait_until


def misdeal_table() -> tuple[Validator, list, list]:
    """A validator, the events of a misdeal (an extra card) and of a warning (stall)."""
    v = Validator("T1", HouseRules(burn="none"))
    misdeal = v.handle(CardDrawn(1.0, "AS"))  # no round open: an extra card
    v.handle(Command(2.0, "betting_open", {}))
    v.handle(Command(3.0, "betting_close", {}))
    warning = v.handle(CardDrawn(100.0, "2S"))  # long after the round opened: stalled
    return v, misdeal, warning


def ack(v: Validator, alert_id: int) -> list:
    return v.handle(Command(200.0, "ack_alert", {"alert_id": alert_id}))


def test_only_misdeals_sound_and_only_until_all_are_acknowledged():
    v, misdeal, warning = misdeal_table()
    state = AlarmState()
    assert state.apply(warning) is False and not state.on
    assert state.apply(misdeal) is True and state.on
    for n, card in enumerate(("3S", "4S", "5S")):  # the round completes (banker natural)
        assert state.apply(v.handle(CardDrawn(101.0 + n, card))) is False
    assert state.apply(v.handle(CardDrawn(110.0, "6S"))) is False  # a second extra card: already on
    first_id, second_id = sorted(state.misdeals)
    assert state.apply(ack(v, first_id)) is False and state.on
    assert state.apply(ack(v, second_id)) is True and not state.on


def test_a_restart_with_a_misdeal_open_sounds_at_once():
    v, _, _ = misdeal_table()
    calls: list[tuple[bool, bool]] = []

    def record(led: bool, buzzer: bool) -> bool:
        calls.append((led, buzzer))
        return True

    alarm = ShoeAlarm(record, v.state()["alerts"])
    alarm.start()
    assert calls == [(True, True)]


def test_a_shoe_without_alert_outputs_is_asked_once():
    _, misdeal, _ = misdeal_table()
    calls: list[tuple[bool, bool]] = []

    def no_outputs(led: bool, buzzer: bool) -> bool:
        calls.append((led, buzzer))
        return False

    alarm = ShoeAlarm(no_outputs)
    alarm.start()
    alarm.on_events(misdeal)
    assert calls == [(False, False)] and not alarm.supported


@pytest.fixture
def framed_shoe(tmp_path: Path) -> Iterator[tuple[FramedPtyDevice, DeviceReader]]:
    port = PtyPort(tmp_path / "shoe", baudrate=115200)
    shoe = FramedPtyDevice(port, retransmit_after=0.05).start()
    reader = DeviceReader(create_driver("framed", port.path), on_event=lambda ts, event: None).start()
    wait_until(lambda: reader.link_up, 10, "the framed shoe to open")
    yield shoe, reader
    reader.stop()
    shoe.stop()
    port.close()


def test_the_framed_shoe_lights_up_and_beeps_until_acknowledged(framed_shoe):
    shoe, reader = framed_shoe
    v, misdeal, warning = misdeal_table()
    alarm = ShoeAlarm(reader.set_alert)
    alarm.start()
    alarm.on_events(warning)
    alarm.on_events(misdeal)
    wait_until(lambda: (shoe.device.led, shoe.device.buzzer) == (True, True), 10, "LED and buzzer on")

    # The shoe reboots (outputs off); its first heartbeat shows it, and the driver restates the alarm.
    shoe.reboot(boot_id=2)
    wait_until(lambda: shoe.device.idle, 10, "the new boot's hello to be acknowledged")
    shoe.heartbeat()
    wait_until(lambda: shoe.device.led and shoe.device.buzzer, 10, "the alarm restated after a reboot")

    (alert_id,) = alarm.state.misdeals
    alarm.on_events(ack(v, alert_id))
    wait_until(lambda: (shoe.device.led, shoe.device.buzzer) == (False, False), 10, "LED and buzzer off")
