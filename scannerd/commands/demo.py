"""``scannerd demo``: a whole table on one laptop, with nothing else to install or start.

A simulated shoe writes to a real pty, the real serial driver reads it, and
the daemon judges the deal and publishes to an MQTT broker running inside
this process, where a stand-in game server opens and closes betting. The
dealer display and a terminal view show it all. The dealer makes mistakes
now and then (``--error-rate``), so the alerts can be seen too. The daemon's
own log and a recording of the session go to a work directory, so the
session can be replayed afterwards with ``scannerd replay``.
"""

from __future__ import annotations

import argparse
import random
import shutil
import sys
import tempfile
import threading
import time
from pathlib import Path

from scannerd.commands import arguments
from scannerd.commands.watch import TableWatch, follow
from scannerd.core.house import HouseRules
from scannerd.display.settings import DisplaySettings, OverlaySettings
from scannerd.link.embedded_broker import EmbeddedBroker
from scannerd.link.mqtt_settings import MqttSettings
from scannerd.recording.settings import RecordSettings
from scannerd.runtime import logs
from scannerd.runtime.clock_sync import ClockSettings
from scannerd.runtime.config import Config
from scannerd.runtime.daemon import Daemon
from scannerd.runtime.device_settings import DeviceSettings
from scannerd.runtime.log_settings import LogSettings
from scannerd.store.outbox_settings import OutboxSettings
from simulators.feeder import Feeder
from simulators.game_server import GameServer
from simulators.registry import make_device, simulated_drivers
from simulators.scenario import UNSUPERVISED, Scenario

TABLE_ID = "DEMO-1"
PACE_S = 0.1
"""Seconds between cards: brisk, so that a newcomer sees a hand within 5 s of starting the demo.

Before the first hand's first card come the shuffle's pause (five cards' time), the burn (up to
eleven cards), the pause before betting (three cards' time) and the betting time: 3.6 s at most
with these defaults, after the second or so the demo takes to start.
"""
BETTING_TIME_S = 1.5


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        # The shoe sits on a pty the daemon opens; the virtual USB bus would live in this process only.
        "--driver",
        choices=simulated_drivers("serial"),
        default="beetek",
        help="shoe protocol to simulate",
    )
    parser.add_argument("--seed", type=int, default=None, help="shuffle and mistakes seed (default: random)")
    parser.add_argument(
        "--pace",
        type=arguments.non_negative_float,
        default=PACE_S,
        help=f"seconds between cards, the burn's too (default {PACE_S:g}: a hand within 5 s; 1 for a "
        "dealer's own pace)",
    )
    parser.add_argument(
        "--error-rate",
        type=arguments.fraction,
        default=0.15,
        help="chance a round has a dealer mistake (default 0.15)",
    )
    arguments.add_shuffle(parser)
    arguments.add_game(parser)
    parser.add_argument(
        "--betting-time",
        type=float,
        default=BETTING_TIME_S,
        help=f"seconds betting stays open (default {BETTING_TIME_S:g})",
    )
    parser.add_argument(
        "--listen",
        type=arguments.listen_address,
        default="127.0.0.1:8080",
        help="dealer display address (default 127.0.0.1:8080)",
    )
    parser.add_argument(
        "--dir", type=Path, help="work directory for logs and recordings (default: a temp dir)"
    )
    parser.add_argument("--seconds", type=float, help="stop after this long (default: until Ctrl-C)")
    parser.add_argument(
        "--no-view",
        action="store_true",
        help="no live terminal view: a line per event (so too when stdout is not a terminal)",
    )


