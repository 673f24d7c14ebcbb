"""Many tables on one machine: N daemons, N simulated shoes, one broker, one consumer checking every seq.

Prints one JSON object. The number of tables doubles (1, 2, 4, ... up to
``--max-tables``); the daemons already running keep running and new ones
join. At each step every shoe deals a card every ``--pace`` seconds (the
tables staggered, as real tables are) for ``--seconds``, and the consumer,
subscribed to every table's events, checks per table that ``seq`` runs on
without a gap (after dropping repeats) and that every card dealt arrived,
and measures each card's latency from its last byte on the pty to its
arrival. A step passes with zero loss, no gap and p99 under 20 ms; the
answer is the largest N that passes. Loopback only: broker, daemons and
consumer share the machine, so the daemons compete with them for the CPU.

    python -m bench.many_tables [--max-tables 32] [--seconds 30] [--out docs/performance]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bench.support import (
    PREFIX,
    Broker,
    Subscriber,
    daemon_config,
    frame,
    machine,
    pyplot,
    report,
    start_broker,
    start_daemon,
    stop_process,
    summary_ms,
    wait_device_up,
    work_dir,
)
from scannerd.contract.topics import EVENT_KINDS
from scannerd.core.cards import ALL_CARDS
from simulators.serial_pty import PtyPort
from tests.support.nats_cluster import NatsCluster

P99_TARGET_MS = 20.0


@dataclass
class Table:
    table_id: str
    pty: PtyPort
    proc: subprocess.Popen[bytes]
    written: list[float] = field(default_factory=list)  # write times of this step's cards
    highest_seq: int | None = None  # the consumer's de-duplication state, kept across steps
    # (None until the first event: a new table's first seq is its clock's, see docs/mqtt.md)


def start_tables(
    root: Path, broker: Broker | NatsCluster, sub: Subscriber, first: int, count: int
) -> list[Table]:
    tables = []
    for k in range(first, first + count):
        table_id = f"T{k:03d}"
        pty = PtyPort()
        config = daemon_config(
            root / f"{table_id}.toml",
            table_id=table_id,
            port=pty.path,
            broker=broker,
            outbox=root / f"{table_id}.db",
        )
        tables.append(Table(table_id, pty, start_daemon(config, root / f"{table_id}.log")))
    for table in tables:
        wait_device_up(sub, table.table_id, timeout=120)
    return tables


def deal(tables: list[Table], seconds: float, pace: float, rng: random.Random) -> None:
    """Each table a card every ``pace`` seconds, the tables' turns spread evenly over the interval."""
    n = len(tables)
    start = time.perf_counter() + 0.1
    rounds = int(seconds / pace)
    for r in range(rounds):
        for k, table in enumerate(tables):
            delay = start + r * pace + k * pace / n - time.perf_counter()
            if delay > 0:
                time.sleep(delay)
            table.pty.write(frame(rng.choice(ALL_CARDS)))
            table.written.append(time.perf_counter())


def check(tables: list[Table], sub: Subscriber) -> dict[str, Any]:
    """Pair each card with its arrival; follow every event's seq per table."""
    expected = sum(len(t.written) for t in tables)

    def all_cards_in(arrivals: list[tuple[float, str, bytes]]) -> bool:
        return sum(1 for _, topic, _ in arrivals if topic.endswith("/card")) >= expected

    sub.wait(all_cards_in, 60)
    time.sleep(1.0)  # let the rounds' trailing events (round complete, shoe) arrive too
    arrivals = sub.take(lambda topic: topic.rsplit("/", 1)[-1] in EVENT_KINDS)
    by_table: dict[str, list[tuple[float, str, dict[str, Any]]]] = {}
    for t, payload in arrivals:
        event = json.loads(payload)
        by_table.setdefault(event["table_id"], []).append((t, event["kind"], event))
    latencies: list[float] = []
    lost = gaps = repeats = 0
    missing: list[str] = []  # the first few gaps, to say which events went missing
    for table in tables:
        cards = []
        for t, kind, event in by_table.get(table.table_id, []):
            seq = event["seq"]
            if table.highest_seq is None:
                table.highest_seq = seq - 1
            if seq <= table.highest_seq:
                repeats += 1
                continue
            if seq != table.highest_seq + 1:
                gaps += 1
                if len(missing) < 10:
                    missing.append(f"{table.table_id}: {table.highest_seq + 1}..{seq - 1} before a {kind}")
            table.highest_seq = seq
            if kind == "card":
                cards.append(t)
        lost += max(0, len(table.written) - len(cards))
        latencies += [arrived - written for arrived, written in zip(cards, table.written, strict=False)]
        table.written = []
    return {
        "cards": expected,
        "lost": lost,
        "seq_gaps": gaps,
        "repeats": repeats,
        **summary_ms(latencies),
        **({"gaps_seen": missing} if missing else {}),
    }


