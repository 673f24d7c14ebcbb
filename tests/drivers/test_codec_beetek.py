"""Bee-Tek frames as the shoe sends them, junk between them, splits and fuzz."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from drivers.codecs.beetek import BeetekCodec, parse_card
from drivers.events import DeviceCard, DeviceFault
from scannerd.core.cards import ALL_CARDS
from tests.support.serial_port import feed_in_pieces

FRAMES = [
    (b" [Game]<Card:4S> ", DeviceCard("4S")),
    (b" [Game]<Card:AS> \r\n", DeviceCard("AS")),
    (b" [Game]<Card:10H> ", DeviceCard("TH")),
    (b" [Game]<Card:TD> ", DeviceCard("TD")),
    (b" [Game]<Card:S10> ", DeviceCard("TS")),
    (b" [Game]<Card:H3> ", DeviceCard("3H")),
    (b" [Game]<Card:qc> ", DeviceCard("QC")),
    (b" [Manual Burn Cards]<Card:H3> ", DeviceCard("3H", burn=True)),
    (b" [Manual Burn Cards]<Card:KD> ", DeviceCard("KD", burn=True)),
    (b" [Game]<Game> ", DeviceCard(None)),
    (b" [Manual Burn Cards]<Game> ", DeviceCard(None, burn=True)),
    (b" [Game]<Alarm:E3 Card Not Read> ", DeviceFault("E3", "Card Not Read")),
    (b" [GameAlarm]<Alarm:E5 Shoe Empty> ", DeviceFault("E5", "Shoe Empty")),
    (b"<W0x01>", DeviceFault("W0x01", "hardware warning")),
    (b" <W0x02> \r\n", DeviceFault("W0x02", "hardware warning")),
    (b"<Card:9C>", DeviceCard("9C")),
]


@pytest.mark.parametrize(("wire", "event"), FRAMES)
def test_frames(wire: bytes, event) -> None:
    codec = BeetekCodec()
    assert codec.feed(wire) == [event]
    assert (codec.junk_bytes, codec.bad_frames) == (0, 0)


@pytest.mark.parametrize(
    ("text", "card"),
    [
        ("4S", "4S"),
        ("S4", "4S"),
        ("10C", "TC"),
        ("C10", "TC"),
        ("AH", "AH"),
        ("HA", "AH"),
        ("1S", None),  # a 10S that lost its 0: not an ace
        ("S1", None),
        ("", None),
        ("XX", None),
        ("4", None),
    ],
)
def test_card_text_in_either_order(text: str, card: str | None) -> None:
    assert parse_card(text) == card


def test_garbled_card_code_is_reported_as_an_unreadable_card() -> None:
    codec = BeetekCodec()
    assert codec.feed(b" [Game]<Card:4X> ") == [DeviceCard(None)]
    assert codec.bad_frames == 1


def test_a_ten_that_lost_its_zero_on_the_wire_is_an_unreadable_card_not_an_ace() -> None:
    codec = BeetekCodec()
    assert codec.feed(b" [Game]<Card:1S> [Game]<Card:H1> ") == [DeviceCard(None), DeviceCard(None)]
    assert codec.bad_frames == 2


def _spellings(card: str) -> list[str]:
    """Every way the shoe writes ``card``: rank first or suit first, a ten as ``T`` or ``10``."""
    ranks = ["T", "10"] if card[0] == "T" else [card[0]]
    return [text for rank in ranks for text in (rank + card[1], card[1] + rank)]


@pytest.mark.parametrize("card", ALL_CARDS)
def test_a_card_code_that_lost_a_character_is_never_read_as_another_card(card: str) -> None:
    """A byte lost inside ``<Card:..>`` must leave the card unreadable (a misdeal), never another card."""
    for text in _spellings(card):
        for i in range(len(text)):
            short = text[:i] + text[i + 1 :]
            read = BeetekCodec().feed(f" [Game]<Card:{short}> ".encode())
            assert read in ([DeviceCard(card)], [DeviceCard(None)]), f"{text} less character {i + 1}: {read}"


def test_unknown_frame_is_counted_not_reported() -> None:
    codec = BeetekCodec()
    assert codec.feed(b" [Game]<Shuffle> [Game]<Card:2D> ") == [DeviceCard("2D")]
    assert codec.bad_frames == 1


def test_junk_between_frames_is_skipped_and_counted() -> None:
    codec = BeetekCodec()
    data = b"\xff\x00garbage [Game]<Card:5H> ]]>> [Game <Card:6H> [Orphan] xx [Game]<Card:7H>"
    assert codec.feed(data) == [DeviceCard("5H"), DeviceCard("6H"), DeviceCard("7H")]
    assert codec.junk_bytes > 0


def test_unterminated_frame_does_not_swallow_the_next() -> None:
    codec = BeetekCodec()
    assert codec.feed(b" [Game]<Card:4S [Game]<Card:5S> ") == [DeviceCard("5S")]
    assert codec.feed(b"<" + b"x" * 100 + b" [Game]<Card:6S> ") == [DeviceCard("6S")]


def test_partial_frame_waits_for_the_rest() -> None:
    codec = BeetekCodec()
    assert codec.feed(b" [Manual Bur") == []
    assert codec.feed(b"n Cards]<Card:") == []
    assert codec.feed(b"H3> ") == [DeviceCard("3H", burn=True)]
    assert codec.junk_bytes == 0


wire_frames = st.lists(st.sampled_from([w for w, _ in FRAMES]), max_size=12)
separators = st.sampled_from([b"", b" ", b"\r\n", b"xx", b"\x00\xff", b"]>", b"[", b"<"])


def _decode(data: bytes, cuts: list[int]) -> tuple[list, int, int]:
    return feed_in_pieces(BeetekCodec(), data, cuts)


@settings(deadline=None)
@given(wire_frames, st.lists(st.integers(0, 10_000), max_size=30))
def test_any_split_of_clean_frames_decodes_the_same(frames: list[bytes], cuts: list[int]) -> None:
    data = b"".join(frames)
    expected = [dict(FRAMES)[w] for w in frames]
    assert _decode(data, cuts) == (expected, 0, 0)


@settings(deadline=None)
@given(
    st.lists(st.tuples(separators, st.sampled_from([w for w, _ in FRAMES]))), st.lists(st.integers(0, 10_000))
)
def test_any_split_with_junk_decodes_the_same(parts: list[tuple[bytes, bytes]], cuts: list[int]) -> None:
    data = b"".join(sep + frame for sep, frame in parts)
    assert _decode(data, cuts) == _decode(data, [])


@settings(deadline=None)
@given(st.binary(max_size=2000), st.lists(st.integers(0, 10_000), max_size=10))
def test_arbitrary_bytes_never_raise_and_split_the_same(data: bytes, cuts: list[int]) -> None:
    assert _decode(data, cuts) == _decode(data, [])
