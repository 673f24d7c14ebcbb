"""One-code-per-line scanners and the code tables shared with the USB wedge scanners."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from drivers.cards import ALL_CARDS, RANKS
from drivers.codecs.linecode import LinecodeCodec, letter_rank, make_table, suit_digit
from drivers.events import DeviceCard
from tests.support.serial_port import feed_in_pieces


@pytest.mark.parametrize(
    ("code", "card"),
    [("A01", "AS"), ("D12", "QD"), ("H10", "TH"), ("C13", "KC"), ("A00", None), ("A14", None), ("S01", None)],
)
def test_letter_rank_table(code: str, card: str | None) -> None:
    assert letter_rank(code) == card


@pytest.mark.parametrize(
    ("code", "card"),
    [
        ("1010", "AS"),
        ("3110", "JC"),
        ("2130", "KH"),
        ("4050", "5D"),
        ("B1010", "AS"),
        ("5010", None),
        ("1011", None),
        ("1140", None),
    ],
)
def test_suit_digit_table(code: str, card: str | None) -> None:
    assert suit_digit(code) == card


def test_lines_with_any_line_ending() -> None:
    codec = LinecodeCodec()
    data = b"A01\r\nD12\n1010\rB3110\r\n\r\n  h05  \n"
    assert codec.feed(data) == [DeviceCard(c) for c in ["AS", "QD", "AS", "JC", "5H"]]
    assert (codec.junk_bytes, codec.bad_frames) == (0, 0)


def test_unknown_printable_code_is_an_unreadable_card() -> None:
    codec = LinecodeCodec()
    assert codec.feed(b"NOREAD\r\nA02\r\n") == [DeviceCard(None), DeviceCard("2S")]
    assert codec.bad_frames == 1


def test_noise_lines_are_counted_not_reported() -> None:
    codec = LinecodeCodec()
    assert codec.feed(b"\x01\x02\xff\n" + b"9" * 100 + b"\nA03\n") == [DeviceCard("3S")]
    assert codec.junk_bytes == 103


def test_table_from_a_json_file(tmp_path: Path) -> None:
    path = tmp_path / "codes.json"
    path.write_text(json.dumps({"x1": "AS", "X2": "TD"}))
    codec = LinecodeCodec(make_table(str(path)))
    assert codec.feed(b"X1\nx2\nA01\n") == [DeviceCard("AS"), DeviceCard("TD"), DeviceCard(None)]


@pytest.mark.parametrize("text", ["[1, 2]", '{"A01": 7}', "[" * 100_000 + "]" * 100_000])
def test_a_json_file_that_is_not_a_table_is_refused_with_a_reason(tmp_path: Path, text: str) -> None:
    path = tmp_path / "codes.json"
    path.write_text(text)
    with pytest.raises(ValueError, match=r"codes\.json"):
        make_table(str(path))


def test_table_that_maps_to_non_cards_is_refused() -> None:
    with pytest.raises(ValueError, match="ZZ"):
        make_table({"1": "ZZ"})
    with pytest.raises(ValueError, match="unknown code table"):
        make_table("nonsense")


def _letter_code(card: str) -> str:
    return "AHCD"["SHCD".index(card[1])] + f"{RANKS.index(card[0]) + 1:02d}"


def _digit_code(card: str, letter: str = "") -> str:
    return letter + str("SHCD".index(card[1]) + 1) + f"{RANKS.index(card[0]) + 1:02d}" + "0"


@pytest.mark.parametrize("card", ALL_CARDS)
def test_a_code_that_lost_a_character_is_never_read_as_another_card(card: str) -> None:
    """As for the Bee-Tek shoe: a byte lost on the wire leaves the card unreadable, never another card.

    The wedge scanners type the same codes, so this holds for them too.
    """
    for code in (_letter_code(card), _digit_code(card), _digit_code(card, "B")):
        for i in range(len(code)):
            short = code[:i] + code[i + 1 :]
            read = LinecodeCodec().feed(short.encode() + b"\r\n")
            assert read in ([DeviceCard(card)], [DeviceCard(None)]), f"{code} less character {i + 1}: {read}"


def _decode(data: bytes, cuts: list[int]) -> tuple[list, int, int]:
    return feed_in_pieces(LinecodeCodec(), data, cuts)


@settings(deadline=None)
@given(
    st.lists(st.sampled_from(ALL_CARDS), max_size=20),
    st.sampled_from([b"\r\n", b"\n", b"\r"]),
    st.lists(st.integers(0, 10_000), max_size=20),
)
def test_any_split_decodes_the_same(cards: list[str], eol: bytes, cuts: list[int]) -> None:
    data = b"".join(_letter_code(c).encode() + eol for c in cards)
    assert _decode(data, cuts) == ([DeviceCard(c) for c in cards], 0, 0)


@settings(deadline=None)
@given(st.binary(max_size=2000), st.lists(st.integers(0, 10_000), max_size=10))
def test_arbitrary_bytes_never_raise_and_split_the_same(data: bytes, cuts: list[int]) -> None:
    assert _decode(data, cuts) == _decode(data, [])
