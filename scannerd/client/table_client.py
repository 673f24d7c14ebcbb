"""The game server's side of the MQTT contract (``docs/mqtt.md``), as one client object.

What ``docs/mqtt.md`` asks of a consumer, done once: a persistent MQTT 5
session under a fixed client id; events parsed into the contract's models;
per table, every event handed to the caller once, in ``seq`` order, with the
high-water mark in SQLite (:mod:`scannerd.client.marks`) committed with
whatever the caller's handler wrote, before the PUBACK; a gap resynchronised
with ``get_state`` and reported; requests matched to their responses by
transaction id; each table's availability (status, device) as state.

Anyone the broker lets write a table's topics can publish an event under its
name. So a ``seq`` the client cannot check against the one before it (a
table's first event, one past a gap) is only taken once the table's own
``get_state`` answer says it has published that far; one beyond is refused
as forged. A table that fails (its handler, its mark) waits on its own: the
other tables' events go on.

Nothing a broker delivers may stop delivery: a message that is not a
table's (a topic level no table id can be, a payload that is no event) is
dropped, logged once and counted (:meth:`TableClient.health`); a callback
that fails is tried again later for its own table (or connection) alone; and
should the delivery thread fail anyway, it is reported and started again.

Threads: paho's network thread only sorts messages and answers responses;
the caller's callbacks all run, one at a time (each table's events in seq order), on the
client's own delivery thread. A handler may therefore call :meth:`request`
(the answer comes in on the network thread) but should not dawdle: while it
runs, no other event is delivered.
"""

from __future__ import annotations

import itertools
import json
import math
import queue
import sqlite3
import threading
import time
import uuid
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any, TypeVar, assert_never

import paho.mqtt.client as mqtt
import structlog
from paho.mqtt.enums import CallbackAPIVersion
from paho.mqtt.packettypes import PacketTypes
from paho.mqtt.properties import Properties
from paho.mqtt.subscribeoptions import SubscribeOptions

from scannerd.client.contract import (
    Availability,
    parse_device,
    parse_event,
    parse_health,
    parse_response,
    parse_status,
)
from scannerd.client.marks import Marks
from scannerd.contract.events import Event
from scannerd.contract.idents import check_table_id
from scannerd.contract.requests import Response
from scannerd.contract.topics import DEFAULT_PREFIX, EVENT_KINDS, Topics
from scannerd.link.broker_ring import BrokerRing
from scannerd.link.mqtt_settings import MqttSettings, MqttVersion

log = structlog.get_logger(__name__)

LOGIN_REFUSALS = frozenset(
    {"Bad user name or password", "Not authorized", "Banned", "Bad authentication method"}
)
"""The broker's answers that name who is connecting as the fault (MQTT 3.1.1 and 5 alike), not its load."""
PROTOCOL_REFUSAL = "Unsupported protocol version"
"""The broker's answer to a protocol version it does not speak (paho words MQTT 3.1.1's code 1 so too)."""


class BrokerRefused(ConnectionError):
    """The broker answered, and will not have this connection as it is asked for: retrying it cannot help.

    A server retries a refused connection like any other, with a log line each time: right for
    one that must come back once its settings or its broker are put right. A person
    (``scannerd pit``, ``scannerd watch``: ``attended=True``) wants to be told once, with the
    broker named, and to get the prompt back.
    """


class LoginRefused(BrokerRefused):
    """The broker will not have this user (a wrong password, say)."""


class ProtocolRefused(BrokerRefused):
    """The broker does not speak the MQTT version asked for (``version``: ``5`` or ``3.1.1``)."""

    def __init__(self, message: str, version: MqttVersion) -> None:
        super().__init__(message)
        self.version = version


SESSION_EXPIRY_S = 7 * 24 * 3600
"""How long the broker keeps queuing for a consumer that is away, as the tables' own default."""
HOLD_S = 5.0
"""How long an event that came early waits for those before it, before they count as a gap.

The table sends in order, but a broker may not: Mosquitto 2.0 was seen to swap two messages for a
consumer catching up on a resumed session. In a share group the events before it may also be with
another worker.
"""
HOLD_POLL_S = 0.01
GROUP_FIRST_S = 1.0
"""With a share group, how long a new table's events are collected before the lowest counts as its first."""
RETRY_S = 1.0
"""After a handler raised, the same event is tried again this much later (it is never skipped)."""
VOUCH_TIMEOUT_S = 5.0
"""How long a table has to answer the ``get_state`` that vouches for an event; then it is asked again."""
RECEIVE_MAXIMUM = 65535
"""MQTT 5: unacknowledged messages the broker may send us (the most the protocol allows).

Events wait unacknowledged while they are held (early, their table failing, a table's answer
awaited). With the broker's own window (Mosquitto: 20) a few such events stopped everything else,
other tables' events and the very answer they waited for."""

TOPIC_SHOWN = 200
"""A dropped message's topic is logged up to this many characters (a level may be 64 KiB of junk)."""

