"""``scannerd check-config``: judge a config file exactly as ``scannerd run`` would, without starting."""

from __future__ import annotations

import argparse
import json
import sys

from scannerd.config import ConfigError, add_config_argument, load_config, redact


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_config_argument(parser)
    parser.add_argument(
        "--show",
        action="store_true",
        help="print the effective config (file + environment + defaults) as JSON, secrets masked",
    )


def run(args: argparse.Namespace) -> int:
    try:
        config = load_config(args.config)
    except ConfigError as exc:
        print(exc, file=sys.stderr)
        return 2
    if args.show:
        print(json.dumps(redact(config.model_dump(mode="json")), indent=2))
    else:
        print(f"config OK: {args.config} (table {config.table_id})")
    return 0
