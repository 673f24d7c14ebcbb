"""``scannerd check-config``: judge a config file exactly as ``scannerd run`` would, without starting."""

from __future__ import annotations

import argparse
import json
import sys

from scannerd.config import EXIT_CONFIG, add_config_argument, load_config_or_report, redact


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_config_argument(parser)
    parser.add_argument(
        "--show",
        action="store_true",
        help="print the effective config (file + environment + defaults) as JSON, secrets masked",
    )


def run(args: argparse.Namespace) -> int:
    config = load_config_or_report(args.config)
    if config is None:
        return EXIT_CONFIG
    for key, problem in config.warnings():
        print(f"config warning: {args.config}: {key}: {problem}", file=sys.stderr)
    if args.show:
        print(json.dumps(redact(config.model_dump(mode="json")), indent=2))
    else:
        print(f"config OK: {args.config} (table {config.table_id})")
    return 0
