"""Card latency: last byte of a frame written to the pty -> the event at an MQTT subscriber.

Prints one JSON object. Three bridges run side by side on their own ptys,
publishing to one local Mosquitto, and are fed in turn, block by block, so
they see the same machine at the same moments:

- ``daemon``: ``scannerd run`` (Bee-Tek driver, validator, SQLite outbox
  committed and fsynced for every read, publisher), the outbox on disk as on
  a table PC;
- ``daemon_outbox_tmpfs``: the same with its outbox on tmpfs, where fsync
  costs nothing: the difference to ``daemon`` is what the disk costs;
- ``bare_bridge``: the baseline (``bench/bare_bridge.py``): pyserial read,
  paho publish, nothing else.

Cards come as real 8-deck shoes, each opened with ``new_shoe`` as the game
server would, at dealing pace (one every ``--interval`` seconds, so each is
handled alone) and in bursts (``--burst`` frames back to back). The ratio of
the daemon's p99 to the baseline's is the figure that is judged (target 1.3);
the absolute figures depend on the machine and its load. The cost of one
outbox commit on the same disk is measured too.

    python -m bench.latency [--shoes 10] [--out docs/performance]
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import subprocess
import sys
import tempfile
import time
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
    pyplot,
    report,
    start_broker,
    start_daemon,
    stop_process,
    summary_ms,
    wait_bare_bridge,
    wait_device_up,
    work_dir,
)
from scannerd.contract.topics import Message
from scannerd.core.table import SavedState
from scannerd.store.outbox import Outbox
from simulators.serial_pty import PtyPort

TARGET_RATIO = 1.3
MODES = ("paced", "burst")


@dataclass
class Bridge:
    name: str
    table_id: str | None  # None for the bare bridge, which knows nothing of shoes
    topic: str
    pty: PtyPort
    proc: subprocess.Popen[bytes]
    samples: dict[str, list[float]] = field(default_factory=lambda: {m: [] for m in MODES})
    lost: int = 0


def start_bridges(root: Path, shm: Path, broker: Any, sub: Subscriber) -> list[Bridge]:
    bridges = []
    for name, table, outbox in (
        ("daemon", "LAT", root / "outbox.sqlite3"),
        ("daemon_outbox_tmpfs", "LATMEM", shm / "outbox.sqlite3"),
    ):
        pty = PtyPort()
        config = daemon_config(
            root / f"{table}.toml", table_id=table, port=pty.path, broker=broker, outbox=outbox
        )
        proc = start_daemon(config, root / f"{table}.log")
        bridges.append(Bridge(name, table, f"{PREFIX}/{table}/card", pty, proc))
        wait_device_up(sub, table)
    pty = PtyPort()
    topic = "bench/bare/card"
    proc = subprocess.Popen(
        [sys.executable, "-m", "bench.bare_bridge", pty.path, broker.host, str(broker.port), topic]
    )
    bridges.append(Bridge("bare_bridge", None, topic, pty, proc))
    wait_bare_bridge(sub, pty, topic)
    return bridges


def feed(bridge: Bridge, sub: Subscriber, cards: list[str], mode: str, args: argparse.Namespace) -> None:
    """Write ``cards`` to the bridge's pty, then pair each write with its arrival, in order."""
    written: list[float] = []
    start = time.perf_counter()
    for i, card in enumerate(cards):
        if mode == "paced":
            delay = start + i * args.interval - time.perf_counter()
        else:
            delay = args.burst_gap if i and i % args.burst == 0 else 0.0
        if delay > 0:
            time.sleep(delay)
        bridge.pty.write(frame(card))
        written.append(time.perf_counter())
    sub.wait(lambda arrivals: sum(1 for _, t, _ in arrivals if t == bridge.topic) >= len(cards), 30)
    time.sleep(0.05)  # anything extra would be a bug: let it show
    arrived = sub.take(lambda t: t == bridge.topic)
    if len(arrived) != len(cards):
        bridge.lost += len(cards) - len(arrived)
    for (t_arrival, payload), t_written, card in zip(arrived, written, cards, strict=False):
        if bridge.name != "bare_bridge" and json.loads(payload)["card"] != card:
            raise RuntimeError(f"{bridge.name}: expected {card}, got {payload!r}")
        bridge.samples[mode].append(t_arrival - t_written)


