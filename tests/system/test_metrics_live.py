"""The table's metrics as a real Prometheus scrapes them, and ``/healthz`` as the shoe, the broker and the
outbox fail and heal.

Prometheus (Debian's ``prometheus`` package, with ``promtool``) scrapes a live
daemon every second; the test reads the values back through its query API and
holds them to what the game server received.
"""

from __future__ import annotations

import json
import shutil
import socket
import subprocess
import urllib.error
import urllib.parse
import urllib.request
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from prometheus_client.parser import text_string_to_metric_families

from scannerd.runtime.daemon import Daemon
from tests.support.broker import Broker, event_seqs, wait_until
from tests.support.fault import NATURAL, RECONNECT_1S, deduplicated
from tests.support.frames import beetek
from tests.support.process import LiveTable, live_table

pytestmark = pytest.mark.skipif(shutil.which("prometheus") is None, reason="needs prometheus (Debian)")

METRICS = {"listen": "127.0.0.1:0"}
NAMES = {
    "scannerd_build_info": "gauge",
    "scannerd_cards_total": "counter",
    "scannerd_rounds_total": "counter",
    "scannerd_alerts_total": "counter",
    "scannerd_voids_total": "counter",
    "scannerd_open_alerts": "gauge",
    "scannerd_suspended": "gauge",
    "scannerd_outbox_events": "gauge",
    "scannerd_outbox_oldest_age_seconds": "gauge",
    "scannerd_outbox_bytes": "gauge",
    "scannerd_outbox_free_bytes": "gauge",
    "scannerd_events_published_total": "counter",
    "scannerd_events_acknowledged_total": "counter",
    "scannerd_broker_connected": "gauge",
    "scannerd_broker_reconnects_total": "counter",
    "scannerd_card_latency_seconds": "histogram",
    "scannerd_codec_junk_bytes_total": "counter",
    "scannerd_codec_bad_frames_total": "counter",
    "scannerd_device_link_up": "gauge",
    "scannerd_device_reconnects_total": "counter",
    "scannerd_requests_total": "counter",
    "scannerd_clock_synchronised": "gauge",
    "scannerd_clock_estimated_error_seconds": "gauge",
    "scannerd_start_time_seconds": "gauge",
}
"""The names the house's dashboard and alert rules are written against: none may change."""
NOT_BASE_UNITS = (
    "_milliseconds",
    "_ms",
    "_microseconds",
    "_minutes",
    "_hours",
    "_kilobytes",
    "_megabytes",
    "_percent",
)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def get(url: str, headers: dict[str, str] | None = None) -> tuple[int, bytes]:
    request = urllib.request.Request(url, headers=headers or {})
    try:
        with urllib.request.urlopen(request, timeout=10) as answer:
            return answer.status, answer.read()
    except urllib.error.HTTPError as error:
        return error.code, error.read()


def metrics_url(daemon: Daemon, path: str = "/metrics") -> str:
    assert daemon.metrics is not None
    wait_until(
        lambda: daemon.metrics is not None and daemon.metrics.port is not None, 10, "metrics listening"
    )
    return f"http://127.0.0.1:{daemon.metrics.port}{path}"


