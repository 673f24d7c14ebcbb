"""The MQTT side of the daemon: events out of the outbox, requests in, status and health kept current.

Ordering is the point. The outbox is the only source of events: on every
(re)connection paho's own resend queue is dropped and sending starts again
from the oldest unacknowledged row, so the broker sees each event at least
once and never a newer event before an older one it has not acknowledged.
Consumers drop duplicates by ``seq`` (``docs/mqtt.md``).

Threads: paho's network thread runs the callbacks; they only post to the
pump's queue, because paho calls ``on_publish`` while holding its own message
lock and ``publish`` takes that lock. The pump thread resends, takes
acknowledgements and fills the window from the outbox. The thread that
wrote events to the outbox hands them over (``send``) and they go out at once
when the pump has nothing older to send (the common case on a live table): a
card then goes from the commit straight to paho, without waking another
thread or reading it back from disk. Writing, syncing and acknowledging the
shoe are the daemon's (``Daemon._store``); the publisher only sends. The
in-flight window and the send cursor are shared by the two under
``_send_lock``. Requests are run, and answered, by a thread of their own
(``scannerd.link.request_path``), never on paho's network thread, which must
keep writing events.
"""

from __future__ import annotations

import queue
import ssl
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, assert_never

import orjson
import paho.mqtt.client as mqtt
import structlog
from paho.mqtt.enums import CallbackAPIVersion
from paho.mqtt.packettypes import PacketTypes
from paho.mqtt.properties import Properties
from paho.mqtt.reasoncodes import ReasonCode
from paho.mqtt.subscribeoptions import SubscribeOptions

from scannerd import __version__
from scannerd.contract.payloads import (
    ArchiveHealth,
    ClockHealth,
    DevicePayload,
    DisplayHealth,
    HealthPayload,
    ReaderHealth,
    RecorderHealth,
    Software,
    StatusPayload,
)
from scannerd.contract.requests import Response
from scannerd.contract.table_state import SuspensionView
from scannerd.contract.topics import Message, Topics, encode, encode_response
from scannerd.link.broker_ring import BrokerRing
from scannerd.link.mqtt_link import LinkReport, failure_reason
from scannerd.link.mqtt_settings import MqttSettings
from scannerd.link.request_path import WINDOW as ANSWER_WINDOW
from scannerd.store.outbox import Outbox, Stored, Written

log = structlog.get_logger(__name__)

_STOP_TIMEOUT_S = 5.0
_RESERVED_SLOTS = 8


# ------------------------------------------------------------------ what the pump's inbox carries


@dataclass(frozen=True, slots=True)
class _Stop:
    """The publisher is stopping: the pump ends."""


@dataclass(frozen=True, slots=True)
class _New:
    """Rows wait in the outbox that nobody sent: ``send`` could not yet, or they were put there directly."""


@dataclass(frozen=True, slots=True)
class _Health:
    """Something the health topic shows changed: publish it now, not at the next interval."""


@dataclass(frozen=True, slots=True)
class _Up:
    """Connection ``gen`` is up and takes ``window`` unacknowledged events: send again from the oldest."""

    gen: int
    window: int


@dataclass(frozen=True, slots=True)
class _Down:
    """The connection went down; it only wakes the pump, which then sees nothing is live."""


@dataclass(frozen=True, slots=True)
class _Ack:
    """The broker answered message ``mid`` (an event, or status, health, a response)."""

    mid: int
    rc: ReasonCode


_PumpMessage = _Stop | _New | _Health | _Up | _Down | _Ack
"""Posted by paho's callbacks and the publisher's callers; only the pump takes them."""


COUNTS = ("published", "reconnects", "refused", "requests", "rejected_requests", "busy_requests", "errors")
"""What the health topic counts since start; a count of these names is all ``_count`` keeps."""


def _status_fields(
    version: str, table_id: str, software: Software | None, config_digest: str | None, staff_list: bool | None
) -> dict[str, Any]:
    """What every status says besides its state: what this start runs, in status and the will alike."""
    status: dict[str, Any] = {"version": version, "table_id": table_id}
    if software is not None:
        status |= {"software": software, "config_digest": config_digest}
    if staff_list is not None:
        status["staff_list"] = staff_list
    return status


@dataclass(slots=True)
class _PumpState:
    """What the pump keeps between its turns: its backoff, its health clock, the refusals said."""

    backoff: float
    next_health: float
    next_restate: float
    refusals: int = 0  # since the broker last took an event: said once, counted when it takes one


