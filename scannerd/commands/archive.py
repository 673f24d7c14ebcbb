"""``scannerd archive status|push|check|restore``: the table's write-once archive, by hand.

- ``status``: what waits for the archive, from the table PC's own files and
  ledger; no storage asked. Exit 0 when nothing waits, 1 when something does.
- ``push``: ship now, on this process, what the daemon would: for a table
  whose daemon is stopped (a PC taken out of service). Refused while the
  table's daemon runs: it ships by itself, and two shippers could put one
  file twice.
- ``check``: every finished file the table PC still has is in the archive,
  locked for the house's retention, reading back as its chain says. Exit 1
  names each that is not.
- ``restore``: a table's day back from the archive as files, each held to the
  checksum the archive took it in with.

The config's ``[archive]`` says where and as whom; a problem with it, or an
archive that cannot be reached, is one line and exit 2 (docs/operations.md).
"""

from __future__ import annotations

import argparse
import sys
import time
from datetime import date
from pathlib import Path

from scannerd.archive.backlog import Backlog
from scannerd.archive.bucket import ArchiveError, Bucket, Credentials, Reach
from scannerd.archive.copies import Copies, NotAsAnchored, check
from scannerd.archive.ledger import Ledger
from scannerd.archive.objects import recordings_in
from scannerd.archive.restore import RestoreError, restore
from scannerd.archive.settings import ArchiveSettings
from scannerd.archive.shipper import Shipper
from scannerd.archive.url import ArchiveUrl
from scannerd.commands import arguments
from scannerd.recording.format import RecordingError
from scannerd.runtime import logs
from scannerd.runtime.config import Config, add_config_argument, load_config_or_report
from scannerd.runtime.instance_lock import AlreadyRunning, InstanceLock

EXIT_BEHIND = 1
EXIT_BAD_INPUT = 2


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_config_argument(parser)
    actions = parser.add_subparsers(dest="action", metavar="ACTION", required=True)
    actions.add_parser("status", help="what waits for the archive, from this PC's files (no storage asked)")
    actions.add_parser("push", help="ship what waits now, with the table's daemon stopped")
    actions.add_parser(
        "check", help="every finished file here is in the archive, locked and as its chain says"
    )
    back = actions.add_parser("restore", help="a table's day back from the archive as files")
    back.add_argument("--day", type=date.fromisoformat, required=True, metavar="YYYY-MM-DD", help="UTC")
    back.add_argument("--to", type=Path, required=True, metavar="DIR", help="where the files go")
    back.add_argument(
        "--table", type=arguments.table_id, metavar="ID", help="another table's day (default: this table's)"
    )


def run(args: argparse.Namespace) -> int:
    config = load_config_or_report(args.config)
    if config is None:
        return EXIT_BAD_INPUT
    logs.configure(config.log, config.table_id, level="critical")  # what it says is its own lines
    url = config.archive.archive
    if url is None or config.record.dir is None:
        return _bad(f"{args.config}: no [archive] url (and [record] dir): this table archives nothing")
    try:
        return ACTIONS[args.action](config, url, args)
    except (ArchiveError, RecordingError) as exc:
        return _bad(str(exc))
    except OSError as exc:
        return _bad(f"{exc.filename or ''}: {exc.strerror or exc}".lstrip(": "))


def _status(config: Config, url: ArchiveUrl, args: argparse.Namespace) -> int:
    directory = Path(str(config.record.dir))
    backlog = Backlog(directory, config.table_id, config.record.compress)
    ledger = Ledger(directory, config.table_id)
    waiting = backlog.waiting(ledger.archived, None) if directory.is_dir() else []
    now = time.time()
    if not waiting:
        print(f"{config.table_id}: nothing waits: {len(ledger.archived)} file(s) here archived and checked")
        return 0
    print(f"{config.table_id}: {len(waiting)} file(s) wait for {url}")
    for each in waiting:
        why = "(due)" if backlog.due(each.path) else "(unsealed: the next start of the table links it)"
        print(f"  {each.path.name}  waiting {_age(now - each.since)}  {why}")
    return EXIT_BEHIND


def _age(seconds: float) -> str:
    minutes = int(seconds // 60)
    return f"{minutes // 60} h {minutes % 60} min" if minutes >= 60 else f"{minutes} min"


def _push(config: Config, url: ArchiveUrl, args: argparse.Namespace) -> int:
    try:
        lock = InstanceLock(Path(config.outbox.path), config.table_id)
    except AlreadyRunning as exc:
        return _bad(f"{exc}: the running daemon ships by itself (its health says how far behind it is)")
    try:
        shipper = Shipper(
            config.archive,
            table_id=config.table_id,
            directory=Path(str(config.record.dir)),
            compress=config.record.compress,
            writing=lambda: None,
            credentials=Credentials.of(config.archive),
        )
        shipper.ship_now()
    finally:
        lock.release()
    health = shipper.health()
    print(f"{config.table_id}: {health.archived} file(s) archived and checked now; {health.behind} wait")
    if health.last_error:
        print(health.last_error)
    return EXIT_BEHIND if health.behind else 0


def _check(config: Config, url: ArchiveUrl, args: argparse.Namespace) -> int:
    settings = config.archive
    copies = Copies(_bucket(settings, url), settings.retention_days)
    backlog = Backlog(Path(str(config.record.dir)), config.table_id, config.record.compress)
    problems, checked = [], 0
    for each in backlog.waiting((), None):
        key = url.key(config.table_id, each.path.name)
        due = backlog.due(each.path)
        if due is None:
            print(f"note: {each.path.name}: unsealed: the next start of the table links it, then archives it")
            continue
        copy = copies.first(key)
        if copy is None:
            problems.append(f"{each.path.name}: not in the archive ({url}/{config.table_id}/)")
            continue
        try:
            check(copy, due)
        except NotAsAnchored as exc:
            problems.append(f"{each.path.name}: {copy}: does not check out: {exc}")
            continue
        checked += 1
    for problem in problems:
        print(problem)
    verdict = f"NOT all archived, {len(problems)} not" if problems else "archived"
    print(
        f"{verdict}: {checked} file(s) here in the archive, locked for {settings.retention_days} days and "
        "reading back as their chain says"
    )
    return EXIT_BEHIND if problems else 0


def _restore(config: Config, url: ArchiveUrl, args: argparse.Namespace) -> int:
    settings = config.archive
    table = args.table or config.table_id
    day = url.below(table, f"{table}-{args.day:%Y%m%d}")
    objects = recordings_in(day, _bucket(settings, url), settings.retention_days)
    try:
        restored = restore(objects, args.to)
    except RestoreError as exc:
        return _bad(str(exc))
    for obj in objects:
        for finding in obj.listed:
            print(f"note: {obj}: {finding}")
    print(f"restored: {len(restored)} file(s) of table {table} begun on {args.day} into {args.to}")
    return 0


def _bucket(settings: ArchiveSettings, url: ArchiveUrl) -> Bucket:
    """The archive's bucket as the table reaches it, with the table's own credentials."""
    return Bucket(Reach(settings.endpoint, settings.region), url.bucket, Credentials.of(settings))


ACTIONS = {"status": _status, "push": _push, "check": _check, "restore": _restore}


def _bad(text: str) -> int:
    print(f"scannerd archive: {text}", file=sys.stderr)
    return EXIT_BAD_INPUT
