"""Prometheus metrics (``/metrics``) and a health check (``/healthz``) for one table, over HTTP.

Nothing here runs on the card's path but ``EventCounts.on_events``, a few
dictionary additions per stored batch, like the recorder's and the display's
hooks. Everything else is read when Prometheus scrapes: the collector asks the
daemon's parts for the counters and state they keep anyway (the publisher's
health counts, the outbox, the reader's counters, the clock reading). The
card latency histogram is observed on the publisher's pump, where the broker's
acknowledgements arrive.

The server runs on a thread and an event loop of its own, behind the same
gate as the dealer display (a cap per client address, idle connections
closed, no thread per connection). One that cannot listen never stops the
table: it says why once and tries again with backoff, as the display does.
Off loopback every request needs the token; the ``Host`` a request names
must be an address, ``localhost`` or an allowed host.
"""

from __future__ import annotations

import asyncio
import contextlib
import hmac
import socket
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any, assert_never

import orjson
import structlog
from aiohttp import web
from prometheus_client import CollectorRegistry, Histogram, ProcessCollector, disable_created_metrics
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.exposition import CONTENT_TYPE_LATEST, generate_latest
from prometheus_client.registry import Collector

from scannerd import __version__
from scannerd.contract.alert_catalogue import ALERTS
from scannerd.contract.events import EventData, kind_of
from scannerd.contract.payloads import ArchiveHealth, HealthPayload
from scannerd.contract.topics import Message
from scannerd.core.listeners import TableListener
from scannerd.display.access import allowed_names, host_name, known_host
from scannerd.display.binding import bind_retrying
from scannerd.display.guard import Gate
from scannerd.runtime.health import TableHealth
from scannerd.runtime.metrics_settings import MetricsSettings
from scannerd.settings.credentials import read_secret

Daemon = Any
"""``scannerd.runtime.daemon.Daemon``, which imports this module: named, not imported."""

log = structlog.get_logger(__name__)

disable_created_metrics()  # a ``_created`` series per counter is noise to a table's dashboard

TOKEN_CREDENTIAL = "metrics-token"
"""Looked up in ``$CREDENTIALS_DIRECTORY`` when no ``[metrics] token_file`` is set."""
IDLE_S = 10.0
"""A connection with no request under way for this long is closed (Prometheus scrapes far more often)."""
LATENCY_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300)
"""Seconds from a card's read to its acknowledgement: milliseconds when well, minutes in an outage."""
SEVERITIES = ("info", "warning", "misdeal")
OTHER = "other"


class EventCounts(TableListener):
    """Events counted as they are stored for publishing: what the game server gets, by kind.

    Called under the daemon's lock, so it needs none of its own; a scrape reads
    a copy (``Counter.copy`` runs without releasing the GIL).
    """

    def __init__(self, open_alerts: Callable[[], Iterable[Mapping[str, Any]]]) -> None:
        self.events = 0
        self.cards = 0
        self.rounds: Counter[str] = Counter()
        # Every code at 0 from the start: an alert rule on ``increase`` sees the first of a code
        # only if the series was there, at 0, before it.
        self.alerts: Counter[tuple[str, str]] = Counter(
            {(code, case.severity): 0 for code, kind in ALERTS.items() for case in kind.cases}
        )
        self.voids: Counter[str] = Counter()
        self.open_alerts: Counter[str] = Counter()
        self._open_alerts = open_alerts

    def on_events(self, events: Sequence[EventData]) -> None:
        self.events += len(events)
        alerts = False
        for event in events:
            kind = kind_of(event)
            match kind:
                case "card":
                    self.cards += 1
                case "round":
                    self._round(event)
                case "alert":
                    alerts = True
                    if not event["acknowledged"]:
                        self.alerts[event["code"], event["severity"]] += 1
                case "shoe" | "dealer" | "anchor" | "reveal" | "config" | "suspension" | "deck_check" | None:
                    pass  # counted among the events, no count of their own
                case _:
                    assert_never(kind)
        if alerts:  # open alerts change only with an alert event: counted again then, not per card
            self.open_alerts = Counter(a["severity"] for a in self._open_alerts())

    def _round(self, event: EventData) -> None:
        phase = event["phase"]
        if phase == "complete":
            self.rounds[event["winner"] or OTHER] += 1
        elif phase == "void":
            self.rounds["void"] += 1
            self.voids[event["reason"] or OTHER] += 1


