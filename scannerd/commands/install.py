"""``scannerd install``: put the table's files (units, udev rules, sysusers, examples) where they go.

The wheel carries them (see setup.py), so a table PC installed from the
offline bundle needs no checkout. Files that are ours are overwritten, which
is also how an upgrade brings new units; the operator's own files (the
config, the password, drop-ins) are never written. Nothing is enabled or
reloaded: the command prints what to run next, so that an install never
restarts a table by surprise.
"""

from __future__ import annotations

import argparse
import fnmatch
import sys
from dataclasses import dataclass
from importlib import resources
from pathlib import Path, PurePosixPath

SHIPPED_COMMAND = "/opt/scannerd/bin/scannerd"
"""The path the shipped units start; rewritten to this installation's command when it lives elsewhere."""

# (pattern on the path under systemd/, directory it goes to); the first match wins.
DESTINATIONS: tuple[tuple[str, str], ...] = (
    ("*.service", "/etc/systemd/system"),
    ("*.rules", "/etc/udev/rules.d"),
    ("sysusers.d/*.conf", "/etc/sysusers.d"),
    ("mosquitto*", "/usr/share/scannerd/mosquitto"),  # for the broker's host, not this PC
    ("prometheus*", "/usr/share/scannerd/prometheus"),  # for the monitoring host: alerting rules
    ("grafana*", "/usr/share/scannerd/grafana"),  # for the monitoring host: the dashboard
    ("*.example", "/etc/scannerd"),
)

NEXT_STEPS = """\
next:
  systemd-sysusers                                  # the scannerd account
  udevadm control --reload && udevadm trigger       # the shoe's stable name
  install -m 0640 -g scannerd /etc/scannerd/scannerd.toml.example /etc/scannerd/scannerd.toml   # then edit it
  {command} check-config --config /etc/scannerd/scannerd.toml
  systemctl daemon-reload && systemctl enable --now scannerd.service
  systemctl enable --now scannerd-kiosk.service     # the display on this PC's monitor (cage, chromium)
(docs/operations.md, "Install", has each step)"""


@dataclass(frozen=True)
class Placement:
    source: Path
    name: str  # the path under systemd/, as the operator knows it from the docs
    target: PurePosixPath


def table_files() -> Path:
    """The packaged copy of ``systemd/``; in an editable install, the checkout's own."""
    packaged = Path(str(resources.files("scannerd") / "table_files"))
    if packaged.is_dir():
        return packaged
    return Path(__file__).resolve().parents[2] / "systemd"


def placements(source: Path) -> list[Placement]:
    """Where every shipped file goes; a file no rule places is a mistake in the shipped tree."""
    found = []
    for path in sorted(p for p in source.rglob("*") if p.is_file()):
        relative = path.relative_to(source).as_posix()
        directory = next((d for pattern, d in DESTINATIONS if fnmatch.fnmatch(relative, pattern)), None)
        if directory is None:
            raise LookupError(f"{relative}: no place for this file in scannerd install")
        found.append(Placement(path, relative, PurePosixPath(directory, path.name)))
    return found


def this_command() -> str:
    """The ``scannerd`` of this installation, which the installed units must start."""
    candidate = Path(sys.prefix, "bin", "scannerd")
    return str(candidate) if candidate.exists() else SHIPPED_COMMAND


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--root",
        type=Path,
        default=Path("/"),
        metavar="DIR",
        help="install under DIR instead of / (an image being built, a test)",
    )
    parser.add_argument("--list", action="store_true", help="print where each file goes and write nothing")


def run(args: argparse.Namespace) -> int:
    command = this_command()
    try:
        files = placements(table_files())
    except (LookupError, OSError) as exc:
        print(f"install: {exc}", file=sys.stderr)
        return 1
    for placement in files:
        target = args.root / placement.target.relative_to("/")
        if args.list:
            print(f"{placement.name} -> {target}")
            continue
        print(target, flush=True)
        text = placement.source.read_text(encoding="utf-8")
        if placement.source.suffix == ".service":
            text = text.replace(SHIPPED_COMMAND, command)
        try:
            target.parent.mkdir(mode=0o755, parents=True, exist_ok=True)
            target.write_text(text, encoding="utf-8")
            target.chmod(0o644)
        except OSError as exc:
            print(f"install: {exc.filename or target}: {exc.strerror or exc}", file=sys.stderr)
            return 1
    if not args.list:
        print(NEXT_STEPS.format(command=command))
    return 0
