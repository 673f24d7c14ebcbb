"""The framed protocol's host session and device end, with no I/O: acks, repeats, dedup, restarts."""

from __future__ import annotations

import itertools
import re
from dataclasses import replace

from hypothesis import given, settings
from hypothesis import strategies as st

from drivers.codecs.framed import FramedCodec, FrameReader, encode_ack, encode_alert, encode_hello_request
from drivers.events import DeviceCard, DeviceCutCard, DeviceHello, DeviceStatus
from drivers.framed_device import FramedDevice
from drivers.framed_host import DedupState, FramedSession, is_newer
from scannerd.core.cards import ALL_CARDS

HELLO = DeviceHello("SHOE", "S1", "1.0", boot_id=10)


def synced(state: DedupState | None = None, boot_id: int = 10) -> FramedSession:
    session = FramedSession(state)
    session.start()
    session.receive(0, DeviceHello("SHOE", "S1", "1.0", boot_id))
    return session


def test_sequence_order_wraps() -> None:
    assert is_newer(1, None)
    assert is_newer(2, 1)
    assert not is_newer(1, 1)
    assert not is_newer(1, 2)
    assert is_newer(1, 0xFFFF)  # 65535 -> 1
    assert not is_newer(0xFFFF, 1)


def test_start_asks_for_hello_and_restates_the_alert() -> None:
    session = FramedSession()
    assert session.start() == encode_hello_request()
    session.set_alert(True, False)
    assert session.start() == encode_hello_request() + encode_alert(True, False)


def test_cards_are_held_back_until_the_device_says_which_boot_it_is() -> None:
    session = FramedSession()
    session.start()
    card = DeviceCard("AS", ack=5)
    assert session.receive(5, card) == (None, encode_hello_request())
    assert session.receive(0, HELLO) == (HELLO, b"")
    assert session.receive(5, card) == (card, b"")


def test_boot_hello_is_acknowledged_at_once_and_its_repeat_dropped() -> None:
    session = FramedSession()
    assert session.receive(1, HELLO) == (HELLO, encode_ack(1))
    assert session.receive(1, HELLO) == (None, encode_ack(1))
    assert session.state == DedupState(boot_id=10, acked=1)


def test_never_acknowledged_on_receipt_only_on_request() -> None:
    session = synced()
    card = DeviceCard("9H", ack=2)
    assert session.receive(2, card) == (card, b"")  # no ack bytes
    assert session.receive(2, card) == (None, b"")  # repeat while being stored: dropped, still no ack
    assert session.acknowledge(2) == encode_ack(2)
    assert session.receive(2, card) == (None, encode_ack(2))  # our ack was lost: repeat it
    assert session.duplicates == 2
    assert session.state.acked == 2


def test_acknowledging_a_sequence_never_delivered_sends_nothing() -> None:
    session = synced()
    assert session.acknowledge(4) == b""
    assert session.state.acked is None


def test_redeliver_lets_the_repeat_through() -> None:
    session = synced()
    card = DeviceCard("2C", ack=3)
    session.receive(3, card)
    session.redeliver(3)
    assert session.receive(3, card) == (card, b"")


def test_restored_state_survives_a_daemon_restart() -> None:
    session = synced(DedupState(boot_id=10, acked=17))
    assert session.receive(17, DeviceCard("KS", ack=17)) == (None, encode_ack(17))
    assert session.receive(18, DeviceCard("QS", ack=18)) == (DeviceCard("QS", ack=18), b"")


def test_a_new_boot_resets_the_sequence_memory() -> None:
    session = synced(DedupState(boot_id=10, acked=17), boot_id=11)
    card = DeviceCard("5D", ack=5)  # would look like an old repeat to the previous boot's memory
    assert session.receive(5, card) == (card, b"")
    assert session.state == DedupState(boot_id=11, acked=None)


def test_status_reconciles_the_alert_outputs() -> None:
    session = synced()
    session.set_alert(True, True)
    off = DeviceStatus(alert_led=False, buzzer=False)
    on = DeviceStatus(alert_led=True, buzzer=True)
    assert session.receive(0, off) == (off, encode_alert(True, True))
    assert session.receive(0, on) == (on, b"")


def test_dedup_state_round_trips_through_a_dict() -> None:
    state = DedupState(boot_id=3, acked=9)
    assert DedupState.from_dict(state.to_dict()) == state


def test_device_sends_one_message_at_a_time_and_repeats_it() -> None:
    device = FramedDevice(HELLO, retransmit_after=1.0)
    reader = FrameReader()
    hello = device.start(0.0)
    assert device.send(DeviceCard("AS"), 0.0) == b""  # queued behind the hello
    assert device.poll(0.5) == b""
    assert device.poll(1.0) == hello
    assert device.receive(encode_ack(1), 1.1) != b""  # the card goes out at once
    assert device.in_flight == 2
    assert device.receive(encode_ack(1), 1.2) == b""  # a stale ack changes nothing
    device.receive(encode_ack(2) + encode_alert(True, False), 1.3)
    assert device.idle and device.acked == [1, 2]
    assert (device.led, device.buzzer) == (True, False)
    frame = reader.feed(device.status())[0]
    assert frame.payload == b"\x08"  # ALERT_LED reported
    assert reader.feed(device.receive(encode_hello_request(), 2.0))[0].seq == 0


def _frames(data: bytes) -> list[bytes]:
    return re.findall(rb"\x00[^\x00]+\x00", data)


@settings(deadline=None, max_examples=60)
@given(
    st.lists(st.sampled_from([*ALL_CARDS, None, "cut"]), min_size=1, max_size=15),
    st.lists(st.sampled_from(["ok", "drop", "corrupt"]), max_size=60),
    st.lists(st.booleans(), max_size=30),
)
def test_lossy_link_delivers_every_card_once_and_in_order(cards: list, faults: list, slow_acks: list) -> None:
    """Device and host through a channel that drops and corrupts frames (both ways), with a
    consumer that sometimes takes a while to store: every card arrives exactly once, in order."""
    device = FramedDevice(HELLO, retransmit_after=1.0)
    session, codec = FramedSession(), FramedCodec()
    fault = itertools.chain(faults, itertools.repeat("ok"))
    slow = itertools.chain(slow_acks, itertools.repeat(False))
    events = [DeviceCutCard() if c == "cut" else DeviceCard(c) for c in cards]

    def channel(data: bytes) -> bytes:
        out = b""
        for frame in _frames(data):
            kind = next(fault)
            if kind == "corrupt":
                frame = frame[:3] + bytes([frame[3] ^ 0x40]) + frame[4:]
            if kind != "drop":
                out += frame
        return out

    now = 0.0
    to_host = device.start(now) + b"".join(device.send(e, now) for e in events)
    to_device = session.start()
    delivered, pending = [], []
    for _ in range(500):
        now += 0.5
        for seq, event in codec.feed_seq(channel(to_host)):
            event, reply = session.receive(seq, event)
            to_device += reply
            if isinstance(event, DeviceCard | DeviceCutCard):
                delivered.append(event)
                pending.append(event.ack)
        to_host = b""
        if pending and not next(slow):
            to_device += b"".join(session.acknowledge(s) for s in pending)
            pending.clear()
        to_host += device.receive(channel(to_device), now) + device.poll(now)
        to_device = b""
        if device.idle:
            break
    assert device.idle
    assert [replace(e, ack=None) for e in delivered] == events
