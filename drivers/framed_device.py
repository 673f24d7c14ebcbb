"""The device end of the framed protocol: the behaviour shoe firmware must have.

Pure (time comes in as ``now``), so simulators over a pty or a USB backend
and the protocol tests share one reference: one reliable message in flight,
repeated every ``retransmit_after`` seconds until the host acknowledges it;
the boot hello first; status and faults sent at once and never repeated.
"""

from __future__ import annotations

from collections import deque

from drivers.codecs.framed import (
    Ack,
    Alert,
    FrameReader,
    HelloRequest,
    encode_event,
    is_reliable,
    parse_host_frame,
)
from drivers.events import DeviceEvent, DeviceHello, DeviceStatus


class FramedDevice:
    def __init__(self, hello: DeviceHello, retransmit_after: float = 0.25) -> None:
        self.hello = hello
        self.retransmit_after = retransmit_after
        self.led = False
        self.buzzer = False
        self.acked: list[int] = []  # sequence numbers the host acknowledged, in order
        self.retransmissions = 0
        self._queue: deque[DeviceEvent] = deque([hello])
        self._next_seq = 1
        self._in_flight: tuple[int, bytes] | None = None
        self._sent_at = 0.0
        self._frames = FrameReader()

    @property
    def idle(self) -> bool:
        """Everything queued has been acknowledged."""
        return self._in_flight is None and not self._queue

    @property
    def in_flight(self) -> int | None:
        """Sequence number waiting for its acknowledgement."""
        return self._in_flight[0] if self._in_flight else None

    def start(self, now: float) -> bytes:
        """Bytes to send at power-up: the boot hello."""
        return self._next(now)

    def send(self, event: DeviceEvent, now: float) -> bytes:
        """Queue or send ``event``; returns what goes on the wire now."""
        if not is_reliable(event):
            return encode_event(event)
        self._queue.append(event)
        return self._next(now)

    def status(self, lid_open: bool = False, jam: bool = False, sensor_dirty: bool = False) -> bytes:
        """A heartbeat, reporting the alert outputs as they are."""
        return encode_event(DeviceStatus(lid_open, jam, sensor_dirty, self.led, self.buzzer))

    def receive(self, data: bytes, now: float) -> bytes:
        """Handle bytes from the host; returns the reply bytes."""
        out = b""
        for frame in self._frames.feed(data):
            match parse_host_frame(frame):
                case Ack(seq=seq) if self._in_flight and seq == self._in_flight[0]:
                    self.acked.append(seq)
                    self._in_flight = None
                    out += self._next(now)
                case Alert(led=led, buzzer=buzzer):
                    self.led, self.buzzer = led, buzzer
                case HelloRequest():
                    out += encode_event(self.hello)
        return out

    def poll(self, now: float) -> bytes:
        """Repeat the message in flight if its acknowledgement is overdue."""
        if self._in_flight and now - self._sent_at >= self.retransmit_after:
            self.retransmissions += 1
            self._sent_at = now
            return self._in_flight[1]
        return b""

    def _next(self, now: float) -> bytes:
        if self._in_flight or not self._queue:
            return b""
        seq = self._next_seq
        self._next_seq = seq % 0xFFFF + 1
        self._in_flight = (seq, encode_event(self._queue.popleft(), seq))
        self._sent_at = now
        return self._in_flight[1]
