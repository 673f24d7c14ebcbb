"""``scannerd pit``: a live web page of every table under a prefix, for the pit boss (docs/pit.md)."""

from __future__ import annotations

import argparse
import sys
import threading
from pathlib import Path

from pydantic import ValidationError

from scannerd.commands import arguments
from scannerd.display.settings import DisplaySettings
from scannerd.mqtt_settings import MqttSettings
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
    parser.add_argument("--username", help="broker user name (one the ACL lets send requests)")
    parser.add_argument("--password-file", type=Path, help="file whose first line is the broker password")
    parser.add_argument("--tls", action="store_true", help="connect with TLS (the broker's name is checked)")
    parser.add_argument("--tls-ca", type=Path, help="CA certificate to trust (implies --tls)")


def run(args: argparse.Namespace) -> int:
    try:
        settings = MqttSettings(
            host=args.host,
            port=args.port,
            prefix=args.prefix,
            username=args.username,
            password_file=args.password_file,
            tls=args.tls or args.tls_ca is not None,
            tls_ca=args.tls_ca,
        )
        listen = DisplaySettings(listen=args.listen)
        pit = Pit(settings, listen_host=listen.host, listen_port=listen.port)
    except ValidationError as exc:
        print(f"pit: {exc.errors(include_url=False)[0]['msg']}", file=sys.stderr)
        return 2
    except OSError as exc:
        print(f"pit: cannot read the password file {args.password_file}: {exc.strerror}", file=sys.stderr)
        return 2
    try:
        pit.start(args.broker_wait)
    except (ConnectionError, OSError) as exc:
        print(f"pit: {exc}", file=sys.stderr)
        return 1
    print(f"pit view   {pit.url}   (tables under {args.prefix}/ on {args.host}:{args.port})", flush=True)
    try:
        threading.Event().wait()
    except KeyboardInterrupt:
        return 0
    finally:
        pit.stop()
    return 0
