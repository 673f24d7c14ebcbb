"""Where a card's latency goes: each step of its way, daemon against the bare bridge, and the floor.

Prints one JSON object. ``bench.latency`` says how much slower the daemon is
than the bare bridge; this says where the difference is spent, and what is
left of it with no outbox at all. Three processes run on their own ptys and
are fed the same shoes in turn at dealing pace:

- ``daemon``: ``scannerd run`` as on a table (outbox on disk);
- ``daemon_no_store``: the same daemon with the outbox's SQLite transactions
  replaced by bookkeeping in memory: the floor, what validating and
  publishing cost without keeping anything; no table may run like this;
- ``bare_bridge``: ``bench/bare_bridge.py``.

Each process runs under stamps: its hot-path functions are wrapped to note
``time.perf_counter()`` (the same clock in every process on Linux) at each
step. For every card, a step's figure is the time from the frame's write to
the pty to the first such stamp after it; the card event's
publish and socket write are told apart from other topics by their topic.

    python -m bench.latency_stages [--shoes 3] [--out docs/performance]
"""

from __future__ import annotations

import argparse
import bisect
import functools
import json
import random
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bench.support import (
    PREFIX,
    Subscriber,
    daemon_config,
    frame,
    machine,
    new_shoe,
    one_shoe,
    report,
    start_broker,
    stop_process,
    summary_ms,
    wait_bare_bridge,
    wait_device_up,
    work_dir,
)
from simulators.serial_pty import PtyPort

STEPS = {
    "daemon": ["read", "decoded", "judging", "judged", "storing", "stored", "publishing", "sending"],
    "bare_bridge": ["read", "publishing", "sending"],
}
"""The stamps each kind of process leaves, in the order a card passes them ("arrived" follows)."""

# ------------------------------------------------------------------ inside the measured processes

_stamps: list[tuple[str, float]] = []


def _stamp_around(owner: Any, attr: str, before: str | None = None, after: str | None = None) -> None:
    """Wrap ``owner.attr`` to stamp ``before`` it runs and ``after`` it returns."""
    inner = getattr(owner, attr)
    clock, stamps = time.perf_counter, _stamps

    @functools.wraps(inner)
    def stamped(*args: Any, **kwargs: Any) -> Any:
        if before:
            stamps.append((before, clock()))
        result = inner(*args, **kwargs)
        if after:
            stamps.append((after, clock()))
        return result

    setattr(owner, attr, stamped)


def _stamp_card_publish() -> None:
    """``publishing`` as the card event is handed to paho, ``sending`` as its packet goes to the socket.

    Both are stamped before the call: after it, the subscriber may already have the card.
    """
    import paho.mqtt.client as mqtt

    publish, sock_send = mqtt.Client.publish, mqtt.Client._sock_send
    clock, stamps = time.perf_counter, _stamps

    def stamped_publish(self: mqtt.Client, topic: str, *args: Any, **kwargs: Any) -> Any:
        if topic.endswith("/card"):
            stamps.append(("publishing", clock()))
        return publish(self, topic, *args, **kwargs)

    def stamped_send(self: mqtt.Client, data: bytes) -> int:
        if b"/card" in data[:80]:
            stamps.append(("sending", clock()))
        return sock_send(self, data)

    mqtt.Client.publish = stamped_publish  # type: ignore[method-assign]
    mqtt.Client._sock_send = stamped_send  # type: ignore[method-assign]


def _dump_on_signal(out: Path) -> None:
    signal.signal(signal.SIGUSR1, lambda *_: out.write_text(json.dumps(_stamps)))


def _run_daemon(config: str, out: Path, no_store: bool) -> None:
    import drivers.reader
    import drivers.serial_transport
    import scannerd.runtime.daemon
    import scannerd.store.outbox
    from scannerd.cli import main as scannerd_main

    _stamp_around(drivers.serial_transport.SerialDriver, "read", after="read")
    _stamp_around(drivers.reader.DeviceReader, "_deliver", before="decoded")
    # Around the table, from the daemon's side: the table and the validator may be compiled (mypyc),
    # whose classes take no wrapper.
    _stamp_around(scannerd.runtime.daemon.Daemon, "_device_event", before="judging")
    _stamp_around(scannerd.runtime.daemon.Daemon, "_take", before="judged")
    _stamp_around(scannerd.store.outbox.Outbox, "write", before="storing", after="stored")
    _stamp_card_publish()
    if no_store:
        _keep_nothing(scannerd.store.outbox.Outbox)
    _dump_on_signal(out)
    sys.argv = ["scannerd", "run", "--config", config]
    scannerd_main()


