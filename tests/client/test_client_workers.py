"""The client library in worker processes: killed mid-stream, and two workers sharing the tables.

The workers are ``tests/support/client.py`` processes: each writes what it is
given into the marks database through the client's transaction, so the
database is exactly what the game server did.
"""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from scannerd.core.cards import ALL_CARDS
from scannerd.link.mqtt_settings import MqttSettings
from scannerd.link.publisher import Publisher
from tests.support.broker import Broker, answer_get_state, sample_events, store, wait_until
from tests.support.client import handled
from tests.support.fault import EventLog
from tests.support.frames import beetek
from tests.support.process import live_table

ROOT = Path(__file__).resolve().parents[2]


class Worker:
    """One ``tests.support.client`` process."""

    def __init__(self, broker: Broker, marks: Path, client_id: str, group: str | None = None) -> None:
        argv = [sys.executable, "-m", "tests.support.client", broker.host, str(broker.port), str(marks)]
        argv += [client_id, *([group] if group else [])]
        self.log = marks.with_name(f"{client_id}.log")
        with self.log.open("a") as err:
            self.proc = subprocess.Popen(argv, cwd=ROOT, stdout=subprocess.PIPE, stderr=err, text=True)
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()  # bounded by the client's own 10 s start timeout
        if line != "ready\n":
            self.proc.kill()
            self.proc.wait(10)
            raise AssertionError(f"worker {client_id} did not start: {line!r}")

    def kill(self) -> None:
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait(10)

    def stop(self) -> str:
        if self.proc.poll() is None:
            self.proc.terminate()
            self.proc.wait(15)
        assert self.proc.stdout is not None
        return self.proc.stdout.read()


@pytest.mark.timeout(120)
def test_a_consumer_killed_mid_stream_gets_every_event_exactly_once_in_order(
    tmp_path, make_broker: Callable[..., Broker]
) -> None:
    broker = make_broker(persistence=True)  # keeps the consumer's session and its queue
    marks = tmp_path / "marks.sqlite3"
    worker: Worker | None = None
    stored = EventLog()
    rng = random.Random(7)
    dealt = threading.Event()
    with live_table(tmp_path, broker, "beetek", in_process=True, start=False) as table:
        daemon = table.build()
        daemon.listeners.append(stored)

        def deal() -> None:
            for _ in range(400):
                table.port.write(beetek(rng.choice(ALL_CARDS)))
                time.sleep(0.005)
            dealt.set()

        try:
            worker = Worker(broker, marks, "game-server")
            table.start()
            wait_until(lambda: daemon.publisher.connected and daemon.reader.link_up, 15, "daemon up")
            dealer = threading.Thread(target=deal, daemon=True)
            dealer.start()
            wait_until(lambda: len(handled(marks)) >= 150, 30, "the worker to handle 150 events")
            worker.kill()
            before_kill = len(handled(marks))
            time.sleep(0.5)  # the table keeps dealing while the game server is down
            worker = Worker(broker, marks, "game-server")
            assert dealt.wait(60), "the dealing did not finish"
            dealer.join()
            assert daemon.publisher.flush(20)
            last = daemon.validator.next_seq - 1
            wait_until(lambda: any(seq == last for _, _, seq, _ in handled(marks)), 30, f"seq {last}")
        finally:
            table.kill(signal.SIGTERM)  # before the worker, which is to see every event the table stored
            output = worker.stop() if worker is not None else ""  # never left running after the test

    rows = handled(marks)
    assert [(t, seq, kind) for _, t, seq, kind in rows] == [("T1", e.seq, e.kind) for e in stored.events]
    assert rows[0][2] > 10**12  # the table's clock floor, not 1
    assert 0 < before_kill < len(rows) - 100  # killed mid-stream, with much still to come
    assert "gap" not in output


@pytest.mark.timeout(120)
def test_two_workers_in_a_share_group_split_the_events_and_keep_each_table_in_order(
    tmp_path, make_broker: Callable[..., Broker], make_publisher: Callable[..., Publisher]
) -> None:
    broker = make_broker()
    marks = tmp_path / "marks.sqlite3"
    workers: list[Worker] = []
    settings = MqttSettings(host=broker.host, port=broker.port)
    floor = int(time.time() * 1000)
    streams = {t: sample_events(floor + 1000 * i, 120, t) for i, t in enumerate(("T1", "T2", "T3"))}
    tables = {
        t: make_publisher(settings, table_id=t, on_request=answer_get_state(events[-1].seq, t))
        for t, events in streams.items()
    }
    try:
        workers += [Worker(broker, marks, f"worker-{n}", group="game-servers") for n in (1, 2)]
        for i in range(0, 120, 3):
            for t, pub in tables.items():
                store(pub, streams[t][i : i + 3])
        assert all(pub.flush(20) for pub in tables.values())
        wait_until(lambda: len(handled(marks)) >= 360, 60, "every event handled")
        time.sleep(0.3)  # a repeat would show up now
    finally:
        outputs = [w.stop() for w in workers]
    rows = handled(marks)
    for t, events in streams.items():
        assert [seq for _, table, seq, _ in rows if table == t] == [e.seq for e in events]
    by_worker = {w for w, *_ in rows}
    assert by_worker == {"worker-1", "worker-2"}  # both did a share of the work
    assert not any("gap" in out for out in outputs)
    assert os.path.getsize(marks) > 0


@pytest.mark.timeout(120)
def test_a_consumer_killed_while_its_table_publishes_a_backlog_loses_nothing(
    tmp_path, make_broker: Callable[..., Broker], make_publisher: Callable[..., Publisher]
) -> None:
    """1,500 events while the worker is dead: Mosquitto's default queue (1000) dropped the rest."""
    broker = make_broker()  # the shipped settings
    marks = tmp_path / "marks.sqlite3"
    events = sample_events(int(time.time() * 1000), 1600)
    pub = make_publisher(
        MqttSettings(host=broker.host, port=broker.port), on_request=answer_get_state(events[-1].seq)
    )
    worker = Worker(broker, marks, "game-server")
    try:
        store(pub, events[:100])
        wait_until(lambda: len(handled(marks)) == 100, 30, "the first events")
        worker.kill()
        for i in range(100, len(events), 50):  # the table deals on; the session queues it all
            store(pub, events[i : i + 50])
        assert pub.flush(30)
        worker = Worker(broker, marks, "game-server")
        wait_until(lambda: len(handled(marks)) >= len(events), 60, "every event")
    finally:
        output = worker.stop()
    assert [seq for _, _, seq, _ in handled(marks)] == [e.seq for e in events]
    assert "gap" not in output
