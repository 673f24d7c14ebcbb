"""``scannerd staff add|remove|list``: keep the table's staff list (docs/staff.md).

The list is the config's ``[staff] file`` (or ``--file``). A PIN is asked
twice on a terminal and read as one line from standard input otherwise, so
a script can feed it; it is never an argument, which ``ps`` and the shell's
history would show.
"""

from __future__ import annotations

import argparse
import getpass
import sys
from pathlib import Path

from pydantic import TypeAdapter, ValidationError

from scannerd.contract.idents import check_ident
from scannerd.runtime.config import DEFAULT_PATH, load_config_or_report
from scannerd.staff.roster import Member, Pin, StaffFile, StaffListError, hash_pin, read, write

EXIT_BAD_INPUT = 2
_PIN = TypeAdapter(Pin)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--config", type=Path, default=DEFAULT_PATH, help="whose [staff] file to keep")
    parser.add_argument("--file", type=Path, help="the staff list itself (instead of the config's)")
    actions = parser.add_subparsers(dest="action", metavar="ACTION", required=True)
    add = actions.add_parser("add", help="add a staff member, or give one a new PIN (--replace)")
    add.add_argument("staff_id", metavar="ID")
    add.add_argument("--role", choices=("dealer", "supervisor"), required=True)
    add.add_argument("--replace", action="store_true", help="the id is listed: set its role and PIN anew")
    remove = actions.add_parser("remove", help="take a staff member off the list")
    remove.add_argument("staff_id", metavar="ID")
    actions.add_parser("list", help="the ids and roles (never the hashes)")


def run(args: argparse.Namespace) -> int:
    path = args.file
    if path is None:
        config = load_config_or_report(args.config)
        if config is None:
            return EXIT_BAD_INPUT
        if config.staff.file is None:
            return _fail(f"{args.config}: [staff] file is not set; give --file")
        path = config.staff.file
    try:
        staff = read(path) if path.exists() or args.action != "add" else StaffFile()
        if args.action == "list":
            for member in staff.staff:
                print(f"{member.id}\t{member.role}")
            return 0
        staff_id = check_ident(args.staff_id)
        listed = {m.id: m for m in staff.staff}
        if args.action == "remove":
            if listed.pop(staff_id, None) is None:
                return _fail(f"{path}: {staff_id} is not on the list")
        else:
            if staff_id in listed and not args.replace:
                return _fail(f"{path}: {staff_id} is already on the list (--replace to set a new PIN)")
            listed[staff_id] = Member(id=staff_id, role=args.role, pin=hash_pin(_ask_pin()))
        write(path, StaffFile(staff=list(listed.values())))
    except (StaffListError, ValueError) as exc:
        return _fail(str(exc))
    except OSError as exc:
        return _fail(f"{exc.filename or path}: {exc.strerror or exc}")
    print(f"{args.action} {staff_id}: {path} has {len(listed)} staff")
    return 0


def _ask_pin() -> str:
    """The new PIN, typed twice on a terminal; from a pipe, its first line."""
    if sys.stdin.isatty():
        pin = getpass.getpass("PIN (4-12 digits): ")
        if getpass.getpass("PIN again: ") != pin:
            raise ValueError("the two PINs differ")
    else:
        pin = sys.stdin.readline().strip()
    try:
        return _PIN.validate_python(pin)
    except ValidationError:
        raise ValueError("a PIN is 4 to 12 digits") from None


def _fail(text: str) -> int:
    print(f"scannerd staff: {text}", file=sys.stderr)
    return EXIT_BAD_INPUT
