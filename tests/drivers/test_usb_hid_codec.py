"""The keyboard-wedge codec: boot keyboard reports in, cards out."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from drivers.cards import ALL_CARDS, RANKS
from drivers.codecs.hid import BootKeyboard, HidScannerCodec
from drivers.codecs.linecode import letter_rank
from drivers.events import DeviceCard
from simulators.usb_devices import key_reports

UP = bytes(8)


def key(*usages: int, modifier: int = 0) -> bytes:
    return bytes([modifier, 0, *usages]).ljust(8, b"\0")


def tap(*usages: int, modifier: int = 0) -> bytes:
    return key(*usages, modifier=modifier) + UP


# Usages from the HID Usage Tables, keyboard page: a=0x04, 1..9=0x1E..0x26, 0=0x27, Enter=0x28.
A_1010 = tap(0x04, modifier=0x02) + tap(0x1E) + tap(0x27) + tap(0x1E) + tap(0x27) + tap(0x28)


def suit_digit_code(card: str, position: str = "A") -> str:
    """The table scanner's code, worked out here from docs/devices.md rather than the codec's table."""
    return f"{position}{'SHCD'.index(card[1]) + 1}{RANKS.index(card[0]) + 1:02d}0"


def test_a_typed_code_and_enter_is_a_card() -> None:
    assert HidScannerCodec().feed(A_1010) == [DeviceCard("AS")]


def test_table_examples_from_docs_devices_md() -> None:
    codec = HidScannerCodec()
    jack_of_clubs = tap(0x20) + tap(0x1E) + tap(0x1E) + tap(0x27) + tap(0x28)  # "3110"
    assert codec.feed(jack_of_clubs) == [DeviceCard("JC")]
    queen_of_diamonds = tap(0x07, modifier=0x20) + tap(0x21) + tap(0x1E) + tap(0x1F) + tap(0x27) + tap(0x28)
    assert codec.feed(queen_of_diamonds) == [DeviceCard("QD")]  # "D4120", right shift


def test_keypad_digits_and_keypad_enter_type_the_same() -> None:
    # keypad 1=0x59, 0=0x62, keypad Enter=0x58
    assert HidScannerCodec().feed(tap(0x59) + tap(0x62) + tap(0x59) + tap(0x62) + tap(0x58)) == [
        DeviceCard("AS")
    ]


def test_a_held_key_counts_once_however_often_it_is_reported() -> None:
    keyboard = BootKeyboard()
    assert keyboard.feed(key(0x1E) * 5 + UP) == "1"
    assert keyboard.feed(key(0x1E) + UP + key(0x1E) + UP) == "11"


def test_rollover_counts_each_key_when_it_goes_down() -> None:
    # 1 down, 0 down while 1 held, 1 up, 1 down again while 0 held, ...
    reports = key(0x1E) + key(0x1E, 0x27) + key(0x27) + key(0x27, 0x1E) + key(0x1E) + key(0x1E, 0x20) + UP
    assert BootKeyboard().feed(reports) == "1013"


def test_shift_applies_to_the_key_pressed_with_it() -> None:
    assert BootKeyboard().feed(tap(0x1E, modifier=0x02) + tap(0x04) + tap(0x04, modifier=0x20)) == "!aA"


def test_an_error_rollover_report_presses_nothing() -> None:
    keyboard = BootKeyboard()
    phantom = key(0x01, 0x01, 0x01, 0x01, 0x01, 0x01)
    assert keyboard.feed(key(0x1E) + phantom + key(0x1E) + key(0x1E, 0x27) + UP) == "10"


def test_keys_that_type_nothing_are_counted_not_typed() -> None:
    codec = HidScannerCodec()
    f1, right_arrow = 0x3A, 0x4F
    assert codec.feed(tap(f1) + tap(right_arrow) + A_1010) == [DeviceCard("AS")]
    assert codec.junk_bytes == 2


def test_an_unknown_code_is_an_unreadable_card() -> None:
    codec = HidScannerCodec()
    assert codec.feed(b"".join(key_reports("A9990\n"))) == [DeviceCard(None)]
    assert codec.bad_frames == 1


def test_another_table_can_be_chosen() -> None:
    assert HidScannerCodec(letter_rank).feed(b"".join(key_reports("D12\n"))) == [DeviceCard("QD")]


def test_reset_forgets_half_a_report_and_held_keys() -> None:
    codec = HidScannerCodec()
    codec.feed(key(0x1E)[:5])
    codec.reset()
    assert codec.feed(A_1010) == [DeviceCard("AS")]


@given(
    cards=st.lists(st.sampled_from(ALL_CARDS), min_size=1, max_size=6),
    position=st.sampled_from("ABCPQ"),
    rollover=st.booleans(),
    repeats=st.integers(1, 3),
    cuts=st.lists(st.integers(0, 10_000), max_size=12),
)
def test_any_split_of_a_scanned_stream_decodes_the_same(
    cards: list[str], position: str, rollover: bool, repeats: int, cuts: list[int]
) -> None:
    text = "".join(suit_digit_code(card, position) + "\n" for card in cards)
    stream = b"".join(report * repeats for report in key_reports(text, rollover=rollover))
    codec = HidScannerCodec()
    events = []
    start = 0
    for cut in [*sorted({c % (len(stream) + 1) for c in cuts}), len(stream)]:
        events += codec.feed(stream[start:cut])
        start = cut
    assert events == [DeviceCard(card) for card in cards]


@given(st.binary(max_size=400), st.lists(st.integers(0, 400), max_size=8))
def test_arbitrary_bytes_never_raise(data: bytes, cuts: list[int]) -> None:
    codec = HidScannerCodec()
    start = 0
    for cut in [*sorted(cuts), len(data)]:
        codec.feed(data[start:cut])
        start = max(start, cut)


@given(st.lists(st.binary(min_size=8, max_size=8), max_size=20), st.sampled_from(ALL_CARDS))
def test_a_good_scan_after_noise_and_an_enter_is_not_lost(noise: list[bytes], card: str) -> None:
    codec = HidScannerCodec()
    codec.feed(b"".join(noise) + UP + tap(0x28))
    assert codec.feed(b"".join(key_reports(suit_digit_code(card) + "\n"))) == [DeviceCard(card)]