class Prometheus:
    """A real Prometheus scraping one target every second, asked through its HTTP API."""

    def __init__(self, where: Path, target: str) -> None:
        where.mkdir()
        config = where / "prometheus.yml"
        config.write_text(
            "global: {scrape_interval: 1s, evaluation_interval: 1s}\n"
            f"scrape_configs: [{{job_name: scannerd, static_configs: [{{targets: ['{target}']}}]}}]\n"
        )
        self.url = f"http://127.0.0.1:{free_port()}"
        self.proc = subprocess.Popen(
            [
                "prometheus",
                f"--config.file={config}",
                f"--storage.tsdb.path={where / 'data'}",
                f"--web.listen-address={self.url.removeprefix('http://')}",
            ],
            stdout=subprocess.DEVNULL,
            stderr=(where / "prometheus.log").open("wb"),
        )
        wait_until(lambda: self._ready(), 30, "prometheus ready")

    def _ready(self) -> bool:
        try:
            return get(f"{self.url}/-/ready")[0] == 200
        except OSError:
            return False

    def query(self, expr: str) -> dict[tuple[tuple[str, str], ...], float]:
        """The instant vector of ``expr``: each series' labels (without the scrape's own) and value."""
        status, body = get(f"{self.url}/api/v1/query?{urllib.parse.urlencode({'query': expr})}")
        assert status == 200, body
        out = {}
        for series in json.loads(body)["data"]["result"]:
            labels = {k: v for k, v in series["metric"].items() if k not in ("job", "instance", "__name__")}
            out[tuple(sorted(labels.items()))] = float(series["value"][1])
        return out

    def by(self, expr: str, label: str) -> dict[str, float]:
        return {dict(k)[label]: v for k, v in self.query(expr).items()}

    def close(self) -> None:
        self.proc.terminate()
        self.proc.wait(30)


@pytest.fixture
def prometheus(tmp_path: Path) -> Iterator[Callable[[str], Prometheus]]:
    started: list[Prometheus] = []

    def start(target: str) -> Prometheus:
        started.append(Prometheus(tmp_path / "prometheus", target))
        return started[0]

    yield start
    for p in started:
        p.close()


@pytest.fixture
def table(tmp_path: Path, make_broker: Callable[..., Broker]) -> Iterator[tuple[LiveTable, Broker]]:
    broker = make_broker(persistence=True)
    with live_table(
        tmp_path,
        broker,
        "beetek",
        in_process=True,
        server_id="game-server",
        mqtt=RECONNECT_1S,
        metrics=METRICS,
    ) as live:
        assert live.daemon is not None
        wait_until(lambda: live.daemon is not None and live.daemon.publisher.connected, 15, "connected")
        yield live, broker


@pytest.mark.timeout(90)
def test_prometheus_reads_what_the_game_server_got(
    table: tuple[LiveTable, Broker], prometheus: Callable[[str], Prometheus]
) -> None:
    live, broker = table
    daemon, server = live.daemon, live.server
    assert daemon is not None
    prom = prometheus(metrics_url(daemon).removeprefix("http://").removesuffix("/metrics"))

    def ends() -> int:
        return sum(
            1
            for e in deduplicated([m.payload for m in server.messages("/round")])
            if e["phase"] in ("complete", "void")
        )

    live.port.write(beetek(*NATURAL))
    wait_until(lambda: ends() == 1, 15, "a round")
    live.port.write(beetek("9H", "XX"))  # a card the shoe could not read: a misdeal that voids the round
    wait_until(lambda: ends() == 2, 15, "a void round")
    broker.stop()
    wait_until(lambda: not daemon.publisher.connected, 15, "the broker gone")
    live.port.write(beetek(*NATURAL))  # dealt while the broker is away: waits in the outbox
    wait_until(lambda: daemon.outbox.health().pending >= 5, 15, "the round waiting")
    broker.start()
    wait_until(lambda: ends() == 3, 30, "the round after the outage")
    assert daemon.publisher.flush(15)

    got = {
        kind: deduplicated([m.payload for m in server.messages(f"/{kind}")])
        for kind in ("card", "round", "alert")
    }
    results = Counter(
        e["winner"] or "void" if e["phase"] == "complete" else "void"
        for e in got["round"]
        if e["phase"] in ("complete", "void")
    )
    alerts = Counter((e["code"], e["severity"]) for e in got["alert"] if not e["acknowledged"])
    voids = Counter(e["reason"] for e in got["round"] if e["phase"] == "void")
    assert results["void"] == 1 and alerts and sum(results.values()) == 3

    one = {(("table_id", "T1"),): 1.0}
    events = len(set(event_seqs(server.received)))

    def agrees() -> bool:
        acked = prom.query("scannerd_events_acknowledged_total")
        return (
            prom.query("scannerd_cards_total") == {(("table_id", "T1"),): len(got["card"])}
            and prom.query("scannerd_broker_connected") == one
            and prom.query("scannerd_outbox_events") == {(("table_id", "T1"),): 0.0}
            and list(acked.values()) >= [events]
        )

    wait_until(agrees, 20, "prometheus to scrape the dealt shoe")
    assert prom.by("scannerd_rounds_total", "result") == {k: float(v) for k, v in results.items()}
    raised = prom.query("scannerd_alerts_total").items()
    counted = {(dict(k)["code"], dict(k)["severity"]): v for k, v in raised}
    assert {k: v for k, v in counted.items() if v} == {k: float(v) for k, v in alerts.items()}
    # Every code is there at 0 before its first: an alert rule on ``increase`` sees that first one.
    assert counted[("SHUFFLE_SUSPECT", "warning")] == 0.0
    assert prom.by("scannerd_voids_total", "reason") == {k: float(v) for k, v in voids.items()}
    assert list(prom.query("scannerd_broker_reconnects_total").values()) >= [1.0]
    latency = prom.query("scannerd_card_latency_seconds_count")
    assert list(latency.values()) == [float(len(got["card"]))]
    slow = prom.query('scannerd_card_latency_seconds_bucket{le="0.5"}')
    assert next(iter(slow.values())) <= len(got["card"]) - 4  # the outage's cards waited for the broker
    info = prom.query("scannerd_build_info")
    assert [dict(k)["driver"] for k in info] == ["beetek"]
    assert prom.query("process_resident_memory_bytes")


