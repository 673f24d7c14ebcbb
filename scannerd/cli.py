"""The ``scannerd`` command: one entry point, one module per subcommand.

Each module in ``scannerd.commands`` offers ``add_arguments(parser)`` and
``run(args) -> int``; listing it in ``COMMANDS`` is all it takes to appear.
"""

from __future__ import annotations

import argparse
import importlib
import sys
import tempfile
import traceback

from scannerd import __version__
from scannerd.runtime import build

# subcommand name -> (module under scannerd.commands, one-line help)
COMMANDS: dict[str, tuple[str, str]] = {
    "run": ("run", "run the daemon for one table (as systemd does)"),
    "check-config": ("check_config", "validate a config file without starting"),
    "replay": ("replay", "replay a recorded session: the messages it publishes, or to a broker"),
    "record": ("record", "write a recording of a simulated table (--from-sim), for tests and bug reports"),
    "schema": ("schema", "write the MQTT contract: JSON Schemas and an AsyncAPI document"),
    "devices": ("devices", "list serial ports and USB devices, marking those a driver knows"),
    "simulate": ("simulate", "run a simulated shoe and dealer (and optionally a game server stand-in)"),
    "demo": ("demo", "a whole simulated table: shoe, daemon, broker, game server, display and live view"),
    "watch": ("watch", "a live terminal view of one table's rounds, shoe and alerts, from any broker"),
    "install": ("install", "put the units, udev rules, sysusers file and examples in place on this PC"),
    "pit": ("pit", "a live web page of every table under the prefix, for the pit boss"),
    "keygen": ("keygen", "make the key pair that signs a table's recordings"),
    "verify": ("verify", "check that recordings are whole and signed: every line, every file, in order"),
    "archive": ("archive", "the write-once archive: what waits, ship now, check it, restore a day"),
    "audit": ("audit", "re-validate recordings and report per table, shoe, dealer and day: JSON and HTML"),
    "captions": (
        "captions",
        "write WebVTT or SRT captions (and chapters) of recorded events, for reviewing a table's video",
    ),
    "staff": ("staff", "keep the table's staff list: ids, roles and PINs (add, remove, list)"),
    "selfcheck": (
        "selfcheck",
        "check the installed files against the hashes the wheel recorded (exit 1 if any differs)",
    ),
}


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The parser; only ``command``'s module is imported (all of them when None).

    Importing every subcommand would load the simulators, the embedded broker
    and the terminal UI into ``scannerd run`` on every table PC for nothing.
    """
    parser = argparse.ArgumentParser(
        prog="scannerd",
        description="Card-shoe scanner daemon for live baccarat tables.",
    )
    version = f"scannerd {__version__} ({build.described()})"  # which build runs: compiled or pure
    parser.add_argument("--version", action="version", version=version)
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name, (module_name, help_text) in COMMANDS.items():
        p = sub.add_parser(name, help=help_text, description=help_text)
        if command in (None, name):
            module = importlib.import_module(f"scannerd.commands.{module_name}")
            module.add_arguments(p)
            p.set_defaults(_run=module.run)
    return parser


LEAN_COMMANDS = frozenset({"run"})
"""Commands that stay resident for days: they must not load rich, which only the terminal views use.

structlog imports rich whenever it is installed, to offer pretty tracebacks
the daemon never prints: 3 MB resident for the life of the table.
"""


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    command = next((a for a in argv if not a.startswith("-")), None)
    if command in LEAN_COMMANDS:
        sys.modules.setdefault("rich", None)  # type: ignore[arg-type]  # imports of it now fail cleanly
    parser = build_parser(command if command in COMMANDS else None)
    args = parser.parse_args(argv)
    if not getattr(args, "_run", None):
        parser.print_help()
        return 2
    try:
        return int(args._run(args) or 0)
    except KeyboardInterrupt:
        return 130
    except Exception as exc:
        import structlog  # here, so that a subcommand decides what its logging imports (see run)

        text = " ".join(str(exc).split()) or type(exc).__name__
        if sys.stderr.isatty() or not structlog.is_configured():
            # Someone at a terminal, or a command that set up no log, gets one line; the traceback,
            # for a bug report, goes to a file.
            with tempfile.NamedTemporaryFile(
                "w", prefix=f"scannerd-{args.command}-", suffix=".txt", delete=False
            ) as crash:
                traceback.print_exception(exc, file=crash)
            print(f"scannerd {args.command}: error: {text} (details in {crash.name})", file=sys.stderr)
            return 1
        # Under systemd (or a pipe) the traceback goes to the log as one structured line.
        structlog.get_logger("scannerd").exception("command failed", command=args.command)
        print(f"scannerd {args.command}: error: {text}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