def _keep_nothing(outbox: Any) -> None:
    """The outbox's rows kept in memory, without SQLite: nothing reaches the disk.

    The publisher reads waiting rows back (``pending``) once paho's in-flight window is full, as it
    is when a loaded broker acknowledges slowly: rows that were kept nowhere were never sent then.
    """
    from scannerd.store.outbox import Stored

    def kept(self: Any) -> dict[int, Any]:
        return self.__dict__.setdefault("_in_memory", {})

    def write_rows(self: Any, batch: Any) -> list[int]:
        ids = list(range(self._last_id + 1, self._last_id + 1 + len(batch.messages)))
        self._count += len(batch.messages)
        self._bytes += batch.size
        if ids:
            self._last_id = ids[-1]
        kept(self).update(zip(ids, batch.messages, strict=True))  # the caller holds the lock
        return ids

    def forget(self: Any, ids: Any) -> None:
        with self._lock:
            rows = kept(self)
            self._count -= sum(rows.pop(i, None) is not None for i in ids)

    def pending(self: Any, limit: int = 100, after_id: int = 0) -> list[Stored]:
        with self._lock:  # in id order: the order they were written
            waiting = [Stored(i, m) for i, m in kept(self).items() if i > after_id]
        return waiting[:limit]

    outbox._write = write_rows
    outbox.remove = forget
    outbox.pending = pending


def _run_bare(port: str, host: str, broker_port: str, topic: str, out: Path) -> None:
    import serial

    from bench import bare_bridge

    _stamp_around(serial.Serial, "readline", after="read")
    _stamp_card_publish()
    _dump_on_signal(out)
    sys.argv = ["bare_bridge", port, host, broker_port, topic]
    bare_bridge.main()


# ------------------------------------------------------------------ the bench


@dataclass
class Process:
    name: str
    kind: str  # "daemon" or "bare_bridge": which stamps it leaves
    topic: str
    pty: PtyPort
    proc: subprocess.Popen[bytes]
    stamps_file: Path
    table_id: str | None = None
    cards: list[tuple[float, float]] = field(default_factory=list)  # (written, arrived)


def _child(args: list[str], log: Path) -> subprocess.Popen[bytes]:
    with log.open("ab") as out:
        return subprocess.Popen(
            [sys.executable, "-m", "bench.latency_stages", "--child", *args], stdout=out, stderr=out
        )


def start_processes(root: Path, broker: Any, sub: Subscriber) -> list[Process]:
    processes = []
    for name, table, no_store in (("daemon", "STAGES", False), ("daemon_no_store", "FLOOR", True)):
        pty = PtyPort()
        config = daemon_config(
            root / f"{table}.toml", table_id=table, port=pty.path, broker=broker, outbox=root / f"{table}.db"
        )
        stamps = root / f"{name}.json"
        proc = _child(
            ["daemon", str(config), str(stamps), *(["no-store"] if no_store else [])], root / f"{name}.log"
        )
        processes.append(Process(name, "daemon", f"{PREFIX}/{table}/card", pty, proc, stamps, table))
        wait_device_up(sub, table)
    pty, topic = PtyPort(), "bench/bare/card"
    stamps = root / "bare_bridge.json"
    proc = _child(["bare", pty.path, broker.host, str(broker.port), topic, str(stamps)], root / "bare.log")
    processes.append(Process("bare_bridge", "bare_bridge", topic, pty, proc, stamps))
    wait_bare_bridge(sub, pty, topic)
    return processes


def deal(process: Process, sub: Subscriber, cards: list[str], interval: float) -> None:
    written = []
    start = time.perf_counter()
    for i, card in enumerate(cards):
        delay = start + i * interval - time.perf_counter()
        if delay > 0:
            time.sleep(delay)
        # Stamped just before the write, not after: a process may read the frame (and stamp that)
        # before this one gets the CPU back. A 23-byte write to a pty takes microseconds.
        written.append(time.perf_counter())
        process.pty.write(frame(card))
    sub.wait(lambda arrivals: sum(1 for _, t, _ in arrivals if t == process.topic) >= len(cards), 30)
    time.sleep(0.05)
    arrived = [t for t, _ in sub.take(lambda t: t == process.topic)]
    if len(arrived) != len(cards):
        raise RuntimeError(f"{process.name}: {len(arrived)} of {len(cards)} cards arrived")
    process.cards += zip(written, arrived, strict=True)


