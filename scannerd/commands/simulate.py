"""``scannerd simulate``: a simulated shoe and dealer, for a daemon (or the real driver in-process).

Serial devices appear on a pty behind a stable symlink that the printed
channel names; point a daemon's ``device.port`` at it. The virtual USB bus
exists only inside this process, so USB devices (and ``--check``) run the
real driver and validator here and report whether every step came out as
the dealer expected.
"""

from __future__ import annotations

import argparse
import random
import shutil
import sys
import threading
from collections.abc import Iterable
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from drivers.registry import get_driver_class
from scannerd.commands import arguments
from scannerd.contract.events import AlertData, EventData
from scannerd.contract.topics import DEFAULT_PREFIX
from simulators.actions import Draw, ServerCommand, Step, Unplug, Unreadable
from simulators.feeder import Feeder, default_link
from simulators.registry import SimDevice, make_device, simulated_drivers
from simulators.scenario import Scenario, ScenarioError, load

if TYPE_CHECKING:  # loaded only by the mode that needs it
    from scannerd.core.house import HouseRules
    from simulators.game_server import GameServer
    from simulators.loopback import Loopback


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--driver", choices=simulated_drivers(), default="beetek", help="device protocol to simulate"
    )
    parser.add_argument(
        "--scenario", type=Path, help="scripted session (docs/simulators.md); else deal forever"
    )
    parser.add_argument("--seed", type=int, help="random seed (overrides the scenario's)")
    parser.add_argument(
        "--pace", type=arguments.non_negative_float, help="seconds between cards (default 1; 0 = flat out)"
    )
    parser.add_argument(
        "--error-rate", type=arguments.fraction, help="chance a round has a dealer mistake (0-1)"
    )
    arguments.add_shuffle(parser)
    arguments.add_game(parser)
    parser.add_argument("--link", type=Path, help="symlink path for a serial device (default: a temp dir)")
    parser.add_argument(
        "--check",
        action="store_true",
        help="run the real driver and validator here and check each step (always on for USB)",
    )
    parser.add_argument("--quiet", action="store_true", help="print only alerts and problems")
    server = parser.add_argument_group("game server stand-in (MQTT)")
    server.add_argument("--game-server", action="store_true", help="send betting commands over MQTT")
    server.add_argument("--mqtt-host", type=arguments.host_name, default="localhost")
    server.add_argument("--mqtt-port", type=arguments.port_number, default=1883)
    arguments.add_broker_wait(server)
    server.add_argument("--table-id", type=arguments.table_id, default="T1")
    server.add_argument("--prefix", type=arguments.topic_prefix, default=DEFAULT_PREFIX, help="topic prefix")
    server.add_argument("--betting-time", type=float, default=5.0, help="seconds betting stays open")


def _scenario(args: argparse.Namespace) -> Scenario:
    sc = load(args.scenario) if args.scenario else Scenario()
    changes = {
        name: value
        for name, value in (
            ("seed", args.seed),
            ("pace", args.pace),
            ("error_rate", args.error_rate),
            ("shuffle", args.shuffle),
            ("first_shoe", args.first_shoe),
        )
        if value is not None
    }
    return replace(sc, **changes, house=arguments.game_rules(sc.house, args))


def _describe(step: Step) -> str:
    a = step.action
    exp = step.expect
    if isinstance(a, Draw | Unreadable):
        text = f"card {a.card if isinstance(a, Draw) else '(unreadable)'} -> {exp.position}"
    elif isinstance(a, ServerCommand):
        text = f"game server: {a.name} {a.args or ''}".rstrip()
    elif isinstance(a, Unplug):
        text = f"cable out for {a.seconds:g} s"
    else:
        text = type(a).__name__
    if exp.round_end:
        text += f"; round {exp.round_end}" + (f", {exp.winner} wins" if exp.winner else "")
    if exp.alerts:
        text += f"; expect {', '.join(exp.alerts)}"
    return text


