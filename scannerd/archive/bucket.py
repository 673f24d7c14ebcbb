"""One bucket of S3-compatible storage, through boto3, and every way it can fail worded in one line.

Each call the archive makes goes through :class:`Bucket`, so a refusal, a
storage that is down or a connection cut halfway reads the same wherever it
happens: an :class:`ArchiveError` (an ``OSError``, as an unreadable file is)
naming the bucket, what was asked and why it failed. The shipper's client
tries once: it has its own patience, and a file not archived waits on disk.
A reader's tries a few times over what a busy storage does now and then (a
connection dropped, a 503): an audit of a million objects must not fail on
the one the storage dropped, and a reader has no later to wait for.

boto3 is imported only when a bucket is reached: reading the config, or a
table that archives nothing, loads no client library.
"""

from __future__ import annotations

import base64
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import IO, TYPE_CHECKING, Any

from pydantic import SecretStr

from scannerd.archive.settings import DAY_S, ArchiveSettings, LockMode

if TYPE_CHECKING:
    from mypy_boto3_s3.client import S3Client
    from mypy_boto3_s3.type_defs import GetObjectOutputTypeDef

CONNECT_TIMEOUT_S = 5.0
READ_TIMEOUT_S = 60.0
"""How long a reply may take to come: a storage that stops answering mid-upload fails the upload."""
READER_ATTEMPTS = 5
"""How often a reader asks before the object is unreadable: boto3's standard retries, backing off."""


class ArchiveError(OSError):
    """The storage could not be used for one thing asked of it; ``str()`` is the one line to show."""


class ArchiveUnfit(ArchiveError):
    """The bucket answers but must not take the table's files: no Object Lock, a retention too short."""


@dataclass(frozen=True, slots=True)
class Reach:
    """Where a store answers: its S3 API and region (None: the environment's, else Amazon's); never who
    one is there."""

    endpoint: str | None = None
    region: str | None = None


@dataclass(frozen=True, slots=True)
class Credentials:
    """Who the table is at the store: an access key id and its secret, which no log or repr shows."""

    access_key: str
    secret_key: SecretStr

    @classmethod
    def of(cls, settings: ArchiveSettings) -> Credentials | None:
        """The table's own, as its ``[archive]`` section names them; None: the environment's. An OSError
        names a secret that cannot be read."""
        secret = settings.secret_key()
        if settings.access_key is None or secret is None:
            return None
        return cls(settings.access_key, secret)


@dataclass(frozen=True, slots=True)
class Version:
    """One version of an object, or a delete marker over it, as the bucket lists them."""

    key: str
    version_id: str
    modified: datetime
    size: int
    deleted: bool = False


def client(reach: Reach, credentials: Credentials | None = None, attempts: int = 1) -> S3Client:
    """A client that tries each request ``attempts`` times over a transient failure, checks nothing it
    was not asked to, and names objects by path (what storage other than Amazon's expects). Without
    ``credentials``, the process's own: the standard AWS environment variables, shared files or role.
    A session of its own: boto3's default one is not for threads."""
    import boto3
    from botocore.config import Config

    config = Config(
        connect_timeout=CONNECT_TIMEOUT_S,
        read_timeout=READ_TIMEOUT_S,
        retries={"mode": "standard", "total_max_attempts": attempts},
        request_checksum_calculation="when_required",
        response_checksum_validation="when_required",
        s3={"addressing_style": "path"} if reach.endpoint else {},
    )
    return boto3.session.Session().client(
        "s3",
        endpoint_url=reach.endpoint,
        region_name=reach.region,
        config=config,
        aws_access_key_id=credentials.access_key if credentials else None,
        aws_secret_access_key=credentials.secret_key.get_secret_value() if credentials else None,
    )


