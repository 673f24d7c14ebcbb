"""The table's recording key: Ed25519, made by ``scannerd keygen``, read like the broker password.

The private key never goes in the config: it is a systemd credential
(``recording-key``) or a file that ``[record] key_file`` names, so the config
stays world-readable. Headers name the public key by its fingerprint, not the
key itself: whoever verifies must bring the public key they trust, or a
forger would simply write their own.
"""

from __future__ import annotations

import errno
import hashlib
import os
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from cryptography.exceptions import InvalidSignature, UnsupportedAlgorithm
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

from scannerd.settings.credentials import secret_path

CREDENTIAL_NAME = "recording-key"
"""File name looked up in ``$CREDENTIALS_DIRECTORY`` when no ``key_file`` is set."""


def fingerprint(key: Ed25519PublicKey) -> str:
    """``ed25519:`` and the SHA-256 of the raw public key, in hex."""
    raw = key.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
    return "ed25519:" + hashlib.sha256(raw).hexdigest()


def private_key_path(key_file: Path | None, environ: Mapping[str, str] | None = None) -> Path | None:
    """The file the signing key is read from; None when the table signs nothing."""
    return secret_path(key_file, CREDENTIAL_NAME, environ)


def load_private_key(path: Path) -> Ed25519PrivateKey:
    """The key in ``path`` (PEM, PKCS #8); an OSError naming the file when it is not one."""
    key = _load(path, serialization.load_pem_private_key, password=None)
    if not isinstance(key, Ed25519PrivateKey):
        raise OSError(
            errno.EINVAL, "is not an Ed25519 private key in PEM (scannerd keygen makes one)", str(path)
        )
    return key


def load_public_key(path: Path) -> Ed25519PublicKey:
    """The public key in ``path`` (PEM, as ``scannerd keygen`` writes it, or the private key's file)."""
    key = _load(path, serialization.load_pem_public_key)
    if key is None:
        private = _load(path, serialization.load_pem_private_key, password=None)
        key = private.public_key() if isinstance(private, Ed25519PrivateKey) else None
    if not isinstance(key, Ed25519PublicKey):
        raise OSError(errno.EINVAL, "is not an Ed25519 public key in PEM", str(path))
    return key


def _load(path: Path, loader: Callable[..., Any], **kwargs: Any) -> Any:
    """What ``loader`` makes of the file; None when it is not that kind of key."""
    data = path.read_bytes()
    try:
        return loader(data, **kwargs)
    except (ValueError, TypeError, UnsupportedAlgorithm):
        return None


def signature_ok(key: Ed25519PublicKey, signature: bytes, message: bytes) -> bool:
    try:
        key.verify(signature, message)
    except InvalidSignature:
        return False
    return True


def write_key_pair(private_path: Path, public_path: Path) -> Ed25519PublicKey:
    """A new key pair; the private file is created 0600 and neither file may exist already."""
    key = Ed25519PrivateKey.generate()
    private = key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )
    public = key.public_key().public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
    )
    for path in (private_path, public_path):
        if path.exists():
            raise FileExistsError(errno.EEXIST, "exists already: not overwritten", str(path))
    fd = os.open(private_path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "wb") as f:
        f.write(private)
    public_path.write_bytes(public)
    return key.public_key()
