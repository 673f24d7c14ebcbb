"""Replay a recording through the live table's own parts, and say what would have been published.

Bytes go through the recorded driver's codec (its ``decode``, so the framed
shoe's duplicate suppression runs too), device events through
``scannerd.ingest.to_input``, everything through the ``Validator``, commands
through ``scannerd.requests``, and events out through ``scannerd.topics``:
nothing here decides anything the daemon decides. Time is the recording's:
each line happens at ``started_at + t``, and the daemon's once-a-second tick
is replayed on a grid of that time, so the same file always gives the same
messages, byte for byte.

Not replayed: the retained ``device``, ``status`` and ``health`` topics.
They describe the table's machinery, not the deal; ``device`` is a
latest-value view that the daemon rewrites only on some changes; and
replaying them into a broker would overwrite the real table's retained
values with old ones.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from drivers.base import Driver
from drivers.events import DeviceEvent, LinkDown, LinkUp
from drivers.framed_host import DedupState, FramedHostDriver
from drivers.registry import get_driver_class
from scannerd.events import TICK_S, EventData, Restarted, Tick, ValidatorInput
from scannerd.house import HouseRules
from scannerd.ingest import to_input
from scannerd.mqtt_settings import MqttSettings
from scannerd.recording import (
    AnyLine,
    CmdLine,
    Header,
    LinkLine,
    RecordingError,
    RecordingReader,
    RestartLine,
    RxLine,
)
from scannerd.requests import RequestError, Response, execute, parse_request
from scannerd.topics import Topics, encode
from scannerd.validator import Validator

DEFAULT_PREFIX = MqttSettings.model_fields["prefix"].default


@dataclass(frozen=True, slots=True)
class Published:
    """One message the table would have published: an event or a request's response."""

    ts: float  # when, on the recording's clock (for pacing)
    topic: str
    payload: bytes  # exactly the bytes the daemon sends
    source: EventData | Response

    def to_json(self) -> str:
        """``{"topic": ..., "payload": {...}}``: one line of ``replay --emit jsonl``."""
        return f'{{"topic":{_json_string(self.topic)},"payload":{self.payload.decode()}}}'


@functools.lru_cache(maxsize=64)
def _json_string(text: str) -> str:
    """A topic as a JSON string; a replay has a handful of topics and writes each thousands of times."""
    return json.dumps(text)


def _discard(data: bytes) -> None:
    """A replay has no device to answer: acks and alerts the driver sends go nowhere."""


class ReplayDevice:
    """The recorded driver without its transport: bytes decode exactly as they did live.

    It is never opened. A ``link up`` line does what opening does to the
    protocol state (the codec forgets a partial frame, a framed session asks
    for a hello again); a file that begins mid-connection starts with the
    framed session in step, restored from the header's state when it has one.
    """

    def __init__(self, driver: str, options: dict[str, Any], state: dict[str, Any] | None = None) -> None:
        cls = get_driver_class(driver)
        # Never opened; a USB driver still wants a channel of its shape.
        channel = f"usb:{cls.usb_ids[0]}" if cls.usb_ids else "replay"
        self.driver: Driver = cls(channel, **options)
        self.driver.write = _discard  # type: ignore[method-assign]
        if isinstance(self.driver, FramedHostDriver):
            if state and state.get("device"):
                self.driver.restore_dedup(DedupState.from_dict(state["device"]))
            self.driver.session.synced = True

    def link_up(self) -> None:
        self.driver.codec.reset()
        if isinstance(self.driver, FramedHostDriver):
            self.driver.session.start()

    def decode(self, data: bytes) -> list[DeviceEvent]:
        return self.driver.decode(data)

    def acknowledge(self, seq: int) -> None:
        self.driver.acknowledge(seq)


