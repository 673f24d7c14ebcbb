"""From what a device said to what the validator judges, and what the table shows about the device.

Pure functions and a small pure tracker, shared by the live daemon and the
replay, so a recording goes through exactly the mapping the table used.
"""

from __future__ import annotations

from drivers.events import (
    DeviceCard,
    DeviceCutCard,
    DeviceEvent,
    DeviceFault,
    DeviceHello,
    DeviceStatus,
    LinkDown,
    LinkUp,
)
from scannerd.contract.alert_catalogue import message
from scannerd.contract.payloads import DevicePayload
from scannerd.core.inputs import CardDrawn, CutCardSeen, Fault, LinkChanged, ValidatorInput

DEVICE_FAULT = "DEVICE_FAULT"
"""The one fault a device reports; every other fault the daemon raises itself (a recording keeps those)."""


def to_input(ts: float, event: DeviceEvent) -> ValidatorInput | None:
    """The validator input a device event makes, or None when it only concerns the device."""
    if isinstance(event, DeviceCard):
        return CardDrawn(ts, event.card, event.burn)
    if isinstance(event, DeviceCutCard):
        return CutCardSeen(ts)
    if isinstance(event, LinkUp):
        return LinkChanged(ts, True, event.detail)
    if isinstance(event, LinkDown):
        return LinkChanged(ts, False, event.detail)
    if isinstance(event, DeviceFault):
        case = None if event.text else "unexplained"
        return Fault(ts, DEVICE_FAULT, message(DEVICE_FAULT, case, alarm=event.code, text=event.text))
    return None


class DeviceView:
    """The retained ``device`` payload, kept up to date from device events.

    ``apply`` returns the new payload only when something a consumer cares
    about changed; a heartbeat alone refreshes ``last_heartbeat`` silently,
    so the retained topic is not rewritten every second. Every card is such
    a heartbeat: it only notes the time, and the payload is copied when a
    change is shown or when ``payload`` is asked for.
    """

    def __init__(self, driver: str, channel: str | None) -> None:
        self._shown = DevicePayload(driver=driver, channel=channel)
        self._heartbeat: float | None = None

    @property
    def payload(self) -> DevicePayload:
        """The device as last seen: the last payload shown, with the latest heartbeat."""
        if self._heartbeat == self._shown.last_heartbeat:
            return self._shown
        return self._shown.model_copy(update={"last_heartbeat": self._heartbeat})

    def apply(self, ts: float, event: DeviceEvent) -> DevicePayload | None:
        self._heartbeat = ts
        if isinstance(event, DeviceCard):  # nearly every event, and only ever a heartbeat
            return None
        update: dict[str, object] = {}
        if isinstance(event, LinkUp):
            update = {"link": "up", "detail": event.detail}
        elif isinstance(event, LinkDown):
            update = {"link": "down", "detail": event.detail}
        elif isinstance(event, DeviceHello):
            update = {"model": event.model, "serial": event.serial, "firmware": event.firmware}
        elif isinstance(event, DeviceStatus):
            update = {"lid_open": event.lid_open, "jam": event.jam, "sensor_dirty": event.sensor_dirty}
        elif isinstance(event, DeviceFault):
            update = {"detail": f"{event.code} {event.text}".strip()}
        if not update:
            return None  # a cut card, a button: the shoe is alive, and that is all
        shown = self._shown
        if all(getattr(shown, key) == value for key, value in update.items()):
            return None  # nothing new
        self._shown = shown.model_copy(update={**update, "last_heartbeat": ts})
        return self._shown
