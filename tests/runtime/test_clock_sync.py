"""The table's clock: read from the kernel in one place, reported in health, CLOCK_UNSYNCED while it is off.

The reading is faked where the daemon takes it (``clock_sync.read``) in a
daemon of the test's own process, on a real Mosquitto: the alert is raised
when the clock stops being synchronised or its estimated error passes the
house limit, and the table clears it itself (republished acknowledged, with
``cleared``) once the clock is well again, across a restart too.
"""

from __future__ import annotations

import json
import math
import signal
from pathlib import Path
from typing import Any

import pytest

from scannerd.contract.alert_catalogue import PIT_ONLY_CODES
from scannerd.contract.events import AlertEvent
from scannerd.recording.replay import replay
from scannerd.runtime import clock_sync
from scannerd.runtime.clock_sync import STA_UNSYNC, TIME_ERROR, ClockReading
from tests.support.broker import Broker, GameServer, event_seqs, wait_until
from tests.support.process import live_table

EVENTS = ("/card", "/round", "/alert", "/shoe")
WELL = ClockReading(synchronised=True, est_error_s=0.002, max_error_s=0.05)
OFF = ClockReading(synchronised=True, est_error_s=0.5, max_error_s=0.9)
UNSYNCED = ClockReading(synchronised=False, est_error_s=16.0, max_error_s=16.0)
JUST_OVER = ClockReading(synchronised=True, est_error_s=0.101, max_error_s=0.2)
JUST_UNDER = ClockReading(synchronised=True, est_error_s=0.099, max_error_s=0.2)
GOOD_AGAIN = ClockReading(synchronised=True, est_error_s=0.075, max_error_s=0.2)
"""With a limit of 0.1 s: a clock sitting at it, over and under by a millisecond; one back under 80%."""


def test_the_kernels_clock_state_reads_on_this_machine() -> None:
    reading = clock_sync.read()
    assert reading is not None  # Linux: adjtimex reads without privileges
    assert isinstance(reading.synchronised, bool)
    for error in (reading.est_error_s, reading.max_error_s):
        assert math.isfinite(error) and 0 <= error <= 100  # the kernel caps its maximum error at 16 s
    assert reading.est_error_s <= reading.max_error_s or not reading.synchronised


def test_a_clock_judged_off_is_well_again_only_back_under_the_margin() -> None:
    assert JUST_UNDER.well(0.1) and not JUST_UNDER.well(0.1, off=True)
    assert GOOD_AGAIN.well(0.1, off=True) and not UNSYNCED.well(100.0, off=False)


def test_unsynchronised_is_the_flag_or_the_calls_answer() -> None:
    assert ClockReading.of(0, 0, 1500, 9000) == ClockReading(True, 0.0015, 0.009)
    assert not ClockReading.of(0, STA_UNSYNC, 0, 0).synchronised
    assert not ClockReading.of(TIME_ERROR, 0, 0, 0).synchronised
    assert WELL.well(0.1) and not OFF.well(0.1) and not UNSYNCED.well(100.0)


def clock_alerts(server: GameServer) -> list[dict[str, Any]]:
    return [a for a in server.payloads("/alert") if a["code"] == "CLOCK_UNSYNCED"]


def health_clock_where(server: GameServer, well: bool) -> dict[str, Any]:
    server.wait_for(lambda got: any(h["clock"]["well"] is well for h in server.payloads("/health")), 30)
    return next(h["clock"] for h in reversed(server.payloads("/health")) if h["clock"]["well"] is well)


def test_an_unsynchronised_or_inexact_clock_raises_the_alert_and_it_clears_itself(
    tmp_path: Path, mosquitto: Broker, monkeypatch: pytest.MonkeyPatch
) -> None:
    reading = [WELL]
    monkeypatch.setattr(clock_sync, "read", lambda: reading[0])
    clock = {"alert": True, "max_error_s": 0.1}
    with live_table(
        tmp_path,
        mosquitto,
        "beetek",
        in_process=True,
        clock=clock,
        mqtt={"health_interval_s": 0.2},
        record={"dir": str(tmp_path / "recordings")},
    ) as table:
        server = table.server
        assert health_clock_where(server, True) == {
            "synchronised": True, "est_error_s": 0.002, "max_error_s": 0.05, "limit_s": 0.1, "well": True
        }  # fmt: skip
        assert clock_alerts(server) == []

        reading[0] = OFF  # synchronised, but off by more than the house limit
        server.wait_for(lambda got: len(clock_alerts(server)) == 1, 30)
        (raised,) = clock_alerts(server)
        AlertEvent.model_validate(raised)
        assert raised["severity"] == "warning" and not raised["acknowledged"] and "cleared" not in raised
        assert "estimated error 0.5 s" in raised["message"] and "0.1 s" in raised["message"]
        assert "CLOCK_UNSYNCED" in PIT_ONLY_CODES  # the pit's to act on, not the dealer's
        assert health_clock_where(server, False)["est_error_s"] == 0.5

        reading[0] = WELL
        server.wait_for(lambda got: len(clock_alerts(server)) == 2, 30)
        cleared = clock_alerts(server)[1]
        AlertEvent.model_validate(cleared)
        assert (cleared["alert_id"], cleared["acknowledged"], cleared["cleared"]) == (
            raised["alert_id"],
            True,
            True,
        )
        assert cleared["seq"] > raised["seq"]
        assert table.daemon is not None and table.daemon.validator.open_alerts == {}

        reading[0] = UNSYNCED  # a new episode is a new alert
        server.wait_for(lambda got: len(clock_alerts(server)) == 3, 30)
        again = clock_alerts(server)[2]
        assert again["alert_id"] > raised["alert_id"] and "not synchronised" in again["message"]

        # Still unsynchronised after a restart: the open alert stands, none is added; then it clears.
        table.kill(signal.SIGTERM)
        table.start()
        server.wait_for(lambda got: len(server.payloads("/status")) >= 3, 30)
        assert table.daemon is not None
        assert [a["code"] for a in table.daemon.validator.open_alerts.values()] == ["CLOCK_UNSYNCED"]
        reading[0] = WELL
        server.wait_for(lambda got: len(clock_alerts(server)) == 4, 30)
        last = clock_alerts(server)[3]
        assert (last["alert_id"], last["cleared"]) == (again["alert_id"], True)
        assert len(clock_alerts(server)) == 4
        replayed_as_published(table)


