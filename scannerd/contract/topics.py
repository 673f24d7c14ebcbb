"""Topic names and delivery options: the one place that maps an event to MQTT.

Every topic of a table lives under ``{prefix}/{table_id}``, so one ACL
pattern per table can confine it (``systemd/mosquitto-acl.example``).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import NamedTuple, get_args

import orjson
from pydantic import BaseModel

from scannerd.contract.events import Event, EventData

DEFAULT_PREFIX = "casino/tables"
"""Where the tables' topics live unless ``[mqtt] prefix`` says otherwise, for both ends of the contract."""
EVENT_KINDS = tuple(model.model_fields["kind"].default for model in get_args(Event))
"""Every kind of event a table publishes, each on its own topic: the contract's one list is ``Event``."""
RETAINED_KINDS = frozenset({"shoe", "dealer"})
"""Event kinds that describe a current state, so a late subscriber needs the last one."""

STATE_TOPICS = ("status", "device", "health")


class Message(NamedTuple):
    """One event ready for the wire; what the outbox stores.

    A named tuple: immutable, as the frozen dataclass it was, for a quarter of the cost to
    build, which every event pays on the card's path.
    """

    seq: int
    topic: str
    payload: bytes
    qos: int = 1
    retain: bool = False


def encode(model: BaseModel) -> bytes:
    """Compact UTF-8 JSON exactly as the published schema describes it, serialised in pydantic-core.

    The model's serializer directly: the bytes ``model_dump_json`` would give, without its
    per-call option handling and str round trip, paid for every event
    (``bench/validator_throughput.py`` measures events built and encoded as sent).
    """
    return type(model).__pydantic_serializer__.to_json(model)


def encode_data(event: EventData) -> bytes:
    """An event the validator built, in the bytes ``encode`` gives its model.

    orjson writes compact UTF-8 JSON with the same escapes and the same float
    form as pydantic-core (``1e+16``, non-finite as null), and keys in the
    order they were built in (docs/performance.md has the measurements).
    """
    return orjson.dumps(event)


class Topics:
    """The topic tree of one table."""

    def __init__(self, prefix: str, table_id: str) -> None:
        if not table_id or any(c in table_id for c in "/+#\0"):
            raise ValueError(f"table id {table_id!r} cannot be a topic level")
        self.table_id = table_id
        self.base = f"{prefix}/{table_id}"
        self._event_topics = {kind: self.of(kind) for kind in EVENT_KINDS}

    def of(self, name: str) -> str:
        """A topic directly under the table: an event kind or a state topic."""
        return f"{self.base}/{name}"

    @property
    def status(self) -> str:
        return self.of("status")

    @property
    def device(self) -> str:
        return self.of("device")

    @property
    def health(self) -> str:
        return self.of("health")

    @property
    def requests(self) -> str:
        """Subscription filter for every request to this table."""
        return f"{self.base}/request/+"

    def request(self, command: str) -> str:
        return f"{self.base}/request/{command}"

    def response(self, command: str) -> str:
        return f"{self.base}/response/{command}"

    def command_of(self, request_topic: str) -> str | None:
        """The command named by a request topic, or None when the topic is not one of ours."""
        head = f"{self.base}/request/"
        if not request_topic.startswith(head):
            return None
        return request_topic[len(head) :]

    def message(self, event: EventData) -> Message:
        if event["table_id"] != self.table_id:
            raise ValueError(f"event of table {event['table_id']!r} cannot go to table {self.table_id!r}")
        kind = event["kind"]
        return Message(event["seq"], self._event_topics[kind], encode_data(event), 1, kind in RETAINED_KINDS)

    def messages(self, events: Iterable[EventData]) -> list[Message]:
        return [self.message(e) for e in events]
