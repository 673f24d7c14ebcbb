"""The ``[archive]`` config section, beside the shipper (``shipper.py``) it sets going.

Off unless ``url`` is set. The secret key is never a setting: only where it is
read from, a file or the systemd credential ``archive-secret-key``, as the
broker's password is. Reading the section loads no S3 client.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Literal, Self

from pydantic import Field, SecretStr, field_validator, model_validator

from scannerd.archive.url import ArchiveUrl
from scannerd.contract.idents import PlainText
from scannerd.settings.config_section import FilePath, Section
from scannerd.settings.credentials import read_secret

CREDENTIAL_NAME = "archive-secret-key"
"""File name looked up in ``$CREDENTIALS_DIRECTORY`` when no ``secret_key_file`` is set."""

DAY_S = 86400.0

LockMode = Literal["compliance", "governance"]


class ArchiveSettings(Section):
    """A write-once copy of every sealed recording, in S3-compatible storage under Object Lock."""

    url: str | None = Field(
        None,
        description="s3://BUCKET/PREFIX: each sealed recording goes to PREFIX/<table_id>/<file name>, "
        "the anchors beside them. Unset: nothing is archived.",
    )
    endpoint: PlainText | None = Field(
        None,
        description="The storage's S3 API, e.g. https://s3.casino.example:9000. Unset: Amazon S3 in region.",
    )
    region: PlainText = Field("us-east-1", min_length=1, description="The region the bucket is in.")
    access_key: PlainText | None = Field(
        None,
        min_length=1,
        description="The access key id the table writes with. Unset: the standard AWS credentials of "
        "the service's environment.",
    )
    secret_key_file: FilePath | None = Field(
        None,
        description="File holding the secret access key (first line). A relative path is taken inside "
        "$CREDENTIALS_DIRECTORY. Unset: $CREDENTIALS_DIRECTORY/archive-secret-key.",
    )
    retention_days: int = Field(
        3653,
        ge=1,
        le=36500,
        description="Days each file stays locked from its upload (NJ 10 years: 3653; PA 5: 1827).",
    )
    mode: LockMode = Field(
        "compliance",
        description="Object Lock mode: 'compliance', which no one can lift, not even the storage's "
        "root; 'governance', which a user with the right to bypass it can.",
    )
    keep_local_days: int = Field(
        30,
        ge=0,
        le=36500,
        description="Days a file stays on the table PC once archived and checked; never removed before.",
    )

    @field_validator("url")
    @classmethod
    def _an_archive(cls, value: str | None) -> str | None:
        if value is not None:
            ArchiveUrl.parse(value)
        return value

    @model_validator(mode="after")
    def _secret_with_a_key(self) -> Self:
        if self.secret_key_file is not None and self.access_key is None:
            raise ValueError("secret_key_file is set but access_key is not: give both")
        return self

    @property
    def archive(self) -> ArchiveUrl | None:
        return ArchiveUrl.parse(self.url) if self.url is not None else None

    @property
    def retention_s(self) -> float:
        return self.retention_days * DAY_S

    def secret_key(self, environ: Mapping[str, str] | None = None) -> SecretStr | None:
        """Read the secret now, so a rotated credential is picked up at the next start; None without an
        access key (the environment's credentials are used). An OSError names a file that cannot be read."""
        if self.access_key is None:
            return None
        secret = read_secret(self.secret_key_file, CREDENTIAL_NAME, environ)
        if secret is None:
            raise OSError(
                f"archive.access_key is set, but no secret key: set secret_key_file or give the "
                f"credential {CREDENTIAL_NAME}"
            )
        return secret
