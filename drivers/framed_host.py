"""The host end of the framed protocol: acknowledgements, duplicate suppression, alerts.

The device sends one reliable message at a time and repeats it until the
host acknowledges its sequence number. The host acknowledges only when the
consumer says the event is durably stored (``acknowledge``), never on
receipt, so a crash between the two makes the device send it again; and it
drops the repeats it receives meanwhile. ``FramedSession`` is that logic as
a pure object (bytes to send come back as return values); ``FramedDecoder``
puts it behind the codec, as the decoder a replay uses too;
``FramedHostDriver`` puts that on any byte transport, serial or USB.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import Any

import structlog

from drivers.base import Decoder, Driver, DriverOperationError
from drivers.codecs.framed import (
    FramedCodec,
    encode_ack,
    encode_alert,
    encode_hello_request,
)
from drivers.events import DeviceButton, DeviceCard, DeviceCutCard, DeviceEvent, DeviceHello, DeviceStatus

log = structlog.get_logger(__name__)

_SEQ_SPAN = 0xFFFF  # sequence numbers 1..65535


def is_newer(seq: int, than: int | None) -> bool:
    """Serial-number order on 1..65535 with wrap-around: within half the span ahead is newer."""
    if than is None:
        return True
    return 0 < (seq - than) % _SEQ_SPAN < _SEQ_SPAN // 2


@dataclass(frozen=True, slots=True)
class DedupState:
    """What must survive a daemon restart: the device boot and the last sequence acknowledged to it."""

    boot_id: int | None = None
    acked: int | None = None

    def to_dict(self) -> dict[str, int | None]:
        return {"boot_id": self.boot_id, "acked": self.acked}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> DedupState:
        return cls(boot_id=data.get("boot_id"), acked=data.get("acked"))


class FramedSession:
    """Pure host-side protocol state. Not thread-safe: the driver locks around it."""

    def __init__(self, state: DedupState | None = None) -> None:
        self.restore(state or DedupState())
        self.alert: tuple[bool, bool] | None = None  # what the consumer last asked for
        self.duplicates = 0  # repeats dropped
        self.unsynced_drops = 0  # reliable messages held off until the device said which boot it is

    @property
    def state(self) -> DedupState:
        return DedupState(self.boot_id, self.acked)

    def restore(self, state: DedupState) -> None:
        self.boot_id = state.boot_id
        self.acked = state.acked
        self.seen = state.acked  # highest sequence delivered to the consumer
        self.synced = False

    def start(self) -> bytes:
        """Bytes to send on (re)connect: ask who is there, and restate the alert.

        Until the device's hello arrives the session does not know whether the
        sequence numbers it remembers belong to this boot, so it holds reliable
        messages back (the device repeats them) rather than risk mistaking a new
        card for a repeat.
        """
        self.synced = False
        return encode_hello_request() + (encode_alert(*self.alert) if self.alert else b"")

    def receive(self, seq: int, event: DeviceEvent) -> tuple[DeviceEvent | None, bytes]:
        """Decide what to do with one decoded message: the event to deliver (or None), bytes to send."""
        if isinstance(event, DeviceHello):
            return self._hello(seq, event)
        if isinstance(event, DeviceStatus):
            reply = b""
            if self.alert and event.alert_led is not None and (event.alert_led, event.buzzer) != self.alert:
                reply = encode_alert(*self.alert)
            return event, reply
        if not isinstance(event, DeviceCard | DeviceCutCard | DeviceButton):
            return event, b""
        if not self.synced:
            self.unsynced_drops += 1
            return None, encode_hello_request()
        if is_newer(seq, self.seen):
            self.seen = seq
            return event, b""
        self.duplicates += 1
        if not is_newer(seq, self.acked) and self.acked is not None:
            return None, encode_ack(seq)  # our ack was lost: say it again
        return None, b""  # still being stored; the consumer will acknowledge it

    def _hello(self, seq: int, hello: DeviceHello) -> tuple[DeviceEvent | None, bytes]:
        if hello.boot_id != self.boot_id:
            self.boot_id, self.acked, self.seen = hello.boot_id, None, None
        self.synced = True
        if not seq:
            return hello, b""  # the answer to a hello request
        if not is_newer(seq, self.seen):
            self.duplicates += 1
            return None, encode_ack(seq)
        # A boot hello carries no game data: acknowledge it at once.
        self.seen = self.acked = seq
        return hello, encode_ack(seq)

    def acknowledge(self, seq: int) -> bytes:
        """The consumer stored message ``seq``; bytes to send (none for a sequence never delivered)."""
        if is_newer(seq, self.seen):
            return b""
        if is_newer(seq, self.acked):
            self.acked = seq
        return encode_ack(seq)

    def redeliver(self, seq: int) -> None:
        """Forget that ``seq`` was delivered so that its next repeat is passed on."""
        if seq == self.seen and is_newer(seq, self.acked):
            self.seen = self.acked

    def set_alert(self, led: bool, buzzer: bool) -> bytes:
        self.alert = (led, buzzer)
        return encode_alert(led, buzzer)


class FramedDecoder(Decoder):
    """The framed codec and the host's session: what the driver decodes with, and a replay too.

    What a restart keeps is the session's ``DedupState``, as a dict.
    """

    codec: FramedCodec

    def __init__(self, codec: FramedCodec) -> None:
        super().__init__(codec)
        self.session = FramedSession()

    def start(self) -> bytes:
        self.codec.reset()
        return self.session.start()

    def resume(self) -> None:
        self.session.synced = True  # the hello of this connection came before

    def decode(self, data: bytes) -> tuple[list[DeviceEvent], bytes]:
        out: list[DeviceEvent] = []
        replies = b""
        for seq, event in self.codec.feed_seq(data):
            deliver, reply = self.session.receive(seq, event)
            replies += reply
            if deliver is not None:
                out.append(deliver)
        return out, replies

    def acknowledge(self, seq: int) -> bytes:
        return self.session.acknowledge(seq)

    def redeliver(self, seq: int) -> None:
        self.session.redeliver(seq)

    def saved_state(self, ack: int | None = None) -> dict[str, Any]:
        state = self.session.state
        return DedupState(state.boot_id, ack if ack is not None else state.acked).to_dict()

    def restore_state(self, state: dict[str, Any]) -> None:
        self.session.restore(DedupState.from_dict(state))


class FramedHostDriver(Driver):
    """A driver speaking framed over some transport; subclasses supply open/read/write/close.

    List it before the transport class: ``class X(FramedHostDriver, SomeTransport)``.
    The decoder is used under a lock: acknowledgements and alerts come from
    other threads than the reader's.
    """

    reports_cut_card = True
    repeats_unacknowledged = True
    alert_outputs = True
    decoder: FramedDecoder

    def __init__(self, channel: str, **options: Any) -> None:
        super().__init__(channel, **options)
        self._lock = threading.Lock()

    def make_codec(self) -> FramedCodec:
        return FramedCodec()

    def make_decoder(self) -> FramedDecoder:
        return FramedDecoder(self.make_codec())

    @property
    def session(self) -> FramedSession:
        return self.decoder.session

    def open(self) -> None:
        super().open()  # type: ignore[safe-super]  # a mixin: the transport's open, next in the MRO
        with self._lock:
            self.answer(self.decoder.start())

    def decode(self, data: bytes) -> list[DeviceEvent]:
        with self._lock:
            return super().decode(data)

    def acknowledge(self, seq: int) -> None:
        with self._lock:
            super().acknowledge(seq)

    def redeliver(self, seq: int) -> None:
        with self._lock:
            super().redeliver(seq)

    def saved_state(self, ack: int | None = None) -> dict[str, Any] | None:
        with self._lock:
            return super().saved_state(ack)

    def restore_state(self, state: dict[str, Any]) -> None:
        with self._lock:
            super().restore_state(state)

    def set_alert(self, led: bool, buzzer: bool) -> bool:
        with self._lock:
            self.answer(self.session.set_alert(led, buzzer))
        return True

    def counters(self) -> dict[str, int]:
        with self._lock:
            duplicates, unsynced = self.session.duplicates, self.session.unsynced_drops
        return {
            **super().counters(),
            "unknown_cards": self.decoder.codec.unknown_cards,
            "duplicates": duplicates,
            "unsynced_drops": unsynced,
        }

    def answer(self, data: bytes) -> None:
        """Write, but never fail the caller on a lost link: state is kept and replayed.

        An ack lost this way is sent again when the device repeats the message;
        the alert state is restated on reconnect.
        """
        if not data:
            return
        try:
            self.write(data)
        except DriverOperationError as exc:
            log.warning("framed write failed", channel=self.channel, error=str(exc))