def outbox_commit_times(root: Path, n: int = 500) -> list[float]:
    """One event and its state per transaction, committed and fsynced, as the daemon stores a read."""
    times = []
    payload = json.dumps({"kind": "card", "card": "AS", "position": "player1", "pad": "x" * 150}).encode()
    with Outbox(root / "commit-probe.sqlite3") as outbox:
        for seq in range(1, n + 1):
            t = time.perf_counter()
            state = SavedState({"next_seq": seq + 1}).to_dict()
            outbox.put([Message(seq, f"{PREFIX}/X/card", payload)], state)
            times.append(time.perf_counter() - t)
    return times


def ratio(a: dict[str, Any], b: dict[str, Any]) -> float | None:
    return round(a["p99_ms"] / b["p99_ms"], 2) if a.get("n") and b.get("n") else None


def plot(bridges: list[Bridge], path: Path) -> None:
    plt = pyplot()
    if plt is None:
        return
    fig, axes = plt.subplots(1, 2, figsize=(11, 4), sharey=False)
    for ax, mode in zip(axes, MODES, strict=True):
        top = max(max(b.samples[mode]) for b in bridges) * 1e3
        bins = [top * i / 120 for i in range(121)]
        for b in bridges:
            ax.hist(
                [s * 1e3 for s in b.samples[mode]], bins=bins, histtype="step", label=b.name, linewidth=1.3
            )
        ax.set_yscale("log")
        ax.set_xlabel("latency, ms (pty write -> MQTT subscriber)")
        ax.set_ylabel("cards")
        ax.set_title(f"{mode}")
        ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shoes", type=int, default=10, help="8-deck shoes dealt in each mode")
    parser.add_argument("--interval", type=float, default=0.025, help="seconds between paced cards")
    parser.add_argument("--burst", type=int, default=10, help="frames written back to back")
    parser.add_argument("--burst-gap", type=float, default=0.25, help="seconds between bursts")
    parser.add_argument("--out", type=Path, help="directory for latency.json and latency.png")
    args = parser.parse_args()

    root = work_dir("latency")
    shm = Path(tempfile.mkdtemp(prefix="scannerd-latency-", dir="/dev/shm"))
    broker = start_broker(root)
    sub = Subscriber(
        broker, [f"{PREFIX}/+/card", f"{PREFIX}/+/device", f"{PREFIX}/+/response/+", "bench/bare/card"]
    )
    bridges: list[Bridge] = []
    result: dict[str, Any] = {"benchmark": "latency", "machine": machine()}
    try:
        bridges = start_bridges(root, shm, broker, sub)
        rng = random.Random(7)
        # Shoe by shoe, each mode in turn, the bridges taking turns with the same cards.
        for _ in range(args.shoes):
            for mode in MODES:
                cards = one_shoe(rng)
                for bridge in bridges:
                    if bridge.table_id is not None:
                        new_shoe(sub, bridge.table_id)
                    feed(bridge, sub, cards, mode, args)
        commits = outbox_commit_times(root)
        for bridge in bridges:
            if bridge.proc.poll() is not None:
                raise RuntimeError(f"{bridge.name} exited with {bridge.proc.returncode} during the run")
    finally:
        for bridge in bridges:
            stop_process(bridge.proc)
            bridge.pty.close()
        sub.close()
        broker.stop()

    by_mode = {mode: {b.name: summary_ms(b.samples[mode]) for b in bridges} for mode in MODES}
    by_mode["all"] = {b.name: summary_ms(b.samples["paced"] + b.samples["burst"]) for b in bridges}
    result.update(
        {
            "settings": {
                "shoes_per_mode": args.shoes,
                "cards_per_bridge_and_mode": len(bridges[0].samples["paced"]),
                "interval_ms": args.interval * 1e3,
                "burst": args.burst,
                "burst_gap_ms": args.burst_gap * 1e3,
            },
            **by_mode,
            "p99_ratio": {m: ratio(by_mode[m]["daemon"], by_mode[m]["bare_bridge"]) for m in by_mode},
            "p99_ratio_outbox_tmpfs": {
                m: ratio(by_mode[m]["daemon_outbox_tmpfs"], by_mode[m]["bare_bridge"]) for m in by_mode
            },
            "target_p99_ratio": TARGET_RATIO,
            "outbox_commit": summary_ms(commits),
            "lost": {b.name: b.lost for b in bridges},
        }
    )
    report(result, args.out, "latency", lambda path: plot(bridges, path))
    shutil.rmtree(root, ignore_errors=True)
    shutil.rmtree(shm, ignore_errors=True)


if __name__ == "__main__":
    main()
