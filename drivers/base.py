"""The driver interface every device family implements.

Shaped after python-can's bus: a driver is a small transport (open, read a
chunk, write, close) plus a pure codec that turns its bytes into device
events. The reader thread owns the driver and stamps time at the I/O edge;
the driver never reads a clock and never starts threads, so a driver is easy
to write and easy to test through a real pty or a pyusb backend.
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

    junk_bytes: int  # bytes skipped because they were not part of any frame
    bad_frames: int  # frames that were recognised as frames but could not be used

    def feed(self, data: bytes) -> list[DeviceEvent]: ...

    def reset(self) -> None:
        """Forget a partial frame (after a reconnect), keeping the counters."""


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
        self.codec: Codec = self.make_codec()

    @abstractmethod
    def make_codec(self) -> Codec:
        """The codec for this device's protocol, built from ``self.options``."""

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
        """Turn bytes just read into events; protocol drivers add acks and dedup here."""
        return self.codec.feed(data)

    def acknowledge(self, seq: int) -> None:  # noqa: B027 (a default, not an abstract hook)
        """Tell the device a message is durably handled; no-op for devices without acks."""

    def redeliver(self, seq: int) -> None:  # noqa: B027 (a default, not an abstract hook)
        """The consumer could not take message ``seq``: let its retransmission through again."""

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
