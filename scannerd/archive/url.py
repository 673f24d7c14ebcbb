"""``s3://BUCKET/PREFIX``: where an archive lies, as the config and the command line name it."""

from __future__ import annotations

import re
from dataclasses import dataclass

SCHEME = "s3://"

_BUCKET = re.compile(r"^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$")
"""S3's rule for a bucket name: 3 to 63 lower-case letters, digits, dots and hyphens."""
_PART = re.compile(r"^[A-Za-z0-9_.-]+$")
"""A prefix's parts: what a table id, a day or a file name is made of, and nothing a shell or a URL
would read as something else."""


def is_archive(text: str) -> bool:
    """Whether a command-line argument names an archive rather than a path."""
    return text.startswith(SCHEME)


@dataclass(frozen=True, slots=True)
class ArchiveUrl:
    """A bucket and a prefix inside it ('' for the whole bucket), without slashes at either end."""

    bucket: str
    prefix: str = ""

    @classmethod
    def parse(cls, text: str) -> ArchiveUrl:
        """The archive ``text`` names; ValueError in words a technician can act on."""
        if not is_archive(text):
            raise ValueError(f"{text}: not an archive (s3://BUCKET/PREFIX)")
        bucket, _, prefix = text[len(SCHEME) :].partition("/")
        if not _BUCKET.match(bucket) or ".." in bucket:
            raise ValueError(
                f"{text}: the bucket must be 3 to 63 lower-case letters, digits, '.' and '-' "
                "(s3://BUCKET/PREFIX)"
            )
        parts = [part for part in prefix.split("/") if part]
        if any(not _PART.match(part) or part in (".", "..") for part in parts):
            raise ValueError(f"{text}: the prefix may hold letters, digits, '_', '.', '-' and '/' only")
        return cls(bucket, "/".join(parts))

    def key(self, *parts: str) -> str:
        """The object key of ``parts`` under the prefix."""
        return "/".join(p for p in (self.prefix, *parts) if p)

    def below(self, *parts: str) -> ArchiveUrl:
        """The archive one or more levels down: a table's, a day's."""
        return ArchiveUrl(self.bucket, self.key(*parts))

    def __str__(self) -> str:
        return f"{SCHEME}{self.bucket}/{self.prefix}" if self.prefix else f"{SCHEME}{self.bucket}"