class Replayer:
    """Feeds one recording's lines, in order, and returns what each would have published.

    ``rules`` replaces the header's house settings (``--config``); ``table_id``
    replays under another table's name, e.g. to keep a replay apart from the
    live table on a shared broker.
    """

    def __init__(
        self,
        header: Header,
        *,
        rules: HouseRules | None = None,
        prefix: str = DEFAULT_PREFIX,
        table_id: str | None = None,
    ) -> None:
        self.header = header
        self.rules = rules or header.rules
        self.table_id = table_id or header.table_id
        snap = (header.state or {}).get("validator")
        if snap:
            self.validator = Validator.restore(self.table_id, self.rules, snap)
        else:
            self.validator = Validator(self.table_id, self.rules)
        self.device = ReplayDevice(header.driver, header.driver_options, header.state)
        self.topics = Topics(prefix, self.table_id)
        self.start = header.start_ts
        self._next_tick = self.start + TICK_S

    def feed(self, line: AnyLine) -> list[Published]:
        ts = self.start + line.t
        out = self._ticks(ts)
        if isinstance(line, RxLine):
            for device_event in self.device.decode(line.data):
                inp = to_input(ts, device_event)
                if inp is not None:
                    out += self._apply(inp)
                ack = getattr(device_event, "ack", None)
                if ack is not None:
                    self.device.acknowledge(ack)  # as the daemon does once the events are stored
        elif isinstance(line, CmdLine):
            out += self._command(ts, line.name, line.args)
        elif isinstance(line, RestartLine):
            out += self._apply(Restarted(ts, line.detail, line.repeats))
        else:
            if line.up:
                self.device.link_up()
            out += self._apply(to_input(ts, _link_event(line)))  # type: ignore[arg-type]
        return out

    def _ticks(self, ts: float) -> list[Published]:
        # A day's recording spans tens of thousands of ticks; only one that stalls a round does
        # anything, so the others are stepped over (the grid is still stepped exactly as live).
        out: list[Published] = []
        while self._next_tick <= ts:
            if self.validator.acts_at(self._next_tick):
                out += self._apply(Tick(self._next_tick))
            self._next_tick += TICK_S
        return out

    def _apply(self, inp: ValidatorInput) -> list[Published]:
        return self._events(inp.ts, self.validator.handle(inp))

    def _events(self, ts: float, events: list[EventData]) -> list[Published]:
        message = self.topics.message
        return [Published(ts, (m := message(e)).topic, m.payload, e) for e in events]

    def _command(self, ts: float, name: str, args: dict[str, Any]) -> list[Published]:
        try:
            request = parse_request(name, json.dumps(args).encode())
        except RequestError as exc:
            response, out = exc.response(), []
        else:
            response, events = execute(request, self.validator, ts)
            out = self._events(ts, events)
        # The daemon stores a command's events before it answers.
        return [*out, Published(ts, self.topics.response(name), encode(response), response)]


def _link_event(line: LinkLine) -> DeviceEvent:
    return LinkUp(line.detail) if line.up else LinkDown(line.detail)


def replay(
    path: str | Path,
    *,
    rules: dict[str, Any] | None = None,
    prefix: str = DEFAULT_PREFIX,
    table_id: str | None = None,
) -> Iterator[Published]:
    """Every message the recording at ``path`` makes, in publish order (see :func:`messages`)."""
    with RecordingReader(path) as reader:
        yield from messages(reader, rules=rules, prefix=prefix, table_id=table_id)


def messages(
    reader: RecordingReader,
    *,
    rules: dict[str, Any] | None = None,
    prefix: str = DEFAULT_PREFIX,
    table_id: str | None = None,
) -> Iterator[Published]:
    """Every message an open recording makes; ``rules`` replace the header's house settings key by key."""
    replayer = replayer_for(reader, rules=rules, prefix=prefix, table_id=table_id)
    for line in reader.lines():
        yield from replayer.feed(line)


def replayer_for(
    reader: RecordingReader,
    *,
    rules: dict[str, Any] | None = None,
    prefix: str = DEFAULT_PREFIX,
    table_id: str | None = None,
) -> Replayer:
    """The replayer an open recording starts from: for whoever also wants the table's state at its end."""
    header = reader.header
    house = HouseRules(**{**header.rules.model_dump(), **rules}) if rules else None
    try:
        return Replayer(header, rules=house, prefix=prefix, table_id=table_id)
    except (KeyError, TypeError, ValueError, AttributeError) as exc:  # the header's state is the file's word
        raise RecordingError(
            f"{reader.path}:1: bad header: state is not a table's saved state ({type(exc).__name__}: {exc})"
        ) from None
