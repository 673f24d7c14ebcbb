"""A recording in the archive, read where it lies: the locked version, its checksum, its retention.

Every reader of recordings (verify, replay, audit, and the shipper checking
what it put) reads an :class:`ArchivedObject` through the same lines as a file
(scannerd/recording/source.py), streamed: a day's file takes no more memory
than a shoe's. What the bucket says of the object beside its bytes is a
finding of its own, in a few words:

- the version read is the first one put under its name, the one the lock
  keeps; a newer version or a delete marker over it is named, since under
  Object Lock that is what an overwrite or a delete leaves;
- its retention, as the storage states it, against the house's;
- its bytes, against the SHA-256 the storage checked them with on arrival:
  an object altered where it rests reads as altered.

The object is a reference, picklable: a worker process, or a Dask cluster's
worker, opens it itself with its own credentials (the standard AWS ones of its
environment), so no secret travels with the work.
"""

from __future__ import annotations

import base64
import hashlib
from dataclasses import dataclass, field
from datetime import datetime
from itertools import groupby
from typing import Any

from scannerd.archive.bucket import READER_ATTEMPTS, ArchiveError, Bucket, Reach, Version, reason
from scannerd.archive.settings import DAY_S
from scannerd.archive.url import ArchiveUrl
from scannerd.recording.format import RecordingError, is_recording_name
from scannerd.recording.source import NotAsStored, Opened

READ_S = 64 * 1024

SLACK_S = 3600.0
"""How much short of the house's retention a lock may fall and still count: the table sets the date
by its clock, the storage stamps the upload by its own."""


@dataclass(frozen=True)
class ArchivedObject:
    """One recording in a bucket: its key, the version to read, and what the listing said of it."""

    reach: Reach
    bucket: str
    key: str
    version: str
    modified: datetime
    bytes: int
    listed: tuple[str, ...] = ()  # findings of the listing: versions over the locked one
    retention_days: int | None = None  # the house's retention, checked at reading; None: not checked
    via: Bucket | None = field(default=None, compare=False, repr=False)  # this process's client, never sent

    @property
    def name(self) -> str:
        return self.key.rpartition("/")[2]

    def size(self) -> int:
        return self.bytes

    def __str__(self) -> str:
        return f"s3://{self.bucket}/{self.key}"

    def __getstate__(self) -> dict[str, Any]:
        return {k: v for k, v in self.__dict__.items() if k != "via"} | {"via": None}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)

    def open_bytes(self) -> Opened:
        bucket = self.via or Bucket(self.reach, self.bucket, attempts=READER_ATTEMPTS)
        answer = bucket.get(self.key, self.version)
        stored = answer.get("ChecksumSHA256")
        lock = answer.get("ObjectLockMode"), answer.get("ObjectLockRetainUntilDate")
        findings = (*self.listed, *self._retention(*lock))
        return Opened(_Checked(answer["Body"], stored, str(self)), findings)

    def _retention(self, mode: str | None, until: datetime | None) -> tuple[str, ...]:
        """The lock the storage states, held to the house's retention counted from the upload."""
        if self.retention_days is None:
            return ()
        if mode is None or until is None:
            return ("not locked in the archive: anyone who may write there can delete or replace it",)
        held = (until - self.modified).total_seconds()
        if held + SLACK_S < self.retention_days * DAY_S:
            days = held / DAY_S
            return (
                f"locked for {days:.0f} days only ({mode.lower()} until {until:%Y-%m-%d}), "
                f"shorter than the house's {self.retention_days}",
            )
        return ()


class _Checked:
    """An object's body as it arrives, hashed; at its end the hash must be the one the storage keeps.

    ``read(n)`` gives ``n`` bytes unless the body ends first, as a file does.
    """

    def __init__(self, body: Any, stored: str | None, name: str) -> None:
        self._body = body
        self._stored = stored
        self._name = name
        self._hash = hashlib.sha256()
        self._ended = False

    def read(self, size: int, /) -> bytes:
        out = b""
        while len(out) < size and not self._ended:
            try:
                piece = self._body.read(min(size - len(out), READ_S))
            except Exception as exc:
                from botocore.exceptions import FlexibleChecksumError  # loaded by now: the body is boto3's

                if isinstance(exc, FlexibleChecksumError):  # boto3 checked the SHA-256 at the end itself
                    raise NotAsStored(self._altered()) from None
                raise ArchiveError(f"{self._name}: {reason(exc)}") from None
            if not piece:
                self._ended = True
                self._check()
            self._hash.update(piece)
            out += piece
        return out

    def _check(self) -> None:
        if self._stored is None:
            return  # put without one (not by a table): its chain alone speaks for it
        if base64.b64encode(self._hash.digest()).decode() != self._stored:
            raise NotAsStored(self._altered())

    def _altered(self) -> str:
        return (
            f"its bytes are not those the archive took in: they do not hash to the SHA-256 it checked "
            f"on arrival ({self._stored}): altered where it rests"
        )

    def close(self) -> None:
        self._body.close()


def recordings_in(url: ArchiveUrl, bucket: Bucket, retention_days: int | None = None) -> list[ArchivedObject]:
    """Every recording under ``url``, each at the first version put under its name.

    A RecordingError names an archive that holds none; an ArchiveError one that cannot be listed.
    """
    listed = _listed(url, bucket)
    found = [
        _locked(list(versions), bucket, retention_days)
        for _, versions in groupby(sorted(listed, key=lambda v: v.key), key=lambda v: v.key)
    ]
    objects = [obj for obj in found if obj is not None]
    if not objects:
        raise RecordingError(f"{url}: no recordings in the archive there")
    return objects


def _listed(url: ArchiveUrl, bucket: Bucket) -> list[Version]:
    """The recordings' versions below ``url``: a folder (a table's), else the names it begins (a day's)."""
    for below in (url.key() + "/", url.key()) if url.prefix else ("",):
        listed = [v for v in bucket.versions(below) if is_recording_name(v.key.rpartition("/")[2])]
        if listed:
            return listed
    return []


def _locked(versions: list[Version], bucket: Bucket, retention_days: int | None) -> ArchivedObject | None:
    """The key's first version, named with every version put over it; None if none but delete markers."""
    kept = [v for v in versions if not v.deleted]
    if not kept:
        return None
    # S3 lists a key's versions newest first: of two put in the same second, the later listed came first.
    first = min(reversed(kept), key=lambda v: v.modified)
    return ArchivedObject(
        bucket.reach,
        bucket.name,
        first.key,
        first.version_id,
        first.modified,
        first.size,
        tuple(_over(first, v) for v in versions if v is not first),
        retention_days,
        bucket,
    )


def _over(first: Version, newer: Version) -> str:
    when = f"{newer.modified:%Y-%m-%d %H:%M:%S}"
    if newer.deleted:
        return (
            f"deleted in the archive: a delete marker ({newer.version_id}, {when}) hides the locked "
            f"version {first.version_id}, which is what was read"
        )
    return (
        f"overwritten in the archive: version {newer.version_id} ({when}, {newer.size} bytes) stands over "
        f"the locked version {first.version_id}, which is what was read"
    )