def plot(steps: list[dict[str, Any]], path: Path) -> None:
    plt = pyplot()
    if plt is None:
        return
    fig, ax = plt.subplots(figsize=(8, 4))
    n = [s["tables"] for s in steps]
    ax.plot(n, [s["p99_ms"] for s in steps], marker="o", label="p99")
    ax.plot(n, [s["p50_ms"] for s in steps], marker="o", label="p50")
    ax.axhline(
        P99_TARGET_MS, color="red", linestyle="--", linewidth=1, label=f"p99 target {P99_TARGET_MS:g} ms"
    )
    ax.set_xscale("log", base=2)
    ax.set_xlabel("tables (daemons) on one machine")
    ax.set_ylabel("card latency, ms")
    ax.set_title("many tables, one broker")
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--max-tables", type=int, default=32)
    parser.add_argument("--seconds", type=float, default=30.0, help="dealing time at each step")
    parser.add_argument("--pace", type=float, default=0.5, help="seconds between one table's cards")
    parser.add_argument("--out", type=Path, help="directory for many_tables.json and many_tables.png")
    parser.add_argument(
        "--broker",
        choices=("mosquitto", "nats"),
        default="mosquitto",
        help="one Mosquitto, or a three-node NATS cluster (the consumer on its last node)",
    )
    parser.add_argument(
        "--p99-ms", type=float, default=P99_TARGET_MS, help="a step passes below this card latency p99"
    )
    args = parser.parse_args()

    root = work_dir("many-tables")
    broker: Broker | NatsCluster = (
        start_broker(root) if args.broker == "mosquitto" else NatsCluster(root).start()
    )
    consumer_node = broker if isinstance(broker, Broker) else broker.nodes[-1]
    # One filter for every topic: a cluster may deliver what two filters match out of order.
    sub = Subscriber(consumer_node, [f"{PREFIX}/#"])
    rng = random.Random(5)
    tables: list[Table] = []
    steps: list[dict[str, Any]] = []
    result: dict[str, Any] = {"benchmark": "many_tables", "machine": machine()}
    try:
        n = 1
        while n <= args.max_tables:
            tables += start_tables(root, broker, sub, len(tables) + 1, n - len(tables))
            time.sleep(2)  # past the newcomers' start-up
            # Events stay: every seq of every table is checked, from its first (a newcomer's start-up
            # events too, should it publish any).
            sub.take(lambda topic: topic.rsplit("/", 1)[-1] not in EVENT_KINDS)
            deal(tables, args.seconds, args.pace, rng)
            step = {"tables": n, **check(tables, sub), "loadavg": round(os.getloadavg()[0], 2)}
            step["pass"] = step["lost"] == 0 and step["seq_gaps"] == 0 and step["p99_ms"] < args.p99_ms
            steps.append(step)
            print(json.dumps(step), flush=True, file=sys.stderr)
            dead = [t.table_id for t in tables if t.proc.poll() is not None]
            if dead:
                raise RuntimeError(f"daemons exited: {dead}")
            if not step["pass"]:
                break
            n *= 2
    finally:
        for table in tables:
            stop_process(table.proc)
            table.pty.close()
        sub.close()
        broker.stop()
    passing = [s["tables"] for s in steps if s["pass"]]
    result.update(
        {
            "settings": {
                "seconds_per_step": args.seconds,
                "pace_s": args.pace,
                "max_tables": args.max_tables,
                "broker": args.broker,
            },
            "steps": steps,
            "largest_passing_n": max(passing) if passing else 0,
            "bounded_by_max_tables": bool(steps) and steps[-1]["pass"],
            "p99_target_ms": args.p99_ms,
        }
    )
    name = "many_tables" if args.broker == "mosquitto" else f"many_tables_{args.broker}"
    report(result, args.out, name, lambda path: plot(steps, path))
    shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
