"""The framed wire format: worked examples from docs/protocol.md, resync, splits, fuzz."""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from drivers.codecs.framed import (
    Ack,
    Alert,
    FramedCodec,
    FrameReader,
    HelloRequest,
    cobs_decode,
    cobs_encode,
    crc16,
    encode_ack,
    encode_alert,
    encode_event,
    encode_frame,
    encode_hello_request,
    parse_host_frame,
)
from drivers.events import (
    DeviceButton,
    DeviceCard,
    DeviceCutCard,
    DeviceFault,
    DeviceHello,
    DeviceStatus,
)
from scannerd.core.cards import ALL_CARDS
from tests.support.serial_port import feed_in_pieces

# The worked examples of docs/protocol.md, byte for byte.
DOC_EXAMPLES = [
    (DeviceCard("AS", ack=2), 2, "00 03 01 03 04 02 41 53 03 1b 56 00"),
    (DeviceCard("QH", burn=True, ack=7), 7, "00 03 01 03 07 07 51 48 01 2b d8 00"),
    (DeviceCard(None, ack=3), 3, "00 03 01 04 02 03 03 24 ff 00"),
    (DeviceCutCard(ack=9), 9, "00 03 01 05 04 09 88 ad 00"),
    (DeviceButton("new_shoe", ack=4), 4, "00 03 01 06 0c 04 6e 65 77 5f 73 68 6f 65 02 e1 00"),
    (DeviceStatus(jam=True, alert_led=False, buzzer=False), 0, "00 03 01 02 01 04 02 76 77 00"),
    (
        DeviceFault("E3", "Card Not Read"),
        0,
        "00 03 01 07 01 13 02 45 33 43 61 72 64 20 4e 6f 74 20 52 65 61 64 e9 f4 00",
    ),
    (
        DeviceHello("BT-9", "SN1", "1.0", 0xDEADBEEF),
        1,
        "00 03 01 01 15 01 de ad be ef 04 42 54 2d 39 03 53 4e 31 03 31 2e 30 fa f4 00",
    ),
]


def test_crc_is_ccitt_false() -> None:
    assert crc16(b"123456789") == 0x29B1


@pytest.mark.parametrize(("event", "seq", "wire"), DOC_EXAMPLES)
def test_documented_frames_encode_and_decode(event, seq, wire) -> None:
    data = bytes.fromhex(wire)
    assert encode_event(event, seq) == data
    assert FramedCodec().feed_seq(data) == [(seq, event)]


def test_host_commands_as_documented() -> None:
    assert encode_ack(2).hex(" ") == "00 03 01 81 04 02 de 5c 00"
    assert encode_alert(led=True, buzzer=True).hex(" ") == "00 03 01 82 01 04 03 bb 6e 00"
    assert encode_hello_request().hex(" ") == "00 03 01 83 01 03 90 7e 00"
    reader = FrameReader()
    frames = reader.feed(encode_ack(2) + encode_alert(True, False) + encode_hello_request())
    assert [parse_host_frame(f) for f in frames] == [Ack(2), Alert(True, False), HelloRequest()]


@pytest.mark.parametrize("card", ALL_CARDS)
def test_every_card_round_trips(card: str) -> None:
    assert FramedCodec().feed(encode_event(DeviceCard(card, ack=1), 1)) == [DeviceCard(card, ack=1)]


def test_corrupt_frame_is_counted_and_the_next_one_survives() -> None:
    good = encode_event(DeviceCard("KD", ack=5), 5)
    broken = bytearray(encode_event(DeviceCard("AS", ack=4), 4))
    broken[6] ^= 0x20  # one bit flipped in the card code: the CRC catches it
    codec = FramedCodec()
    assert codec.feed(bytes(broken) + good) == [DeviceCard("KD", ack=5)]
    assert codec.bad_frames == 1
    assert codec.junk_bytes == len(broken) - 2


def test_noise_without_zero_bytes_is_dropped_and_counted() -> None:
    codec = FramedCodec()
    noise = bytes(range(1, 256)) * 2  # longer than any frame, no delimiter
    good = encode_event(DeviceCutCard(ack=1), 1)
    assert codec.feed(noise + good) == [DeviceCutCard(ack=1)]
    assert codec.junk_bytes == len(noise)


