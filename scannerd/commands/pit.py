"""``scannerd pit``: a live web page of every table under a prefix, for the pit boss (docs/pit.md)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from pydantic import ValidationError

from scannerd.client import BrokerRefused
from scannerd.commands import arguments
from scannerd.display.settings import DisplaySettings
from scannerd.pit import Pit
from scannerd.runtime.descriptors import raise_fd_limit

DEFAULT_LISTEN = "127.0.0.1:8090"
MAX_CONNECTIONS = 64
"""Connections at once, from all clients: a wall screen and a dozen tablets, each with its keep-alive."""
MAX_PER_ADDRESS = 8
"""Connections at once from one client address: one browser's, with room for a second."""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    # MQTT 5 unless told otherwise: the pit holds back many tables' events while it asks each for
    # its state, and only MQTT 5 lets it tell the broker to send on meanwhile (the client's
    # receive maximum); on a broker without it, --protocol 3.1.1.
    arguments.add_broker_arguments(parser, protocol="5")
    arguments.add_broker_wait(parser)
    parser.add_argument(
        "--listen",
        type=arguments.listen_address,
        default=DEFAULT_LISTEN,
        help=f"where the page is served, HOST:PORT (default {DEFAULT_LISTEN}; port 0 picks one)",
    )
    parser.add_argument(
        "--allowed-host",
        action="append",
        default=[],
        metavar="NAME",
        help="a host name the page is opened under, besides IP addresses and localhost (repeat for "
        "more); a request naming any other is refused (DNS rebinding)",
    )
    parser.add_argument(
        "--token-file",
        type=Path,
        help="file whose first line is a token acknowledging needs, for a pit reached over the "
        "network (default: $CREDENTIALS_DIRECTORY/pit-token if it exists, else none)",
    )
    parser.add_argument(
        "--max-connections",
        type=arguments.positive_int,
        default=MAX_CONNECTIONS,
        help=f"connections served at once, from all clients (default {MAX_CONNECTIONS}); past it an "
        "idle one gives way, or the new one is answered 503",
    )
    parser.add_argument(
        "--max-per-address",
        type=arguments.positive_int,
        default=MAX_PER_ADDRESS,
        help=f"connections served at once from one client address (default {MAX_PER_ADDRESS}): one "
        "host holding streams open locks out only itself",
    )


def page_settings(args: argparse.Namespace) -> DisplaySettings:
    """The page's options as the dealer display's settings, which the pit's page shares; ValueError."""
    try:
        return DisplaySettings(
            listen=args.listen,
            allowed_hosts=args.allowed_host,
            token_file=args.token_file,
            max_connections=args.max_connections,
            max_per_address=args.max_per_address,
        )
    except ValidationError as exc:
        error = exc.errors(include_url=False)[0]
        raise ValueError(f"--{str(error['loc'][0]).replace('_', '-')}: {error['msg']}") from None


def run(args: argparse.Namespace) -> int:
    try:
        settings = arguments.broker_settings(args)
        page = page_settings(args)
        pit = Pit(settings, page)
    except ValueError as exc:
        print(f"pit: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:  # the token file
        print(f"pit: cannot read the token file {exc.filename}: {exc.strerror}", file=sys.stderr)
        return 2
    raise_fd_limit()
    try:
        pit.start(args.broker_wait)
    except BrokerRefused as exc:
        print(f"pit: {arguments.refusal_line(exc)}", file=sys.stderr)
        return 1
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
    assert pit.client.refusal is not None  # what ``refused`` waits for
    print(f"pit: {arguments.refusal_line(pit.client.refusal)}", file=sys.stderr)
    return 1
