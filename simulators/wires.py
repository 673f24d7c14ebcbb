"""What each simulated device puts on the wire for a dealer's action, made instantly.

A wire is pure: no clock, no port, no thread. ``scannerd record --from-sim``
writes its bytes as a recording, the driver contract test feeds them to the
drivers' codecs, and the live text devices on a pty (``simulators.feeder``)
write the same frames. Bee-Tek and line-code frames are simple text and are
written here; the framed protocol's encoding is the drivers' own
(``drivers.framed_device``), so the device model cannot drift from the host's.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Final, Protocol

from drivers.codecs.framed import FramedCodec
from drivers.events import DeviceCard, DeviceCutCard, DeviceHello
from drivers.framed_device import FramedDevice
from drivers.framed_host import FramedSession
from simulators.actions import CutCard, Draw, Unreadable
from simulators.usb_devices import boot_report, key_reports

CardAction = Draw | Unreadable | CutCard


class Wire(Protocol):
    """A device's bytes: what it says when the host opens it, and for each action."""

    def connect(self) -> bytes:
        """The host opened the device (at power-up, or after the cable was back)."""
        ...

    def emit(self, action: CardAction) -> bytes:
        """What the device sends for ``action`` (b"" when it has nothing to say, a cut card say)."""
        ...


# ---------------------------------------------------------------------- Bee-Tek


def beetek_frame(action: CardAction, rng: random.Random, crlf: bool = False) -> bytes | None:
    """A Bee-Tek message for the action, varied the way real firmware varies (docs/devices.md)."""
    if isinstance(action, CutCard):
        return None  # the Bee-Tek shoe has no cut-card message
    tag = "[Manual Burn Cards]" if isinstance(action, Draw) and action.burn else "[Game]"
    if isinstance(action, Unreadable):
        body = "Game"
    else:
        rank, suit = action.card[0], action.card[1]
        if rank == "T" and rng.random() < 0.5:
            rank = "10"
        body = "Card:" + (suit + rank if rng.random() < 0.2 else rank + suit)
    return f" {tag}<{body}> ".encode("ascii") + (b"\r\n" if crlf else b"")


def beetek_junk(rng: random.Random) -> bytes:
    """Noise with no ``[`` in it, so it can never open a frame."""
    return bytes(rng.choice(b"abcxyz0123456789<>:;!? \x7f\x80\xfe") for _ in range(rng.randint(1, 12)))


# ---------------------------------------------------------------------- code scanners

_LETTER_SUIT: Final = {"S": "A", "H": "H", "C": "C", "D": "D"}
_DIGIT_SUIT: Final = {"S": "1", "H": "2", "C": "3", "D": "4"}
_RANK_NO: Final = {r: f"{i + 1:02d}" for i, r in enumerate("A23456789TJQK")}
NOREAD: Final = "NOREAD"  # what scanners print for a failed read


def letter_rank_code(card: str) -> str:
    """``A01`` is the ace of spades, ``D12`` the queen of diamonds."""
    return _LETTER_SUIT[card[1]] + _RANK_NO[card[0]]


def suit_digit_code(card: str, position_letter: str = "S") -> str:
    """A position letter, suit digit (1=S 2=H 3=C 4=D), two-digit rank, ``0``: ``S1010`` is AS."""
    return position_letter + _DIGIT_SUIT[card[1]] + _RANK_NO[card[0]] + "0"


def linecode_frame(action: CardAction) -> bytes | None:
    if isinstance(action, CutCard):
        return None
    code = NOREAD if isinstance(action, Unreadable) else letter_rank_code(action.card)
    return f"{code}\r\n".encode("ascii")


def linecode_junk(rng: random.Random) -> bytes:
    """A line of noise holding a control byte, so it is counted as noise, never read as a code."""
    noise = bytes(rng.choice(b"\x00\x01\x07\x1b?~#") for _ in range(rng.randint(1, 8)))
    return b"\x00" + noise + b"\r\n"


