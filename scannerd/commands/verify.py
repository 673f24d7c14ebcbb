"""``scannerd verify FILES|DIR|s3://BUCKET/PREFIX``: whether recordings are as the table wrote them.

An archive is read where it lies (scannerd/archive/reading.py): each file's
locked version, its checksum and its retention are judged beside its chain
(docs/recording.md).

Exit status: 0 intact; 1 something was edited, inserted, removed, moved,
cut short, signed by another key or missing against its anchor (each named
on stdout); 2 for input that cannot be checked at all (no such file, not a
recording, not a key, not a file of anchors), each named on stderr while
every other file is still checked.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from scannerd.archive.bucket import ArchiveError
from scannerd.archive.reading import anchors_at, recordings_at
from scannerd.commands import arguments
from scannerd.recording.anchors import check_anchors
from scannerd.recording.format import RecordingError
from scannerd.recording.signing import fingerprint, load_public_key
from scannerd.recording.verify import verify

EXIT_TAMPERED = 1
EXIT_BAD_INPUT = 2


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "paths",
        nargs="+",
        metavar="FILE|DIR|s3://BUCKET/PREFIX",
        help="recordings, directories of them, or an archive of them",
    )
    parser.add_argument(
        "--key",
        type=Path,
        metavar="FILE",
        help="the table's public key (scannerd keygen's FILE.pub): every file must be signed with it",
    )
    parser.add_argument(
        "--anchors",
        metavar="FILE|s3://BUCKET/PREFIX",
        help="the anchor events the game server kept (JSON lines), or those the table archived: every "
        "file they name must be there",
    )
    arguments.add_archive_reading(parser)


def run(args: argparse.Namespace) -> int:
    try:
        key = load_public_key(args.key) if args.key is not None else None
    except OSError as exc:
        print(f"scannerd verify: {exc.filename}: {exc.strerror or exc}", file=sys.stderr)
        return EXIT_BAD_INPUT
    reach = arguments.archive_reach(args)
    try:
        anchors = anchors_at(args.anchors, reach) if args.anchors is not None else None
        verdict = verify(recordings_at(args.paths, reach, args.retention_days), key)
    except (RecordingError, ArchiveError) as exc:
        print(f"scannerd verify: {exc}", file=sys.stderr)
        return EXIT_BAD_INPUT
    for unusable in verdict.unusable:
        print(f"scannerd verify: {unusable}", file=sys.stderr)
    if not verdict.files:
        return EXIT_BAD_INPUT
    if anchors is not None:
        check_anchors(anchors, verdict.files, verdict)
    for note in verdict.notes:
        print(f"note: {note}")
    for problem in verdict.problems:
        print(problem)
    if not verdict.intact:
        unchecked = f", {len(verdict.unusable)} file(s) that could not be checked" if verdict.unusable else ""
        print(f"NOT intact: {len(verdict.problems)} problem(s) in {len(verdict.files)} file(s){unchecked}")
        return EXIT_BAD_INPUT if verdict.unusable else EXIT_TAMPERED
    lines = sum(f.lines for f in verdict.files)
    signed = f"signed with {fingerprint(key)}" if key else "signatures not checked (no --key)"
    anchored = f", every file of {len(anchors)} anchor(s) there" if anchors is not None else ""
    print(f"intact: {len(verdict.files)} file(s), {lines} lines, {signed}{anchored}")
    return 0
