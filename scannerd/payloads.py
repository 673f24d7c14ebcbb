"""Payloads of the retained topics that describe the table rather than the deal.

Events (``scannerd.events``) say what happened; these say how things are now:
the daemon's availability, the shoe device's link, and the publisher's own
health. They are published retained, so a consumer that subscribes later
still sees the current value at once.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field


class StatusPayload(BaseModel):
    """Availability: ``online`` on connect; ``offline`` on a clean stop and as the last will."""

    model_config = ConfigDict(extra="forbid")

    state: Literal["online", "offline"]
    version: str = Field(description="scannerd version.")
    table_id: str


class DevicePayload(BaseModel):
    """The dealing shoe device as the daemon last saw it."""

    model_config = ConfigDict(extra="forbid")

    driver: str = Field(description="Driver name, e.g. 'framed'.")
    channel: str | None = Field(None, description="Where the device is: serial port, usb:VID:PID, ...")
    link: Literal["up", "down", "unknown"] = "unknown"
    detail: str = Field("", description="Why the link is as it is (error text after a loss).")
    model: str | None = None
    serial: str | None = None
    firmware: str | None = None
    last_heartbeat: float | None = Field(None, description="Unix seconds of the last sign of life.")
    lid_open: bool | None = None
    jam: bool | None = None
    sensor_dirty: bool | None = None


class DisplayHealth(BaseModel):
    """The dealer display's web server: the table deals on without it, so its state is reported here."""

    model_config = ConfigDict(extra="forbid")

    state: Literal["listening", "retrying"] = Field(
        description="'retrying': it could not listen (port taken, host unknown) and tries again."
    )
    listen: str = Field(description="The [display] listen address.")
    error: str | None = Field(None, description="Why the last attempt to listen failed (while retrying).")


class HealthPayload(BaseModel):
    """Counters of the link to the game server, published retained at an interval and on connect."""

    model_config = ConfigDict(extra="forbid")

    ts: float = Field(description="Unix seconds when the figures were taken.")
    table_id: str
    connected: bool
    published: int = Field(description="Events acknowledged by the broker since start.")
    pending: int = Field(description="Events waiting in the outbox (on disk and in memory).")
    in_flight: int = Field(description="Events sent and not yet acknowledged.")
    outbox_bytes: int
    outbox_max_bytes: int
    outbox_level: Literal["ok", "warn", "full"] = Field(
        description="'warn' past the warning fraction; 'full' when new events are held in memory."
    )
    reconnects: int
    refused: int = Field(description="Publications the broker refused (MQTT 5 reason code >= 0x80).")
    requests: int
    rejected_requests: int = Field(description="Requests answered with status 'error'.")
    busy_requests: int = Field(0, description="Requests not run, answered 'busy': too many were waiting.")
    errors: int = Field(description="Internal errors of the sending thread (logged; sending resumes).")
    display: DisplayHealth | None = Field(None, description="The dealer display; null when it is disabled.")
