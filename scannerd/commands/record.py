"""``scannerd record --from-sim OUT``: a recording of a simulated table, made in an instant.

The command reads its arguments, builds the scenario and reports; the
dealing and the writing are ``simulators/recording.py``'s
(``record_simulation``), which the regression sessions use too.
``scannerd replay OUT`` plays the file.
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path

from scannerd.commands import arguments
from scannerd.recording.format import whole_second
from simulators.recording import record_simulation
from simulators.registry import simulated_drivers
from simulators.scenario import Scenario, ScenarioError, load


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("out", type=Path, metavar="OUT", help="the recording to write (.jsonl or .jsonl.gz)")
    parser.add_argument(
        "--from-sim",
        action="store_true",
        required=True,
        help="record the simulator (the one source so far)",
    )
    parser.add_argument(
        "--driver", choices=simulated_drivers(), default="beetek", help="the device to simulate"
    )
    parser.add_argument("--scenario", type=Path, help="scripted session (docs/simulators.md)")
    parser.add_argument(
        "--shoes",
        type=arguments.positive_int,
        default=1,
        help="whole shoes to deal when the scenario has no steps (default 1)",
    )
    parser.add_argument("--seed", type=int, help="random seed (overrides the scenario's)")
    parser.add_argument(
        "--error-rate", type=arguments.fraction, help="chance a round has a dealer mistake (0-1)"
    )
    arguments.add_shuffle(parser)
    arguments.add_game(parser)
    parser.add_argument("--table-id", type=arguments.table_id, default="T1")
    parser.add_argument(
        "--start", help="RFC 3339 time the session begins (default: now), e.g. 2024-05-01T20:00:00Z"
    )


def run(args: argparse.Namespace) -> int:
    try:
        scenario = load(args.scenario) if args.scenario else Scenario()
        given = (
            ("seed", args.seed),
            ("error_rate", args.error_rate),
            ("shuffle", args.shuffle),
            ("first_shoe", args.first_shoe),
        )
        changes = {k: v for k, v in given if v is not None}
        scenario = replace(scenario, **changes, house=arguments.game_rules(scenario.house, args))
        now = datetime.now(UTC).timestamp()
        started = datetime.fromisoformat(args.start) if args.start else whole_second(now)
        if started.tzinfo is None:
            raise ValueError("--start needs a time zone, e.g. 2024-05-01T20:00:00Z")
    except (ScenarioError, OSError, ValueError) as exc:
        print(f"record: {exc}", file=sys.stderr)
        return 2
    # A scenario without steps deals forever: then --shoes says how long.
    shoes = None if scenario.instructions else args.shoes
    try:
        summary = record_simulation(
            scenario, args.driver, args.out, table_id=args.table_id, started_at=started, shoes=shoes
        )
    except OSError as exc:
        print(f"record: {args.out}: {exc.strerror or exc}", file=sys.stderr)
        return 2
    print(f"wrote {args.out}: {summary.steps} steps, {summary.lines} lines, {summary.seconds:.0f} s of play")
    return 0