def collect_stamps(process: Process) -> dict[str, list[float]]:
    process.proc.send_signal(signal.SIGUSR1)
    deadline = time.monotonic() + 10
    while not process.stamps_file.exists():
        if time.monotonic() > deadline:
            raise RuntimeError(f"{process.name} wrote no stamps")
        time.sleep(0.05)
    time.sleep(0.2)  # let the write finish
    by_step: dict[str, list[float]] = {}
    for step, t in json.loads(process.stamps_file.read_text()):
        by_step.setdefault(step, []).append(t)
    for times in by_step.values():
        times.sort()
    return by_step


def stages(process: Process, stamps: dict[str, list[float]]) -> dict[str, Any]:
    """Per step, the time from the frame written to the first stamp of that step, card by card.

    A card with no stamp of a step between its write and its arrival (cards fed so fast that
    another's work overlaps it) is left out of that step: its ``n`` says how many were paired.
    """
    since_write: dict[str, list[float]] = {step: [] for step in [*STEPS[process.kind], "arrived"]}
    for written, arrived in process.cards:
        for step in STEPS[process.kind]:
            times = stamps.get(step, [])
            i = bisect.bisect_left(times, written)
            if i < len(times) and times[i] <= arrived:
                since_write[step].append(times[i] - written)
        since_write["arrived"].append(arrived - written)
    return {step: summary_ms(values) for step, values in since_write.items()}


def ratio(a: dict[str, Any], b: dict[str, Any], key: str) -> float:
    return round(a["arrived"][key] / b["arrived"][key], 2)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shoes", type=int, default=3, help="8-deck shoes dealt to each process")
    parser.add_argument("--interval", type=float, default=0.025, help="seconds between cards")
    parser.add_argument(
        "--cards",
        type=int,
        help="deal only this many cards of each shoe (a quick check that every stamp is found)",
    )
    parser.add_argument("--out", type=Path, help="directory for latency_stages.json")
    parser.add_argument("--child", nargs=argparse.REMAINDER, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        run_child(args.child)
        return

    root = work_dir("latency-stages")
    broker = start_broker(root)
    topics = [f"{PREFIX}/+/card", f"{PREFIX}/+/device", f"{PREFIX}/+/response/+", "bench/bare/card"]
    sub = Subscriber(broker, topics)
    result: dict[str, Any] = {"benchmark": "latency_stages", "machine": machine()}
    processes: list[Process] = []
    try:
        processes = start_processes(root, broker, sub)
        rng = random.Random(11)
        for _ in range(args.shoes):
            cards = one_shoe(rng)[: args.cards]
            for process in processes:
                if process.table_id is not None:
                    new_shoe(sub, process.table_id)
                deal(process, sub, cards, args.interval)
        by_process = {p.name: stages(p, collect_stamps(p)) for p in processes}
    finally:
        for process in processes:
            stop_process(process.proc)
            process.pty.close()
        sub.close()
        broker.stop()
    bare = by_process["bare_bridge"]
    result.update(
        {
            "settings": {
                "shoes": args.shoes,
                "cards_per_process": len(processes[0].cards),
                "interval_ms": args.interval * 1e3,
            },
            "ms_since_frame_written": by_process,
            "ratio_to_bare_bridge": {
                name: {"p50": ratio(steps, bare, "p50_ms"), "p99": ratio(steps, bare, "p99_ms")}
                for name, steps in by_process.items()
                if name != "bare_bridge"
            },
        }
    )
    report(result, args.out, "latency_stages")
    shutil.rmtree(root, ignore_errors=True)


def run_child(argv: list[str]) -> None:
    runners: dict[str, Callable[[list[str]], None]] = {
        "daemon": lambda a: _run_daemon(a[0], Path(a[1]), no_store=a[2:] == ["no-store"]),
        "bare": lambda a: _run_bare(a[0], a[1], a[2], a[3], Path(a[4])),
    }
    runners[argv[0]](argv[1:])


if __name__ == "__main__":
    main()
