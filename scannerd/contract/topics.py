"""Topic names and delivery options: the one place that maps an event to MQTT.

Every topic of a table lives under ``{prefix}/{table_id}``, so one ACL
pattern per table can confine it (``systemd/mosquitto-acl.example``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import NamedTuple, get_args

import orjson
from pydantic import BaseModel

from scannerd.contract.events import Event, EventData
from scannerd.contract.requests import Response

DEFAULT_PREFIX = "casino/tables"
"""Where the tables' topics live unless ``[mqtt] prefix`` says otherwise, for both ends of the contract."""
EVENT_KINDS = tuple(model.model_fields["kind"].default for model in get_args(Event))
"""Every kind of event a table publishes, each on its own topic: the contract's one list is ``Event``."""
RETAINED_KINDS = frozenset({"shoe", "dealer", "suspension"})
"""Event kinds that describe a current state, so a late subscriber needs the last one."""

STATE_TOPICS = ("status", "device", "health")

PIT = "pit"
"""The topic level under a request that names the pit user who sent it."""


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


encode_data: Callable[[EventData], bytes] = orjson.dumps
"""An event the validator built, in the bytes ``encode`` gives its model.

orjson writes compact UTF-8 JSON with the same escapes and the same float
form as pydantic-core (``1e+16``, non-finite as null), and keys in the
order they were built in (docs/performance.md has the measurements). orjson
itself, not a function around it: every event pays for a call, and the
replay of a day makes tens of thousands.
"""


def encode_response(response: Response) -> bytes:
    """An answer in the bytes ``encode`` gives it, written by orjson as an event is.

    A model's ``__dict__`` holds its fields in the model's order, and an answer's data is the
    table's state, plain data as the events are: the same bytes for a fifth of the cost, paid by
    every command a replay answers. What orjson will not take (an integer past 64 bits) goes to
    the model's own serializer, as does any other class than ``Response`` itself (a subclass may
    serialize otherwise); ``tests/contract/test_event_data.py`` pins what this relies on.
    """
    if type(response) is not Response:
        return encode(response)
    try:
        return orjson.dumps(response.__dict__)
    except orjson.JSONEncodeError:
        return encode(response)


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
    def requests(self) -> tuple[str, str]:
        """Subscription filters for every request to this table: the game server's and the pits'.

        Two filters, not ``request/#``: a broker whose ACL still grants only the first (set up
        before pits had topics of their own) refuses the second alone, and the game server's
        requests keep coming.
        """
        return f"{self.base}/request/+", f"{self.base}/request/+/{PIT}/+"

    def request(self, command: str, pit_user: str | None = None) -> str:
        """Where ``command`` is sent: the game server's topic, or ``pit_user``'s own.

        A pit sends as the broker user it logged in as, on a topic naming that user; the broker's
        ACL (``pattern write .../request/+/pit/%u``) lets no one else publish there, so the table
        records the name the topic gives as who acted.
        """
        if pit_user is None:
            return f"{self.base}/request/{command}"
        return f"{self.base}/request/{command}/{PIT}/{pit_user}"

    def response(self, command: str) -> str:
        return f"{self.base}/response/{command}"

    def command_of(self, request_topic: str) -> tuple[str, str | None] | None:
        """The command a request topic names and the pit user it names, if any; None when the topic
        is not one of ours."""
        head = f"{self.base}/request/"
        if not request_topic.startswith(head):
            return None
        command, *pit = request_topic[len(head) :].split("/")
        if not pit:
            return command, None
        if len(pit) == 2 and pit[0] == PIT and pit[1]:
            return command, pit[1]
        return None

    def event_topic(self, event: EventData) -> str:
        """Where ``event`` goes: its kind's topic, and never another table's event under this one."""
        if event["table_id"] != self.table_id:
            raise ValueError(f"event of table {event['table_id']!r} cannot go to table {self.table_id!r}")
        return self._event_topics[event["kind"]]

    def message(self, event: EventData) -> Message:
        topic = self.event_topic(event)
        return Message(event["seq"], topic, encode_data(event), 1, event["kind"] in RETAINED_KINDS)

    def messages(self, events: Iterable[EventData]) -> list[Message]:
        return [self.message(e) for e in events]
