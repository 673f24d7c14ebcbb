"""What a device said, in one vocabulary for every device family.

Events carry no timestamp: codecs are pure, and the reader stamps the time
at the I/O edge when it hands an event on. Card codes are already in
``drivers.cards`` form, so nothing past the codec knows which device spoke.

Never changed once made: ``DeviceCard``, one for every card, holds to that
through ``Final`` fields rather than ``frozen=True``, for the reason
``scannerd.core.inputs`` gives.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final


@dataclass(slots=True, unsafe_hash=True)
class DeviceCard:
    """A card left the shoe; ``card`` is None when the device could not read it.

    ``ack`` is the framed device's sequence number: the consumer hands it back
    to the driver's ``acknowledge`` once the card is durably stored, and not
    before, so a crash never loses a card the shoe believes delivered.
    """

    card: Final[str | None]
    burn: Final[bool] = False
    ack: Final[int | None] = None


@dataclass(frozen=True, slots=True)
class DeviceCutCard:
    """The cut card passed the sensor; ``ack`` as for :class:`DeviceCard`."""

    ack: int | None = None


@dataclass(frozen=True, slots=True)
class DeviceButton:
    """A dealer button on the device was pressed; ``ack`` as for :class:`DeviceCard`."""

    name: str
    ack: int | None = None


@dataclass(frozen=True, slots=True)
class DeviceStatus:
    """A heartbeat: the device is alive, and this is how it is.

    ``alert_led`` and ``buzzer`` are None for devices that do not report them.
    """

    lid_open: bool = False
    jam: bool = False
    sensor_dirty: bool = False
    alert_led: bool | None = None
    buzzer: bool | None = None


@dataclass(frozen=True, slots=True)
class DeviceFault:
    """An alarm or warning raised by the device itself (``code`` as the device names it)."""

    code: str
    text: str = ""


@dataclass(frozen=True, slots=True)
class DeviceHello:
    """The device introduced itself; a new ``boot_id`` means it restarted."""

    model: str
    serial: str
    firmware: str
    boot_id: int


@dataclass(frozen=True, slots=True)
class LinkUp:
    """The reader (re)opened the device."""

    detail: str = ""


@dataclass(frozen=True, slots=True)
class LinkDown:
    """The reader lost the device (unplugged, I/O error, or stopped)."""

    detail: str = ""


DeviceEvent = (
    DeviceCard | DeviceCutCard | DeviceButton | DeviceStatus | DeviceFault | DeviceHello | LinkUp | LinkDown
)
