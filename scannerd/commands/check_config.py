"""``scannerd check-config``: judge a config file exactly as ``scannerd run`` would, without starting."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from pydantic import BaseModel
from pydantic_core import to_jsonable_python

from scannerd.runtime.config import EXIT_CONFIG, add_config_argument, load_config_or_report, redact


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
        print(json.dumps(redact(effective(config)), indent=2))
    else:
        print(f"config OK: {args.config} (table {config.table_id})")
    return 0


def effective(model: BaseModel) -> dict[str, Any]:
    """Every key of ``model`` as JSON, an unset one as null.

    Not the plain dump: a key left out of it while unset or at its default
    (``rules.betting_time_s``, ``rules.commission``, so that recording headers
    of tables without them stay as they were) would be missing here, and an
    operator reading ``--show`` would take it for unknown.
    """
    dumped = model.model_dump(mode="json")
    shown: dict[str, Any] = {}
    for name in type(model).model_fields:
        value = getattr(model, name)
        if isinstance(value, BaseModel):
            shown[name] = effective(value)
        else:  # a key the dump leaves out (unset, or at a default headers omit) as the value it has
            shown[name] = dumped[name] if name in dumped else to_jsonable_python(value)
    return shown