@pytest.mark.parametrize("code", [b"ZZ", b"\xffS", b"A\x80"])
def test_card_code_outside_the_deck_becomes_unreadable(code: bytes) -> None:
    # Not ASCII is not a card either: dropped, the frame would be repeated by the shoe, never acknowledged.
    codec = FramedCodec()
    frame = encode_frame(0x03, 6, code + b"\x00")
    assert codec.feed(frame) == [DeviceCard(None, ack=6)]
    assert codec.unknown_cards == 1


@pytest.mark.parametrize(
    ("msg_type", "seq", "payload"),
    [
        (0x03, 0, b"AS\x00"),  # a card must carry a sequence number
        (0x03, 1, b"A"),  # short payload
        (0x06, 1, b""),  # button without a name
        (0x01, 1, b"\x00\x00\x00\x01\x09ab"),  # hello string longer than the payload
        (0x7F, 0, b""),  # unknown message type
    ],
)
def test_checksummed_but_malformed_frames_are_bad_frames(msg_type: int, seq: int, payload: bytes) -> None:
    codec = FramedCodec()
    assert codec.feed(encode_frame(msg_type, seq, payload)) == []
    assert codec.bad_frames == 1


def test_reset_forgets_a_half_frame() -> None:
    codec = FramedCodec()
    frame = encode_event(DeviceCard("2C", ack=1), 1)
    codec.feed(frame[:5])
    codec.reset()
    assert codec.feed(frame[5:]) == []
    assert codec.feed(frame) == [DeviceCard("2C", ack=1)]


@settings(deadline=None)
@given(st.binary(max_size=300))
def test_cobs_round_trip(data: bytes) -> None:
    encoded = cobs_encode(data)
    assert 0 not in encoded
    assert cobs_decode(encoded) == data


device_events = st.one_of(
    st.builds(DeviceCard, st.sampled_from([*ALL_CARDS, None]), st.booleans()),
    st.builds(DeviceCutCard),
    st.builds(DeviceButton, st.text(min_size=1, max_size=20)),
    st.builds(DeviceStatus, st.booleans(), st.booleans(), st.booleans(), st.booleans(), st.booleans()),
    st.builds(DeviceFault, st.text(max_size=10), st.text(max_size=40)),
    st.builds(
        DeviceHello,
        st.text(max_size=20),
        st.text(max_size=20),
        st.text(max_size=20),
        st.integers(0, 2**32 - 1),
    ),
)


def _stream(events: list) -> bytes:
    return b"".join(encode_event(e, i + 1) for i, e in enumerate(events))


def _decode_in_pieces(data: bytes, cuts: list[int]) -> tuple[list, int, int]:
    return feed_in_pieces(FramedCodec(), data, cuts)


@settings(deadline=None)
@given(
    st.lists(device_events, max_size=8), st.lists(st.integers(0, 10_000), max_size=20), st.binary(max_size=40)
)
def test_any_split_decodes_the_same(events: list, cuts: list[int], junk: bytes) -> None:
    data = junk + _stream(events)
    whole = _decode_in_pieces(data, [])
    assert _decode_in_pieces(data, cuts) == whole
    # junk in front costs nothing but the junk (a frame's leading zero resynchronises)
    assert whole[0] == [_as_received(e, i + 1) for i, e in enumerate(events)]


def _as_received(event, seq: int):
    """Reliable events come back carrying the sequence number they were sent with."""
    return replace(event, ack=seq) if hasattr(event, "ack") else event


@settings(deadline=None)
@given(st.binary(max_size=2000))
def test_arbitrary_bytes_never_raise(data: bytes) -> None:
    codec = FramedCodec()
    codec.feed(data)
    FrameReader().feed(data)


def test_every_frame_in_the_protocol_document_is_valid() -> None:
    doc = (Path(__file__).parents[2] / "docs" / "protocol.md").read_text()
    frames = re.findall(r"(?:^ +|`)(00(?: [0-9a-f]{2})+ 00)(?:`|$)", doc, re.MULTILINE)
    assert len(frames) >= 15
    for text in frames:
        reader = FrameReader()
        assert len(reader.feed(bytes.fromhex(text))) == 1, text
        assert reader.bad_frames == 0, text