def run(args: argparse.Namespace) -> int:
    workdir = args.dir or Path(tempfile.mkdtemp(prefix="scannerd-demo-"))
    try:
        workdir.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        print(f"demo: {workdir}: {exc.strerror or exc}", file=sys.stderr)
        return 2
    seed = args.seed if args.seed is not None else random.randrange(2**31)
    try:
        house = arguments.game_rules(HouseRules(**UNSUPERVISED), args)
    except ValueError as exc:  # Dragon Tiger with a commission, say
        print(f"demo: {exc}", file=sys.stderr)
        return 2
    scenario = Scenario(
        seed=seed, pace=args.pace, error_rate=args.error_rate, shuffle=args.shuffle or "random", house=house
    )
    broker = EmbeddedBroker()
    broker.start()
    device = make_device(args.driver, random.Random(seed), scenario.faults, link=workdir / "shoe")
    config = Config(
        table_id=TABLE_ID,
        device=DeviceSettings(driver=args.driver, port=device.channel),
        rules=scenario.rules_for(device.reports_cut),
        mqtt=MqttSettings(host=broker.host, port=broker.port, protocol=broker.protocol),
        outbox=OutboxSettings(path=workdir / "outbox.sqlite3"),
        record=RecordSettings(dir=workdir / "recordings"),
        display=DisplaySettings(listen=args.listen),
        # The studio's overlay beside it, on any free port of the same host (printed below).
        overlay=OverlaySettings(listen=f"{args.listen.rpartition(':')[0]}:0"),
        log=LogSettings(file=workdir / "scannerd.log", format="json"),
        # A laptop's or a container's clock is nobody's table clock: it is still shown on health.
        clock=ClockSettings(alert=False),
    )
    logs.configure(config.log, TABLE_ID)
    daemon = Daemon(config)
    game = GameServer(broker.host, broker.port, TABLE_ID, betting_time=args.betting_time)
    stop = threading.Event()
    dealer = threading.Thread(
        target=Feeder(device, on_command=game.perform, stop=stop).run,
        args=(scenario.steps(scenario.dealer(device_reports_cut=device.reports_cut)),),
        name="demo-dealer",
        daemon=True,
    )
    # Redrawing a screen into a pipe or a file shows nothing until the end: lines there.
    watch = TableWatch(config.mqtt, table_id=TABLE_ID, lines=args.no_view or not sys.stdout.isatty())
    try:
        daemon.start()
        if daemon.display is not None and daemon.display.health.state != "listening":
            # A table deals on without its display; a demo is for looking at it, so say so and stop.
            print(_display_unavailable(args.listen, daemon.display.health.error), file=sys.stderr)
            return 1
        game.start()
        watch.start()
        dealer.start()
        _where(args.driver, device.channel, daemon, broker, workdir, seed)
        deadline = None if args.seconds is None else time.monotonic() + args.seconds
        follow(watch, lambda: deadline is None or time.monotonic() < deadline)
    except KeyboardInterrupt:
        pass
    finally:
        stop.set()
        if dealer.ident is not None:  # not started when the daemon could not start (a display port taken)
            dealer.join(5)
        watch.stop()
        game.stop()
        daemon.stop()
        device.close()
        broker.stop()
    print(f"demo stopped; log and recording kept in {workdir}")
    if args.dir is None and not any((workdir / "recordings").glob("*")):
        shutil.rmtree(workdir, ignore_errors=True)
    return 0


def _display_unavailable(listen: str, error: str | None) -> str:
    host = listen.rpartition(":")[0]
    return (
        f"demo: the dealer display cannot listen on {listen} ({error}); "
        f"pick another address with --listen, e.g. --listen {host}:0 for any free port (the demo prints it)"
    )


def _where(
    driver: str, channel: str, daemon: Daemon, broker: EmbeddedBroker, workdir: Path, seed: int
) -> None:
    url = daemon.display.url if daemon.display is not None else "(display off)"
    overlay = daemon.display.overlay_url if daemon.display is not None else None
    print(
        f"scannerd demo, table {TABLE_ID} (seed {seed})\n"
        f"  dealer display   {url}\n"
        f"  stream overlay   {overlay or '(off)'}\n"
        f"  simulated shoe   {driver} on {channel}\n"
        f"  MQTT broker      {broker.host}:{broker.port}  "
        f"(scannerd watch --host {broker.host} --port {broker.port})\n"
        f"  daemon log       {workdir / 'scannerd.log'}\n"
        f"  recordings       {workdir / 'recordings'}  (scannerd replay FILE --fast)\n"
        "Ctrl-C to stop.",
        flush=True,
    )
