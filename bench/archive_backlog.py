"""What archiving costs the card path: card latency while the archive ships a backlog, and without.

Prints one JSON object. Two ``scannerd run`` daemons, both recording, run side
by side on their own ptys, publishing to one local Mosquitto, and are fed the
same shoes in turn at dealing pace (as ``bench.latency`` feeds its bridges):

- ``archiving``: ``[archive]`` on, pointed at a real S3 server with Object
  Lock (SeaweedFS, ``tests/support/seaweed.py``), with a backlog of
  ``--backlog`` sealed shoes waiting in its recordings directory when it
  starts (a table whose storage was down for days), which its archive thread
  puts, reads back and checks all through the run;
- ``plain``: the baseline of the same run, recording, archiving nothing.

They take each shoe ``--block`` cards at a time in turn, so both see the
machine as the shipping (and the storage's own work, on the same two cores)
leaves it at that moment.

The figure judged is the ratio of the archiving daemon's p99 to the
baseline's (target: at most 1.05); the absolute figures depend on the machine
and its load. ``archived_during_run`` says how much of the backlog went while
the cards were measured: a backlog shipped before the first card would
measure nothing.

    python -m bench.archive_backlog [--shoes 2] [--backlog 200] [--out docs/performance]
"""

from __future__ import annotations

import argparse
import random
import shutil
import time
from pathlib import Path
from typing import Any

from bench.latency import Bridge, feed
from bench.support import (
    PREFIX,
    Subscriber,
    daemon_config,
    machine,
    new_shoe,
    one_shoe,
    report,
    start_broker,
    start_daemon,
    stop_process,
    summary_ms,
    wait_device_up,
    work_dir,
)
from scannerd.archive.ledger import Ledger
from simulators.serial_pty import PtyPort
from simulators.week import write_week
from tests.support.seaweed import TABLE, Seaweed

TARGET_RATIO = 1.05
ARCHIVING, PLAIN = "BAC-01", "BAC-02"
"""The archiving table takes the simulated week's table id, so the backlog is its own chain's files."""


def start(root: Path, broker: Any, sub: Subscriber, table: str, archive: str) -> Bridge:
    """A recording daemon (``archive``: its ``[archive]`` section's lines, or none); its bridge."""
    pty = PtyPort()
    config = daemon_config(
        root / f"{table}.toml", table_id=table, port=pty.path, broker=broker, outbox=root / f"{table}.db"
    )
    config.write_text(config.read_text() + f'[record]\ndir = "{root / table}"\n' + archive)
    proc = start_daemon(config, root / f"{table}.log")
    wait_device_up(sub, table)
    return Bridge(table.lower(), table, f"{PREFIX}/{table}/card", pty, proc)


def archived(root: Path) -> int:
    return len(Ledger(root / ARCHIVING, ARCHIVING).archived)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shoes", type=int, default=2, help="shoes dealt to each daemon")
    parser.add_argument("--cards", type=int, default=0, help="cards of each shoe (0: all of it)")
    parser.add_argument("--interval", type=float, default=0.025, help="seconds between paced cards")
    parser.add_argument("--backlog", type=int, default=200, help="sealed shoes waiting for the archive")
    parser.add_argument("--block", type=int, default=20, help="cards fed to one daemon before the other")
    parser.add_argument("--out", type=Path, help="directory for archive_backlog.json")
    args = parser.parse_args()
    args.burst, args.burst_gap = 1, 0.0  # ``feed`` asks; only its paced mode is used

    root = work_dir("archive-backlog")
    write_week(root / ARCHIVING, tables=1, days=args.backlog, lazy=0, seed=11)
    backlog_bytes = sum(p.stat().st_size for p in (root / ARCHIVING).iterdir())
    storage = Seaweed(root / "seaweed")
    storage.start()
    storage.bucket("bench")
    (root / "secret").write_text(TABLE.secret_key.get_secret_value() + "\n")
    archive = (
        f'[archive]\nurl = "s3://bench/casino"\nendpoint = "{storage.endpoint}"\n'
        f'access_key = "{TABLE.access_key}"\nsecret_key_file = "{root / "secret"}"\n'
    )
    broker = start_broker(root)
    sub = Subscriber(broker, [f"{PREFIX}/+/card", f"{PREFIX}/+/device", f"{PREFIX}/+/response/+"])
    bridges: list[Bridge] = []
    result: dict[str, Any] = {"benchmark": "archive_backlog", "machine": machine()}
    try:
        archiving = start(root, broker, sub, ARCHIVING, archive)
        plain = start(root, broker, sub, PLAIN, "")
        bridges = [archiving, plain]
        before, began = archived(root), time.monotonic()
        rng = random.Random(7)
        for _ in range(args.shoes):
            cards = one_shoe(rng)[: args.cards or None]
            for bridge in bridges:
                assert bridge.table_id is not None
                new_shoe(sub, bridge.table_id)
            for at in range(0, len(cards), args.block):
                for bridge in bridges:
                    feed(bridge, sub, cards[at : at + args.block], "paced", args)
        during, took = archived(root) - before, time.monotonic() - began
        for bridge in bridges:
            if bridge.proc.poll() is not None:
                raise RuntimeError(f"{bridge.name} exited with {bridge.proc.returncode} during the run")
    finally:
        for bridge in bridges:
            stop_process(bridge.proc)
            bridge.pty.close()
        sub.close()
        broker.stop()
        storage.stop()

    figures = {b.name: summary_ms(b.samples["paced"]) for b in bridges}
    p99 = {b.name: figures[b.name].get("p99_ms") for b in bridges}
    result.update(
        {
            "settings": {
                "shoes": args.shoes,
                "cards_per_daemon": len(bridges[0].samples["paced"]),
                "interval_ms": args.interval * 1e3,
                "backlog_files": args.backlog,
                "backlog_bytes": backlog_bytes,
                "block": args.block,
            },
            "archived_before_run": before,
            "archived_during_run": during,
            "run_s": round(took, 1),
            **figures,
            "p99_ratio": p99["bac-01"] / p99["bac-02"] if p99["bac-01"] and p99["bac-02"] else None,
            "target_p99_ratio": TARGET_RATIO,
            "lost": {b.name: b.lost for b in bridges},
        }
    )
    report(result, args.out, "archive_backlog")
    shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
