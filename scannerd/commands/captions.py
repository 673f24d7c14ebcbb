"""``scannerd captions RECORDINGS... --from T --to T --out FILE.vtt``: a table's events over its video.

Writes the cues (WebVTT, or SRT with ``--srt`` or an ``.srt`` name) and a
chapters track beside them, ``FILE.chapters.vtt``: one chapter per shoe and
per round (docs/recording.md, "Captions for video review").

Exit status: 0 written; 2 for input that gives no captions (no such file,
not a recording, a bad or empty time range), named in one line on stderr.
"""

from __future__ import annotations

import argparse
import sys
from datetime import datetime
from pathlib import Path

from scannerd.contract.events import EventData
from scannerd.recording.captions import HOLD_S, Window, chapters, cues, document
from scannerd.recording.format import RecordingError
from scannerd.recording.replay import replay

EXIT_BAD_INPUT = 2


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "recordings", type=Path, nargs="+", metavar="RECORDING", help="one table's recordings"
    )
    parser.add_argument(
        "--from", dest="since", required=True, metavar="T", help="RFC 3339 time of the first event to caption"
    )
    parser.add_argument("--to", dest="until", required=True, metavar="T", help="RFC 3339 time of the last")
    parser.add_argument(
        "--start", metavar="T", help="RFC 3339 time the video's first frame shows (default: --from)"
    )
    parser.add_argument(
        "--offset",
        type=float,
        default=0.0,
        metavar="S",
        help="seconds the video recorder's clock is ahead of the table's (negative: behind)",
    )
    parser.add_argument(
        "--hold", type=float, default=HOLD_S, metavar="S", help=f"longest a cue stays up (default {HOLD_S:g})"
    )
    parser.add_argument("--out", type=Path, required=True, metavar="FILE", help="FILE.vtt, or FILE.srt")
    parser.add_argument("--srt", action="store_true", help="write SubRip (SRT) whatever the name")


def chapters_path(out: Path) -> Path:
    """``review.vtt`` -> ``review.chapters.vtt``: the chapters track beside the cues."""
    return out.with_name(f"{out.stem}.chapters.vtt")


class BadInput(Exception):
    pass


def _time(text: str, flag: str) -> float:
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        raise BadInput(f"{flag} {text!r} is not an RFC 3339 time (e.g. 2024-05-01T12:00:00Z)") from None
    if moment.tzinfo is None:
        raise BadInput(f"{flag} {text!r} needs a time zone (e.g. 2024-05-01T12:00:00Z)")
    return moment.timestamp()


def _window(args: argparse.Namespace) -> Window:
    since, until = _time(args.since, "--from"), _time(args.until, "--to")
    if until <= since:
        raise BadInput(f"--to {args.until} is not after --from {args.since}")
    start = _time(args.start, "--start") if args.start else since
    if args.hold <= 0:
        raise BadInput("--hold must be more than 0 seconds")
    return Window(since, until, start, args.offset)


def _events(paths: list[Path]) -> list[EventData]:
    events: list[EventData] = []
    tables: set[str] = set()
    for path in paths:
        for message in replay(path):
            if isinstance(message.source, EventData):
                events.append(message.source)
                tables.add(message.source["table_id"])
    if len(tables) > 1:
        named = ", ".join(sorted(tables))
        raise BadInput(f"recordings of {len(tables)} tables ({named}): caption one table at a time")
    events.sort(key=lambda e: e["ts"])  # stable: each file's events keep their published order
    return events


def run(args: argparse.Namespace) -> int:
    try:
        window = _window(args)
        events = _events(args.recordings)
        captioned = cues(events, window, args.hold)
        if not captioned:
            raise BadInput(f"nothing to caption between {args.since} and {args.until} in these recordings")
    except (BadInput, RecordingError) as exc:
        print(f"scannerd captions: {exc}", file=sys.stderr)
        return EXIT_BAD_INPUT
    out: Path = args.out
    chapter_file = chapters_path(out)
    try:
        if args.srt or out.suffix.lower() == ".srt":
            document(captioned).save_as_srt(str(out))
        else:
            document(captioned).save(str(out))
        document(chapters(events, window)).save(str(chapter_file))
    except OSError as exc:
        print(f"scannerd captions: {exc.filename}: {exc.strerror or exc}", file=sys.stderr)
        return EXIT_BAD_INPUT
    print(f"{len(captioned)} cues to {out}, chapters to {chapter_file}")
    return 0
