"""``scannerd pit``: a live web page of every table under a prefix, for the pit boss (docs/pit.md)."""

from __future__ import annotations

import argparse
import sys

from scannerd.commands import arguments
from scannerd.display.settings import DisplaySettings
from scannerd.pit import Pit

DEFAULT_LISTEN = "127.0.0.1:8090"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    arguments.add_broker_arguments(parser)
    arguments.add_broker_wait(parser)
    parser.add_argument(
        "--listen",
        type=arguments.listen_address,
        default=DEFAULT_LISTEN,
        help=f"where the page is served, HOST:PORT (default {DEFAULT_LISTEN}; port 0 picks one)",
    )


def run(args: argparse.Namespace) -> int:
    try:
        settings = arguments.broker_settings(args)
    except ValueError as exc:
        print(f"pit: {exc}", file=sys.stderr)
        return 2
    listen = DisplaySettings(listen=args.listen)  # the argument's type has checked it
    pit = Pit(settings, listen_host=listen.host, listen_port=listen.port)
    try:
        pit.start(args.broker_wait)
    except (ConnectionError, OSError) as exc:
        print(f"pit: {exc}", file=sys.stderr)
        return 1
    print(f"pit view   {pit.url}   (tables under {args.prefix}/ on {args.host}:{args.port})", flush=True)
    try:
        pit.client.refused.wait()  # a login refused on reconnecting (a password changed meanwhile)
    except KeyboardInterrupt:
        return 0
    finally:
        pit.stop()
    print(f"pit: {pit.client.refusal}", file=sys.stderr)
    return 1
