"""Reading the tables' messages into the contract's models, forgivingly.

Anyone the broker lets in can publish under a table's topics, so a payload
that is not the contract is answered with None, never an exception: one bad
message must not stop the delivery of good ones. Fields a newer table adds
are left out rather than refused, so an older consumer keeps working.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, replace
from typing import Any, TypeVar, get_args

from pydantic import BaseModel, ValidationError

from scannerd.contract.events import Event
from scannerd.contract.payloads import DevicePayload, HealthPayload, StatusPayload
from scannerd.contract.requests import Response

EVENT_MODELS: dict[str, type[Event]] = {
    model.model_fields["kind"].default: model for model in get_args(Event)
}
"""Every kind of event the table publishes, by its topic's last level (one list: ``Event``)."""
_Model = TypeVar("_Model", bound=BaseModel)


@dataclass(frozen=True, slots=True)
class Availability:
    """A table as its retained topics describe it; None where nothing has been heard yet.

    While ``status`` says offline, ``device`` is history (docs/mqtt.md).
    """

    status: StatusPayload | None = None
    device: DevicePayload | None = None
    health: HealthPayload | None = None  # the latest, restated every health interval

    @property
    def online(self) -> bool:
        return self.status is not None and self.status.state == "online"

    def with_status(self, status: StatusPayload) -> Availability:
        return replace(self, status=status)

    def with_device(self, device: DevicePayload) -> Availability:
        return replace(self, device=device)

    def with_health(self, health: HealthPayload) -> Availability:
        return replace(self, health=health)


def model_of(model: type[_Model], payload: bytes | bytearray | dict[str, Any]) -> _Model | None:
    """``payload`` (JSON bytes or a parsed object) as ``model``, or None when it is not one."""
    if isinstance(payload, bytes | bytearray):
        try:
            payload = json.loads(payload)
        except (ValueError, RecursionError):
            return None
    if not isinstance(payload, dict):
        return None
    try:
        return model.model_validate({k: v for k, v in payload.items() if k in model.model_fields})
    except ValidationError:
        return None


def parse_event(kind: str, payload: bytes | bytearray) -> Event | None:
    """The event on the table's ``kind`` topic, or None when the payload is not one of that kind."""
    model = EVENT_MODELS.get(kind)
    return None if model is None else model_of(model, payload)


def parse_status(payload: bytes | bytearray) -> StatusPayload | None:
    return model_of(StatusPayload, payload)


def parse_device(payload: bytes | bytearray) -> DevicePayload | None:
    return model_of(DevicePayload, payload)


def parse_health(payload: bytes | bytearray) -> HealthPayload | None:
    return model_of(HealthPayload, payload)


def parse_response(payload: bytes | bytearray) -> Response | None:
    return model_of(Response, payload)
