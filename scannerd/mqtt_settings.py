"""Settings for the link to the game server: the ``[mqtt]`` and ``[outbox]`` config sections.

The password is never a setting: only the path of a file that holds it, so
the config file can be world-readable and the secret can live in a systemd
credential (``LoadCredential=``) or a root-only file.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Literal, Self

from pydantic import BaseModel, ConfigDict, Field, SecretStr, field_validator, model_validator

CREDENTIAL_NAME = "mqtt-password"
"""File name looked up in ``$CREDENTIALS_DIRECTORY`` when no ``password_file`` is set."""


class MqttSettings(BaseModel):
    """How to reach the broker and who to be there."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    host: str = Field("localhost", min_length=1, description="Broker host name or address.")
    port: int = Field(1883, ge=1, le=65535, description="Broker port (usually 8883 with TLS).")
    prefix: str = Field(
        "casino/tables", description="Topic prefix; a table's topics live under {prefix}/{table_id}/."
    )
    protocol: Literal["3.1.1", "5"] = Field("5", description="MQTT protocol version.")
    client_id: str | None = Field(
        None,
        max_length=128,
        description="MQTT client id; defaults to 'scannerd-{table_id}'. Must be unique per table, "
        "and stable, or the persistent session is lost.",
    )
    username: str | None = Field(None, description="Broker user name; the example ACL expects the table id.")
    password_file: Path | None = Field(
        None,
        description="File holding the broker password (first line). A relative path is taken inside "
        "$CREDENTIALS_DIRECTORY. Unset: $CREDENTIALS_DIRECTORY/mqtt-password if it exists.",
    )
    tls: bool = Field(False, description="Connect with TLS.")
    tls_ca: Path | None = Field(None, description="CA certificate(s) to trust; unset: the system store.")
    tls_cert: Path | None = Field(None, description="Client certificate, for brokers that require one.")
    tls_key: Path | None = Field(None, description="Private key of the client certificate.")
    keepalive: int = Field(30, ge=5, le=65535, description="Seconds between keepalive pings.")
    session_expiry_s: int = Field(
        7 * 24 * 3600,
        ge=0,
        description="MQTT 5: how long the broker keeps the session (subscriptions, queued requests) "
        "while the table is away.",
    )
    max_inflight: int = Field(20, ge=1, le=1000, description="Events sent but not yet acknowledged.")
    reconnect_min_s: int = Field(1, ge=1, description="First reconnect delay; it doubles per failure.")
    reconnect_max_s: int = Field(30, ge=1, description="Cap on the reconnect delay.")
    health_interval_s: float = Field(30.0, gt=0, description="Seconds between health publications.")

    @field_validator("prefix")
    @classmethod
    def _plain_topic_prefix(cls, value: str) -> str:
        if not value or value.startswith("/") or value.endswith("/") or any(c in value for c in "+#\0"):
            raise ValueError("prefix must be a non-empty topic without wildcards or leading/trailing '/'")
        return value

    @model_validator(mode="after")
    def _consistent(self) -> Self:
        if not self.tls and (self.tls_ca or self.tls_cert or self.tls_key):
            raise ValueError("tls_ca/tls_cert/tls_key are set but tls is false")
        if (self.tls_cert is None) != (self.tls_key is None):
            raise ValueError("tls_cert and tls_key go together")
        if self.reconnect_max_s < self.reconnect_min_s:
            raise ValueError("reconnect_max_s must not be below reconnect_min_s")
        return self

    def client_id_for(self, table_id: str) -> str:
        return self.client_id or f"scannerd-{table_id}"

    def password(self, environ: dict[str, str] | None = None) -> SecretStr | None:
        """Read the password now, so a rotated credential is picked up at the next start."""
        env = os.environ if environ is None else environ
        creds = env.get("CREDENTIALS_DIRECTORY")
        path = self.password_file
        if path is None:
            if not creds or not (Path(creds) / CREDENTIAL_NAME).is_file():
                return None
            path = Path(creds) / CREDENTIAL_NAME
        elif not path.is_absolute() and creds:
            path = Path(creds) / path
        lines = path.read_text(encoding="utf-8").splitlines()
        return SecretStr(lines[0] if lines else "")


class OutboxSettings(BaseModel):
    """Where events wait for the broker's acknowledgement, and how much disk they may take."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    path: Path = Field(Path("/var/lib/scannerd/outbox.sqlite3"), description="SQLite database file.")
    max_bytes: int = Field(
        256 * 1024 * 1024,
        ge=64 * 1024,
        description="Budget for waiting events (topic + payload bytes). Beyond it new events are "
        "held in memory and an alert is raised; see docs/mqtt.md.",
    )
    warn_fraction: float = Field(0.8, gt=0, lt=1, description="Fill level that raises the early warning.")