class Publisher:
    """One table's MQTT client."""

    def __init__(
        self,
        settings: MqttSettings,
        table_id: str,
        outbox: Outbox,
        *,
        version: str = __version__,
        clock: Callable[[], float] = time.time,
        environ: dict[str, str] | None = None,
        display: Callable[[], DisplayHealth | None] = lambda: None,
        reader: Callable[[], ReaderHealth | None] = lambda: None,
        recorder: Callable[[], RecorderHealth | None] = lambda: None,
        archive: Callable[[], ArchiveHealth | None] = lambda: None,
        clock_health: Callable[[], ClockHealth | None] = lambda: None,
        software: Software | None = None,
        config_digest: str | None = None,
        staff_list: bool | None = None,
        started_at: float | None = None,
    ) -> None:
        self.settings = settings
        self._started_at = started_at
        # Told of the events the broker acknowledged, on the pump's thread (the card latency metric).
        self.on_acked: Callable[[list[Message]], None] | None = None
        # The parts whose health the health topic carries, each asked as it is published.
        self._display, self._reader = display, reader
        self._recorder, self._archive, self._clock_health = recorder, archive, clock_health
        self.topics = Topics(settings.prefix, table_id)
        self.outbox = outbox
        self._take_request: Callable[[str, str | None, bytes, bool], None] | None = None
        self._clock = clock
        self._status = _status_fields(version, table_id, software, config_digest, staff_list)
        self._device: DevicePayload | None = None
        # Held while the device payload changes and while a new connection restates it, so the
        # retained topic always ends on the newest payload (at worst restated twice, never an older
        # one after a newer).
        self._device_lock = threading.Lock()
        # Held while status is said: once stop() has said "offline", no restatement says "online".
        self._status_lock = threading.Lock()
        self._said_offline = False
        self._suspended: SuspensionView | None = None  # what stopped the table, stated while online

        self._inbox: queue.SimpleQueue[_PumpMessage] = queue.SimpleQueue()
        self._send_lock = threading.Lock()
        # Guarded by _send_lock:
        self._live_gen = 0  # connection paho has up; 0 = none
        self._gen = 0
        self._send_gen = 0  # connection the pump has started sending on; 0 = none yet
        self._inflight: dict[int, Stored] = {}  # mid -> row
        self._cursor = 0  # id of the newest row sent on this connection
        self._window = settings.max_inflight
        self._paused_until = 0.0  # after a refusal, wait before resending
        self._idle = threading.Condition()
        self._pump_thread: threading.Thread | None = None
        self._connected = False
        self._counts_lock = threading.Lock()
        self._counts = dict.fromkeys(COUNTS, 0)
        self._stopping = False
        self._brokers = BrokerRing(settings.endpoints())  # paho's network thread moves it on
        self._link = LinkReport(*self._brokers.current, settings.tls)
        self._client = self._make_client(environ)

    def _make_client(self, environ: dict[str, str] | None) -> mqtt.Client:
        s = self.settings
        v5 = s.protocol == "5"
        client = mqtt.Client(
            CallbackAPIVersion.VERSION2,
            client_id=s.client_id_for(self.topics.table_id),
            clean_session=None if v5 else False,
            protocol=mqtt.MQTTv5 if v5 else mqtt.MQTTv311,
        )
        if s.tls:
            try:
                client.tls_set(
                    ca_certs=str(s.tls_ca) if s.tls_ca else None,
                    certfile=str(s.tls_cert) if s.tls_cert else None,
                    keyfile=str(s.tls_key) if s.tls_key else None,
                    cert_reqs=ssl.CERT_REQUIRED,
                    tls_version=ssl.PROTOCOL_TLS_CLIENT,
                )
            except OSError as exc:  # ssl does not say which file: the operator needs to know
                files = ", ".join(str(f) for f in (s.tls_ca, s.tls_cert, s.tls_key) if f)
                raise OSError(exc.errno, f"{exc.strerror or exc} (TLS files: {files})") from None
        password = s.password(environ)
        if s.username is not None or password is not None:
            client.username_pw_set(s.username or "", password.get_secret_value() if password else None)
        offline = StatusPayload(state="offline", **self._status)
        client.will_set(self.topics.status, encode(offline), qos=1, retain=True)
        client.reconnect_delay_set(s.reconnect_min_s, s.reconnect_max_s)
        # Room above our window for status, health and the answers' own window, so none of them
        # queues behind events, and events never queue behind them.
        client.max_inflight_messages_set(s.max_inflight + ANSWER_WINDOW + 16)
        client.on_connect = self._guarded(self._on_connect)
        client.on_connect_fail = self._guarded(self._on_connect_fail)
        client.on_disconnect = self._guarded(self._on_disconnect)
        client.on_publish = self._guarded(self._on_publish)
        client.on_message = self._guarded(self._on_message)
        return client

    def _guarded(self, callback: Callable[..., None]) -> Callable[..., None]:
        """paho swallows callback errors silently or dies of them; ours are logged and counted instead."""

        def call(*args: Any) -> None:
            try:
                callback(*args)
            except Exception:
                self._count("errors")
                log.exception("mqtt callback failed", callback=callback.__name__)

        return call

    # ------------------------------------------------------------------ lifecycle

    def start(self) -> None:
        """Connect in the background; an absent broker is retried with capped backoff."""
        s = self.settings
        host, port = self._brokers.current
        self._connect_to(host, port)
        self._pump_thread = threading.Thread(target=self._pump, name="mqtt-pump", daemon=True)
        self._pump_thread.start()
        self._client.loop_start()
        log.info("mqtt starting", host=host, port=port, protocol=s.protocol, base=self.topics.base)

    def _connect_to(self, host: str, port: int) -> None:
        """Where paho connects next: now, or at its next retry when called from its own callbacks."""
        s = self.settings
        if s.protocol == "5":
            props = Properties(PacketTypes.CONNECT)
            props.SessionExpiryInterval = s.session_expiry_s
            self._client.connect_async(host, port, s.keepalive, clean_start=False, properties=props)
        else:
            self._client.connect_async(host, port, s.keepalive)

    def stop(self, timeout: float = _STOP_TIMEOUT_S) -> None:
        """Say ``offline`` (the will covers only deaths), then disconnect; waiting events stay queued."""
        with self._status_lock:
            self._said_offline = True
            info = None
            if self._connected:
                info = self._publish_model(self.topics.status, StatusPayload(state="offline", **self._status))
        if info is not None:
            try:
                info.wait_for_publish(timeout)
            except (RuntimeError, ValueError) as exc:
                log.warning("could not publish offline status", error=str(exc))
        self._stopping = True  # a disconnection from now on is ours: no other broker to try
        self._inbox.put(_Stop())
        if self._pump_thread is not None:
            self._pump_thread.join(timeout)
        self._client.disconnect()
        self._client.loop_stop()

    # ------------------------------------------------------------------ what the daemon calls

    def send(self, written: Written) -> None:
        """Send rows just committed to the outbox, now if they are next in line, else through the pump.

        Called between the commit and the fsync: a committed batch already
        survives a killed process, and the broker need not wait for the disk.
        """
        if not self._send_now(written):
            self.notify_new()

    def _send_now(self, written: Written) -> bool:
        """Send rows just written if they are next in line and fit the window; else leave them to the pump."""
        rows = written.rows
        if not rows:
            return not written.held
        with self._send_lock:
            ready = (
                self._sending_live()
                and self._cursor == written.after_id
                and len(self._inflight) + len(rows) <= self._window
                and time.monotonic() >= self._paused_until
            )
            if not ready:
                return False
            for row in rows:
                self._send(row)
        return True

    def _sending_live(self) -> bool:
        """The pump has started sending on the connection paho has up. Caller holds _send_lock."""
        return self._send_gen != 0 and self._send_gen == self._live_gen

    def _send(self, row: Stored) -> None:
        """Hand one row to paho. Caller holds _send_lock on a live connection."""
        m = row.message
        info = self._client.publish(m.topic, m.payload, qos=m.qos, retain=m.retain)
        self._inflight[info.mid] = row
        self._cursor = row.id

    def notify_new(self) -> None:
        """Wake the sender after something was put into the outbox directly."""
        self._inbox.put(_New())

    # ------------------------------------------------------------------ what the request path calls

    def take_requests(self, offer: Callable[[str, str | None, bytes, bool], None]) -> None:
        """Hand every request message to ``offer`` (on paho's network thread: it must not block).

        Who runs requests, in what order and how many at once is the runtime's choice
        (``RequestPath``); the publisher only receives and sends.
        """
        self._take_request = offer

    def send_answer(self, response: Response) -> mqtt.MQTTMessageInfo:
        """An answer at QoS 1. Answers are not durable: a caller that misses one asks get_state."""
        return self._client.publish(self.topics.response(response.command), encode_response(response), qos=1)

    def send_answer_now(self, response: Response) -> mqtt.MQTTMessageInfo:
        """An answer at QoS 0: nothing waits for its acknowledgement (a busy table's refusal)."""
        return self._client.publish(self.topics.response(response.command), encode_response(response))

    @property
    def connection(self) -> int:
        """The broker connection paho has up (0: none): an answer sent on an earlier one is lost."""
        return self._live_gen

    def count(self, name: str, n: int = 1) -> None:
        """Add to one of the health counters."""
        self._count(name, n)

    def set_device(self, device: DevicePayload) -> None:
        """Republish the retained device topic when it changed."""
        with self._device_lock:
            if device == self._device:
                return
            self._device = device
            if self._connected:
                self._publish_model(self.topics.device, device)

    @property
    def device(self) -> DevicePayload | None:
        """The device payload as last set (any thread)."""
        return self._device

    @property
    def connected(self) -> bool:
        return self._connected

    @property
    def failed_attempts(self) -> int:
        """Connection attempts that failed since the last one that succeeded."""
        return self._link.failed_attempts

    @property
    def alive(self) -> bool:
        """False once the sending thread has ended (after stop, or by a bug): the daemon should restart."""
        return self._pump_thread is not None and self._pump_thread.is_alive()

    def counts(self) -> dict[str, int]:
        """The health counters as they are now (any thread)."""
        with self._counts_lock:
            return dict(self._counts)

    def oldest_pending_s(self) -> float | None:
        """Age of the oldest event the broker has not acknowledged, by its ``ts``; None when none waits."""
        oldest = self.outbox.oldest()
        if oldest is None:
            return None
        return max(0.0, self._clock() - float(orjson.loads(oldest.payload)["ts"]))

    def health(self) -> dict[str, Any]:
        return self.health_payload().model_dump(mode="json")

    def set_suspended(self, suspended: dict[str, Any] | None) -> None:
        """The table was suspended (what stopped it), or resumed (None): restate the status now."""
        view = SuspensionView.model_validate(suspended) if suspended is not None else None
        with self._status_lock:
            if view == self._suspended:
                return
            self._suspended = view
            if self._connected and not self._said_offline:
                online = StatusPayload(state="online", suspended=view, **self._status)
                self._publish_model(self.topics.status, online)

    def health_changed(self) -> None:
        """Publish health now rather than at the next interval (the display came up or went down)."""
        self._inbox.put(_Health())

    def flush(self, timeout: float) -> bool:
        """Wait until the outbox is empty (every event acknowledged); False on timeout."""
        with self._idle:
            return self._idle.wait_for(lambda: self.outbox.health().pending == 0, timeout)

    # ------------------------------------------------------------------ paho callbacks (network thread)

    def _on_connect(
        self, client: mqtt.Client, _ud: Any, flags: mqtt.ConnectFlags, rc: ReasonCode, props: Any
    ) -> None:
        if rc.is_failure:
            self._link.refused(str(rc))
            return
        with self._send_lock:
            # Whatever paho kept from the last connection is also in the outbox; resending it from
            # there, oldest first, is what keeps the order.
            client.drop_out_messages()
            self._gen += 1
            self._live_gen = self._gen
        if self._gen > 1:
            self._count("reconnects")
        self._connected = True  # before "online" goes out, so a stop from now on says "offline" after it
        log.info(
            "mqtt connected",
            host=self._link.host,
            port=self._link.port,
            session_present=flags.session_present,
            connection=self._gen,
            failed_attempts=self._link.up(),
        )
        filters: Any = [(topic, self._request_subscription()) for topic in self.topics.requests]
        client.subscribe(filters)
        self._restate()
        # An MQTT 5 broker may take fewer unacknowledged messages than we would send; keep a few
        # of its slots for status, health and responses.
        receive_max = getattr(props, "ReceiveMaximum", None)
        window = self.settings.max_inflight
        if receive_max:
            window = max(1, min(window, receive_max - _RESERVED_SLOTS))
        self._inbox.put(_Up(self._gen, window))

    def _restate(self) -> None:
        """Say the retained status and device again: on each connection, and with each health message.

        A broker may lose a retained message and keep running: a cluster whose retained store
        times out while it elects a new leader drops the table's ``online``, and a newcomer would
        see no status at all until the table reconnected. Restating heals that within one health
        interval, and costs a consumer nothing: the payloads are the ones it already holds.
        """
        with self._status_lock:
            if not self._said_offline:
                online = StatusPayload(state="online", suspended=self._suspended, **self._status)
                self._publish_model(self.topics.status, online)
        with self._device_lock:  # read and restated together: a change made meanwhile goes out after
            if self._device is not None:
                self._publish_model(self.topics.device, self._device)

    def _request_subscription(self) -> SubscribeOptions | int:
        """MQTT 5 keeps a retained request recognisable, however it is delivered.

        A broker clears the retain flag when it passes a message on live, so a
        request published retained while we are connected would look like any
        other and be run (and then again at every reconnect). Retain-as-published
        keeps the flag; retain handling "only for a new subscription" means the
        refusal is sent once, not at every reconnect of the persistent session.
        MQTT 3.1.1 has neither: only retained requests found at subscribe are refused.
        """
        if self.settings.protocol != "5":
            return 1
        return SubscribeOptions(
            qos=1, retainAsPublished=True, retainHandling=SubscribeOptions.RETAIN_SEND_IF_NEW_SUB
        )

    def _on_disconnect(
        self, _client: mqtt.Client, _ud: Any, _flags: Any, rc: ReasonCode, _props: Any
    ) -> None:
        with self._send_lock:
            self._live_gen = self._send_gen = 0
        if self._connected:
            # Only a link lost is the table's trouble; the disconnect a stop asks for is not.
            (log.info if self._stopping else log.warning)("mqtt disconnected", reason=str(rc))
            self._link.lost()
        elif rc.is_failure:
            self._link.closed(str(rc))
        self._connected = False
        self._inbox.put(_Down())
        self._next_broker()

    def _on_connect_fail(self, _client: mqtt.Client, _ud: Any) -> None:
        # paho calls this inside its ``except OSError`` and does not pass the exception on.
        self._link.failed(failure_reason(sys.exc_info()[1]))
        self._next_broker()

    def _next_broker(self) -> None:
        """After a failure, the next broker of the cluster in order; paho's next attempt goes there.

        The session (subscriptions, queued requests) lives in the cluster, not in
        one node, and the outbox resends from the oldest unacknowledged event, so
        a move loses nothing and keeps the order. The table stays on the broker
        that works rather than returning to the first.
        """
        following = None if self._stopping else self._brokers.advance()
        if following is None:
            return
        host, port = following
        self._connect_to(host, port)
        self._link.host, self._link.port = host, port
        log.info("mqtt trying the next broker", host=host, port=port)

    def _on_publish(self, _client: mqtt.Client, _ud: Any, mid: int, rc: ReasonCode, _props: Any) -> None:
        self._inbox.put(_Ack(mid, rc))

    def _on_message(self, _client: mqtt.Client, _ud: Any, msg: mqtt.MQTTMessage) -> None:
        named = self.topics.command_of(msg.topic)
        if named is None:
            return
        self._count("requests")
        if self._take_request is not None:  # run on a thread of the runtime's, never here
            self._take_request(*named, bytes(msg.payload), msg.retain)

    # ------------------------------------------------------------------ the pump

    def _pump(self) -> None:
        s = self.settings
        now = time.monotonic()
        # next_restate: a connection states status and device itself; restated one interval later
        st = _PumpState(backoff=float(s.reconnect_min_s), next_health=now, next_restate=now)
        while True:
            now = time.monotonic()
            deadline = min(st.next_health, self._paused_until) if self._paused_until > now else st.next_health
            items = self._take(max(0.0, deadline - now))
            try:
                acked: list[Stored] = []
                with self._send_lock:
                    for item in items:
                        if not self._handle(item, st, acked):
                            return
                    sending = bool(self._send_gen)
                self._after(acked, sending, st)
            except Exception:
                # The pump must outlive a bad moment (disk error, closed db during shutdown): the
                # rows are still in the outbox, so start the connection's sending over.
                self._count("errors")
                log.exception("mqtt pump error")
                with self._send_lock:
                    self._rewind(time.monotonic() + st.backoff)
            with self._idle:
                self._idle.notify_all()

    def _handle(self, item: _PumpMessage, st: _PumpState, acked: list[Stored]) -> bool:
        """One message for the pump, under the send lock; False: stop."""
        s = self.settings
        match item:
            case _Stop():
                return False
            case _Ack(mid, rc):
                row = self._inflight.pop(mid, None)
                if row is None:
                    return True  # status, health, a response, or a row from before a rewind
                if not rc.is_failure:
                    acked.append(row)
                    st.backoff = float(s.reconnect_min_s)
                    if st.refusals:
                        log.info("broker takes events again", refusals=st.refusals)
                        st.refusals = 0
                    return True
                self._count("refused")
                if not st.refusals:  # the same event, refused again at each retry
                    log.error("broker refused an event", seq=row.message.seq, reason=str(rc))
                st.refusals += 1
                self._rewind(time.monotonic() + st.backoff)
                st.backoff = min(st.backoff * 2, float(s.reconnect_max_s))
            case _Up(gen, window):
                if gen == self._live_gen:
                    self._send_gen, self._window = gen, window
                    self._rewind(0.0)
                st.next_health = 0.0
                st.next_restate = time.monotonic() + s.health_interval_s
            case _Health():
                st.next_health = 0.0
            case _New() | _Down():
                pass  # a wake-up: what to send is read from the outbox and _send_gen below
            case _:
                assert_never(item)
        return True

    def _after(self, acked: list[Stored], sending: bool, st: _PumpState) -> None:
        """What the messages taken call for, outside the send lock: the acknowledged rows gone, the
        window filled, health published at its interval."""
        interval = self.settings.health_interval_s
        if acked:
            self._count("published", len(acked))  # first, so flush() never sees it lag
            self.outbox.remove([row.id for row in acked])
            if self.on_acked is not None:
                self.on_acked([row.message for row in acked])
        if sending:
            self._fill()
        if sending and time.monotonic() >= st.next_health:
            if time.monotonic() >= st.next_restate:
                self._restate()
                st.next_restate = time.monotonic() + interval
            self._publish_model(self.topics.health, self.health_payload())
            st.next_health = time.monotonic() + interval
        elif not sending:
            st.next_health = time.monotonic() + interval

    def _rewind(self, paused_until: float) -> None:
        """Send again from the oldest waiting row. Caller holds _send_lock."""
        self._inflight.clear()
        self._cursor = 0
        self._paused_until = paused_until

    def _take(self, wait: float) -> list[_PumpMessage]:
        try:
            items = [self._inbox.get(timeout=wait) if wait > 0 else self._inbox.get_nowait()]
        except queue.Empty:
            return []
        while True:
            try:
                items.append(self._inbox.get_nowait())
            except queue.Empty:
                return items

    def _fill(self) -> None:
        """Send waiting rows after the cursor until the window is full."""
        while time.monotonic() >= self._paused_until:
            with self._send_lock:
                room, cursor = self._window - len(self._inflight), self._cursor
            if room <= 0:
                return
            rows = self.outbox.pending(limit=room, after_id=cursor)  # read outside the lock: disk
            if not rows:
                return
            with self._send_lock:
                if not self._sending_live():
                    return  # the connection changed under us: "up" will start over
                for row in rows:
                    if row.id <= self._cursor:
                        continue  # ``send`` sent it meanwhile
                    if len(self._inflight) >= self._window:
                        return
                    self._send(row)

    # ------------------------------------------------------------------ helpers

    def _count(self, name: str, n: int = 1) -> None:
        with self._counts_lock:
            self._counts[name] += n

    def _publish_model(self, topic: str, model: Any, *, retain: bool = True) -> mqtt.MQTTMessageInfo:
        return self._client.publish(topic, encode(model), qos=1, retain=retain)

    def health_payload(self) -> HealthPayload:
        """The table's health as the health topic says it (``scannerd/runtime/health.py`` reads it too)."""
        ob = self.outbox.health()
        c = self._counts
        return HealthPayload(
            ts=self._clock(),
            table_id=self.topics.table_id,
            connected=self._connected,
            published=c["published"],
            pending=ob.pending,
            in_flight=len(self._inflight),
            outbox_bytes=ob.bytes,
            outbox_max_bytes=ob.max_bytes,
            outbox_level=ob.level,
            reconnects=c["reconnects"],
            refused=c["refused"],
            requests=c["requests"],
            rejected_requests=c["rejected_requests"],
            busy_requests=c["busy_requests"],
            errors=c["errors"],
            display=self._display(),
            reader=self._reader(),
            recorder=self._recorder(),
            archive=self._archive(),
            clock=self._clock_health(),
            started_at=self._started_at,
            oldest_pending_s=self.oldest_pending_s(),
            held=ob.held,
            failed_attempts=self._link.failed_attempts,
        )
