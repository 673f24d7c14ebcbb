"""``scannerd demo``: a whole table on one laptop, with nothing else to install or start.

A simulated shoe writes to a real pty, the real serial driver reads it, and
the daemon judges the deal and publishes to an MQTT broker running inside
this process, where a stand-in game server opens and closes betting. The
dealer display, the stream overlay, the pit view and a terminal view show
it all. The dealer makes mistakes now and then (``--error-rate``), so the
alerts can be seen too. The daemon's own log and a recording of the session
go to a work directory, so the session can be replayed afterwards with
``scannerd replay``.
"""

from __future__ import annotations

import argparse
import contextlib
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
from scannerd.pit import Pit
from scannerd.recording.settings import RecordSettings
from scannerd.runtime import logs
from scannerd.runtime.clock_sync import ClockSettings
from scannerd.runtime.config import Config
from scannerd.runtime.daemon import Daemon
from scannerd.runtime.device_settings import DeviceSettings
from scannerd.runtime.log_settings import LogSettings
from scannerd.store.outbox_settings import OutboxSettings
from simulators.feeder import Feeder, SimDevice
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
REVEAL_AFTER_S = 3.0
"""At a squeeze table, how long the players squeeze a dealt hand before the game server reveals it."""


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
        "--squeeze",
        action="store_true",
        help="a squeeze table: each hand face down on the screens until the game server reveals it, "
        f"{REVEAL_AFTER_S:g} s after its last card",
    )
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
    for option, page in (("--overlay-listen", "stream overlay"), ("--pit-listen", "pit view")):
        parser.add_argument(
            option,
            type=arguments.listen_address,
            help=f"{page} address, HOST:PORT (default: any free port on --listen's host; printed)",
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
    if args.squeeze:
        house = house.with_changes({"squeeze": True})
    scenario = Scenario(
        seed=seed,
        pace=args.pace,
        error_rate=args.error_rate,
        shuffle=args.shuffle or "random",
        first_shoe=args.first_shoe or "random",
        house=house,
    )
    try:
        with contextlib.ExitStack() as running:
            code = _run(args, scenario, workdir, running)
    except KeyboardInterrupt:
        code = 0
    if code != 0:
        return code  # said in its line; the log says more
    print(f"demo stopped; log and recording kept in {workdir}")
    if args.dir is None and not any((workdir / "recordings").glob("*")):
        shutil.rmtree(workdir, ignore_errors=True)
    return 0


def _config(
    args: argparse.Namespace,
    scenario: Scenario,
    workdir: Path,
    device: SimDevice,
    mqtt: MqttSettings,
    overlay_listen: str,
) -> Config:
    """The demo table's configuration: everything in the work directory, the pages where asked."""
    return Config(
        table_id=TABLE_ID,
        device=DeviceSettings(driver=args.driver, port=device.channel),
        rules=scenario.rules_for(device.reports_cut),
        mqtt=mqtt,
        outbox=OutboxSettings(path=workdir / "outbox.sqlite3"),
        record=RecordSettings(dir=workdir / "recordings"),
        display=DisplaySettings(listen=args.listen),
        # The studio's overlay beside it, on any free port of the same host unless told (printed).
        overlay=OverlaySettings(listen=overlay_listen),
        log=LogSettings(file=workdir / "scannerd.log", format="json"),
        # A laptop's or a container's clock is nobody's table clock: it is still shown on health.
        clock=ClockSettings(alert=False),
    )


def _run(args: argparse.Namespace, scenario: Scenario, workdir: Path, running: contextlib.ExitStack) -> int:
    """The table up, shown until the time is up or Ctrl-C; each part stopped by ``running`` in reverse."""
    broker = EmbeddedBroker()
    broker.start()
    running.callback(broker.stop)
    device = make_device(args.driver, random.Random(scenario.seed), scenario.faults, link=workdir / "shoe")
    running.callback(device.close)
    host = args.listen.rpartition(":")[0]
    overlay_listen = args.overlay_listen or f"{host}:0"
    mqtt = MqttSettings(host=broker.host, port=broker.port, protocol=broker.protocol)
    config = _config(args, scenario, workdir, device, mqtt, overlay_listen)
    logs.configure(config.log, TABLE_ID)
    daemon = Daemon(config)
    running.callback(daemon.stop)
    daemon.start()
    display = daemon.display
    assert display is not None  # the config above has one
    # A table deals on without its screens; a demo is for looking at them, so say so and stop.
    if display.health.state != "listening":
        return _cannot_listen("dealer display", "--listen", args.listen, display.health.error)
    if display.overlay_error is not None:
        return _cannot_listen("stream overlay", "--overlay-listen", overlay_listen, display.overlay_error)
    pit_listen = args.pit_listen or f"{host}:0"
    pit = Pit(mqtt, DisplaySettings(listen=pit_listen))
    try:
        pit.start()
    except OSError as exc:
        return _cannot_listen("pit view", "--pit-listen", pit_listen, exc.strerror or str(exc))
    running.callback(pit.stop)
    reveal_after = REVEAL_AFTER_S if scenario.house.squeeze else None
    game = GameServer(
        broker.host, broker.port, TABLE_ID, betting_time=args.betting_time, reveal_after=reveal_after
    )
    running.callback(game.stop)
    game.start()
    # Redrawing a screen into a pipe or a file shows nothing until the end: lines there.
    watch = TableWatch(mqtt, table_id=TABLE_ID, lines=args.no_view or not sys.stdout.isatty())
    running.callback(watch.stop)
    watch.start()
    _deal(device, game, scenario, running)
    _where(
        scenario.seed,
        {"dealer display": display.url, "stream overlay": display.overlay_url, "pit view": pit.url},
        f"{args.driver} on {device.channel}",
        mqtt,
        workdir,
    )
    deadline = None if args.seconds is None else time.monotonic() + args.seconds
    follow(watch, lambda: deadline is None or time.monotonic() < deadline)
    return 0


def _deal(device: SimDevice, game: GameServer, scenario: Scenario, running: contextlib.ExitStack) -> None:
    """The simulated dealer at the shoe, on a thread of its own until ``running`` ends."""
    stop = threading.Event()
    dealer = threading.Thread(
        target=Feeder(device, on_command=game.perform, stop=stop).run,
        args=(scenario.steps(scenario.dealer(device_reports_cut=device.reports_cut)),),
        name="demo-dealer",
        daemon=True,
    )
    dealer.start()
    running.callback(dealer.join, 5)
    running.callback(stop.set)


def _cannot_listen(page: str, option: str, listen: str, error: str | None) -> int:
    """A page the demo cannot serve, said in one line with the option that moves it; exit status 1."""
    host = listen.rpartition(":")[0]
    print(
        f"demo: the {page} cannot listen on {listen} ({error}); pick another address with {option}, "
        f"e.g. {option} {host}:0 for any free port (the demo prints it)",
        file=sys.stderr,
    )
    return 1


def _where(seed: int, pages: dict[str, str | None], shoe: str, mqtt: MqttSettings, workdir: Path) -> None:
    broker = f"--host {mqtt.host} --port {mqtt.port} --protocol {mqtt.protocol}"
    print(
        f"scannerd demo, table {TABLE_ID} (seed {seed})\n"
        + "".join(f"  {page:<16} {url}\n" for page, url in pages.items())
        + f"  simulated shoe   {shoe}\n"
        f"  MQTT broker      {mqtt.host}:{mqtt.port}, MQTT {mqtt.protocol} only:\n"
        f"                   scannerd watch {broker}\n"
        f"                   scannerd pit {broker}\n"
        f"  daemon log       {workdir / 'scannerd.log'}\n"
        f"  recordings       {workdir / 'recordings'}  (scannerd replay FILE --fast)\n"
        "Ctrl-C to stop.",
        flush=True,
    )