def test_an_error_sitting_at_the_limit_raises_the_alert_once_and_it_clears_when_the_clock_is_good(
    tmp_path: Path, mosquitto: Broker, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A millisecond over the limit, then under, reading after reading: one alert, which stands across a
    restart, and clears once the error is back under the margin below the limit."""
    reading, reads = [WELL], [0]

    def read() -> ClockReading:
        reads[0] += 1
        return reading[0] if reading[0] is not JUST_OVER else (JUST_OVER, JUST_UNDER)[reads[0] % 2]

    def readings(n: int) -> None:
        then = reads[0]
        wait_until(lambda: reads[0] >= then + n, 30, f"{n} readings of the clock")

    monkeypatch.setattr(clock_sync, "read", read)
    clock = {"alert": True, "max_error_s": 0.1}
    with live_table(
        tmp_path,
        mosquitto,
        "beetek",
        in_process=True,
        clock=clock,
        mqtt={"health_interval_s": 0.2},
        record={"dir": str(tmp_path / "recordings")},
    ) as table:
        server = table.server
        health_clock_where(server, True)
        reading[0] = JUST_OVER  # over, under, over, under...
        readings(6)
        assert [(a["acknowledged"], "cleared" in a) for a in published_clock_alerts(table)] == [
            (False, False)
        ]
        assert table.daemon is not None and table.daemon.clock_health() is not None
        assert table.daemon.clock_health().well is False  # type: ignore[union-attr]

        # Started again a millisecond under the limit: the alert from before stands.
        table.kill(signal.SIGTERM)
        reading[0] = JUST_UNDER
        table.start()
        readings(3)
        assert len(published_clock_alerts(table)) == 1
        reading[0] = GOOD_AGAIN
        server.wait_for(lambda got: len(clock_alerts(server)) == 2, 30)
        raised, cleared = clock_alerts(server)
        assert (cleared["alert_id"], cleared["cleared"]) == (raised["alert_id"], True)
        readings(3)
        assert len(published_clock_alerts(table)) == 2
        replayed_as_published(table)


def published_clock_alerts(table: Any) -> list[dict[str, Any]]:
    """Every CLOCK_UNSYNCED event the daemon judged so far, once the broker has passed them all on."""
    assert table.daemon is not None
    last = table.daemon.validator.next_seq - 1
    table.server.wait_for(lambda got: last in event_seqs(got), 30)
    return clock_alerts(table.server)


def replayed_as_published(table: Any) -> None:
    """The recordings replay to exactly the events the table published, its clock's alerts included:
    their cause is no device byte and no command, so the recording must keep it."""
    assert table.daemon is not None
    table.daemon.stop()
    live = {
        json.loads(m.payload)["seq"]: m.payload for m in table.server.messages() if m.topic.endswith(EVENTS)
    }
    files = sorted((table.config.parent / "recordings").glob("*.jsonl*"))
    assert files
    again = {
        json.loads(m.payload)["seq"]: m.payload for f in files for m in replay(f) if m.topic.endswith(EVENTS)
    }
    assert again == live


def test_with_the_alert_off_the_clock_is_reported_and_nothing_raised(
    tmp_path: Path, mosquitto: Broker, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(clock_sync, "read", lambda: UNSYNCED)
    with live_table(tmp_path, mosquitto, "beetek", in_process=True, mqtt={"health_interval_s": 0.2}) as table:
        clock = health_clock_where(table.server, False)
        assert clock["synchronised"] is False and clock["est_error_s"] == 16.0
        assert clock_alerts(table.server) == []
