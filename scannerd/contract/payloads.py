"""Payloads of the retained topics that describe the table rather than the deal.

Events (``scannerd.contract.events``) say what happened; these say how things are now:
the daemon's availability, the shoe device's link, and the publisher's own
health. They are published retained, so a consumer that subscribes later
still sees the current value at once.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from scannerd.contract.events import Software
from scannerd.contract.table_state import SuspensionView


def _absent(value: object) -> bool:
    return value is None


class StatusPayload(BaseModel):
    """Availability: ``online`` on connect; ``offline`` on a clean stop and as the last will."""

    model_config = ConfigDict(extra="forbid")

    state: Literal["online", "offline"]
    version: str = Field(description="scannerd version.")
    table_id: str
    software: Software | None = Field(
        None,
        exclude_if=_absent,
        description="The installed files' digest, checked at start; absent from older tables.",
    )
    config_digest: str | None = Field(
        None,
        exclude_if=_absent,
        pattern=r"^[0-9a-f]{64}$",
        description="SHA-256 (hex) of the effective configuration this start runs under (docs/mqtt.md, "
        "Status); absent from older tables.",
    )
    suspended: SuspensionView | None = Field(
        None,
        exclude_if=_absent,
        description="Present while the table is suspended after a malfunction (docs/mqtt.md, Suspension): "
        "what stopped it; republished when it changes. Only in 'online': an offline table says nothing "
        "of its deal.",
    )
    staff_list: bool | None = Field(
        None,
        exclude_if=_absent,
        description="True: staff sign in with a PIN checked against the house's staff list; false: the "
        "table keeps no list and takes any dealer id. Absent from older tables.",
    )


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


class ReaderHealth(BaseModel):
    """What reading the shoe cost since the daemon started: its driver's counters and the reader's.

    Bytes and frames the shoe sent that could not be used are counted, not
    logged one by one: a noisy cable or a wrong baud rate shows here as a
    rising count long before a card goes missing. Framed shoes add the
    session's counts; other drivers leave those null. A driver of its own
    (a plugin) may add counters of its own, or have none (the codec's null).
    """

    model_config = ConfigDict(extra="allow")

    junk_bytes: int | None = Field(
        None,
        description="Bytes that were part of no frame: line noise, a wrong baud rate. Null: the "
        "driver counts none.",
    )
    bad_frames: int | None = Field(
        None,
        description="Frames recognised as frames that could not be used: a bad checksum, an unknown "
        "message, a card code garbled in transit (that card is passed on as unreadable). Null: the "
        "driver counts none.",
    )
    unknown_cards: int | None = Field(
        None, description="Framed: card codes outside the deck, passed on as unreadable. Null for others."
    )
    duplicates: int | None = Field(
        None, description="Framed: repeats of messages already delivered, dropped. Null for others."
    )
    unsynced_drops: int | None = Field(
        None,
        description="Framed: messages held back (the shoe repeats them) until it said which boot it is. "
        "Null for others.",
    )
    errors: int = Field(description="Errors of the reader thread (logged; it reopens the device).")
    reconnects: int = Field(description="Times the device was opened again after the first.")


class RecorderHealth(BaseModel):
    """The recorder's figures (``[record] dir``): the table deals on without it, so they are reported here."""

    model_config = ConfigDict(extra="forbid")

    file: str | None = Field(description="The file being written; null between files.")
    files: int = Field(description="Files written since start, the current one included.")
    lines: int = Field(description="Lines written since start.")
    dropped: int = Field(
        description="Lines not written: the disk fell behind, or the file broke. A file ends at a lost "
        "line, never with a hole in it."
    )
    errors: int = Field(description="Write errors (logged); recording resumes with the next shoe or day.")
    last_error: str | None = Field(description="The latest write error, if any.")
    alive: bool = Field(description="False once its thread has ended: the service restarts the daemon.")


class ArchiveHealth(BaseModel):
    """Shipping the recordings to the archive (``[archive] url``): the table deals on whatever the
    storage does, so how far behind the archive is shows here."""

    model_config = ConfigDict(extra="forbid")

    url: str = Field(description="The archive, s3://BUCKET/PREFIX.")
    state: Literal["shipping", "retrying", "refused"] = Field(
        description="'retrying': the storage could not be reached or failed, and is tried again; "
        "'refused': the bucket must not take the table's files (no Object Lock, a retention too short), "
        "and nothing is put there until it is fixed."
    )
    behind: int = Field(description="Finished recordings not yet archived and checked.")
    oldest: str | None = Field(description="The oldest of them; null when none waits.")
    oldest_age_s: float | None = Field(
        description="How long it has waited since it was finished, in seconds; null when none waits."
    )
    archived: int = Field(description="Files archived and checked since start.")
    errors: int = Field(description="Attempts that failed since start (logged once per reason).")
    last_error: str | None = Field(description="Why the latest attempt failed, if it did.")
    alive: bool = Field(description="False once its thread has ended: the service restarts the daemon.")


class ClockHealth(BaseModel):
    """The table's clock as the kernel's time keeping says (adjtimex), against the house limit."""

    model_config = ConfigDict(extra="forbid")

    synchronised: bool = Field(description="A time service keeps the clock synchronised (no STA_UNSYNC).")
    est_error_s: float = Field(description="The kernel's estimated error of the clock, in seconds.")
    max_error_s: float = Field(description="The kernel's maximum error of the clock, in seconds.")
    limit_s: float = Field(description="The house limit on the estimated error ([clock] max_error_s).")
    well: bool = Field(
        description="Synchronised and within the limit (once off: back under a margin below it, so an error "
        "at the limit does not flap); false: CLOCK_UNSYNCED is raised."
    )


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
    reader: ReaderHealth | None = Field(
        None, description="The shoe's reader; null where no shoe is read (scannerd replay --publish)."
    )
    recorder: RecorderHealth | None = Field(None, description="The recorder; null when recording is off.")
    archive: ArchiveHealth | None = Field(
        None, exclude_if=_absent, description="The archive; absent when nothing is archived."
    )
    clock: ClockHealth | None = Field(
        None, description="The table's clock; null where the kernel's clock state cannot be read."
    )
    started_at: float | None = Field(
        None, exclude_if=_absent, description="Unix seconds the daemon started; absent from older tables."
    )
    oldest_pending_s: float | None = Field(
        None,
        description="Age in seconds (by its ts) of the oldest event the broker has not acknowledged; "
        "null when none waits (and from older tables).",
    )
    held: int = Field(0, description="Events held in memory only: the outbox had no room for them on disk.")
    failed_attempts: int = Field(
        0, description="Connection attempts that failed since the table was last connected to the broker."
    )
