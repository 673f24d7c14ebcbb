"""The table's effective configuration as one digest, and what changed in it since the last start.

A regulator's record names the configuration a table ran under as well as its
software. The validated config (defaults filled in, the environment's
overrides applied) is flattened to dotted keys (``mqtt.host``,
``rules.decks``) and hashed as canonical JSON: the same settings give the
same digest on any machine.

Secrets are never values here. What is read from a password, token or key
file (or its systemd credential) stands in the digest as ``"set"`` or null
alone; to see that one changed, the last start's per-key digests are kept
beside the outbox (``<outbox name>.config``), each salted with a random value
of the table's own, so the file cannot be used to guess a secret.
"""

from __future__ import annotations

import hashlib
import json
import secrets
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import structlog
from pydantic import BaseModel

from scannerd.recording import signing
from scannerd.runtime.config import Config
from scannerd.settings.credentials import secret_path
from scannerd.settings.files import replace_whole

log = structlog.get_logger(__name__)

SET = "set"
"""How a secret stands in the digest when there is one."""


def canonical(data: Any) -> bytes:
    """JSON with sorted keys and no spaces: the same settings always give the same bytes."""
    return json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()


def settings(config: Config) -> dict[str, Any]:
    """Every setting by its dotted name (``section.key``; ``table_id`` at the top), as validated."""
    flat: dict[str, Any] = {}
    for name in type(config).model_fields:
        value = getattr(config, name)
        if isinstance(value, BaseModel):
            # A value no config file can hold (a test's or an embedder's object in place of a port)
            # is named by its type: the digest stays the settings', and the start goes on.
            for key, item in value.model_dump(mode="json", fallback=_named, warnings=False).items():
                flat[f"{name}.{key}"] = item
        else:
            flat[name] = value
    return flat


def _named(value: object) -> str:
    return f"<{type(value).__name__}>"


def secret_files(config: Config, environ: Mapping[str, str] | None = None) -> dict[str, Path | None]:
    """Where each secret the table reads comes from, by the dotted name it goes under; None: there is none."""
    files = {
        "mqtt.password": config.mqtt.password_path(environ),
        "mqtt.tls_private_key": config.mqtt.tls_key,
        "record.signing_key": signing.private_key_path(config.record.key_file, environ),
        "display.token": None,
    }
    if config.display.enabled:
        # Only then: the display's server (and its web framework) is not loaded for a table without one.
        from scannerd.display.server import TOKEN_CREDENTIAL

        files["display.token"] = secret_path(config.display.token_file, TOKEN_CREDENTIAL, environ)
    return files


@dataclass(frozen=True)
class Effective:
    """The configuration a start runs under: its digest, and a salted digest of each key's value."""

    digest: str
    """SHA-256 (hex) of the canonical JSON of ``settings`` with each secret as "set" or null."""
    keys: dict[str, str]
    """Each key's value (a secret's bytes) hashed with the table's salt: compared, never published."""
    salt: str


def effective(config: Config, salt: str, environ: Mapping[str, str] | None = None) -> Effective:
    """The digest of ``config`` and its per-key digests under ``salt`` (hex)."""
    flat = settings(config)
    keys = {key: _keyed(salt, key, canonical(value)) for key, value in flat.items()}
    for key, path in secret_files(config, environ).items():
        content = _read(path)
        flat[key] = None if content is None else SET
        keys[key] = _keyed(salt, key, b"\0unset" if content is None else b"\1" + content)
    return Effective(hashlib.sha256(canonical(flat)).hexdigest(), keys, salt)


def _keyed(salt: str, key: str, value: bytes) -> str:
    return hashlib.sha256(bytes.fromhex(salt) + key.encode() + b"\0" + value).hexdigest()


def _read(path: Path | None) -> bytes | None:
    """A secret's bytes; one that cannot be read is still set, under what stops it being read."""
    if path is None:
        return None
    try:
        return path.read_bytes()
    except OSError as exc:
        return f"unreadable: {exc.strerror or exc}".encode()


def changed(before: Mapping[str, str], now: Mapping[str, str]) -> list[str]:
    """The keys whose value differs, or that only one of the two has, in order."""
    return sorted(key for key in before.keys() | now.keys() if before.get(key) != now.get(key))


def last_start_path(outbox: Path) -> Path:
    """Beside the outbox and its seq ceiling: ``outbox.sqlite3`` -> ``outbox.config``."""
    return outbox.with_name(outbox.stem + ".config")


@dataclass(frozen=True)
class LastStart:
    """What the last start ran under, as kept beside the outbox; ``effective`` None: nothing kept."""

    path: Path
    effective: Effective | None

    @classmethod
    def read(cls, outbox: Path) -> LastStart:
        path = last_start_path(outbox)
        try:
            data = json.loads(path.read_text())
            kept = Effective(
                str(data["digest"]), {str(k): str(v) for k, v in data["keys"].items()}, data["salt"]
            )
            bytes.fromhex(kept.salt)
        except FileNotFoundError:
            return cls(path, None)
        except (OSError, ValueError, KeyError, TypeError, AttributeError) as exc:
            log.warning(
                "the last start's config cannot be read: no change is said", file=str(path), error=str(exc)
            )
            return cls(path, None)
        return cls(path, kept)

    @property
    def salt(self) -> str:
        """The table's salt: the one kept, or a new one for a table that kept none."""
        return self.effective.salt if self.effective is not None else secrets.token_hex(16)

    def write(self, now: Effective) -> None:
        """Keep ``now`` for the next start: written whole or not at all."""
        kept = {"digest": now.digest, "salt": now.salt, "keys": now.keys}
        replace_whole(self.path, json.dumps(kept, sort_keys=True) + "\n", 0o600)
