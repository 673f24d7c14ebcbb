"""Footprint of ``scannerd run``: resident memory and CPU, idle and through a long soak.

Prints one JSON object. The daemon runs as on a table (Bee-Tek driver on a
pty, outbox on disk, the dealer display served, a local Mosquitto, one
subscriber taking every event).
First it sits idle with its shoe connected (``--idle`` seconds): the CPU it
uses then is the cost of just being there (target under 1% of one core).
Then ``--cards`` cards are dealt as real 8-deck shoes, each opened with a
``new_shoe`` request and written to the pty as fast as the daemon takes it,
and memory and CPU are sampled every second until the last card's event has
reached the subscriber (target: resident memory flat and under 60 MB). Every
card must arrive: the soak doubles as a check that nothing is lost under
sustained load.

    python -m bench.footprint [--cards 1000000] [--idle 60] [--out docs/performance]
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import threading
import time
from dataclasses import dataclass
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
    wait_device_up,
    work_dir,
)
from simulators.serial_pty import PtyPort

RSS_TARGET_MB = 60
IDLE_CPU_TARGET_PERCENT = 1.0
CLOCK_TICKS = os.sysconf("SC_CLK_TCK")
FRAMES_PER_WRITE = 50


@dataclass(frozen=True)
class Sample:
    t: float  # seconds since the soak began
    cards: int  # card events the subscriber has received
    rss_mb: float
    cpu_s: float  # user + system CPU seconds of the daemon so far


def rss_mb(pid: int) -> float:
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    raise RuntimeError(f"no VmRSS for {pid}")


def cpu_seconds(pid: int) -> float:
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / CLOCK_TICKS  # utime, stime


def idle_cpu_percent(pid: int, seconds: float) -> float:
    cpu0, t0 = cpu_seconds(pid), time.monotonic()
    time.sleep(seconds)
    return 100 * (cpu_seconds(pid) - cpu0) / (time.monotonic() - t0)


def soak(pid: int, pty: PtyPort, sub: Subscriber, cards: int) -> list[Sample]:
    """Shoe after shoe at full speed, each opened with ``new_shoe`` as the game server would."""
    card_topic = f"{PREFIX}/SOAK/card"
    rng = random.Random(1)
    samples: list[Sample] = []
    done = threading.Event()
    t0 = time.monotonic()

    def sample() -> None:
        while True:
            samples.append(
                Sample(time.monotonic() - t0, sub.counts[card_topic], rss_mb(pid), cpu_seconds(pid))
            )
            if done.wait(1.0):
                return

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    sent = 0
    try:
        while sent < cards:
            new_shoe(sub, "SOAK")
            shoe = one_shoe(rng)[: cards - sent]
            for i in range(0, len(shoe), FRAMES_PER_WRITE):
                pty.write(b"".join(frame(card) for card in shoe[i : i + FRAMES_PER_WRITE]))
            sent += len(shoe)
            if not sub.wait_count(card_topic, sent, 120):
                raise RuntimeError(f"cards stopped arriving short of {sent}")
    finally:
        done.set()
        sampler.join(5)
    samples.append(Sample(time.monotonic() - t0, sub.counts[card_topic], rss_mb(pid), cpu_seconds(pid)))
    return samples


def plot(samples: list[Sample], path: Path) -> None:
    plt = pyplot()
    if plt is None:
        return
    fig, ax = plt.subplots(figsize=(9, 4))
    ax.plot([s.cards / 1000 for s in samples], [s.rss_mb for s in samples], label="resident memory")
    ax.axhline(RSS_TARGET_MB, color="red", linestyle="--", linewidth=1, label=f"target {RSS_TARGET_MB} MB")
    ax.set_xlabel("cards through the daemon (thousands)")
    ax.set_ylabel("MB")
    ax.set_ylim(0, RSS_TARGET_MB * 1.2)
    ax.set_title("scannerd run: resident memory over the soak")
    ax.legend(loc="lower right")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def summarise(samples: list[Sample], cards: int) -> dict[str, Any]:
    rss = [s.rss_mb for s in samples]
    elapsed = samples[-1].t
    # Flat means the second half grows no more than noise: compare its ends.
    half = [s for s in samples if s.cards >= cards // 2]
    return {
        "cards": cards,
        "seconds": round(elapsed, 1),
        "cards_per_s": round(cards / elapsed),
        "cpu_percent": round(100 * (samples[-1].cpu_s - samples[0].cpu_s) / elapsed, 1),
        "rss_mb_start": round(rss[0], 1),
        "rss_mb_max": round(max(rss), 1),
        "rss_mb_end": round(rss[-1], 1),
        "rss_growth_mb_second_half": round(half[-1].rss_mb - half[0].rss_mb, 1),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cards", type=int, default=1_000_000, help="cards in the soak")
    parser.add_argument("--idle", type=float, default=60.0, help="seconds of idle measurement")
    parser.add_argument("--out", type=Path, help="directory for footprint.json and footprint.png")
    args = parser.parse_args()

    root = work_dir("footprint")
    broker = start_broker(root)
    sub = Subscriber(broker, [f"{PREFIX}/+/card", f"{PREFIX}/+/device", f"{PREFIX}/+/response/+"])
    pty = PtyPort()
    config = daemon_config(
        root / "T.toml",
        table_id="SOAK",
        port=pty.path,
        broker=broker,
        outbox=root / "ob.db",
        display=True,
    )
    proc = start_daemon(config, root / "daemon.log")
    result: dict[str, Any] = {"benchmark": "footprint", "machine": machine()}
    try:
        wait_device_up(sub, "SOAK")
        sub.keep = False
        time.sleep(5)  # past start-up: imports, first connection, first health message
        idle = {"seconds": args.idle, "cpu_percent": round(idle_cpu_percent(proc.pid, args.idle), 2)}
        idle["rss_mb"] = round(rss_mb(proc.pid), 1)
        samples = soak(proc.pid, pty, sub, args.cards)
        time.sleep(5)
        after = {"cpu_percent": round(idle_cpu_percent(proc.pid, min(args.idle, 30)), 2)}
        after["rss_mb"] = round(rss_mb(proc.pid), 1)
        if proc.poll() is not None:
            raise RuntimeError(f"the daemon exited with {proc.returncode}")
    finally:
        stop_process(proc)
        pty.close()
        sub.close()
        broker.stop()
    result.update(
        {
            "idle": idle,
            "soak": summarise(samples, args.cards),
            "idle_after_soak": after,
            "targets": {"rss_mb": RSS_TARGET_MB, "idle_cpu_percent": IDLE_CPU_TARGET_PERCENT},
            "rss_samples": [[s.cards, round(s.rss_mb, 1)] for s in samples[:: max(1, len(samples) // 200)]],
        }
    )
    report(result, args.out, "footprint", lambda path: plot(samples, path))
    shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
