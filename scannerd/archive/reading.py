"""What the command line names: recordings and anchors on disk, or in an archive, read where they lie.

``scannerd verify`` and ``scannerd audit`` take ``s3://BUCKET/PREFIX`` (a
table's or a day's sub-prefix too) beside paths: the archive is listed once,
each recording becomes an object every reader opens itself, and nothing is
copied to disk first. Who reads the archive is the process's own business: the
standard AWS credentials of its environment (``AWS_ACCESS_KEY_ID``, a profile,
a role), and ``AWS_ENDPOINT_URL`` or ``--endpoint`` for storage other than
Amazon's, in a worker process or on a cluster's worker alike.
"""

from __future__ import annotations

from collections.abc import Iterable
from itertools import groupby
from pathlib import Path

from scannerd.archive.bucket import READER_ATTEMPTS, ArchiveError, Bucket, Reach, reason
from scannerd.archive.objects import recordings_in
from scannerd.archive.url import ArchiveUrl, is_archive
from scannerd.contract.events import AnchorEvent
from scannerd.recording.anchors import parse_anchors, read_anchors
from scannerd.recording.format import RecordingError
from scannerd.recording.source import Recorded

ANCHOR_SUFFIX = ".json"


def recordings_at(texts: Iterable[str], reach: Reach, retention_days: int) -> list[Recorded]:
    """Each argument as a path, or the recordings of the archive it names, each held to the house's
    retention. A RecordingError names an archive with none; an ArchiveError one that cannot be listed."""
    found: list[Recorded] = []
    for text in texts:
        if not is_archive(text):
            found.append(Path(text))
            continue
        url = _url(text)
        found += recordings_in(url, Bucket(reach, url.bucket, attempts=READER_ATTEMPTS), retention_days)
    return found


def anchors_at(text: str, reach: Reach) -> list[AnchorEvent]:
    """The anchors a file holds, or every anchor object of the archive ``text`` names (the table kept
    them there beside its files: ``PREFIX/<table_id>/anchors/``)."""
    if not is_archive(text):
        return read_anchors(Path(text))
    url = _url(text)
    bucket = Bucket(reach, url.bucket, attempts=READER_ATTEMPTS)
    below = url.key() + "/" if url.prefix else ""
    kept = [v for v in bucket.versions(below) if v.key.endswith(ANCHOR_SUFFIX) and not v.deleted]
    if not kept:
        raise RecordingError(f"{url}: no anchors in the archive there")
    anchors = []
    for key, versions in groupby(sorted(kept, key=lambda v: v.key), key=lambda v: v.key):
        first = min(reversed(list(versions)), key=lambda v: v.modified)  # the locked one, as for a file
        where = f"s3://{url.bucket}/{key}"
        body = bucket.get(key, first.version_id)["Body"]
        try:
            lines = body.read().decode("utf-8").splitlines()
        except UnicodeDecodeError:
            raise RecordingError(f"{where}: not UTF-8 text: not anchors") from None
        except Exception as exc:
            raise ArchiveError(f"{where}: cannot be read: {reason(exc)}") from None
        finally:
            body.close()
        anchors += parse_anchors(lines, where)
    return anchors


def _url(text: str) -> ArchiveUrl:
    try:
        return ArchiveUrl.parse(text)
    except ValueError as exc:
        raise RecordingError(str(exc)) from None
