"""``scannerd audit PATHS... --out DIR``: re-validate recordings and report on the game (docs/audit.md).

Every recording named (a directory: every recording under it, at any depth,
as a casino's archive is filed) is replayed through the validator again, in
parallel as ``scannerd replay DIR`` does it, its chain and signature checked
as ``scannerd verify`` does, and the results written to ``DIR/report.json``
and ``DIR/report.html``. ``--tz`` names the zone the surveillance system
shows, in which each hand to review gives the line to type.

Exit status: 0 nothing flagged; 1 a suspect shuffle, a chain or signature
that does not check out, a replay that does not end where the table said
it was, or a fact far from its chance (each named on stdout); 2 input that
cannot be used (no such path, no recordings, a file that is not a
recording, a key that is not a key, a time zone that is not one, an output
directory that cannot be written), named in one line on stderr. The report is written whenever there
is anything to report, the unusable files listed in it.
"""

from __future__ import annotations

import argparse
import sys
from datetime import UTC, tzinfo
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from scannerd.archive.bucket import ArchiveError
from scannerd.archive.reading import recordings_at
from scannerd.audit import report_html, report_json
from scannerd.audit.aggregate import ChangedWhileAudited, build, unreadable
from scannerd.audit.facts import collect, lost
from scannerd.commands import arguments
from scannerd.recording.format import recordings_under
from scannerd.recording.replay_many import ClusterUnavailable, each_file, executor_for
from scannerd.recording.signing import load_public_key

EXIT_FLAGGED = 1
EXIT_BAD_INPUT = 2


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "paths",
        nargs="+",
        metavar="PATH|s3://BUCKET/PREFIX",
        help="recordings, directories holding them (at any depth), or an archive of them",
    )
    parser.add_argument(
        "--out", type=Path, required=True, metavar="DIR", help="where report.json and report.html go"
    )
    where = parser.add_mutually_exclusive_group()
    where.add_argument(
        "--workers",
        type=arguments.positive_int,
        metavar="N",
        help="replay N files at a time, each in its own process (default: every core)",
    )
    where.add_argument(
        "--cluster",
        metavar="ADDRESS",
        help="replay on the Dask cluster whose scheduler is at ADDRESS (its workers must see the same paths)",
    )
    parser.add_argument(
        "--key",
        type=Path,
        metavar="PUBKEY",
        help="the tables' public key (scannerd keygen's FILE.pub): every file must be signed with it",
    )
    parser.add_argument(
        "--tz",
        metavar="ZONE",
        help="the surveillance system's time zone, an IANA name such as Europe/Berlin: the hands to "
        "review give their times to type in it (default: UTC)",
    )
    arguments.add_archive_reading(parser)


def run(args: argparse.Namespace) -> int:
    try:
        zone = _zone(args.tz)
    except ValueError as exc:
        return _bad(str(exc))
    try:
        key = load_public_key(args.key) if args.key is not None else None
    except OSError as exc:
        return _bad(f"{exc.filename}: {exc.strerror or exc}")
    try:
        named = recordings_at(args.paths, arguments.archive_reach(args), args.retention_days)
        paths = recordings_under(named)
        args.out.mkdir(parents=True, exist_ok=True)
    except (ValueError, ArchiveError) as exc:
        return _bad(str(exc))
    except OSError as exc:
        return _bad(f"{exc.filename or args.out}: {exc.strerror or exc}")
    try:
        executor, release = executor_for(args.cluster, args.workers, len(paths))
    except ClusterUnavailable as exc:
        return _bad(str(exc))
    try:
        report = build(each_file(paths, collect, lost, executor), key, [str(p) for p in args.paths], zone)
    except ChangedWhileAudited as exc:
        return _bad(str(exc))
    finally:
        release()
    try:
        report_json.write(report, args.out)
        report_html.write(report, args.out)
    except OSError as exc:
        return _bad(f"{exc.filename or args.out}: {exc.strerror or exc}")
    for row in unreadable(report):
        print(f"scannerd audit: {row['error']}", file=sys.stderr)
    for flag in report["flags"]:
        print(f"FLAGGED {flag['kind']}: {_where(flag)}: {flag['detail']}")
    totals = report["totals"]
    print(
        f"audit: {len(paths)} file(s), {len(report['tables'])} table(s), {len(report['shoes'])} shoe(s), "
        f"{totals['hands']} hands: {len(report['flags'])} flagged; report in {args.out}"
    )
    if unreadable(report):
        return EXIT_BAD_INPUT
    return EXIT_FLAGGED if report["flagged"] else 0


def _zone(name: str | None) -> tzinfo:
    """``--tz``: a zone of the system's time zone database; UTC, which needs none, when not given."""
    if name is None:
        return UTC
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError, OSError):
        raise ValueError(f"--tz {name}: no such time zone (an IANA name such as Europe/Berlin)") from None


def _where(flag: dict[str, Any]) -> str:
    """What a flag is about, in a few words: a table's shoe, a file, or a table's (or all tables') fact."""
    if flag["kind"] == "shuffle":
        return f"{flag['table_id']} shoe {flag['shoe_id']}"
    if flag["kind"] == "facts":
        return f"{flag['table_id'] or 'all tables'} {flag['game']} {flag['fact']}"
    return str(flag["file"])


def _bad(text: str) -> int:
    print(f"scannerd audit: {text}", file=sys.stderr)
    return EXIT_BAD_INPUT
