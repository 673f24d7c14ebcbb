"""Replay a recording through the live table's own parts, and say what would have been published.

Bytes go through the recorded driver's decoder (``Driver.detached_decoder``:
its codec, and the framed shoe's duplicate suppression too, with no
transport behind it), device events, commands and ticks through the
daemon's own ``scannerd.core.table.Table``, and events out through
``scannerd.contract.topics``: nothing here decides anything the daemon decides.
Time is the recording's: each line happens at ``started_at + t``, and the
daemon's once-a-second tick is replayed on a grid of that time
(``Table.ticks``), so the same file always gives the same messages, byte
for byte.

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
from pathlib import Path
from typing import Any, NamedTuple

from drivers.events import DeviceEvent, LinkDown, LinkUp
from drivers.registry import get_driver_class
from scannerd.contract.events import EventData, GameIdentity
from scannerd.contract.requests import Response
from scannerd.contract.topics import DEFAULT_PREFIX, Topics, encode_data, encode_response
from scannerd.core.house import HouseRules
from scannerd.core.inputs import Actor, Anchored, ConfigChanged, Fault, FaultCleared, Restarted
from scannerd.core.table import Outcome, SavedState, Table
from scannerd.recording.format import (
    AnchorLine,
    AnyLine,
    CmdLine,
    ConfigLine,
    FaultLine,
    Header,
    LinkLine,
    RecordingError,
    RecordingReader,
    RestartLine,
    RxLine,
)


class Published(NamedTuple):
    """One message the table would have published: an event or a request's response.

    A named tuple, as the outbox's ``Message``: immutable, as the frozen dataclass it was, for a
    third of the cost to build, paid for every message a replay makes.
    """

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
        self.table_id = table_id or header.table_id
        self.start = header.start_ts
        saved = SavedState.from_dict(header.state)
        # What judged the hands is the header's; with the rules replaced, not the config it names.
        running = GameIdentity.running(
            header.scannerd, header.software, header.config_digest if rules is None else None
        )
        self.table = Table(
            self.table_id,
            rules or header.rules,
            driver=header.driver,
            saved=saved,
            ticks_from=self.start,
            running=running,
        )
        # A file that begins mid-connection carries on with the protocol's state in step: restored
        # from the header, as the driver had it; a ``link up`` line starts it again as opening does.
        self.decoder = get_driver_class(header.driver).detached_decoder(**header.driver_options)
        if saved is not None and saved.device is not None:
            self.decoder.restore_state(saved.device)
        self.decoder.resume()
        self.topics = Topics(prefix, self.table_id)

    def feed(self, line: AnyLine) -> list[Published]:
        ts = self.start + line.t
        out: list[Published] = []
        for tick in self.table.ticks(ts):
            out += self._published(tick.judged.ts, tick)  # type: ignore[union-attr]
        if isinstance(line, RxLine):
            events, _ = self.decoder.decode(line.data)  # no device to answer
            for device_event in events:
                outcome = self.table.device_event(ts, device_event)
                out += self._published(ts, outcome)
                for ack in outcome.acks:
                    self.decoder.acknowledge(ack)  # as the daemon does once the events are stored
        elif isinstance(line, CmdLine):
            out += self._command(ts, line.name, line.args, line.actor)
        elif isinstance(line, RestartLine):
            out += self._published(ts, self.table.judge(Restarted(ts, line.detail, line.repeats)))
        elif isinstance(line, AnchorLine):
            out += self._published(ts, self.table.judge(Anchored(ts, line.file, line.lines, line.digest)))
        elif isinstance(line, ConfigLine):
            changed = ConfigChanged(ts, line.digest, line.previous, list(line.changed))
            out += self._published(ts, self.table.judge(changed))
        elif isinstance(line, FaultLine):
            fault = FaultCleared(ts, line.code) if line.cleared else Fault(ts, line.code, line.message)
            out += self._published(ts, self.table.judge(fault))
        else:
            if line.up:
                self.decoder.start()
            out += self._published(ts, self.table.device_event(ts, _link_event(line)))
        return out

    def _published(self, ts: float, outcome: Outcome) -> list[Published]:
        # Straight from the event to what is printed or sent, in one step: the topic and the bytes
        # the daemon's ``Topics.message`` gives, without the outbox's message in between.
        topic = self.topics.event_topic
        return [Published(ts, topic(e), encode_data(e), e) for e in outcome.events]

    def _command(self, ts: float, name: str, args: dict[str, Any], actor: Actor | None) -> list[Published]:
        outcome = self.table.command(name, args, ts, actor)
        response = outcome.response
        assert response is not None  # every request is answered
        # The daemon stores a command's events before it answers.
        return [
            *self._published(ts, outcome),
            Published(ts, self.topics.response(name), encode_response(response), response),
        ]


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
    house = header.rules.with_changes(rules) if rules else None
    try:
        return Replayer(header, rules=house, prefix=prefix, table_id=table_id)
    except (KeyError, TypeError, ValueError, AttributeError) as exc:  # the header's state is the file's word
        raise RecordingError(
            f"{reader.path}:1: bad header: state is not a table's saved state ({type(exc).__name__}: {exc})"
        ) from None
