"""Fuzzing every codec: any bytes decode without an exception, and no good scan is lost amid junk.

Good scans are the real frames of each protocol (every card, burn marks,
unreadable cards, both rank/suit orders, every code table); junk is whatever
that protocol can tell apart from a frame, inserted between them; and the
byte stream is cut into reads at arbitrary points. What comes out must be
exactly the good scans, in order. The framed protocol also gets repeats,
which its host session must drop.

The default profile runs these at the usual hypothesis size. The full count
(over 100,000 generated inputs across the fuzz tests, docs/reliability.md):

    pytest tests/test_fuzz_*.py --hypothesis-profile=fuzz
"""

from __future__ import annotations

import itertools
from collections.abc import Callable

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from drivers.codecs.beetek import BeetekCodec
from drivers.codecs.framed import FramedCodec, encode_event
from drivers.codecs.hid import HidScannerCodec
from drivers.codecs.linecode import LinecodeCodec
from drivers.events import DeviceCard, DeviceEvent, DeviceHello
from drivers.framed_host import FramedSession
from scannerd.core.cards import ALL_CARDS
from simulators.usb_devices import key_reports

FUZZ = settings(deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
# The full count takes minutes per test; the bound is only there to catch a hang.
pytestmark = pytest.mark.timeout(1800)

Scan = tuple[str | None, bool]  # (card or None for unreadable, burn)
cards = st.sampled_from([*ALL_CARDS, None])
cuts = st.lists(st.integers(0, 1 << 16), max_size=40)


def fed_in_pieces(
    feed: Callable[[bytes], list[DeviceEvent]], data: bytes, at: list[int]
) -> list[DeviceEvent]:
    """Feed ``data`` cut at the given offsets (taken modulo its length), as reads would deliver it."""
    points = sorted({a % (len(data) + 1) for a in at} | {0, len(data)})
    out: list[DeviceEvent] = []
    for start, end in itertools.pairwise(points):
        out += feed(data[start:end])
    return out


def scans(events: list[DeviceEvent]) -> list[Scan]:
    return [(e.card, e.burn) for e in events if isinstance(e, DeviceCard)]


# ------------------------------------------------------------------ any bytes at all

CODECS: dict[str, Callable[[], Callable[[bytes], list[DeviceEvent]]]] = {
    "beetek": lambda: BeetekCodec().feed,
    "linecode": lambda: LinecodeCodec().feed,
    "framed": lambda: FramedCodec().feed,
    "usb-hid": lambda: HidScannerCodec().feed,
}


@pytest.mark.parametrize("codec", CODECS)
@FUZZ
@given(data=st.binary(max_size=4096), at=cuts)
def test_any_bytes_decode_without_an_exception(codec: str, data: bytes, at: list[int]) -> None:
    for event in fed_in_pieces(CODECS[codec](), data, at):
        assert isinstance(event, DeviceEvent)


# ------------------------------------------------------------------ Bee-Tek

_RANK_TEXT = {"T": ["T", "10"]}


@st.composite
def beetek_scans(draw: st.DrawFn) -> tuple[bytes, Scan]:
    card, burn = draw(cards), draw(st.booleans())
    tag = "[Manual Burn Cards]" if burn else "[Game]"
    if card is None:
        body = "Game"
    else:
        rank = draw(st.sampled_from(_RANK_TEXT.get(card[0], [card[0]])))
        body = "Card:" + (card[1] + rank if draw(st.booleans()) else rank + card[1])
    end = draw(st.sampled_from(["", "\r\n", "\n"]))
    return f" {tag}<{body}> {end}".encode(), (card, burn)


# Anything but the two bytes that open a frame.
beetek_junk = st.binary(max_size=30).map(lambda b: b.replace(b"[", b"").replace(b"<", b""))


@FUZZ
@given(st.lists(st.tuples(beetek_junk, beetek_scans())), beetek_junk, cuts)
def test_beetek_loses_no_scan_amid_junk(frames: list[tuple[bytes, tuple[bytes, Scan]]], tail, at) -> None:
    data = b"".join(junk + wire for junk, (wire, _) in frames) + tail
    assert scans(fed_in_pieces(BeetekCodec().feed, data, at)) == [scan for _, (_, scan) in frames]


# ------------------------------------------------------------------ line codes

_LETTER = {"S": "A", "H": "H", "C": "C", "D": "D"}
_DIGIT = {"S": "1", "H": "2", "C": "3", "D": "4"}
_RANK_NO = {r: f"{i + 1:02d}" for i, r in enumerate("A23456789TJQK")}


@st.composite
def line_scans(draw: st.DrawFn) -> tuple[bytes, Scan]:
    card = draw(cards)
    if card is None:
        code = draw(st.sampled_from(["NOREAD", "ERROR", "??"]))
    elif draw(st.booleans()):
        code = _LETTER[card[1]] + _RANK_NO[card[0]]
    else:
        code = draw(st.sampled_from(["", "S", "P", "B"])) + _DIGIT[card[1]] + _RANK_NO[card[0]] + "0"
    if draw(st.booleans()):
        code = code.lower()
    pad = draw(st.sampled_from(["", " ", "  "]))
    end = draw(st.sampled_from(["\r\n", "\n", "\r"]))
    return f"{pad}{code}{pad}{end}".encode(), (card, False)


# A line of noise: it holds a control byte, so it is noise rather than a failed read, and it ends.
line_junk = st.one_of(
    st.binary(max_size=40).map(lambda b: b"\x00" + b.replace(b"\r", b"").replace(b"\n", b"") + b"\r\n"),
    st.sampled_from([b"\r\n", b"\n\n", b"\r", b""]),
)


@FUZZ
@given(st.lists(st.tuples(line_junk, line_scans())), cuts)
def test_line_codes_lose_no_scan_amid_junk(frames: list[tuple[bytes, tuple[bytes, Scan]]], at) -> None:
    data = b"".join(junk + wire for junk, (wire, _) in frames)
    assert scans(fed_in_pieces(LinecodeCodec().feed, data, at)) == [scan for _, (_, scan) in frames]


# ------------------------------------------------------------------ USB HID keyboard wedge


@st.composite
def hid_scans(draw: st.DrawFn) -> tuple[bytes, Scan]:
    card = draw(cards)
    code = "NOREAD" if card is None else draw(st.sampled_from(["", "A", "B"])) + _DIGIT[card[1]]
    if card is not None:
        code += _RANK_NO[card[0]] + "0"
    reports = key_reports(code + "\n", rollover=draw(st.booleans()))
    repeats = draw(st.integers(1, 2))  # the idle rate repeating each report changes nothing
    return b"".join(r for r in reports for _ in range(repeats)), (card, False)


def _report(modifier: int, *usages: int) -> bytes:
    return bytes([modifier, 0, *usages]).ljust(8, b"\0")


# Reports that type nothing: no key, a modifier alone, keys with no character, the rollover error.
hid_junk = st.lists(
    st.one_of(
        st.just(_report(0)),
        st.integers(0, 255).map(_report),
        st.lists(st.sampled_from([*range(0x3A, 0x46), *range(0x4F, 0x53)]), min_size=1, max_size=6).map(
            lambda keys: _report(0, *keys)
        ),
        st.just(_report(0, *[0x01] * 6)),
    ),
    max_size=4,
).map(b"".join)


@FUZZ
@given(st.lists(st.tuples(hid_junk, hid_scans())), cuts)
def test_usb_hid_loses_no_scan_amid_junk(frames: list[tuple[bytes, tuple[bytes, Scan]]], at) -> None:
    data = b"".join(junk + wire for junk, (wire, _) in frames)
    assert scans(fed_in_pieces(HidScannerCodec().feed, data, at)) == [scan for _, (_, scan) in frames]


# ------------------------------------------------------------------ framed


@FUZZ
@given(st.lists(st.tuples(st.binary(max_size=300), cards, st.booleans())), cuts)
def test_framed_loses_no_scan_amid_junk(frames: list[tuple[bytes, str | None, bool]], at) -> None:
    data = b"".join(
        junk + encode_event(DeviceCard(card, burn), seq) for seq, (junk, card, burn) in enumerate(frames, 1)
    )
    events = fed_in_pieces(FramedCodec().feed, data, at)
    assert scans(events) == [(card, burn) for _, card, burn in frames]
    assert [e.ack for e in events if isinstance(e, DeviceCard)] == list(range(1, len(frames) + 1))


@FUZZ
@given(
    st.lists(st.tuples(cards, st.integers(1, 3), st.binary(max_size=60)), max_size=40),
    st.integers(1, 0xFFFF),
    cuts,
)
def test_framed_session_delivers_each_card_once_amid_repeats_and_junk(
    sent: list[tuple[str | None, int, bytes]], first_seq: int, at: list[int]
) -> None:
    """The shoe repeats each card until acknowledged (here 1-3 times, across the sequence wrap);
    the host session passes each on once and acknowledges it once it is 'stored'."""
    hello = encode_event(DeviceHello("SHOE", "S1", "1.0", boot_id=7))
    wire = [hello]
    seq = first_seq
    for card, times, junk in sent:
        wire += [junk + encode_event(DeviceCard(card), seq)] * times
        seq = seq % 0xFFFF + 1
    codec, session = FramedCodec(), FramedSession()
    session.start()
    delivered: list[DeviceEvent] = []

    def feed(data: bytes) -> list[DeviceEvent]:
        for n, event in codec.feed_seq(data):
            out, _ = session.receive(n, event)
            if out is not None:
                delivered.append(out)
                if isinstance(out, DeviceCard) and out.ack is not None:
                    session.acknowledge(out.ack)
        return []

    fed_in_pieces(feed, b"".join(wire), at)
    assert scans(delivered) == [(card, False) for card, _, _ in sent]