_T = TypeVar("_T")

EventHandler = Callable[[Event, sqlite3.Connection], None]
GapHandler = Callable[["Gap"], None]
ForgedHandler = Callable[["Forged"], None]
AvailabilityHandler = Callable[[str, Availability], None]
ConnectionHandler = Callable[[bool], None]
RetainedHandler = Callable[[Event], None]


class RequestTimeout(TimeoutError):
    """No response to a request came within its timeout; the table may or may not have run it."""


@dataclass(frozen=True, slots=True)
class Gap:
    """Events ``expected`` to ``received - 1`` of a table never arrived.

    ``state`` is the table's ``get_state`` answer (its ``data``), asked after the event
    ``received`` came: its ``seq`` is at least ``received``, which is how the event is known to be
    the table's own (empty for a client that may not ask: ``ask_state=False``). The event
    ``received`` is delivered right after the gap is reported.
    """

    table_id: str
    expected: int
    received: int
    state: dict[str, Any]


@dataclass(frozen=True, slots=True)
class Forged:
    """An event under the table's name with a ``seq`` beyond the last the table says it published.

    Not delivered, and the table's mark stays where it was: ``published`` is the ``seq`` of the
    table's ``get_state`` answer, asked after ``event`` came.
    """

    table_id: str
    event: Event
    published: int


@dataclass(slots=True)
class _Vouch:
    """A table's ``get_state``, asked to vouch for events it cannot be checked against: the last answer."""

    transaction: str | None = None  # the request waiting for its answer
    asked: float = 0.0  # monotonic time it was sent
    answered: float = -1.0  # when the request last answered was sent: it speaks for events received before
    state: dict[str, Any] = field(default_factory=dict)
    published: int | None = None  # the answer's seq
    unanswered: int = 0

    def published_for(self, item: _Inbound) -> int | None:
        """The table's last published ``seq``, from an answer asked after ``item`` came; None if none is."""
        return self.published if item.received <= self.answered else None


@dataclass(slots=True)
class _Attempts:
    """The caller's callback for what is in front of a queue: tried again after it fails, never skipped."""

    retry_at: float = 0.0  # after a failure, nothing of this queue is tried before then
    failures: int = 0  # of what is in front, so far

    def ready(self, now: float) -> bool:
        return now >= self.retry_at

    def run(self, attempt: Callable[[], _T], key: str, now: float) -> tuple[bool, _T | None]:
        """``(True, attempt())``, or ``(False, None)`` when it raised: the queue waits ``RETRY_S``.

        Only this queue waits: the other tables' go on meanwhile.
        """
        try:
            result = attempt()
        except Exception:
            self.failures += 1
            if self.failures == 1:  # once with the traceback; the count when it goes through
                log.exception("handler failed; trying again until it succeeds", table_id=key)
            self.retry_at = now + RETRY_S
            return False, None
        if self.failures:
            log.warning("handler succeeded after failing", table_id=key, failures=self.failures)
            self.failures = 0
        return True, result


@dataclass(slots=True)
class _Held:
    """A table's events waiting their turn: since when the table has made no progress, and why."""

    since: float
    items: list[_Inbound] = field(default_factory=list)
    attempts: _Attempts = field(default_factory=_Attempts)
    gap_told: int | None = None  # the seq whose gap the caller has been told of
    vouch: _Vouch = field(default_factory=_Vouch)


@dataclass(slots=True)
class _Notices:
    """What a table (or, under ``""``, the connection) has to tell the caller apart from its events."""

    waiting: deque[Callable[[], None]] = field(default_factory=deque)
    attempts: _Attempts = field(default_factory=_Attempts)


@dataclass(frozen=True, slots=True)
class ClientHealth:
    """How the client itself fares: what it dropped, and how often its delivery thread had to restart."""

    ignored: dict[str, int]  # each kind of message dropped, by reason, since start
    delivery_restarts: int
    last_failure: str | None  # the failure that made the last restart, in one line


@dataclass(frozen=True, slots=True)
class _Inbound:
    """One message for the delivery thread: an event to deliver, or availability to report."""

    table_id: str
    mid: int
    connection: int  # which connection it came on: a PUBACK means something only on that one
    event: Event | None = None
    availability: Availability | None = None
    retained: bool = False  # the event is the broker's retained copy, sent because we subscribed
    received: float = field(default_factory=time.monotonic)


@dataclass(frozen=True, slots=True)
class _Connection:
    """A connection was made (``up``) or lost: for ``on_connection``, in turn with the messages."""

    up: bool


@dataclass(frozen=True, slots=True)
class _HealthChanged:
    """A new kind of message was dropped, or the delivery restarted: for ``on_health``, in turn."""


@dataclass(frozen=True, slots=True)
class _Stop:
    """The client is stopping: the delivery thread ends."""


_ClientMessage = _Inbound | _Connection | _HealthChanged | _Stop
"""Put by paho's network thread and ``stop``; only the delivery thread takes them."""


