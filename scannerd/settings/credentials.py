"""Secrets the config names but never holds: a file path, or a systemd credential by name.

The config file can then be world-readable while the secret lives in a
root-only file or a ``LoadCredential=`` credential. One lookup for every
secret (the broker password, the display's token): a path, relative ones
inside ``$CREDENTIALS_DIRECTORY``, else the credential by its name if it exists.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from pydantic import SecretStr

from scannerd.settings.files import read_utf8


def secret_path(path: Path | None, credential: str, environ: Mapping[str, str] | None = None) -> Path | None:
    """The file a secret is read from: ``path``, or the credential; None when there is neither."""
    env = os.environ if environ is None else environ
    creds = env.get("CREDENTIALS_DIRECTORY")
    if path is None:
        if not creds or not (Path(creds) / credential).is_file():
            return None
        return Path(creds) / credential
    if not path.is_absolute() and creds:
        return Path(creds) / path
    return path


def read_secret(
    path: Path | None, credential: str, environ: Mapping[str, str] | None = None
) -> SecretStr | None:
    """The first line of the secret's file (``secret_path``); None when there is none.

    Read at each call, so a rotated secret is picked up at the next start. A
    file that cannot be read is an OSError naming it, for the one line the
    operator sees.
    """
    path = secret_path(path, credential, environ)
    if path is None:
        return None
    lines = read_utf8(path).splitlines()
    return SecretStr(lines[0] if lines else "")