def run(args: argparse.Namespace) -> int:
    try:
        sc = _scenario(args)
    except (ScenarioError, OSError, ValueError) as exc:
        print(exc, file=sys.stderr)
        return 2
    usb = get_driver_class(args.driver).transport == "usb"
    check = args.check or usb
    if check and args.game_server:
        print("--game-server needs a daemon on the device; not with --check or USB", file=sys.stderr)
        return 2
    link = None if usb else (args.link or default_link())
    try:
        device = _device(args, sc, usb, link)
    except OSError as exc:  # --link in a directory that is not there, or not ours
        print(f"simulate: cannot put the device at {link}: {exc.strerror or exc}", file=sys.stderr)
        return 2
    rules = sc.rules_for(device.reports_cut)
    print(f"simulated {args.driver} device: channel {device.channel}")
    print(f"house rules the daemon must use: {rules.model_dump_json()}")
    if not device.reports_cut and rules.cut_card_remaining is None:
        print("warning: this device cannot report the cut card and the cut card is not at a fixed place")
    loopback = server = None
    try:
        if check:
            loopback = _loopback(device, rules, args.table_id)
        elif args.game_server:
            server = _game_server(args)
            if server is None:
                return 1
        return _deal(
            args, sc.steps(sc.dealer(device_reports_cut=device.reports_cut)), device, loopback, server
        )
    finally:
        if loopback is not None:
            loopback.stop()
        if server is not None:
            server.stop()
        device.close()
        if link is not None and args.link is None:
            shutil.rmtree(link.parent, ignore_errors=True)


def _device(args: argparse.Namespace, sc: Scenario, usb: bool, link: Path | None) -> SimDevice:
    """The simulated shoe: on a pty at ``link``, or on a virtual USB bus; OSError if ``link`` cannot be."""
    bus = None
    if usb:
        from simulators.usb_backend import VirtualUsbBus

        bus = VirtualUsbBus()
    return make_device(args.driver, random.Random(sc.seed), sc.faults, link=link, bus=bus)


def _loopback(device: SimDevice, rules: HouseRules, table_id: str) -> Loopback:
    """The real driver and validator reading the device here, each step checked (``--check``)."""
    from simulators.loopback import Loopback

    def show(step: Step, events: list[EventData]) -> None:
        for e in events:
            if isinstance(e, AlertData):
                print(f"  validator: {e.code} ({e.severity}) {e.message}", flush=True)

    loopback = Loopback(device, rules, table_id=table_id, on_events=show)
    loopback.start()
    return loopback


def _game_server(args: argparse.Namespace) -> GameServer | None:
    """The stand-in game server opening and closing betting for a daemon on the device; None: no broker."""
    from simulators.game_server import GameServer

    game = GameServer(
        args.mqtt_host, args.mqtt_port, args.table_id, prefix=args.prefix, betting_time=args.betting_time
    )
    try:
        game.start(args.broker_wait)  # stops itself when no broker answers
    except ConnectionError as exc:
        print(f"simulate: {exc}", file=sys.stderr)
        return None
    print(f"game server stand-in on {args.mqtt_host}:{args.mqtt_port}, table {args.table_id}")
    return game


def _deal(
    args: argparse.Namespace,
    steps: Iterable[Step],
    device: SimDevice,
    loopback: Loopback | None,
    server: GameServer | None,
) -> int:
    """Deal the scenario's steps until done or Ctrl-C; with a loopback, 1 when any step mismatched."""

    def after(step: Step) -> None:
        if loopback is not None:
            before = len(loopback.problems)
            loopback.check(step)
            for problem in loopback.problems[before:]:
                print(f"  MISMATCH {problem}", flush=True)
        if not args.quiet or step.expect.alerts:
            print(_describe(step), flush=True)

    print("dealing; Ctrl-C to stop", flush=True)
    stop = threading.Event()
    on_command = server.perform if server is not None else None
    feeder = Feeder(device, on_command=on_command, after=after, stop=stop)
    try:
        done = feeder.run(steps)
    except KeyboardInterrupt:
        stop.set()
        done = -1
    if done >= 0:
        print(f"scenario done: {done} steps")
    if loopback is not None:
        print(f"checked {loopback.steps_checked} steps: {len(loopback.problems)} mismatches")
        return 1 if loopback.problems else 0
    return 0