class TableCollector(Collector):
    """Every ``scannerd_`` metric of one table, read from the daemon when scraped."""

    def __init__(self, daemon: Daemon, counts: EventCounts) -> None:
        self.daemon = daemon
        self.counts = counts
        self.table_id = daemon.table_id

    def _gauge(self, name: str, doc: str, value: float) -> GaugeMetricFamily:
        g = GaugeMetricFamily(name, doc, labels=["table_id"])
        g.add_metric([self.table_id], value)
        return g

    def _counter(self, name: str, doc: str, value: float) -> CounterMetricFamily:
        c = CounterMetricFamily(name, doc, labels=["table_id"])
        c.add_metric([self.table_id], value)
        return c

    def _labelled(
        self, family: CounterMetricFamily | GaugeMetricFamily, values: Mapping[Any, int]
    ) -> CounterMetricFamily | GaugeMetricFamily:
        for key, value in sorted(values.items()):
            labels = key if isinstance(key, tuple) else (key,)
            family.add_metric([self.table_id, *labels], value)
        return family

    def collect(self) -> Iterable[Metric]:
        """Every metric, each group from what keeps it: the event counts, and one health snapshot (the
        health topic's, as ``/healthz`` and the status line read it) for the rest."""
        health = self.daemon.health()
        yield from self._build_info()
        yield from self._events()
        yield from self._table(health)
        yield from self._reader(health)
        yield from self._requests()
        yield from self._clock(health.payload)
        if health.payload.archive is not None:  # served only by a table that archives
            yield from self._archive(health.payload.archive)

    def _build_info(self) -> Iterable[Metric]:
        d, t = self.daemon, self.table_id
        software = d.software
        info = GaugeMetricFamily(
            "scannerd_build_info",
            "What the table runs: version, installed files' digest ('' when not from a wheel), driver, game.",
            labels=["table_id", "version", "digest", "driver", "game"],
        )
        game = d.config.rules.game or "punto_banco"
        info.add_metric([t, __version__, software.digest or "", d.config.device.driver, game], 1)
        yield info

    def _events(self) -> Iterable[Metric]:
        """What the listener counted as events were stored."""
        n = self.counts
        yield self._counter("scannerd_cards_total", "Cards read from the shoe (card events).", n.cards)
        yield self._labelled(
            CounterMetricFamily(
                "scannerd_rounds_total", "Rounds ended, by result.", labels=["table_id", "result"]
            ),
            n.rounds.copy(),
        )
        yield self._labelled(
            CounterMetricFamily(
                "scannerd_alerts_total",
                "Alerts raised, by code and severity.",
                labels=["table_id", "code", "severity"],
            ),
            n.alerts.copy(),
        )
        yield self._labelled(
            CounterMetricFamily(
                "scannerd_voids_total", "Rounds voided, by reason.", labels=["table_id", "reason"]
            ),
            n.voids.copy(),
        )
        open_alerts = n.open_alerts.copy()
        yield self._labelled(
            GaugeMetricFamily(
                "scannerd_open_alerts",
                "Alerts raised and not yet acknowledged, by severity.",
                labels=["table_id", "severity"],
            ),
            {s: open_alerts.get(s, 0) for s in SEVERITIES},
        )

    def _table(self, health: TableHealth) -> Iterable[Metric]:
        """The suspension, the outbox and the broker link."""
        n, p = self.counts, health.payload
        yield self._gauge(
            "scannerd_suspended", "1 while the table is suspended.", int(health.suspended is not None)
        )
        yield self._gauge("scannerd_outbox_events", "Events not yet acknowledged by the broker.", p.pending)
        yield self._gauge(
            "scannerd_outbox_oldest_age_seconds",
            "Age of the oldest event not yet acknowledged (0: none).",
            p.oldest_pending_s or 0.0,
        )
        yield self._gauge("scannerd_outbox_bytes", "Bytes the outbox holds on disk.", p.outbox_bytes)
        yield self._gauge(
            "scannerd_outbox_free_bytes",
            "Bytes left in the outbox's budget.",
            max(0, p.outbox_max_bytes - p.outbox_bytes),
        )
        yield self._counter(
            "scannerd_events_published_total", "Events stored for publishing to the broker.", n.events
        )
        yield self._counter(
            "scannerd_events_acknowledged_total", "Events the broker acknowledged.", p.published
        )
        yield self._gauge("scannerd_broker_connected", "1 while connected to the broker.", int(p.connected))
        yield self._counter(
            "scannerd_broker_reconnects_total", "Connections to the broker after the first.", p.reconnects
        )

    def _reader(self, health: TableHealth) -> Iterable[Metric]:
        """What reading the shoe cost, and its link."""
        p = health.payload
        reader = p.reader.model_dump() if p.reader is not None else {}
        yield self._counter(
            "scannerd_codec_junk_bytes_total",
            "Bytes from the shoe that were part of no frame.",
            reader.get("junk_bytes") or 0,
        )
        yield self._counter(
            "scannerd_codec_bad_frames_total",
            "Frames from the shoe that could not be used.",
            reader.get("bad_frames") or 0,
        )
        yield self._gauge("scannerd_device_link_up", "1 while the shoe's link is up.", int(health.link_up))
        yield self._counter(
            "scannerd_device_reconnects_total",
            "Times the shoe was opened again.",
            reader.get("reconnects") or 0,
        )

    def _requests(self) -> Iterable[Metric]:
        """The commands run, by command and answer."""
        d = self.daemon
        yield self._labelled(
            CounterMetricFamily(
                "scannerd_requests_total",
                "Commands run, by command and answer status.",
                labels=["table_id", "command", "status"],
            ),
            d.request_counts.copy(),
        )

    def _clock(self, p: HealthPayload) -> Iterable[Metric]:
        """The clock as the table judged it, and when the daemon started."""
        d = self.daemon
        clock = p.clock
        yield self._gauge(
            "scannerd_clock_synchronised",
            "1 while a time service keeps the clock synchronised.",
            int(clock is not None and clock.synchronised),
        )
        yield self._gauge(
            "scannerd_clock_estimated_error_seconds",
            "The kernel's estimated error of the clock.",
            clock.est_error_s if clock is not None else 0.0,
        )
        yield self._gauge("scannerd_start_time_seconds", "Unix time the daemon started.", d.started_at)

    def _archive(self, archive: ArchiveHealth) -> Iterable[Metric]:
        """How far behind the archive is."""
        yield self._gauge(
            "scannerd_archive_files_behind",
            "Finished recordings not yet archived and checked.",
            archive.behind,
        )
        yield self._gauge(
            "scannerd_archive_oldest_age_seconds",
            "How long the oldest recording not yet archived has waited since it was finished (0: none).",
            archive.oldest_age_s or 0.0,
        )
        yield self._counter(
            "scannerd_archive_files_total", "Recordings archived and checked since start.", archive.archived
        )
        yield self._counter(
            "scannerd_archive_errors_total", "Attempts to archive that failed since start.", archive.errors
        )