def test_a_scrape_keeps_the_conventions_and_the_agreed_names(table: tuple[LiveTable, Broker]) -> None:
    live, _ = table
    daemon = live.daemon
    assert daemon is not None
    live.port.write(beetek(*NATURAL))
    daemon.request("get_state", {})
    daemon.request("no_such_command", {})
    wait_until(lambda: daemon.publisher.flush(0), 15, "the round acknowledged")
    status, text = get(metrics_url(daemon))
    assert status == 200
    checked = subprocess.run(["promtool", "check", "metrics"], input=text, capture_output=True, check=False)
    assert checked.returncode == 0, checked.stderr.decode() + checked.stdout.decode()

    types: dict[str, str] = {}
    for family in text_string_to_metric_families(text.decode()):
        for sample in family.samples:
            name = sample.name
            assert name.startswith(("scannerd_", "process_")), name
            assert not name.endswith(NOT_BASE_UNITS) and "_total_" not in name, name
            assert name.endswith("_total") == (family.type == "counter"), (name, family.type)
            if name.startswith("scannerd_"):
                assert set(sample.labels) >= {"table_id"} and sample.labels["table_id"] == "T1", sample
        name = family.name + ("_total" if family.type == "counter" else "")
        types[name] = family.type
    assert {n: t for n, t in types.items() if n.startswith("scannerd_")} == NAMES
    requests = {
        (s.labels["command"], s.labels["status"])
        for f in text_string_to_metric_families(text.decode())
        if f.name == "scannerd_requests"
        for s in f.samples
    }
    assert ("get_state", "ok") in requests and ("other", "error") in requests


def healthz(daemon: Daemon) -> tuple[int, dict[str, Any]]:
    status, body = get(metrics_url(daemon, "/healthz"))
    assert body.count(b"\n") == 1, body
    return status, json.loads(body)


def problems(daemon: Daemon) -> set[str]:
    status, body = healthz(daemon)
    assert (status == 503) == bool(body.get("problems")), (status, body)
    return set(body.get("problems", {}))