class Bucket:
    """One bucket, with what the archive asks of it."""

    def __init__(
        self, reach: Reach, name: str, credentials: Credentials | None = None, attempts: int = 1
    ) -> None:
        self.reach = reach
        self.name = name
        self.attempts = attempts
        self._credentials = credentials
        self._client: S3Client | None = None

    @property
    def s3(self) -> S3Client:
        if self._client is None:
            self._client = client(self.reach, self._credentials, self.attempts)
        return self._client

    def __str__(self) -> str:
        return f"s3://{self.name}"

    def check_lock(self, retention_days: int) -> None:
        """The bucket keeps what it is given: Object Lock on, and no default retention shorter than
        the house's. Otherwise :class:`ArchiveUnfit` says what is wrong with it."""
        with self._failing("read its Object Lock configuration"):
            try:
                found = self.s3.get_object_lock_configuration(Bucket=self.name)
            except Exception as exc:
                if _code(exc) == "ObjectLockConfigurationNotFoundError":
                    raise ArchiveUnfit(
                        f"{self}: has no Object Lock: a file put there could be deleted or overwritten; "
                        "create the bucket with Object Lock enabled"
                    ) from None
                raise
        lock = found.get("ObjectLockConfiguration", {})
        if lock.get("ObjectLockEnabled") != "Enabled":
            raise ArchiveUnfit(f"{self}: Object Lock is not enabled on it")
        default = lock.get("Rule", {}).get("DefaultRetention", {})
        days = default.get("Days") or 365 * default.get("Years", 0)
        if days and days < retention_days:
            raise ArchiveUnfit(
                f"{self}: its default retention ({default.get('Mode', '?')} {days} days) is shorter than "
                f"[archive] retention_days ({retention_days}): it is not the bucket for this table"
            )

    def versions(self, prefix: str) -> Iterator[Version]:
        """Every version and delete marker under ``prefix``, newest first within a key, as S3 lists them."""
        with self._failing(f"list {prefix or 'it'}"):
            pages = self.s3.get_paginator("list_object_versions").paginate(Bucket=self.name, Prefix=prefix)
            for page in pages:
                for v in page.get("Versions", []):
                    yield Version(v["Key"], v["VersionId"], v["LastModified"], v["Size"])
                for m in page.get("DeleteMarkers", []):
                    yield Version(m["Key"], m["VersionId"], m["LastModified"], 0, deleted=True)

    def put(self, key: str, body: IO[bytes], sha256: bytes, until: datetime, mode: LockMode) -> str:
        """``body`` as ``key``, locked until ``until`` with its own mode and date, whatever the bucket's
        default; the storage checks ``sha256`` as the bytes arrive and refuses them if they differ. The
        new version's id."""
        with self._failing(f"put {key}"):
            answer = self.s3.put_object(
                Bucket=self.name,
                Key=key,
                Body=body,
                ChecksumSHA256=base64.b64encode(sha256).decode(),
                ObjectLockMode="COMPLIANCE" if mode == "compliance" else "GOVERNANCE",
                ObjectLockRetainUntilDate=until,
            )
        version = answer.get("VersionId")
        if not version:
            raise ArchiveUnfit(f"{self}: kept {key} without a version: versioning is off")
        return version

    def get(self, key: str, version: str | None) -> GetObjectOutputTypeDef:
        """One version of ``key`` (the newest without ``version``), its body to be streamed."""
        asked: dict[str, Any] = {"VersionId": version} if version else {}
        with self._failing(f"read {key}"):
            return self.s3.get_object(Bucket=self.name, Key=key, ChecksumMode="ENABLED", **asked)

    def _failing(self, what: str) -> _Failing:
        return _Failing(f"{self}: cannot {what}")


class _Failing:
    """Turns whatever boto3 raises inside it into an :class:`ArchiveError`, in one line."""

    def __init__(self, context: str) -> None:
        self.context = context

    def __enter__(self) -> None:
        return None

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: object) -> None:
        if exc is None or isinstance(exc, ArchiveError) or not isinstance(exc, Exception):
            return
        raise ArchiveError(f"{self.context}: {reason(exc)}") from None


def reason(exc: BaseException) -> str:
    """What went wrong, in a few words: the storage's own code and message, or the network's."""
    code = _code(exc)
    if code is not None:
        text = getattr(exc, "response", {}).get("Error", {}).get("Message") or ""
        return f"{code} ({text.rstrip('.')})" if text else code
    text = " ".join(str(exc).split())
    return text or type(exc).__name__


def _code(exc: BaseException) -> str | None:
    response = getattr(exc, "response", None)
    if not isinstance(response, dict):
        return None
    return response.get("Error", {}).get("Code") or None


def retain_until(now: float, days: int) -> datetime:
    """The date a file put at ``now`` stays locked until: ``days`` whole days on, to the second."""
    return datetime.fromtimestamp(int(now + days * DAY_S) + 1, UTC)
