"""Settings for the link to the game server: the ``[mqtt]`` config section.

The password is never a setting: only the path of a file that holds it, so
the config file can be world-readable and the secret can live in a systemd
credential (``LoadCredential=``) or a root-only file.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Literal, Self

from pydantic import Field, SecretStr, field_validator, model_validator

from scannerd.contract.idents import PlainText
from scannerd.contract.topics import DEFAULT_PREFIX
from scannerd.settings.config_section import FilePath, Section
from scannerd.settings.credentials import read_secret, secret_path
from scannerd.settings.durations import seconds

CREDENTIAL_NAME = "mqtt-password"
"""File name looked up in ``$CREDENTIALS_DIRECTORY`` when no ``password_file`` is set."""

MqttVersion = Literal["3.1.1", "5"]
"""The protocol versions the table and the tools speak: MQTT 5, and 3.1.1 for a broker without it."""

SESSION_EXPIRY_NEVER = 0xFFFFFFFF
"""MQTT 5's largest session expiry interval, which means "never expires"."""


class MqttSettings(Section):
    """How to reach the broker and who to be there."""

    host: PlainText = Field("localhost", min_length=1, description="Broker host name or address.")
    port: int = Field(1883, ge=1, le=65535, description="Broker port (usually 8883 with TLS).")
    brokers: list[PlainText] = Field(
        default_factory=list,
        max_length=16,
        description="A broker cluster, in order of preference: 'host:port' ('host' alone takes port). "
        "The table connects to the first that answers and moves on to the next when it fails. "
        "When set, host is not used.",
    )
    prefix: PlainText = Field(
        DEFAULT_PREFIX, description="Topic prefix; a table's topics live under {prefix}/{table_id}/."
    )
    protocol: MqttVersion = Field("5", description="MQTT protocol version.")
    client_id: PlainText | None = Field(
        None,
        min_length=1,
        max_length=128,
        description="MQTT client id; defaults to 'scannerd-{table_id}'. Must be unique per table, "
        "and stable, or the persistent session is lost.",
    )
    username: PlainText | None = Field(
        None, description="Broker user name; the example ACL expects the table id."
    )
    password_file: FilePath | None = Field(
        None,
        description="File holding the broker password (first line). A relative path is taken inside "
        "$CREDENTIALS_DIRECTORY. Unset: $CREDENTIALS_DIRECTORY/mqtt-password if it exists.",
    )
    tls: bool = Field(False, description="Connect with TLS.")
    tls_ca: FilePath | None = Field(None, description="CA certificate(s) to trust; unset: the system store.")
    tls_cert: FilePath | None = Field(None, description="Client certificate, for brokers that require one.")
    tls_key: FilePath | None = Field(None, description="Private key of the client certificate.")
    keepalive: int = Field(30, ge=5, le=65535, description="Seconds between keepalive pings.")
    session_expiry_s: int = Field(
        7 * 24 * 3600,
        ge=0,
        le=SESSION_EXPIRY_NEVER,
        description="MQTT 5: how long the broker keeps the session (subscriptions, queued requests) "
        f"while the table is away; {SESSION_EXPIRY_NEVER}: for ever.",
    )
    max_inflight: int = Field(20, ge=1, le=1000, description="Events sent but not yet acknowledged.")
    reconnect_min_s: int = Field(
        1, ge=1, le=3600, description="First reconnect delay; it doubles per failure."
    )
    reconnect_max_s: int = Field(30, ge=1, le=3600, description="Cap on the reconnect delay.")
    health_interval_s: float = seconds(30.0, 0.1, 3600, "Seconds between health publications.")

    @field_validator("prefix")
    @classmethod
    def _plain_topic_prefix(cls, value: str) -> str:
        if not value or value.startswith("/") or value.endswith("/") or any(c in value for c in "+#"):
            raise ValueError("prefix must be a non-empty topic without wildcards or leading/trailing '/'")
        return value

    @field_validator("brokers")
    @classmethod
    def _broker_addresses(cls, value: list[str]) -> list[str]:
        for entry in value:
            _address(entry, 1883)
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

    def endpoints(self) -> list[tuple[str, int]]:
        """The brokers to try, in order: ``brokers``, or the one ``host`` and ``port``."""
        if not self.brokers:
            return [(self.host, self.port)]
        return [_address(entry, self.port) for entry in self.brokers]

    def client_id_for(self, table_id: str) -> str:
        return self.client_id or f"scannerd-{table_id}"

    def password_path(self, environ: Mapping[str, str] | None = None) -> Path | None:
        """The file the password is read from, or None when there is no password to send."""
        return secret_path(self.password_file, CREDENTIAL_NAME, environ)

    def password(self, environ: Mapping[str, str] | None = None) -> SecretStr | None:
        """Read the password now, so a rotated credential is picked up at the next start."""
        return read_secret(self.password_file, CREDENTIAL_NAME, environ)

    def warnings(self, environ: Mapping[str, str] | None = None) -> list[str]:
        """What is allowed but unsafe, one text each, for ``check-config`` and the start of ``run``."""
        said = []
        if self.brokers and "host" in self.model_fields_set:
            said.append("host is not used when brokers is set: list every broker in brokers")
        if not self.tls and self.password_path(environ) is not None:
            # A warning, not an error: a broker on this PC, or behind a tunnel, is reached in the clear
            # on purpose. Across a casino network the password can be read off the wire.
            where = ", ".join(host for host, _ in self.endpoints())
            said.append(f"tls is false, so the broker password goes to {where} unencrypted; set tls = true")
        return said


def _address(entry: str, default_port: int) -> tuple[str, int]:
    """``host``, ``host:port`` or ``[v6 address]:port``; ValueError in words when it is neither."""
    host, port = entry, default_port
    if entry.startswith("["):
        inside, closed, rest = entry[1:].partition("]")
        if not closed:
            raise ValueError(f"broker {entry!r}: write an IPv6 address as [address]:port")
        host = inside
        if rest:
            if not rest.startswith(":"):
                raise ValueError(f"broker {entry!r}: write an IPv6 address as [address]:port")
            port = _port(entry, rest[1:])
    elif entry.count(":") == 1:
        host, _, text = entry.partition(":")
        port = _port(entry, text)
    if not host or any(c in host for c in "/ "):
        raise ValueError(f"broker {entry!r}: expected host:port")
    return host, port


def _port(entry: str, text: str) -> int:
    if not text.isdigit() or not 1 <= int(text) <= 65535:
        raise ValueError(f"broker {entry!r}: the port must be a number from 1 to 65535")
    return int(text)
