"""DeviceReader on real ptys: time stamps, unplug and replug, errors that must not kill it."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from drivers.base import Codec, Driver, DriverInitError, DriverOperationError
from drivers.beetek import BeetekDriver
from drivers.codecs.beetek import BeetekCodec
from drivers.events import DeviceCard, DeviceEvent, LinkDown, LinkUp
from drivers.reader import DeviceReader
from drivers.registry import create_driver
from simulators.serial_pty import FramedPtyDevice, PtyPort
from tests.support.broker import wait_until
from tests.support.frames import beetek
from tests.support.serial_port import Collector


@pytest.fixture
def port(tmp_path: Path) -> Iterator[PtyPort]:
    with PtyPort(tmp_path / "shoe-1") as port:
        yield port


def start_reader(driver, sink: Collector, **kwargs) -> DeviceReader:
    reader = DeviceReader(
        driver, sink.on_event, on_rx=sink.on_rx, on_error=sink.on_error, backoff_max=0.2, **kwargs
    )
    return reader.start()


def test_events_are_stamped_when_read_and_raw_bytes_passed_on(port: PtyPort) -> None:
    sink = Collector()
    reader = start_reader(create_driver("beetek", port.path), sink)
    try:
        sink.wait(lambda s: s.links() == ["up"], "link up")
        before = time.time()
        port.write(beetek("AS") + b" [Game]<Card:K")
        port.write(b"D> \r\n")
        sink.wait(lambda s: len(s.cards()) == 2, "two cards")
        after = time.time()
        assert sink.cards() == ["AS", "KD"]
        stamps = [ts for ts, e in sink.events if isinstance(e, DeviceCard)]
        assert all(before <= ts <= after for ts in stamps)
        assert b"".join(data for _, data in sink.rx) == beetek("AS") + beetek("KD")
        assert sink.errors == []
    finally:
        reader.stop()
    assert not reader.alive
    assert isinstance(sink.of(LinkUp, LinkDown)[-1], LinkDown)


def test_with_a_hold_a_read_is_stamped_and_delivered_only_once_the_consumer_lets_it(port: PtyPort) -> None:
    """A request judged while the bytes wait must come before the card, in time as in order."""
    sink, hold = Collector(), threading.RLock()
    reader = start_reader(create_driver("beetek", port.path), sink, hold=hold)
    try:
        sink.wait(lambda s: s.links() == ["up"], "link up")
        with hold:  # another thread judging something, as the daemon does a request
            port.write(beetek("AS"))
            time.sleep(0.3)  # the reader has read the frame by now and waits for the lock
            assert sink.cards() == []
            released = time.time()
        sink.wait(lambda s: s.cards() == ["AS"], "the card")
        (stamp,) = [ts for ts, e in sink.events if isinstance(e, DeviceCard)]
        assert stamp >= released  # stamped under the lock, after what was judged before it
        assert [ts for ts, _ in sink.rx] == [stamp]
    finally:
        reader.stop()


def test_unplug_and_replug_on_another_node(port: PtyPort) -> None:
    sink = Collector()
    reader = start_reader(create_driver("beetek", port.path), sink)
    try:
        sink.wait(lambda s: s.links() == ["up"], "link up")
        port.write(beetek("2C") + beetek("3C") + b" [Game]<Car")  # and half a frame
        sink.wait(lambda s: len(s.rx) and b"<Car" in b"".join(d for _, d in s.rx), "bytes read")
        old_node = port.slave_name
        port.unplug()
        sink.wait(lambda s: s.links() == ["up", "down"], "link down")
        assert not reader.link_up
        port.plug(new_node=True)
        assert port.slave_name != old_node
        sink.wait(lambda s: s.links() == ["up", "down", "up"], "link up again")
        port.write(b"d:4C> " + beetek("5C"))  # the half frame's tail is junk now, not a card
        sink.wait(lambda s: "5C" in s.cards(), "card after replug")
        assert sink.cards() == ["2C", "3C", "5C"]
        assert reader.reconnects == 1
        assert reader.alive and sink.errors == []
    finally:
        reader.stop()


def test_no_card_that_was_read_is_lost_to_an_unplug(port: PtyPort) -> None:
    sink = Collector()
    reader = start_reader(create_driver("beetek", port.path), sink)
    sink.wait(lambda s: s.links() == ["up"], "link up")
    cards = ["AS", "2S", "3S", "4S", "5S", "6S", "7S", "8S", "9S", "TS"]
    for card in cards:
        port.write(beetek(card))
    port.unplug()  # at once: some bytes may die in the pty, but what was read must come out
    sink.wait(lambda s: s.links() == ["up", "down"], "link down")
    reader.stop()
    received = b"".join(data for _, data in sink.rx)
    assert sink.cards() == [e.card for e in BeetekCodec().feed(received)]  # type: ignore[union-attr]
    assert sink.cards() == cards[: len(sink.cards())]


def test_device_absent_at_start_is_waited_for(tmp_path: Path) -> None:
    sink = Collector()
    path = tmp_path / "shoe-2"
    reader = start_reader(create_driver("beetek", str(path)), sink)
    try:
        sink.wait(lambda s: s.links() == ["down"], "link reported down")
        assert reader.alive and isinstance(reader.last_error, Exception)
        with PtyPort(path) as port:
            sink.wait(lambda s: s.links() == ["down", "up"], "link up when the device appears")
            port.write(beetek("QH"))
            sink.wait(lambda s: s.cards() == ["QH"], "card")
    finally:
        reader.stop()


def test_a_failing_callback_is_reported_and_reading_goes_on(port: PtyPort) -> None:
    sink = Collector()

    def on_event(ts: float, event: DeviceEvent) -> None:
        if event == DeviceCard("6D"):
            raise RuntimeError("consumer bug")
        sink.on_event(ts, event)

    reader = DeviceReader(create_driver("beetek", port.path), on_event, on_error=sink.on_error).start()
    try:
        wait_until(lambda: reader.link_up, 10, "link up")
        port.write(beetek("6D") + beetek("7D"))
        sink.wait(lambda s: s.cards() == ["7D"], "the next card")
        assert [str(e) for e in sink.errors] == ["consumer bug"]
        assert reader.alive and reader.errors == 1 and str(reader.last_error) == "consumer bug"
    finally:
        reader.stop()


class CrashingBeetek(BeetekDriver):
    """A driver with a decoding bug on one input."""

    def decode(self, data: bytes) -> list[DeviceEvent]:
        if b"BUG" in data:
            raise ValueError("decoder bug")
        return super().decode(data)


def test_a_crashing_driver_is_reported_and_the_link_restarted(port: PtyPort) -> None:
    sink = Collector()
    reader = start_reader(CrashingBeetek(port.path), sink)
    try:
        sink.wait(lambda s: s.links() == ["up"], "link up")
        port.write(b"BUG")
        sink.wait(lambda s: s.links() == ["up", "down", "up"], "link restarted")
        assert [str(e) for e in sink.errors] == ["decoder bug"]
        port.write(beetek("8H"))
        sink.wait(lambda s: s.cards() == ["8H"], "card after the restart")
        assert reader.alive
    finally:
        reader.stop()


def test_framed_through_the_reader_survives_unplug_without_losing_or_doubling(port: PtyPort) -> None:
    sink = Collector()
    shoe = FramedPtyDevice(port, retransmit_after=0.05).start()
    reader = start_reader(create_driver("framed", port.path), sink)
    try:
        sink.wait(lambda s: s.links() == ["up"], "link up")
        shoe.send(DeviceCard("AD"))
        sink.wait(lambda s: s.cards() == ["AD"], "first card")
        port.unplug()
        sink.wait(lambda s: s.links() == ["up", "down"], "link down")
        reader.acknowledge(2)  # stored while the link is down: the ack is lost
        shoe.send(DeviceCard("2D"))  # queued in the shoe behind the unacknowledged AD
        port.replug()
        sink.wait(lambda s: s.cards() == ["AD", "2D"], "the queued card after replug")
        reader.acknowledge(3)
        assert shoe.wait_idle(10)
        assert shoe.device.acked == [1, 2, 3]
        assert sink.cards() == ["AD", "2D"]
    finally:
        reader.stop()
        shoe.stop()


def test_framed_card_the_consumer_failed_on_comes_again(port: PtyPort) -> None:
    shoe = FramedPtyDevice(port, retransmit_after=0.05).start()
    sink = Collector()
    failures = []

    def on_event(ts: float, event: DeviceEvent) -> None:
        if isinstance(event, DeviceCard) and not failures:
            failures.append(event)
            raise OSError("disk full")
        sink.on_event(ts, event)

    reader = DeviceReader(create_driver("framed", port.path), on_event, on_error=sink.on_error).start()
    try:
        shoe.send(DeviceCard("9S"))
        sink.wait(lambda s: s.cards() == ["9S"], "the card, delivered again")
        reader.acknowledge(2)
        assert shoe.wait_idle(10)
        assert failures == [DeviceCard("9S", ack=2)] and len(sink.errors) == 1
    finally:
        reader.stop()
        shoe.stop()


def test_alert_through_the_reader(port: PtyPort) -> None:
    shoe = FramedPtyDevice(port).start()
    sink = Collector()
    reader = start_reader(create_driver("framed", port.path), sink)
    try:
        sink.wait(lambda s: s.links() == ["up"], "link up")
        assert reader.set_alert(True, False)
        wait_until(lambda: shoe.device.led and not shoe.device.buzzer, 10, "led on")
    finally:
        reader.stop()
        shoe.stop()


class HalfDeadBeetek(BeetekDriver):
    """Opens, then fails every read: an adapter that enumerates but does not work."""

    def read(self, timeout: float) -> bytes:
        raise DriverOperationError("read failed: Input/output error")


def test_a_link_that_fails_at_once_backs_off_instead_of_spinning(port: PtyPort) -> None:
    sink = Collector()
    # The cap is long next to an open and a failed read, so even a loaded machine shows the growth.
    reader = DeviceReader(HalfDeadBeetek(port.path), sink.on_event, backoff_initial=0.125, backoff_max=1.0)
    reader.start()
    try:
        wait_until(lambda: reader.reconnects >= 4, 20, "several attempts")
        assert reader.backoff == 1.0  # grew to the cap although every open succeeded
        assert sink.links()[:4] == ["up", "down", "up", "down"]
    finally:
        reader.stop()


def test_a_failed_open_reports_the_link_without_holding_the_device_lock() -> None:
    """A consumer holding its own lock may need the device lock meanwhile (the daemon putting the
    shoe's alarm out for an acknowledged alert while the shoe is still being looked for)."""

    class SlowAbsent(Driver):
        name = "slow-absent"

        def make_codec(self) -> Codec:
            return BeetekCodec()

        def open(self) -> None:
            time.sleep(0.2)  # looking the channel up (list_ports, libusb) takes a while
            raise DriverInitError("not there")

        def read(self, timeout: float) -> bytes:
            return b""

        def write(self, data: bytes) -> None:
            pass

        def close(self) -> None:
            pass

    hold = threading.RLock()
    reader = DeviceReader(SlowAbsent("x"), lambda ts, e: None, hold=hold).start()
    try:
        time.sleep(0.05)  # the reader is inside its first open, holding the device lock
        done = threading.Event()

        def consumer() -> None:
            with hold:
                reader.set_alert(False, False)
            done.set()

        threading.Thread(target=consumer, daemon=True).start()
        assert done.wait(5), "the reader and the consumer wait for each other"
    finally:
        reader.stop()
