"""What scraping ``/metrics`` costs the card path: card latency with a scraper hammering it, and without.

Prints one JSON object. Two ``scannerd run`` daemons with ``[metrics]`` on run
side by side on their own ptys, publishing to one local Mosquitto, and are
fed the same shoes in turn at dealing pace (as ``bench.latency`` feeds its
bridges):

- ``scraped``: a thread fetches its ``/metrics`` every ``--scrape-interval``
  seconds (default 0.05: three hundred times as often as Prometheus's
  default of 15 s), all through the run;
- ``unscraped``: the baseline of the same run, never scraped.

The figure judged is the ratio of the scraped daemon's p99 to the
baseline's (target: at most 1.05, no measurable cost); the absolute
figures depend on the machine and its load.

    python -m bench.metrics_scrape [--shoes 4] [--cards 200] [--out docs/performance]
"""

from __future__ import annotations

import argparse
import random
import shutil
import socket
import threading
import urllib.request
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
from simulators.serial_pty import PtyPort

TARGET_RATIO = 1.05


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def start(root: Path, broker: Any, sub: Subscriber, table: str) -> tuple[Bridge, str]:
    """A daemon with its metrics on a free port; its bridge and its /metrics address."""
    pty = PtyPort()
    config = daemon_config(
        root / f"{table}.toml", table_id=table, port=pty.path, broker=broker, outbox=root / f"{table}.db"
    )
    port = free_port()
    config.write_text(config.read_text() + f'[metrics]\nlisten = "127.0.0.1:{port}"\n')
    proc = start_daemon(config, root / f"{table}.log")
    wait_device_up(sub, table)
    bridge = Bridge(table.lower(), table, f"{PREFIX}/{table}/card", pty, proc)
    return bridge, f"http://127.0.0.1:{port}/metrics"


def scrape(url: str, interval: float, stop: threading.Event, sizes: list[int]) -> None:
    """Fetch ``url`` every ``interval`` seconds until ``stop``; each answer's size is kept."""
    while not stop.wait(interval):
        with urllib.request.urlopen(url, timeout=5) as answer:
            sizes.append(len(answer.read()))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shoes", type=int, default=4, help="shoes dealt to each daemon")
    parser.add_argument("--cards", type=int, default=0, help="cards of each shoe (0: all of it)")
    parser.add_argument("--interval", type=float, default=0.025, help="seconds between paced cards")
    parser.add_argument("--scrape-interval", type=float, default=0.05, help="seconds between scrapes")
    parser.add_argument("--out", type=Path, help="directory for metrics_scrape.json")
    args = parser.parse_args()
    args.burst, args.burst_gap = 1, 0.0  # ``feed`` asks; only its paced mode is used

    root = work_dir("metrics-scrape")
    broker = start_broker(root)
    sub = Subscriber(broker, [f"{PREFIX}/+/card", f"{PREFIX}/+/device", f"{PREFIX}/+/response/+"])
    bridges: list[Bridge] = []
    sizes: list[int] = []
    stop = threading.Event()
    result: dict[str, Any] = {"benchmark": "metrics_scrape", "machine": machine()}
    try:
        scraped, url = start(root, broker, sub, "SCRAPED")
        unscraped, _ = start(root, broker, sub, "UNSCRAPED")
        bridges = [scraped, unscraped]
        scraper = threading.Thread(target=scrape, args=(url, args.scrape_interval, stop, sizes), daemon=True)
        scraper.start()
        rng = random.Random(7)
        for _ in range(args.shoes):
            cards = one_shoe(rng)[: args.cards or None]
            for bridge in bridges:
                assert bridge.table_id is not None
                new_shoe(sub, bridge.table_id)
                feed(bridge, sub, cards, "paced", args)
        stop.set()
        scraper.join(10)
        for bridge in bridges:
            if bridge.proc.poll() is not None:
                raise RuntimeError(f"{bridge.name} exited with {bridge.proc.returncode} during the run")
    finally:
        stop.set()
        for bridge in bridges:
            stop_process(bridge.proc)
            bridge.pty.close()
        sub.close()
        broker.stop()

    figures = {b.name: summary_ms(b.samples["paced"]) for b in bridges}
    p99 = {name: f.get("p99_ms") for name, f in figures.items()}
    result.update(
        {
            "settings": {
                "shoes": args.shoes,
                "cards_per_daemon": len(bridges[0].samples["paced"]),
                "interval_ms": args.interval * 1e3,
                "scrape_interval_ms": args.scrape_interval * 1e3,
            },
            "scrapes": len(sizes),
            "scrape_bytes": max(sizes, default=0),
            **figures,
            "p99_ratio": p99["scraped"] / p99["unscraped"] if p99["scraped"] and p99["unscraped"] else None,
            "target_p99_ratio": TARGET_RATIO,
            "lost": {b.name: b.lost for b in bridges},
        }
    )
    report(result, args.out, "metrics_scrape")
    shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
