"""The simulated devices' frames read back through the real codecs."""

import random

import pytest

from drivers.codecs.beetek import BeetekCodec
from drivers.codecs.linecode import LinecodeCodec, suit_digit
from drivers.events import DeviceCard
from scannerd.core.cards import ALL_CARDS
from simulators.actions import CutCard, Draw, Unreadable
from simulators.wires import (
    beetek_frame,
    beetek_junk,
    letter_rank_code,
    linecode_frame,
    linecode_junk,
    suit_digit_code,
)


@pytest.mark.parametrize("crlf", [False, True])
def test_beetek_frames_decode_to_the_card_in_every_spelling(crlf):
    rng = random.Random(1)
    codec = BeetekCodec()
    for _ in range(4):  # rank-first, suit-first and "10" all get their turn
        for card in ALL_CARDS:
            assert codec.feed(beetek_frame(Draw(card), rng, crlf)) == [DeviceCard(card)]
    assert codec.feed(beetek_frame(Draw("TH", burn=True), rng, crlf)) == [DeviceCard("TH", burn=True)]
    assert codec.feed(beetek_frame(Unreadable("AS"), rng, crlf)) == [DeviceCard(None)]
    assert beetek_frame(CutCard(), rng) is None
    assert codec.junk_bytes == 0 and codec.bad_frames == 0


def test_linecode_frames_decode_to_the_card():
    codec = LinecodeCodec()
    for card in ALL_CARDS:
        assert codec.feed(linecode_frame(Draw(card))) == [DeviceCard(card)]
    assert letter_rank_code("QD") == "D12"
    assert letter_rank_code("AS") == "A01"
    assert codec.feed(linecode_frame(Unreadable("AS"))) == [DeviceCard(None)]
    assert linecode_frame(CutCard()) is None


def test_hid_codes_follow_the_suit_digit_table():
    assert suit_digit_code("AS") == "S1010"
    assert suit_digit_code("JC") == "S3110"
    assert all(suit_digit(suit_digit_code(card)) == card for card in ALL_CARDS)


@pytest.mark.parametrize(
    ("codec", "junk", "frame"),
    [
        (BeetekCodec, beetek_junk, lambda rng: beetek_frame(Draw("7D"), rng)),
        (LinecodeCodec, linecode_junk, lambda rng: linecode_frame(Draw("7D"))),
    ],
)
def test_junk_is_never_read_as_a_card_and_never_hides_one(codec, junk, frame):
    rng = random.Random(3)
    c = codec()
    for _ in range(300):
        assert c.feed(junk(rng)) == []
        assert c.feed(frame(rng)) == [DeviceCard("7D")]
    assert c.junk_bytes > 0
