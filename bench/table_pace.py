"""The table PC at a table's own pace: ``scannerd run``'s CPU at about two hands a minute.

Prints one JSON object. The daemon runs as on a table: ``scannerd run`` in its
own process, a simulated Bee-Tek shoe on a pty, its outbox on disk, its
recording chained and signed, the dealer display served with one screen
reading its stream (``/events``, as the browser at the table does), a local
Mosquitto, and the simulators' game server opening and closing the betting
for every round. A simulated dealer deals at a dealer's pace (``--pace``
seconds between cards, ``--betting-time`` seconds of betting), which makes
about two hands a minute, with the odd mistake (misdeals and voids raise
their alerts as at a table).

Measured in the same run, the daemon's CPU time (user and system, from
``/proc``) over two stretches:

- ``idle`` (the baseline): ``--idle`` seconds with the shoe connected and the
  screen open, before the dealer starts;
- ``dealing``: ``--minutes`` of dealing, and the hands completed in it;

and from them the CPU a hand costs beyond idling, and the resident memory at
the end.

    python -m bench.table_pace [--minutes 10] [--idle 60] [--pace 2.0] [--betting-time 18] [--out DIR]
"""

from __future__ import annotations

import argparse
import http.client
import random
import shutil
import socket
import threading
import time
from pathlib import Path
from typing import Any

from bench.footprint import cpu_seconds, rss_mb
from bench.support import machine, report, start_broker, start_daemon, stop_process, wait_until, work_dir
from scannerd.recording.signing import write_key_pair
from simulators.feeder import Feeder
from simulators.game_server import GameServer
from simulators.registry import make_device
from simulators.scenario import Scenario
from tests.support.config import write_config

TABLE_ID = "PACE"
DRIVER = "beetek"
ERROR_RATE = 0.03  # a few mistakes a shoe, as simulators.week deals


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class Screen:
    """The dealer's screen: one client reading the display's stream for as long as the bench runs."""

    def __init__(self, port: int) -> None:
        self.port = port
        self.updates = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._read, name="screen", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def _read(self) -> None:
        while not self._stop.is_set():
            conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=30)
            try:
                conn.request("GET", "/events")
                stream = conn.getresponse()
                while not self._stop.is_set():
                    line = stream.readline()
                    if not line:
                        break
                    self.updates += line.startswith(b"data:")
            except OSError:
                self._stop.wait(0.5)  # the daemon still starting: the browser retries too
            finally:
                conn.close()

    def stop(self) -> None:
        self._stop.set()


def cpu_over(pid: int, seconds: float) -> float:
    """The daemon's CPU seconds over the next ``seconds`` of wall time."""
    before = cpu_seconds(pid)
    time.sleep(seconds)
    return cpu_seconds(pid) - before


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--minutes", type=float, default=10.0, help="minutes of dealing measured")
    parser.add_argument("--idle", type=float, default=60.0, help="seconds of idle measured first")
    parser.add_argument("--pace", type=float, default=2.0, help="seconds between cards")
    parser.add_argument("--betting-time", type=float, default=18.0, help="seconds betting stays open")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--out", type=Path, help="directory for table_pace.json")
    args = parser.parse_args()

    at_start = machine()
    root = work_dir("table-pace")
    broker = start_broker(root)
    scenario = Scenario(seed=args.seed, pace=args.pace, error_rate=ERROR_RATE, shuffle="full")
    device = make_device(DRIVER, random.Random(args.seed), scenario.faults, link=root / "shoe")
    write_key_pair(root / "key", root / "key.pub")
    port = free_port()
    rules = scenario.rules_for(device.reports_cut).model_dump(mode="json", exclude_defaults=True)
    config = write_config(
        root,
        broker,
        DRIVER,
        device.channel,
        table_id=TABLE_ID,
        rules={"suspend_on": [], **rules},
        display={"enabled": True, "listen": f"127.0.0.1:{port}"},
        record={"dir": str(root / "recordings"), "key_file": str(root / "key")},
        log={"file": str(root / "scannerd.log"), "format": "json"},
    )
    proc = start_daemon(config, root / "daemon.out")
    game = GameServer(broker.host, broker.port, TABLE_ID, betting_time=args.betting_time)
    screen = Screen(port)
    stop = threading.Event()
    dealer = threading.Thread(
        target=Feeder(device, on_command=game.perform, stop=stop).run,
        args=(scenario.steps(scenario.dealer(device_reports_cut=device.reports_cut)),),
        name="dealer",
        daemon=True,
    )
    try:
        game.start()
        screen.start()
        wait_until(lambda: screen.updates > 0, 30, "the display's stream never answered")
        time.sleep(5)  # past start-up: imports, the first connection, the first health message
        idle_cpu = cpu_over(proc.pid, args.idle)
        dealer.start()
        wait_until(lambda: _completed(game) > 0, 300, "no hand completed")  # the shuffle, the burn
        hands_before, t0 = _completed(game), time.monotonic()
        dealing_cpu = cpu_over(proc.pid, args.minutes * 60)
        elapsed, hands = time.monotonic() - t0, _completed(game) - hands_before
        rss = rss_mb(proc.pid)
        if proc.poll() is not None:
            raise RuntimeError(f"the daemon exited with {proc.returncode}")
    finally:
        stop.set()
        screen.stop()
        stop_process(proc)
        game.stop()
        device.close()
        broker.stop()
    idle_rate = idle_cpu / args.idle
    result: dict[str, Any] = {
        "benchmark": "table_pace",
        "machine": at_start,
        "pace_s": args.pace,
        "betting_time_s": args.betting_time,
        "idle": {"seconds": args.idle, "cpu_percent": round(100 * idle_rate, 3)},
        "dealing": {
            "seconds": round(elapsed, 1),
            "hands": hands,
            "hands_per_minute": round(60 * hands / elapsed, 2),
            "cpu_percent": round(100 * dealing_cpu / elapsed, 3),
        },
        # What a hand costs on top of the daemon just being there.
        "cpu_ms_per_hand": round(1000 * (dealing_cpu - idle_rate * elapsed) / max(hands, 1), 1),
        "screen_updates": screen.updates,
        "rss_mb_end": round(rss, 1),
    }
    report(result, args.out, "table_pace")
    shutil.rmtree(root, ignore_errors=True)


def _completed(game: GameServer) -> int:
    return sum(phase == "complete" for phase in list(game.round_phases.values()))


if __name__ == "__main__":
    main()