class TableClient:
    """A game server's connection to the tables under ``prefix``.

    ``on_event(event, db)`` is called for every new event, in ``seq`` order
    per table, inside a transaction of the marks database ``db``: write what
    the event means to you through ``db`` and it commits together with the
    mark, so it happens exactly once even if the process dies at any point.
    Effects elsewhere (another database, a message) happen at least once: a
    crash between your handler returning and the commit repeats the event.

    ``tables`` limits the client to some tables (default: every table).
    ``share_group`` makes this client one worker of an MQTT 5 shared
    subscription: the broker hands each event to one worker of the group.
    The workers must share the marks file (one host), which keeps each
    table's events in order across them.

    ``on_connection(connected)`` is told each connection made and lost (a
    screen that shows whether it is live). ``on_retained(event)`` is handed a
    table's retained event (its ``shoe``) as the broker sends it at subscribe
    time; without it that event is not sent at all (it is old news, not the
    stream's next event).

    ``on_forged(forged)`` is told of an event refused because its table says it never
    published that far (:class:`Forged`). ``brokers`` is a broker cluster in order of
    preference (``host`` and ``port`` are then the first): the client connects to the first
    that answers and moves on to the next when it fails, as a table does.

    ``as_pit`` sends requests on the pit's own topics, which name the broker user
    (``username``, or ``pit`` on a broker without logins): the table records that user as
    who acted (docs/mqtt.md, "Who acted").

    ``ask_state=False`` is for a consumer that may not send requests (an ACL forbids them): an
    event nothing can check is never waited on for the table's word. A table's first event is
    taken at once and one past a gap once ``HOLD_S`` has passed (the gap told with no state), on
    the broker's word alone: only an ACL that lets nobody else write the table's topics keeps a
    forged one out. ``on_health(health)`` hears of a new kind of message dropped and of each
    restart of the delivery thread (:meth:`health`).
    """

    def __init__(
        self,
        host: str,
        port: int = 1883,
        *,
        client_id: str,
        marks: Path | str,
        on_event: EventHandler,
        on_gap: GapHandler | None = None,
        on_forged: ForgedHandler | None = None,
        on_availability: AvailabilityHandler | None = None,
        on_connection: ConnectionHandler | None = None,
        on_retained: RetainedHandler | None = None,
        prefix: str = DEFAULT_PREFIX,
        tables: Sequence[str] | None = None,
        share_group: str | None = None,
        session_expiry_s: int = SESSION_EXPIRY_S,
        protocol: MqttVersion = "5",
        username: str | None = None,
        password: str | None = None,
        tls: bool = False,
        tls_ca: str | None = None,
        tls_cert: str | None = None,
        tls_key: str | None = None,
        keepalive: int = 30,
        attended: bool = False,
        brokers: Sequence[tuple[str, int]] = (),
        as_pit: bool = False,
        ask_state: bool = True,
        on_health: Callable[[ClientHealth], None] | None = None,
    ) -> None:
        self.prefix = prefix
        self.pit_user = (username or "pit") if as_pit else None
        self._brokers = BrokerRing(list(brokers) or [(host, port)])
        self.host, self.port = self._brokers.current
        self.username = username
        # A person's tool (pit, watch) stops at a refused login or version; a server retries (``refused``).
        self.attended = attended
        self.refusal: BrokerRefused | None = None
        self._last_refusal: ConnectionError | None = None  # the broker's last "no", for start's error
        self.refused = threading.Event()
        self.client_id = client_id
        self.tables = list(tables) if tables else ["+"]
        self.share_group = share_group
        self.session_expiry_s = session_expiry_s
        self.protocol = protocol
        self.mqtt5 = protocol == "5"
        if share_group and not self.mqtt5:
            raise ValueError("a share group needs MQTT 5 (protocol '5')")
        self.keepalive = keepalive
        self._on_event, self._on_gap, self._on_forged = on_event, on_gap, on_forged
        self._on_availability, self._on_connection = on_availability, on_connection
        self._on_retained, self._on_health = on_retained, on_health
        self.ask_state = ask_state
        self._marks = Marks(marks)
        self._keep_state(client_id)
        self._client = self._mqtt_client(
            password, (tls or bool(tls_ca or tls_cert), tls_ca, tls_cert, tls_key)
        )

    def _mqtt_client(
        self, password: str | None, tls: tuple[bool, str | None, str | None, str | None]
    ) -> mqtt.Client:
        """paho's client, logged in as ``username``, over TLS when asked (the system's CAs unless
        one is named; the host name checked), its callbacks ours."""
        client = mqtt.Client(
            CallbackAPIVersion.VERSION2,
            client_id=self.client_id,
            protocol=mqtt.MQTTv5 if self.mqtt5 else mqtt.MQTTv311,
            clean_session=None if self.mqtt5 else self.session_expiry_s == 0,
            manual_ack=True,
        )
        if self.username:
            client.username_pw_set(self.username, password)
        use_tls, ca, cert, key = tls
        if use_tls:
            client.tls_set(ca_certs=ca, certfile=cert, keyfile=key)
        client.reconnect_delay_set(1, 30)
        client.on_connect = self._on_connect
        client.on_subscribe = self._on_subscribe
        client.on_message = self._on_message
        client.on_disconnect = self._on_disconnect
        client.on_connect_fail = self._on_connect_fail
        return client

    def _keep_state(self, client_id: str) -> None:
        """What the threads share: what came and waits, what was asked, what was dropped."""
        self._availability: dict[str, Availability] = {}
        self._told: set[tuple[str, str]] = set()  # (table, status/device) told on this connection
        self._inbox: queue.Queue[_ClientMessage] = queue.Queue()
        self._held: dict[str, _Held] = {}  # table -> events waiting their turn (delivery thread only)
        self._notices: dict[str, _Notices] = {}  # table ("" for the connection) -> what it must tell
        self._waiting: set[str] = set()  # transactions of requests still waiting for their answer
        self._responses: dict[str, Response] = {}
        self._cond = threading.Condition()
        self._subscribed = threading.Event()
        self._stopping = threading.Event()
        self._transactions = itertools.count(1)
        # Unique per run: a response to a request of an earlier run must not answer one of this run.
        self._tx_prefix = f"{client_id}-{uuid.uuid4().hex[:8]}"
        self._complaints: dict[str, int] = {}
        self._restarts = 0
        self._last_failure: str | None = None
        self._connection = 0
        self._delivery = threading.Thread(target=self._deliver_supervised, name="table-client", daemon=True)

    @classmethod
    def from_settings(cls, settings: MqttSettings, **kwargs: Any) -> TableClient:
        """A client that reaches the broker as an ``[mqtt]`` section says (the tables' own format).

        ``kwargs`` are the other arguments (``client_id``, ``marks``, ``on_event``, ...). The
        password is read from ``password_file`` now; OSError if it cannot be.
        """
        password = settings.password()
        brokers = settings.endpoints()
        return cls(
            *brokers[0],
            brokers=brokers,
            prefix=settings.prefix,
            protocol=settings.protocol,
            username=settings.username,
            password=password.get_secret_value() if password else None,
            tls=settings.tls,
            tls_ca=str(settings.tls_ca) if settings.tls_ca else None,
            tls_cert=str(settings.tls_cert) if settings.tls_cert else None,
            tls_key=str(settings.tls_key) if settings.tls_key else None,
            keepalive=settings.keepalive,
            **{"session_expiry_s": settings.session_expiry_s, **kwargs},
        )

    # ------------------------------------------------------------------ control

    def start(self, timeout: float | None = 10.0) -> None:
        """Connect and subscribe; raises ConnectionError when no broker has taken the subscription in time.

        The error says what the broker last answered, if it answered at all: a broker that refuses
        the login or the protocol version is there, and waiting longer will not change its mind.
        With ``timeout=None`` it returns at once and keeps trying in the background (a screen that
        says it is disconnected until the broker is there, rather than giving up); a refusal then
        never raises, however soon it comes: the caller reads it from ``refusal``.
        """
        self._connect_to(*self._brokers.current)
        self._delivery.start()
        self._client.loop_start()
        if timeout is not None and not self._subscribed.wait(timeout):
            self.stop()
            if self._last_refusal is not None:
                raise self._last_refusal
            raise ConnectionError(f"no MQTT broker answered at {self._brokers} within {timeout} s")
        if timeout is not None and self.refusal is not None:  # unwaited, a refusal is only ``refusal``
            self.stop()
            raise self.refusal

    def _connect_to(self, host: str, port: int) -> None:
        """Where paho connects next: now, or at its next retry when called from its own callbacks."""
        self.host, self.port = host, port
        if self.mqtt5:
            props = Properties(PacketTypes.CONNECT)
            props.SessionExpiryInterval = self.session_expiry_s
            props.ReceiveMaximum = RECEIVE_MAXIMUM
            self._client.connect_async(
                host, port, self.keepalive, clean_start=self.session_expiry_s == 0, properties=props
            )
        else:  # the session lasts as long as the broker keeps it (clean_session=false)
            self._client.connect_async(host, port, self.keepalive)

    def stop(self) -> None:
        """Disconnect; events received and not yet delivered stay with the broker (never acknowledged)."""
        self._stopping.set()
        self._inbox.put(_Stop())
        self._client.disconnect()
        self._client.loop_stop()
        if self._delivery.is_alive():
            self._delivery.join(10)
        for what, count in self._complaints.items():
            if count > 1:
                log.warning("messages ignored", reason=what, count=count)
        self._marks.close()

    # ------------------------------------------------------------------ what the caller asks

    def request(
        self, table_id: str, command: str, args: dict[str, Any] | None = None, timeout: float = 5.0
    ) -> Response:
        """Send ``command`` to the table and wait for its answer (``status`` ``ok`` or ``error``).

        Raises :class:`RequestTimeout` when none comes in ``timeout`` seconds. Do
        not simply repeat a command that timed out: ask ``get_state`` (docs/mqtt.md).
        With MQTT 5 the request expires with its timeout: a table away now does not run
        it when it comes back, whenever that is.
        """
        transaction = self._send(table_id, command, args, timeout)
        try:
            with self._cond:
                if not self._cond.wait_for(lambda: transaction in self._responses, timeout):
                    raise RequestTimeout(f"no response from table {table_id} to {command} within {timeout} s")
                return self._responses.pop(transaction)
        finally:
            self._forget(transaction)

    def _send(self, table_id: str, command: str, args: dict[str, Any] | None, timeout: float) -> str:
        """Publish a request that expires with ``timeout``; its transaction, whose answer is kept."""
        # ValueError for an id that is no topic level
        topic = Topics(self.prefix, table_id).request(command, self.pit_user)
        transaction = f"{self._tx_prefix}-{next(self._transactions)}"
        body = {"transaction": transaction, **(args or {})}
        props = None
        if self.mqtt5:
            props = Properties(PacketTypes.PUBLISH)
            props.MessageExpiryInterval = max(1, math.ceil(timeout))  # whole seconds; 0 would mean never
        with self._cond:
            self._waiting.add(transaction)
        self._client.publish(topic, json.dumps(body), qos=1, properties=props)
        return transaction

    def _forget(self, transaction: str) -> None:
        with self._cond:
            self._waiting.discard(transaction)
            self._responses.pop(transaction, None)

    def availability(self, table_id: str) -> Availability:
        """The table's last status and device (None where nothing was heard yet)."""
        with self._cond:
            return self._availability.get(table_id, Availability())

    def known_tables(self) -> dict[str, Availability]:
        """Every table heard from, with its availability."""
        with self._cond:
            return dict(self._availability)

    def skip_to(self, table_id: str, seq: int) -> None:
        """Count the table's events up to ``seq`` as handled: the caller took a state that has them.

        For a consumer that loads a ``get_state`` answer (``seq`` is the last event in it) after
        missing events, as one without a lasting session does on reconnecting: the next event it
        needs is ``seq + 1``, delivered at once, rather than the missed ones, waited for as a gap.
        A mark already above ``seq`` stays. Not from inside ``on_event``, whose transaction is open.
        """
        with self._marks.transaction() as db:
            high = self._marks.get(table_id)
            if high is None or seq > high:
                self._marks.set(db, table_id, seq)

    def forget(self, table_id: str) -> None:
        """The caller keeps nothing of the table any more: its next event counts as its first.

        For a consumer without a lasting session that may not ask for the state
        (``ask_state=False``): what it missed while away is gone, and the next event is shown as it
        comes rather than waited on as a gap. A client that may ask still checks it with the table.
        Not from inside ``on_event``.
        """
        with self._marks.transaction() as db:
            self._marks.forget(db, table_id)

    def health(self) -> ClientHealth:
        """What the client dropped and how often its delivery restarted, for a screen or a metric."""
        return ClientHealth(dict(self._complaints), self._restarts, self._last_failure)

    def high_water(self, table_id: str) -> int | None:
        """The highest seq delivered for the table (None: none yet)."""
        return self._marks.get(table_id)

    @property
    def connected(self) -> bool:
        return self._client.is_connected()

    # ------------------------------------------------------------------ paho's network thread

    def _filters(self) -> list[tuple[str, Any]]:
        # A table's events come through ONE filter, ``{base}/+`` (its event topics and its state
        # topics; requests and responses are a level deeper): a broker cluster may deliver each
        # filter of a subscription on its own, and a round could then overtake its card
        # (docs/mqtt.md). Retained messages are sent at subscribe time, since status and device
        # are wanted at once; a retained event is old news, not the stream's next event, and its
        # retain flag gives it away: it is skipped, or handed to ``on_retained`` apart from the
        # stream. A share group splits the events between its workers, and a broker sends no
        # retained message to a shared subscription: each worker also subscribes to status and
        # device on its own, and to its answers.
        options: Any = SubscribeOptions(qos=1) if self.mqtt5 else 1
        # Answers come at QoS 0: the broker sends them at once, outside its window of unacknowledged
        # messages, which the events held for the very answer they wait for could fill.
        answers: Any = SubscribeOptions(qos=0) if self.mqtt5 else 0
        out: list[tuple[str, Any]] = []
        for table in self.tables:
            base = f"{self.prefix}/{table}"
            if self.share_group:
                out += [(f"$share/{self.share_group}/{base}/+", options)]
                out += [(f"{base}/status", options), (f"{base}/device", options)]
            else:
                out += [(f"{base}/+", options)]
            out += [(f"{base}/response/+", answers)]
        return out

    def _on_connect(self, client: mqtt.Client, _ud: Any, flags: Any, reason: Any, _props: Any) -> None:
        if reason.is_failure:
            refusal = self._last_refusal = self._refusal(str(reason))
            if self.attended and isinstance(refusal, BrokerRefused):
                self.refusal = refusal
                client.disconnect()  # no retry: the same connection would be refused again
                self.refused.set()
                self._subscribed.set()  # wakes a start() waiting for a subscription that will never come
                return
            log.error("broker refused the connection", reason=str(reason), client_id=self.client_id)
            return
        log.info("connected", broker=f"{self.host}:{self.port}", session_present=flags.session_present)
        # Messages still queued from the last connection are delivered but not acknowledged: the
        # broker sends them again on this one (they are then repeats), and their packet ids may
        # already name other messages here.
        self._connection += 1
        with self._cond:
            self._told.clear()
        if self._on_connection is not None:
            self._inbox.put(_Connection(True))  # told before anything that comes on this connection
        client.subscribe(self._filters())

    def _refusal(self, reason: str) -> ConnectionError:
        """The broker's refusal in one line naming it, and what was refused where that is known."""
        broker = f"broker {self.host}:{self.port}"
        if reason in LOGIN_REFUSALS:
            who = f"user {self.username!r}" if self.username else "a login with no user name"
            return LoginRefused(f"{broker} refused {who}: {reason}")
        if reason == PROTOCOL_REFUSAL:
            return ProtocolRefused(f"{broker} refused MQTT {self.protocol}: {reason}", self.protocol)
        return ConnectionError(f"{broker} refused the connection: {reason}")

    def _on_disconnect(self, _client: mqtt.Client, _ud: Any, _flags: Any, _reason: Any, _props: Any) -> None:
        if self._on_connection is not None:
            self._inbox.put(_Connection(False))
        self._next_broker()

    def _on_connect_fail(self, _client: mqtt.Client, _ud: Any) -> None:
        self._next_broker()

    def _next_broker(self) -> None:
        """After a failure, the cluster's next broker in order: paho's next attempt goes there.

        The session lives in the cluster, not in one node, and whatever was not acknowledged
        comes again, so a move loses nothing. The client stays on a broker that works.
        """
        following = None if self._stopping.is_set() else self._brokers.advance()
        if following is None:
            return
        self._connect_to(*following)
        log.info("trying the next broker", broker=f"{self.host}:{self.port}")

    def _on_subscribe(self, _client: mqtt.Client, _ud: Any, _mid: int, codes: list[Any], _props: Any) -> None:
        refused = [str(c) for c in codes if c.is_failure]
        if refused:
            log.error("broker refused subscriptions", reasons=refused)
        self._subscribed.set()

    def _on_message(self, client: mqtt.Client, _ud: Any, msg: mqtt.MQTTMessage) -> None:
        try:
            handed_over = self._sort(msg)
        except Exception as exc:  # nothing a broker delivers may stop paho's thread
            self._complain(f"message that could not be read ({type(exc).__name__})", repr(msg._topic))
            handed_over = False
        if not handed_over:
            client.ack(msg.mid, msg.qos)

    def _sort(self, msg: mqtt.MQTTMessage) -> bool:
        """Hand a table's message to the delivery thread (True: it acknowledges it), or take it here."""
        levels = msg.topic[len(self.prefix) + 1 :].split("/") if msg.topic.startswith(self.prefix) else []
        table_id, name = (levels[0], "/".join(levels[1:])) if len(levels) > 1 else ("", "")
        if not _is_table_id(table_id):
            # No table publishes there: an empty level, a wildcard, a NUL, one too long, spaces.
            self._complain("not a table's topic", msg.topic)
        elif name in EVENT_KINDS and (not msg.retain or self._on_retained is not None):
            event = parse_event(name, msg.payload)
            if event is not None and event.table_id == table_id:
                item = _Inbound(table_id, msg.mid, self._connection, event=event, retained=msg.retain)
                self._inbox.put(item)
                return True  # acknowledged by the delivery thread: the mark committed, or the caller told
            self._complain(f"not a {name} event of table {table_id}", msg.topic)
        elif name in ("status", "device", "health"):
            new, changed = self._note_availability(table_id, name, msg.payload)
            if new is None:
                self._complain(f"not a {name} payload", msg.topic)
            elif changed and self._on_availability is not None:
                self._inbox.put(_Inbound(table_id, msg.mid, self._connection, availability=new))
                return True  # acknowledged once the caller has heard of it
        elif name.startswith("response/"):
            response = parse_response(msg.payload)
            with self._cond:
                if response is not None and response.transaction in self._waiting:
                    self._responses[str(response.transaction)] = response
                    self._cond.notify_all()
        return False

    def _note_availability(
        self, table_id: str, name: str, payload: bytes | bytearray
    ) -> tuple[Availability | None, bool]:
        """The table's availability after ``payload``, and whether to tell the caller.

        The table restates its status and device every health interval: a caller hears of a
        change, and of the first of each on a new connection (what it missed while away). Its
        health changes with every interval (its figures and time), and is told each time.
        """
        with self._cond:
            old = self._availability.get(table_id, Availability())
            if name == "status":
                status = parse_status(payload)
                new = None if status is None else old.with_status(status)
            elif name == "health":
                health = parse_health(payload)
                new = None if health is None else old.with_health(health)
            else:
                device = parse_device(payload)
                new = None if device is None else old.with_device(device)
            if new is None:
                return None, False
            self._availability[table_id] = new
            first = (table_id, name) not in self._told
            self._told.add((table_id, name))
            return new, first or new != old

    def _complain(self, what: str, topic: str, **details: Any) -> None:
        """Log a kind of bad message once; the rest are counted and the count logged at stop."""
        count = self._complaints[what] = self._complaints.get(what, 0) + 1
        if count == 1:
            shown = (
                topic if len(topic) <= TOPIC_SHOWN else topic[:TOPIC_SHOWN] + f"... ({len(topic)} characters)"
            )
            log.warning("message ignored", reason=what, topic=shown, **details)
            if self._on_health is not None:
                self._inbox.put(_HealthChanged())  # told on the delivery thread, as every callback is

    # ------------------------------------------------------------------ the delivery thread

    def _deliver_supervised(self) -> None:
        """The delivery thread: whatever ends its loop is reported, and the loop starts again.

        Nothing known ends it (each callback's failure is its own table's to wait on), so what
        does is a fault of its own or a callback that raised past ``Exception`` (``SystemExit``,
        which would otherwise end the thread in silence): the caller would hear of nothing again.
        """
        while not self._stopping.is_set():
            try:
                self._deliver_forever()
            except BaseException as exc:
                self._restarts += 1
                self._last_failure = f"{type(exc).__name__}: {exc}"[:200]
                if self._restarts == 1:  # once with the traceback; later ones counted
                    log.exception("delivery failed: restarting it", restarts=self._restarts)
                else:
                    log.error(
                        "delivery failed again: restarting it",
                        restarts=self._restarts,
                        error=self._last_failure,
                    )
                self._inbox.put(_HealthChanged())
                self._stopping.wait(RETRY_S)
            else:
                return

    def _deliver_forever(self) -> None:
        while not self._stopping.is_set():
            item: _ClientMessage | None
            waiting = self._held or self._notices
            try:
                item = self._inbox.get(timeout=HOLD_POLL_S if waiting else None)
            except queue.Empty:
                item = None  # nothing for a while: time to look at held events again
            match item:
                case _Stop():
                    return
                case _Connection(up):
                    self._notify("", partial(self._tell_connection, up))
                case _HealthChanged():
                    self._notify("", self._tell_health)
                case _Inbound():
                    self._take(item)
                case None:
                    pass
                case _:
                    assert_never(item)
            self._deliver_notices()
            self._deliver_held()

    def _take(self, item: _Inbound) -> None:
        """Tell a message that is not part of the stream; queue an event behind its table's others."""
        if item.event is None or item.retained:
            self._notify(item.table_id, partial(self._tell, item))
            return
        self._held.setdefault(item.table_id, _Held(time.monotonic())).items.append(item)

    def _notify(self, key: str, tell: Callable[[], None]) -> None:
        """Queue ``tell`` behind what the table (``""``: the connection) has still to tell."""
        self._notices.setdefault(key, _Notices()).waiting.append(tell)

    def _deliver_notices(self) -> None:
        """Each table's notices in order, as far as each goes; one whose callback fails holds up no other."""
        now = time.monotonic()
        for key in list(self._notices):
            notices = self._notices[key]
            while notices.waiting and notices.attempts.ready(now) and not self._stopping.is_set():
                done, _ = notices.attempts.run(notices.waiting[0], key, now)
                if not done:
                    break
                notices.waiting.popleft()
            if not notices.waiting:
                del self._notices[key]

    def _tell(self, item: _Inbound) -> None:
        """Hand the caller a message that is not part of the stream (availability, a retained event)."""
        if item.availability is not None and self._on_availability is not None:
            self._on_availability(item.table_id, item.availability)
        if item.retained and item.event is not None and self._on_retained is not None:
            self._on_retained(item.event)
        self._ack(item)

    def _tell_connection(self, connected: bool) -> None:
        if self._on_connection is not None:
            self._on_connection(connected)

    def _tell_health(self) -> None:
        if self._on_health is not None:
            self._on_health(self.health())

    def _deliver_held(self) -> None:
        """Each table's waiting events, in seq order, as far as each can go; one table never stops another."""
        for table_id in list(self._held):
            held = self._held[table_id]
            self._collect_answer(table_id, held.vouch)
            held.items.sort(key=lambda i: i.event.seq if i.event else 0)
            while held.items and not self._stopping.is_set() and self._step(table_id, held):
                pass
            if not held.items:
                del self._held[table_id]
                if held.vouch.transaction is not None:
                    self._forget(held.vouch.transaction)

    def _step(self, table_id: str, held: _Held) -> bool:
        """Deal with the table's first waiting event; False when it must wait (it stays in front)."""
        now = time.monotonic()
        if not held.attempts.ready(now):
            return False
        item = held.items[0]
        assert item.event is not None
        event = item.event
        overdue = now - held.since >= HOLD_S  # the events before it are not coming: a gap
        # With no one to ask, the broker's word: the first as it comes, one past a gap once overdue.
        published = held.vouch.published_for(item) if self.ask_state else event.seq

        def attempt() -> str:
            self._tell_gap(table_id, held, event.seq, overdue, published)
            return self._try(item, overdue, published)

        done, outcome = held.attempts.run(attempt, table_id, now)
        if not done or outcome == "early":
            return False
        if outcome == "unvouched":
            self._ask_to_vouch(table_id, held.vouch, now)
            return False
        if outcome == "forged":
            assert published is not None  # only the table's word makes an event forged
            self._refuse(Forged(table_id, event, published))
        else:
            held.since = now  # the table moved on: the rest get their own time
        held.items.pop(0)
        self._ack(item)
        return True

    def _try(self, item: _Inbound, force: bool, published: int | None) -> str:
        """``delivered``, ``repeat``, ``early`` (one before it has not been delivered yet),
        ``unvouched`` (the table must say it published this far first) or ``forged`` (it says not)."""
        event, table_id = item.event, item.table_id
        assert event is not None
        with self._marks.transaction() as db:
            high = self._marks.get(table_id)
            if high is not None and event.seq <= high:
                return "repeat"
            if high is not None and event.seq > high + 1 and not force:
                return "early"
            if high is None or event.seq > high + 1:  # nothing to check it against but the table's word
                if published is None:
                    return "unvouched"
                if event.seq > published:
                    return "forged"
            if high is None and self.share_group:
                high = self._marks.settle_first(db, table_id, event.seq, GROUP_FIRST_S)
                if high is None or (event.seq > high + 1 and not force):
                    return "early"  # the group has not agreed on the table's first event yet
                if event.seq <= high:
                    return "repeat"
            self._on_event(event, db)
            self._marks.set(db, table_id, event.seq)
            return "delivered"

    def _tell_gap(self, table_id: str, held: _Held, seq: int, overdue: bool, published: int | None) -> None:
        """Tell the caller of missing events once the table vouched for the event after them."""
        high = self._marks.get(table_id)
        if not overdue or published is None or high is None or not high + 1 < seq <= published:
            return
        if held.gap_told == seq:
            return  # told already; the event itself failed since and is being tried again
        log.error("events missing: resynchronised", table_id=table_id, expected=high + 1, received=seq)
        if self._on_gap is not None:
            self._on_gap(Gap(table_id, high + 1, seq, held.vouch.state))
        held.gap_told = seq

    def _ask_to_vouch(self, table_id: str, vouch: _Vouch, now: float) -> None:
        """Ask the table ``get_state`` for its events waiting on its word, unless an answer is on its way."""
        if vouch.transaction is not None:
            if now - vouch.asked < VOUCH_TIMEOUT_S:
                return
            self._forget(vouch.transaction)
            vouch.unanswered += 1
            if vouch.unanswered == 1:  # once; the count when it answers
                log.warning(
                    "table does not answer get_state; its events wait for its word", table_id=table_id
                )
        vouch.transaction = self._send(table_id, "get_state", None, VOUCH_TIMEOUT_S)
        vouch.asked = now

    def _collect_answer(self, table_id: str, vouch: _Vouch) -> None:
        """Take the table's answer to the ``get_state`` asked to vouch, if it has come."""
        if vouch.transaction is None:
            return
        with self._cond:
            response = self._responses.pop(vouch.transaction, None)
        if response is None:
            return
        published = response.data.get("seq") if response.status == "ok" and response.data else None
        if not isinstance(published, int) or isinstance(published, bool):
            return  # busy, or no state in it: asked again once the request has timed out
        self._forget(vouch.transaction)
        if vouch.unanswered:
            log.warning("table answers get_state again", table_id=table_id, unanswered=vouch.unanswered)
        vouch.transaction, vouch.answered, vouch.unanswered = None, vouch.asked, 0
        vouch.state, vouch.published = response.data or {}, published

    def _refuse(self, forged: Forged) -> None:
        """An event beyond what its table published: logged once (then counted) and told, never delivered."""
        self._complain(
            f"events of table {forged.table_id} beyond the last it published",
            f"{self.prefix}/{forged.table_id}/{forged.event.kind}",
            seq=forged.event.seq,
            published=forged.published,
        )
        if self._on_forged is None:
            return
        try:
            self._on_forged(forged)
        except Exception:
            log.exception("on_forged failed", table_id=forged.table_id)

    def _ack(self, item: _Inbound) -> None:
        # A message from an earlier connection comes again on this one; its packet id means nothing here.
        if item.connection == self._connection:
            self._client.ack(item.mid, 1)


def _is_table_id(level: str) -> bool:
    """Whether a topic level can be a table's: only then may anything of it reach the caller."""
    try:
        check_table_id(level)
    except ValueError:
        return False
    return True
