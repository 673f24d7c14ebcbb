"""The pit's own ``/metrics``: whether it hears the tables, for the monitoring that watches the pit.

A pit that stopped delivering would keep serving a stale wall that looks
live. Its broker link, what it drops and each restart of its client's
delivery are counted here for Prometheus, beside the header line the page
shows. Read when scraped: nothing is kept for it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

from scannerd.client.table_client import ClientHealth


class PitCollector(Collector):
    """The pit's figures at scrape time, from its client's health and its board's counts."""

    def __init__(self, health: Callable[[], ClientHealth], board: Callable[[], dict[str, int | bool | None]]):
        self._health = health
        self._board = board

    def collect(self) -> Iterable[Metric]:
        health, board = self._health(), self._board()
        ignored = CounterMetricFamily(
            "scannerd_pit_messages_ignored", "Messages dropped as no table's, by reason.", labels=["reason"]
        )
        for reason, count in sorted(health.ignored.items()):
            ignored.add_metric([reason], count)
        yield ignored
        yield CounterMetricFamily(
            "scannerd_pit_delivery_restarts",
            "Times the pit's client had to start its delivery again after it failed.",
            value=health.delivery_restarts,
        )
        yield GaugeMetricFamily(
            "scannerd_pit_broker_connected",
            "1 while the pit has its broker.",
            value=float(board["broker"] is True),
        )
        tables = GaugeMetricFamily("scannerd_pit_tables", "Tables on the wall, by state.", labels=["state"])
        for state in ("online", "offline"):
            tables.add_metric([state], float(board[state] or 0))
        yield tables


def exposition(collector: PitCollector) -> Callable[[], bytes]:
    """What ``/metrics`` answers, in Prometheus's text format."""
    registry = CollectorRegistry(auto_describe=False)
    registry.register(collector)
    return lambda: generate_latest(registry)
