"""The ``framed`` wire protocol (docs/protocol.md): encoders for both ends, a pure decoder.

A frame on the wire is ``00 COBS(body) 00``; the body is
``VER TYPE SEQ(2) PAYLOAD CRC16(2)``, big-endian, CRC-16/CCITT-FALSE over
everything before it. COBS removes every zero from the body, so a zero
always means "frame boundary": after line noise or a half frame the decoder
is back in step at the next zero, and never has to trust a length byte that
may itself be corrupt.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from enum import IntEnum

from drivers.cards import CARD_SET
from drivers.events import (
    DeviceButton,
    DeviceCard,
    DeviceCutCard,
    DeviceEvent,
    DeviceFault,
    DeviceHello,
    DeviceStatus,
)

VERSION = 1
MAX_PAYLOAD = 240
# Longest possible encoded frame: body plus COBS overhead; longer runs without a zero are noise.
MAX_ENCODED = 6 + MAX_PAYLOAD + 2


class MsgType(IntEnum):
    # device -> host
    HELLO = 0x01
    STATUS = 0x02
    CARD = 0x03
    UNREADABLE = 0x04
    CUT_CARD = 0x05
    BUTTON = 0x06
    FAULT = 0x07
    # host -> device
    ACK = 0x81
    ALERT = 0x82
    HELLO_REQUEST = 0x83


# Messages the device keeps sending until acknowledged (HELLO only when its seq is not 0).
RELIABLE = frozenset({MsgType.HELLO, MsgType.CARD, MsgType.UNREADABLE, MsgType.CUT_CARD, MsgType.BUTTON})

# Bits of the STATUS flags byte and of the CARD/UNREADABLE flags byte.
LID_OPEN, JAM, SENSOR_DIRTY, ALERT_LED, BUZZER = 0x01, 0x02, 0x04, 0x08, 0x10
BURN = 0x01
# Bits of the ALERT command's flags byte.
CMD_LED, CMD_BUZZER = 0x01, 0x02


def _crc_table() -> list[int]:
    table = []
    for byte in range(256):
        crc = byte << 8
        for _ in range(8):
            crc = ((crc << 1) ^ 0x1021) if crc & 0x8000 else (crc << 1)
        table.append(crc & 0xFFFF)
    return table


_CRC_TABLE = _crc_table()


def crc16(data: bytes) -> int:
    """CRC-16/CCITT-FALSE (poly 0x1021, init 0xFFFF): ``crc16(b"123456789") == 0x29B1``."""
    crc = 0xFFFF
    for byte in data:
        crc = ((crc << 8) & 0xFFFF) ^ _CRC_TABLE[(crc >> 8) ^ byte]
    return crc


def cobs_encode(data: bytes) -> bytes:
    """Consistent Overhead Byte Stuffing: the result contains no zero byte."""
    out = bytearray(b"\x00")
    code_at, code = 0, 1
    for byte in data:
        if byte:
            out.append(byte)
            code += 1
        if not byte or code == 0xFF:
            out[code_at] = code
            code_at, code = len(out), 1
            out.append(0)
    out[code_at] = code
    return bytes(out)


def cobs_decode(data: bytes) -> bytes | None:
    """Undo :func:`cobs_encode`; None if ``data`` is not valid COBS."""
    out = bytearray()
    i, n = 0, len(data)
    while i < n:
        code = data[i]
        end = i + code
        if code == 0 or end > n:
            return None
        out += data[i + 1 : end]
        i = end
        if code != 0xFF and i < n:
            out.append(0)
    return bytes(out)


@dataclass(frozen=True, slots=True)
class Frame:
    type: int
    seq: int
    payload: bytes


def encode_frame(msg_type: int, seq: int, payload: bytes = b"") -> bytes:
    """One frame, delimited by zeros on both sides, ready for the wire."""
    if len(payload) > MAX_PAYLOAD:
        raise ValueError(f"payload of {len(payload)} bytes exceeds {MAX_PAYLOAD}")
    body = struct.pack(">BBH", VERSION, msg_type, seq) + payload
    return b"\x00" + cobs_encode(body + struct.pack(">H", crc16(body))) + b"\x00"


class FrameReader:
    """Split a byte stream into checked frames; counts what it throws away."""

    def __init__(self) -> None:
        self._buf = bytearray()
        self._discarding = False  # inside a zero-free run too long to be a frame
        self.junk_bytes = 0
        self.bad_frames = 0

    def reset(self) -> None:
        self._buf.clear()
        self._discarding = False

    def feed(self, data: bytes) -> list[Frame]:
        frames: list[Frame] = []
        start = 0
        while True:
            end = data.find(0, start)
            if end < 0:
                self._keep(data[start:])
                return frames
            self._keep(data[start:end])
            if self._discarding:
                self._discarding = False
            elif self._buf:
                frame = self._parse(bytes(self._buf))
                if frame is None:
                    self.bad_frames += 1
                    self.junk_bytes += len(self._buf)
                else:
                    frames.append(frame)
            self._buf.clear()
            start = end + 1

    def _keep(self, chunk: bytes) -> None:
        if self._discarding:
            self.junk_bytes += len(chunk)
            return
        self._buf += chunk
        if len(self._buf) > MAX_ENCODED:
            self.junk_bytes += len(self._buf)
            self.bad_frames += 1
            self._buf.clear()
            self._discarding = True

    @staticmethod
    def _parse(encoded: bytes) -> Frame | None:
        body = cobs_decode(encoded)
        if body is None or len(body) < 6 or body[0] != VERSION:
            return None
        if crc16(body[:-2]) != int.from_bytes(body[-2:], "big"):
            return None
        return Frame(body[1], int.from_bytes(body[2:4], "big"), body[4:-2])


# --------------------------------------------------------------------------
# device -> host
# --------------------------------------------------------------------------


def _text(value: str) -> bytes:
    raw = value.encode("utf-8")[:255]
    return bytes([len(raw)]) + raw


def encode_event(event: DeviceEvent, seq: int = 0) -> bytes:
    """Encode a device event as the device sends it.

    Reliable messages (card, unreadable, cut card, button, boot hello) need a
    non-zero ``seq``; status and fault are fire-and-forget and always use 0.
    """
    match event:
        case DeviceCard(card=None, burn=burn):
            return encode_frame(MsgType.UNREADABLE, seq, bytes([BURN if burn else 0]))
        case DeviceCard(card=str(card), burn=burn):
            return encode_frame(MsgType.CARD, seq, card.encode("ascii") + bytes([BURN if burn else 0]))
        case DeviceCutCard():
            return encode_frame(MsgType.CUT_CARD, seq)
        case DeviceButton(name=name):
            return encode_frame(MsgType.BUTTON, seq, name.encode("utf-8"))
        case DeviceHello():
            payload = struct.pack(">I", event.boot_id)
            payload += _text(event.model) + _text(event.serial) + _text(event.firmware)
            return encode_frame(MsgType.HELLO, seq, payload)
        case DeviceStatus():
            flags = (
                (LID_OPEN if event.lid_open else 0)
                | (JAM if event.jam else 0)
                | (SENSOR_DIRTY if event.sensor_dirty else 0)
                | (ALERT_LED if event.alert_led else 0)
                | (BUZZER if event.buzzer else 0)
            )
            return encode_frame(MsgType.STATUS, 0, bytes([flags]))
        case DeviceFault(code=code, text=text):
            return encode_frame(MsgType.FAULT, 0, _text(code) + text.encode("utf-8"))
    raise TypeError(f"{type(event).__name__} is not sent by a device")


def is_reliable(event: DeviceEvent) -> bool:
    """Whether a device must send ``event`` with a sequence number and retransmit it."""
    return isinstance(event, DeviceCard | DeviceCutCard | DeviceButton | DeviceHello)


class _Payload:
    """Reads fields off a payload; any shortfall raises ValueError."""

    def __init__(self, data: bytes) -> None:
        self.data, self.pos = data, 0

    def take(self, n: int) -> bytes:
        if self.pos + n > len(self.data):
            raise ValueError("payload too short")
        self.pos += n
        return self.data[self.pos - n : self.pos]

    def text(self) -> str:
        return self.take(self.take(1)[0]).decode("utf-8")

    def rest(self) -> str:
        return self.take(len(self.data) - self.pos).decode("utf-8")


def _device_event(frame: Frame) -> DeviceEvent:
    """Decode a device frame; ValueError for anything malformed."""
    p = _Payload(frame.payload)
    reliable = frame.type in RELIABLE and frame.type != MsgType.HELLO
    if reliable and frame.seq == 0:
        raise ValueError("reliable message without a sequence number")
    ack = frame.seq or None
    match frame.type:
        case MsgType.CARD:
            code = p.take(2).decode("latin-1")  # any two bytes: not a card code is still a card drawn
            burn = bool(p.take(1)[0] & BURN)
            return DeviceCard(code if code in CARD_SET else None, burn, ack)
        case MsgType.UNREADABLE:
            return DeviceCard(None, bool(p.take(1)[0] & BURN), ack)
        case MsgType.CUT_CARD:
            return DeviceCutCard(ack)
        case MsgType.BUTTON:
            name = p.rest()
            if not name:
                raise ValueError("button without a name")
            return DeviceButton(name, ack)
        case MsgType.HELLO:
            boot_id = int.from_bytes(p.take(4), "big")
            return DeviceHello(model=p.text(), serial=p.text(), firmware=p.text(), boot_id=boot_id)
        case MsgType.STATUS:
            flags = p.take(1)[0]
            return DeviceStatus(
                lid_open=bool(flags & LID_OPEN),
                jam=bool(flags & JAM),
                sensor_dirty=bool(flags & SENSOR_DIRTY),
                alert_led=bool(flags & ALERT_LED),
                buzzer=bool(flags & BUZZER),
            )
        case MsgType.FAULT:
            return DeviceFault(code=p.text(), text=p.rest())
    raise ValueError(f"unknown device message type 0x{frame.type:02x}")


class FramedCodec:
    """Host side decoder: device bytes in, device events out (no acks, no dedup: see the driver)."""

    def __init__(self) -> None:
        self._frames = FrameReader()
        self.bad_frames = 0  # checksummed frames whose content made no sense
        self.unknown_cards = 0  # card codes outside the deck, passed on as unreadable

    @property
    def junk_bytes(self) -> int:
        return self._frames.junk_bytes

    def reset(self) -> None:
        self._frames.reset()

    def feed(self, data: bytes) -> list[DeviceEvent]:
        return [event for _, event in self.feed_seq(data)]

    def feed_seq(self, data: bytes) -> list[tuple[int, DeviceEvent]]:
        """Events with the sequence number of the frame that carried each (0: no ack wanted)."""
        out: list[tuple[int, DeviceEvent]] = []
        bad_before = self._frames.bad_frames
        for frame in self._frames.feed(data):
            try:
                event = _device_event(frame)
            except (ValueError, UnicodeDecodeError):
                self.bad_frames += 1
                continue
            if isinstance(event, DeviceCard) and event.card is None and frame.type == MsgType.CARD:
                self.unknown_cards += 1
            out.append((frame.seq, event))
        self.bad_frames += self._frames.bad_frames - bad_before
        return out


# --------------------------------------------------------------------------
# host -> device
# --------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Ack:
    seq: int


@dataclass(frozen=True, slots=True)
class Alert:
    led: bool
    buzzer: bool


@dataclass(frozen=True, slots=True)
class HelloRequest:
    pass


HostCommand = Ack | Alert | HelloRequest


def encode_ack(seq: int) -> bytes:
    """Acknowledge the device message with sequence number ``seq``."""
    return encode_frame(MsgType.ACK, seq)


def encode_alert(led: bool, buzzer: bool) -> bytes:
    """Switch the shoe's alert LED and buzzer (each on or off)."""
    return encode_frame(MsgType.ALERT, 0, bytes([(CMD_LED if led else 0) | (CMD_BUZZER if buzzer else 0)]))


def encode_hello_request() -> bytes:
    """Ask the device to say hello again (answered with a hello of seq 0)."""
    return encode_frame(MsgType.HELLO_REQUEST, 0)


def parse_host_frame(frame: Frame) -> HostCommand | None:
    """What the host asked of the device, or None for a frame a device must ignore."""
    if frame.type == MsgType.ACK and frame.seq:
        return Ack(frame.seq)
    if frame.type == MsgType.ALERT and len(frame.payload) == 1:
        return Alert(bool(frame.payload[0] & CMD_LED), bool(frame.payload[0] & CMD_BUZZER))
    if frame.type == MsgType.HELLO_REQUEST:
        return HelloRequest()
    return None
