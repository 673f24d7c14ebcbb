"""The driver interface every device family implements.

Shaped after python-can's bus: a driver is a small transport (open, read a
chunk, write, close) plus a pure decoder (its codec, and for a protocol that
acknowledges, its session) that turns its bytes into device events and says
what to answer. The reader thread owns the driver and stamps time at the I/O
edge; the driver never reads a clock and never starts threads, so a driver
is easy to write and easy to test through a real pty or a pyusb backend. A
replay decodes a recording with the same decoder and no transport at all
(``Driver.detached_decoder``).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass
from types import TracebackType
from typing import Any, ClassVar, Literal, Protocol, Self, get_args

from drivers.events import DeviceEvent

Transport = Literal["serial", "usb"]
TRANSPORTS: tuple[Transport, ...] = get_args(Transport)


class DriverError(Exception):
    """Base of every error a driver raises on purpose."""


class DriverInitError(DriverError):
    """The device could not be opened (absent, busy, wrong settings)."""


class DriverOperationError(DriverError):
    """The open device failed: unplugged, I/O error. The reader reconnects."""


class DriverTimeout(DriverOperationError):
    """An operation that must finish in time did not (a write the device never took, say).

    A kind of operation error: a device that stops taking bytes is as good as gone,
    so the reader reconnects.
    """


class Codec(Protocol):
    """A pure, incremental decoder: bytes may arrive split or merged anywhere.

    ``feed`` never raises on any input; what it cannot use it counts.
    """

    @property
    def junk_bytes(self) -> int:
        """Bytes skipped because they were not part of any frame (read only: the codec counts)."""
        ...

    @property
    def bad_frames(self) -> int:
        """Frames that were recognised as frames but could not be used."""
        ...

    def feed(self, data: bytes) -> list[DeviceEvent]: ...

    def reset(self) -> None:
        """Forget a partial frame (after a reconnect), keeping the counters."""


class Decoder:
    """A device family's protocol without its transport: bytes in, device events and replies out.

    Pure: what the protocol answers (acknowledgements, requests) comes back as
    bytes, and the driver writes them; a replay, with no device to answer,
    drops them, so it decodes through exactly the state the live driver had.
    This one is a codec and nothing else; a protocol with acknowledgements
    keeps its session here too (``drivers.framed_host.FramedDecoder``).
    """

    def __init__(self, codec: Codec) -> None:
        self.codec = codec

    def start(self) -> bytes:
        """A (re)connection: forget a partial frame; the bytes to send the device first."""
        self.codec.reset()
        return b""

    def resume(self) -> None:
        """Go on with a connection already under way (a recording that begins mid-connection)."""

    def decode(self, data: bytes) -> tuple[list[DeviceEvent], bytes]:
        """The events in bytes just read, and the bytes to answer with."""
        return self.codec.feed(data), b""

    def acknowledge(self, seq: int) -> bytes:
        """Message ``seq`` is durably handled: the bytes that tell the device (none without acks)."""
        return b""

    def redeliver(self, seq: int) -> None:
        """The consumer could not take message ``seq``: let its retransmission through again."""

    def saved_state(self, ack: int | None = None) -> dict[str, Any] | None:
        """What must survive a restart of the daemon, JSON-ready; None for a protocol that keeps nothing.

        ``ack`` is a message about to be acknowledged: the state counts it as
        acknowledged, since the state is stored before the device is told.
        """
        return None

    def restore_state(self, state: dict[str, Any]) -> None:
        """Take back what ``saved_state`` gave, after a restart."""


@dataclass(frozen=True, slots=True)
class UsbId:
    """A USB vendor/product id a driver recognises.

    ``generic`` marks ids of off-the-shelf USB-serial adapters: a match says
    only "could be", because the same chip sits in unrelated devices.
    """

    vid: int
    pid: int
    description: str
    generic: bool = False

    def __str__(self) -> str:
        return f"{self.vid:04x}:{self.pid:04x}"


class Driver(ABC):
    """One device: a transport plus the codec for its protocol.

    ``channel`` says where the device is (a serial URL or path, a
    ``usb:VID:PID[:SERIAL]`` match, ...); ``options`` are driver settings.
    ``read`` and the event helpers run on the reader thread; ``write``,
    ``acknowledge`` and ``set_alert`` may be called from other threads, so a
    driver that shares state between them must lock it.
    """

    # What a device family is, declared once here and read by everyone else (the daemon, the
    # simulator, ``scannerd devices``, the capability table in docs/devices.md).
    name: ClassVar[str] = ""
    family: ClassVar[str] = ""
    """The devices it reads, for people: "Bee-Tek card shoe"."""
    transport: ClassVar[Transport]
    """``serial`` (a port pyserial opens) or ``usb`` (an interface pyusb claims); the transport
    classes set it, and the registry refuses a driver without it."""
    usb_ids: ClassVar[tuple[UsbId, ...]] = ()
    reports_cut_card: ClassVar[bool] = False
    """The device tells the host when the cut card passes; otherwise the house rules' virtual cut
    card (``cut_card_remaining``) must stand in."""
    repeats_unacknowledged: ClassVar[bool] = False
    """The device keeps every card until the host acknowledges it, so cards dealt while nobody
    was reading come again: a restart loses none. Otherwise they are gone, and so is the round."""
    alert_outputs: ClassVar[bool] = False
    """The device has an alert LED and buzzer the host can switch (``set_alert`` answers True)."""

    def __init__(self, channel: str, **options: Any) -> None:
        self.channel = channel
        self.options = options
        self.decoder = self.make_decoder()
        self.codec: Codec = self.decoder.codec

    @abstractmethod
    def make_codec(self) -> Codec:
        """The codec for this device's protocol, built from ``self.options`` alone."""

    def make_decoder(self) -> Decoder:
        """The protocol state decoding starts from, built from ``self.options`` alone."""
        return Decoder(self.make_codec())

    @classmethod
    def detached_decoder(cls, **options: Any) -> Decoder:
        """This family's decoder with no transport and no channel: what a replay decodes with.

        Built exactly as the driver builds its own, from the options alone, so
        nothing is opened, no channel is looked up and nothing can be written.
        """
        unopened = cls.__new__(cls)  # never initialised: ``make_decoder`` reads only the options
        unopened.options = options
        return unopened.make_decoder()

    @abstractmethod
    def open(self) -> None:
        """Open the device; raise DriverInitError if it is not there or unusable."""

    @abstractmethod
    def read(self, timeout: float) -> bytes:
        """Return the bytes available within ``timeout`` seconds (b"" if none).

        Raise DriverOperationError when the device is gone, promptly: the
        reader reports a link-down within a second of an unplug.
        """

    @abstractmethod
    def write(self, data: bytes) -> None:
        """Send bytes to the device; raise DriverOperationError if it is gone."""

    @abstractmethod
    def close(self) -> None:
        """Release the device; safe to call twice and on a device that vanished."""

    @property
    def description(self) -> str:
        """What is open, for logs and link-up events."""
        return f"{self.name} on {self.channel}"

    def decode(self, data: bytes) -> list[DeviceEvent]:
        """Turn bytes just read into events, and send what the protocol answers."""
        events, reply = self.decoder.decode(data)
        self.answer(reply)
        return events

    def acknowledge(self, seq: int) -> None:
        """Tell the device a message is durably handled; nothing is sent for devices without acks."""
        self.answer(self.decoder.acknowledge(seq))

    def redeliver(self, seq: int) -> None:
        """The consumer could not take message ``seq``: let its retransmission through again."""
        self.decoder.redeliver(seq)

    def saved_state(self, ack: int | None = None) -> dict[str, Any] | None:
        """What this device keeps across a restart of the daemon (None: nothing); see ``Decoder``."""
        return self.decoder.saved_state(ack)

    def restore_state(self, state: dict[str, Any]) -> None:
        """Take back, after a restart, what ``saved_state`` gave."""
        self.decoder.restore_state(state)

    def answer(self, data: bytes) -> None:
        """Write what the protocol answers with (nothing for most devices)."""
        if data:
            self.write(data)

    def set_alert(self, led: bool, buzzer: bool) -> bool:
        """Switch the device's alert LED and buzzer; False when the device has none."""
        return False

    def counters(self) -> dict[str, int]:
        """What the device's bytes cost since the driver was made, by the names of docs/devices.md (Counters).

        They reach the health topic: a shoe on a noisy cable or at the wrong baud rate shows there
        long before a card goes missing. May be called from any thread.
        """
        return {"junk_bytes": self.codec.junk_bytes, "bad_frames": self.codec.bad_frames}

    @classmethod
    def detect(cls) -> list[dict[str, Any]]:
        """Configurations (``{"driver", "channel", ...}``) for devices of this kind found now."""
        return []

    def __enter__(self) -> Self:
        self.open()
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()