class MetricsServer:
    """``/metrics`` and ``/healthz`` of one table, on a thread and an event loop of their own.

    Served through the display's gate (``scannerd/display/guard.py``): no thread per connection,
    a cap per client address, idle connections closed, so a thousand connections that never send
    a request cost the table nothing it needs. A scrape is collected on one worker thread of its
    own, never on the loop, so a slow collection delays no other client's answer.
    """

    def __init__(
        self, settings: MetricsSettings, daemon: Daemon, environ: Mapping[str, str] | None = None
    ) -> None:
        self.settings = settings
        self._daemon = daemon
        token = read_secret(settings.token_file, TOKEN_CREDENTIAL, environ)  # at start, as a file error
        self._token = token.get_secret_value() if token is not None else None
        self._names = allowed_names(settings.allowed_hosts)
        self.counts = EventCounts(lambda: list(daemon.validator.open_alerts.values()))
        self.registry = CollectorRegistry(auto_describe=False)
        self.registry.register(TableCollector(daemon, self.counts))
        ProcessCollector(registry=self.registry)
        self.latency = Histogram(
            "scannerd_card_latency_seconds",
            "From a card's read to the broker's acknowledgement of its card event.",
            ["table_id"],
            registry=self.registry,
            buckets=LATENCY_BUCKETS,
        ).labels(daemon.table_id)
        self._card_topic = daemon.publisher.topics.of("card")
        self._thread: threading.Thread | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._stop: asyncio.Event | None = None
        self._scraper: ThreadPoolExecutor | None = None
        self._port: int | None = None
        self.listening = threading.Event()
        self._refused_start = not settings.loopback and self._token is None
        self._said_refused = False

    @property
    def port(self) -> int | None:
        """The port it listens on (the one the OS picked for port 0); None until it listens."""
        return self._port if self.listening.is_set() else None

    @property
    def alive(self) -> bool:
        """Its thread runs, or it may not serve at all (said once at start): nothing to restart."""
        return self._refused_start or (self._thread is not None and self._thread.is_alive())

    def acked(self, messages: list[Message]) -> None:
        """The broker acknowledged these: each card's latency from its read (the pump's thread)."""
        now = time.time()
        for m in messages:
            if m.topic == self._card_topic:
                self.latency.observe(max(0.0, now - orjson.loads(m.payload)["ts"]))

    def start(self) -> None:
        if self._refused_start:
            if self._said_refused:
                return
            self._said_refused = True
            log.error(
                "metrics not served: a listen address off loopback needs a token ([metrics] token_file "
                "or the metrics-token credential); the table deals on",
                listen=self.settings.listen,
            )
            return
        if self.alive:
            return
        self._thread = threading.Thread(target=self._run, name="metrics", daemon=True)
        self._thread.start()

    def stop(self, timeout: float = 5.0) -> None:
        loop, stop = self._loop, self._stop
        if loop is not None and stop is not None:
            with contextlib.suppress(RuntimeError):  # the loop already ended
                loop.call_soon_threadsafe(stop.set)
        if self._thread is not None:
            self._thread.join(timeout)
        self.listening.clear()

    def _run(self) -> None:
        try:
            asyncio.run(self._serve())
        except Exception:
            log.exception("metrics server died")  # the daemon's watchdog starts it again

    async def _serve(self) -> None:
        self._stop = stop = asyncio.Event()
        self._loop = asyncio.get_running_loop()
        settings = self.settings
        assert settings.listen is not None
        app = web.Application()
        app.router.add_get("/metrics", self._metrics)
        app.router.add_get("/healthz", self._healthz)
        app.router.add_get("/{anything:.*}", self._not_found)
        gate = Gate("metrics", settings.listen, settings.max_connections, settings.max_per_address, IDLE_S)
        runner = gate.runner(app)
        await runner.setup()
        self._scraper = scraper = ThreadPoolExecutor(1, thread_name_prefix="metrics-scrape")
        server: asyncio.Server | None = None
        try:
            sock = await bind_retrying(self._bind, stop, "metrics", settings.listen)
            if sock is None:
                return
            server = await gate.serve(runner, sock)
            self.listening.set()
            log.info("metrics listening", listen=settings.listen, port=self._port)
            await stop.wait()
        finally:
            self._loop = None
            if server is not None:
                server.close()
            await runner.cleanup()
            scraper.shutdown(wait=False, cancel_futures=True)

    def _bind(self) -> socket.socket:
        host = self.settings.host
        port = self._port if self._port is not None else self.settings.port  # the same port after a restart
        sock = socket.create_server((host, port), family=socket.AF_INET6 if ":" in host else socket.AF_INET)
        self._port = sock.getsockname()[1]
        return sock

    async def _metrics(self, request: web.Request) -> web.Response:
        refused = self._refused(request)
        if refused is not None:
            return refused
        body = await asyncio.get_running_loop().run_in_executor(self._scraper, generate_latest, self.registry)
        return web.Response(body=body, headers={"Content-Type": CONTENT_TYPE_LATEST})

    async def _healthz(self, request: web.Request) -> web.Response:
        refused = self._refused(request)
        if refused is not None:
            return refused
        problems = self._daemon.health().problems()
        body = {"status": "unwell", "problems": problems} if problems else {"status": "well"}
        return _json(503 if problems else 200, body)

    async def _not_found(self, request: web.Request) -> web.Response:
        return self._refused(request) or _error(404, "not found")

    def _refused(self, request: web.Request) -> web.Response | None:
        """The answer that refuses ``request``; None when it may be served."""
        name = host_name(request.headers.get("Host", ""))
        if not known_host(name, self._names):
            return _error(403, f"unknown host {name!r}: add it to [metrics] allowed_hosts")
        if self._token is not None:
            scheme, _, given = request.headers.get("Authorization", "").partition(" ")
            if scheme.lower() != "bearer" or not hmac.compare_digest(given.encode(), self._token.encode()):
                return _error(401, "the metrics need their token: Authorization: Bearer ...")
        return None


def _error(status: int, text: str) -> web.Response:
    return _json(status, {"status": "error", "error": text})


def _json(status: int, body: object) -> web.Response:
    return web.Response(status=status, body=_line(body), content_type="application/json")


def _line(body: object) -> bytes:
    return orjson.dumps(body) + b"\n"
