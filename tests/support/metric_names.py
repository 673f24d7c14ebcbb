"""The metrics a table serves on ``/metrics``: the one list the rules, the dashboard and the endpoint share.

Every name here carries the constant label ``table_id`` as well as the labels
listed beside it. What watches a table (the alerting rules, the Grafana
dashboard) may name only these, so a metric renamed on one side is caught on
the other instead of leaving a panel blank or an alert that can never fire.
"""

from __future__ import annotations

import re

CONSTANT_LABELS = frozenset({"table_id"})

METRICS: dict[str, frozenset[str]] = {
    "scannerd_build_info": frozenset({"version", "digest", "driver", "game"}),
    "scannerd_cards_total": frozenset(),
    "scannerd_rounds_total": frozenset({"result"}),
    "scannerd_alerts_total": frozenset({"code", "severity"}),
    "scannerd_voids_total": frozenset({"reason"}),
    "scannerd_open_alerts": frozenset({"severity"}),
    "scannerd_suspended": frozenset(),
    "scannerd_outbox_events": frozenset(),
    "scannerd_outbox_oldest_age_seconds": frozenset(),
    "scannerd_outbox_bytes": frozenset(),
    "scannerd_outbox_free_bytes": frozenset(),
    "scannerd_events_published_total": frozenset(),
    "scannerd_events_acknowledged_total": frozenset(),
    "scannerd_broker_connected": frozenset(),
    "scannerd_broker_reconnects_total": frozenset(),
    "scannerd_card_latency_seconds": frozenset(),
    "scannerd_codec_junk_bytes_total": frozenset(),
    "scannerd_codec_bad_frames_total": frozenset(),
    "scannerd_device_link_up": frozenset(),
    "scannerd_device_reconnects_total": frozenset(),
    "scannerd_requests_total": frozenset({"command", "status"}),
    "scannerd_clock_synchronised": frozenset(),
    "scannerd_clock_estimated_error_seconds": frozenset(),
    "scannerd_start_time_seconds": frozenset(),
    "scannerd_archive_files_behind": frozenset(),
    "scannerd_archive_oldest_age_seconds": frozenset(),
    "scannerd_archive_files_total": frozenset(),
    "scannerd_archive_errors_total": frozenset(),
}
"""Each metric the table serves, by name, with its labels other than the constant ones."""

HISTOGRAMS = frozenset({"scannerd_card_latency_seconds"})
"""Served as ``_bucket`` (with ``le``), ``_sum`` and ``_count`` series rather than under their own name."""

ROUND_RESULTS = ("player", "banker", "dragon", "tiger", "tie", "void")
"""The values of ``scannerd_rounds_total``'s ``result``."""

PROCESS = re.compile(r"process_[a-z_]+")
"""The client library's own process metrics (memory, CPU, descriptors, start time)."""

SCRAPE_SERIES = frozenset({"up"})
"""What Prometheus itself records for every target it scrapes, the only way to see a table that is gone."""


def series(name: str) -> tuple[str, frozenset[str]] | None:
    """The metric a series name belongs to and the labels it may carry; None for a name no table serves."""
    if name in METRICS and name not in HISTOGRAMS:
        return name, METRICS[name] | CONSTANT_LABELS
    for histogram in HISTOGRAMS:
        for suffix, extra in (("_bucket", {"le"}), ("_sum", set()), ("_count", set())):
            if name == histogram + suffix:
                return histogram, METRICS[histogram] | CONSTANT_LABELS | extra
    if PROCESS.fullmatch(name):
        return name, CONSTANT_LABELS
    return None
