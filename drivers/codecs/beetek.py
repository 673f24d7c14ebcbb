"""Bee-Tek card shoe frames: `` [Game]<Card:4S> ``, `` [Manual Burn Cards]<Card:H3> ``, alarms.

The shoe sends no checksum and no sequence number, so the decoder trusts
only complete, well-formed ``[tag]<body>`` frames and steps over everything
else byte by byte, counting it. Every decision depends on a bounded window of
bytes after the frame start, so a frame split across reads decodes exactly as
the same frame read whole.
"""

from __future__ import annotations

import re

from drivers.cards import normalise
from drivers.events import DeviceCard, DeviceEvent, DeviceFault

MAX_TAG = 40  # characters inside [...]
MAX_GAP = 2  # whitespace allowed between a tag and its <...>
MAX_BODY = 64  # characters inside <...>
_WARNING = re.compile(r"W0x[0-9A-Fa-f]{1,4}")

_WAIT = -1  # not enough bytes yet to decide
_JUNK = -2  # not a frame start: skip one byte


def parse_card(value: str) -> str | None:
    """A card code from rank-first (``4S``, ``10H``) or suit-first (``H3``) text; None if neither."""
    value = value.strip()
    if not value:
        return None
    return normalise(value[:-1], value[-1:]) or normalise(value[1:], value[:1])


def _is_space(byte: int) -> bool:
    """Whitespace between frames, or between a tag and its body (compares, as ``_is_text``)."""
    return byte == 0x20 or byte == 0x09 or byte == 0x0D or byte == 0x0A


def _is_text(byte: int) -> bool:
    """Whether a tag or a body may hold ``byte``: printable ASCII but the brackets that frame them.

    Compares, not a set of allowed bytes: compiled, an int stays native through comparisons,
    and every byte of every frame is asked (docs/performance.md).
    """
    return 0x20 <= byte < 0x7F and byte != 0x5B and byte != 0x5D and byte != 0x3C and byte != 0x3E


def _scan(buf: bytearray, start: int, limit: int, close: int) -> int:
    """Index of ``close`` within ``limit`` bytes if only frame text precedes it; else _WAIT or _JUNK."""
    end = min(len(buf), start + limit + 1)
    for i in range(start, end):
        byte = buf[i]
        if byte == close:
            return i
        if not _is_text(byte):
            return _JUNK
    return _WAIT if end < start + limit + 1 else _JUNK


class BeetekCodec:
    def __init__(self) -> None:
        self._buf = bytearray()
        self.junk_bytes = 0
        self.bad_frames = 0

    def reset(self) -> None:
        self._buf.clear()

    def feed(self, data: bytes) -> list[DeviceEvent]:
        buf = self._buf
        buf += data
        out: list[DeviceEvent] = []
        i, n = 0, len(buf)
        while i < n:
            byte = buf[i]
            if _is_space(byte):
                i += 1
                continue
            end, tag, body = self._frame(buf, i)
            if end == _WAIT:
                break
            if end == _JUNK:
                self.junk_bytes += 1
                i += 1
                continue
            event = self._event(tag, body)
            if event is not None:
                out.append(event)
            i = end
        del buf[:i]
        return out

    def _frame(self, buf: bytearray, i: int) -> tuple[int, str, str]:
        """(index after the frame, tag, body) for a frame at ``i``; or (_WAIT|_JUNK, "", "")."""
        tag = ""
        if buf[i] == ord("["):
            close = _scan(buf, i + 1, MAX_TAG, ord("]"))
            if close < 0:
                return close, "", ""
            tag = buf[i + 1 : close].decode("ascii")
            lt = close + 1
            while lt < len(buf) and _is_space(buf[lt]) and lt - close <= MAX_GAP:
                lt += 1
            if lt == len(buf):
                return _WAIT, "", ""
            if buf[lt] != ord("<"):
                return _JUNK, "", ""  # an orphan tag
            i = lt
        elif buf[i] != ord("<"):
            return _JUNK, "", ""
        close = _scan(buf, i + 1, MAX_BODY, ord(">"))
        if close < 0:
            return close, "", ""
        return close + 1, tag, buf[i + 1 : close].decode("ascii")

    def _event(self, tag: str, body: str) -> DeviceEvent | None:
        burn = "burn" in tag.lower()
        kind, _, value = body.partition(":")
        kind = kind.strip().lower()
        if kind == "card":
            card = parse_card(value)
            if card is None:
                self.bad_frames += 1  # a card passed but its code is garbled: report it unreadable
            return DeviceCard(card, burn)
        if kind == "game" and not value:
            return DeviceCard(None, burn)
        if kind == "alarm":
            code, _, text = value.strip().partition(" ")
            return DeviceFault(code or "ALARM", text.strip())
        if _WARNING.fullmatch(body.strip()):
            return DeviceFault(body.strip(), "hardware warning")
        self.bad_frames += 1
        return None