@pytest.mark.timeout(60)
def test_healthz_follows_the_shoe_the_broker_and_the_outbox(
    tmp_path: Path, make_broker: Callable[..., Broker]
) -> None:
    broker = make_broker()
    mqtt = RECONNECT_1S | {"health_interval_s": 1}
    with live_table(
        tmp_path, broker, "beetek", in_process=True, mqtt=mqtt, metrics=METRICS, outbox={"max_bytes": 65536}
    ) as live:
        daemon = live.daemon
        assert daemon is not None
        wait_until(lambda: daemon.publisher.connected and daemon.reader.link_up, 15, "daemon up")
        interval = daemon.config.mqtt.health_interval_s
        assert healthz(daemon) == (200, {"status": "well"})

        live.port.unplug()
        wait_until(lambda: problems(daemon) == {"shoe"}, interval, "the shoe unplugged")
        live.port.plug()
        wait_until(lambda: problems(daemon) == set(), 5 + interval, "the shoe back")

        broker.stop()
        wait_until(lambda: problems(daemon) == {"broker"}, 5 + interval, "the broker stopped")
        while daemon.outbox.health().level != "full":  # the broker away: the outbox really fills
            before = daemon.outbox.health().pending
            live.port.write(beetek(*NATURAL))
            wait_until(lambda b=before: daemon.outbox.health().pending > b, 5, "a round stored")
        wait_until(lambda: problems(daemon) == {"broker", "outbox"}, interval, "the outbox full")
        _, said = healthz(daemon)
        assert "held" in said["problems"]["outbox"] and "not connected" in said["problems"]["broker"]
        broker.start()
        wait_until(lambda: problems(daemon) == set(), 20, "the broker back and the outbox emptied")


def test_off_loopback_every_request_needs_the_token_and_a_known_host(
    tmp_path: Path, make_broker: Callable[..., Broker]
) -> None:
    token = tmp_path / "metrics-token"
    token.write_text("s3cret\n")
    metrics = {"listen": "0.0.0.0:0", "token_file": str(token), "allowed_hosts": ["scrape.example"]}
    with live_table(tmp_path, make_broker(), "beetek", in_process=True, metrics=metrics) as live:
        assert live.daemon is not None
        url = metrics_url(live.daemon)
        bearer = {"Authorization": "Bearer s3cret"}
        assert get(url)[0] == 401
        assert get(url, {"Authorization": "Bearer wrong"})[0] == 401
        assert get(url, bearer)[0] == 200
        assert get(url.replace("/metrics", "/healthz"))[0] == 401
        assert get(url, bearer | {"Host": "evil.example"})[0] == 403  # DNS rebinding
        assert get(url, bearer | {"Host": "scrape.example:9466"})[0] == 200


def test_off_loopback_without_a_token_nothing_is_served_and_the_table_deals_on(
    tmp_path: Path, make_broker: Callable[..., Broker]
) -> None:
    with live_table(
        tmp_path, make_broker(), "beetek", in_process=True, metrics={"listen": "0.0.0.0:0"}
    ) as live:
        daemon = live.daemon
        assert daemon is not None and daemon.metrics is not None
        live.port.write(beetek(*NATURAL))
        wait_until(lambda: daemon.outbox.health().pending == 0 and daemon.validator.next_seq > 5, 15, "dealt")
        assert daemon.metrics.port is None and daemon.check() == []


def test_a_metrics_port_taken_leaves_the_table_dealing_and_is_served_once_it_is_free(
    tmp_path: Path, make_broker: Callable[..., Broker]
) -> None:
    """Another program holds the port: the table deals on and says so once; the port freed, the
    metrics come up by themselves, with no restart."""
    holder = socket.socket()
    holder.bind(("127.0.0.1", 0))
    holder.listen()
    port = holder.getsockname()[1]
    try:
        with live_table(
            tmp_path, make_broker(), "beetek", in_process=True, metrics={"listen": f"127.0.0.1:{port}"}
        ) as live:
            daemon = live.daemon
            assert daemon is not None and daemon.metrics is not None
            live.port.write(beetek(*NATURAL))
            wait_until(lambda: daemon.validator.next_seq > 5, 15, "the round dealt")
            assert daemon.metrics.port is None  # not listening: the port is another's
            holder.close()
            wait_until(lambda: daemon.metrics is not None and daemon.metrics.port == port, 20, "listening")
            assert get(f"http://127.0.0.1:{port}/healthz")[0] in (200, 503)
            assert daemon.check() == []
    finally:
        holder.close()