def scan_code(action: CardAction) -> str | None:
    """What a keyboard-wedge scanner types for the action (it cannot see the cut card)."""
    if isinstance(action, CutCard):
        return None
    return NOREAD if isinstance(action, Unreadable) else suit_digit_code(action.card)


# Keys that type no character: F1-F12, the arrows.
_SILENT_KEYS: Final = (*range(0x3A, 0x46), *range(0x4F, 0x53))


def hid_junk(rng: random.Random) -> bytes:
    """Reports that type nothing: no key, a modifier alone, keys with no character, the rollover error."""
    makers: tuple[Callable[[], bytes], ...] = (
        lambda: boot_report(0),
        lambda: boot_report(rng.randrange(256)),
        lambda: boot_report(0, *rng.sample(_SILENT_KEYS, rng.randint(1, 6))),
        lambda: boot_report(0, *[0x01] * 6),
    )
    return b"".join(rng.choice(makers)() for _ in range(rng.randint(1, 4)))


class TextWire:
    """A device that only talks, one frame per action: Bee-Tek shoes, code scanners."""

    def __init__(
        self, frame: Callable[[CardAction, random.Random, bool], bytes | None], rng: random.Random
    ) -> None:
        self._frame = frame
        self._rng = rng
        self._crlf = rng.random() < 0.5  # some firmware ends lines, some does not

    def connect(self) -> bytes:
        return b""

    def emit(self, action: CardAction) -> bytes:
        return self._frame(action, self._rng, self._crlf) or b""


def beetek_wire(rng: random.Random) -> TextWire:
    return TextWire(beetek_frame, rng)


def linecode_wire(rng: random.Random) -> TextWire:
    return TextWire(lambda action, _rng, _crlf: linecode_frame(action), rng)


def hid_wire(rng: random.Random) -> TextWire:
    def reports(action: CardAction, _rng: random.Random, _crlf: bool) -> bytes | None:
        code = scan_code(action)
        return None if code is None else b"".join(key_reports(code + "\n"))

    return TextWire(reports, rng)


# ---------------------------------------------------------------------- framed


def device_event(action: CardAction) -> DeviceCard | DeviceCutCard:
    """The event a framed shoe sends for the action."""
    if isinstance(action, CutCard):
        return DeviceCutCard()
    if isinstance(action, Unreadable):
        return DeviceCard(None)
    return DeviceCard(action.card, burn=action.burn)


class FramedWire:
    """The shoe firmware model and a host session that stores and acknowledges at once.

    Only the device's bytes are kept (they are what a recording holds); the
    host's answers go straight back into the device, so it sends its next
    message as it would on a healthy link.
    """

    def __init__(self, rng: random.Random | None = None) -> None:
        # Every wire is made from the session's rng (``simulators.registry``); the shoe's own bytes
        # need none: its faults are drawn apart, and it writes a card one way only.
        self.device = FramedDevice(DeviceHello("SIM-SHOE", "SIM0001", "1.0.0", boot_id=1))
        self.codec = FramedCodec()
        self.session = FramedSession()
        self._booted = False

    def connect(self) -> bytes:
        """The host opened the port: it asks who is there; at power-up the shoe also says hello."""
        self.codec.reset()
        out = b"" if self._booted else self.device.start(0.0)
        self._booted = True
        return self._exchange(out + self.device.receive(self.session.start(), 0.0))

    def emit(self, action: CardAction) -> bytes:
        return self._exchange(self.device.send(device_event(action), 0.0))

    def _exchange(self, data: bytes) -> bytes:
        wire = b""
        while data:
            wire += data
            replies = b""
            for seq, event in self.codec.feed_seq(data):
                delivered, reply = self.session.receive(seq, event)
                replies += reply
                if delivered is not None and seq:
                    replies += self.session.acknowledge(seq)
            data = self.device.receive(replies, 0.0) if replies else b""
        return wire
