"""Secrets the config names but never holds: a file path, or a systemd credential by name.

The config file can then be world-readable while the secret lives in a
root-only file or a ``LoadCredential=`` credential; the same lookup serves
the broker password and the display token.
"""

from __future__ import annotations

import os
from pathlib import Path

from pydantic import SecretStr


def read_secret(
    path: Path | None, credential: str, environ: dict[str, str] | None = None
) -> SecretStr | None:
    """The first line of ``path``, or of ``$CREDENTIALS_DIRECTORY/credential`` when ``path`` is unset.

    A relative ``path`` is taken inside ``$CREDENTIALS_DIRECTORY``. None when
    no path is set and no such credential exists. Read at each call, so a
    rotated secret is picked up at the next start.
    """
    env = os.environ if environ is None else environ
    creds = env.get("CREDENTIALS_DIRECTORY")
    if path is None:
        if not creds or not (Path(creds) / credential).is_file():
            return None
        path = Path(creds) / credential
    elif not path.is_absolute() and creds:
        path = Path(creds) / path
    lines = path.read_text(encoding="utf-8").splitlines()
    return SecretStr(lines[0] if lines else "")
