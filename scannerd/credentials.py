"""Secrets the config names but never holds: a file path, or a systemd credential by name.

The config file can then be world-readable while the secret lives in a
root-only file or a ``LoadCredential=`` credential. The lookup is the broker
password's (``MqttSettings.password``): a path, relative ones inside
``$CREDENTIALS_DIRECTORY``, else the credential by its name if it exists.
"""

from __future__ import annotations

import errno
import os
from collections.abc import Mapping
from pathlib import Path

from pydantic import SecretStr


def read_secret(
    path: Path | None, credential: str, environ: Mapping[str, str] | None = None
) -> SecretStr | None:
    """The first line of ``path``, or of ``$CREDENTIALS_DIRECTORY/credential`` when ``path`` is unset.

    None when no path is set and no such credential exists. Read at each call,
    so a rotated secret is picked up at the next start. A file that cannot be
    read is an OSError naming it, for the one line the operator sees.
    """
    env = os.environ if environ is None else environ
    creds = env.get("CREDENTIALS_DIRECTORY")
    if path is None:
        if not creds or not (Path(creds) / credential).is_file():
            return None
        path = Path(creds) / credential
    elif not path.is_absolute() and creds:
        path = Path(creds) / path
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except UnicodeDecodeError:  # an editor's UTF-16, say
        raise OSError(errno.EILSEQ, "is not UTF-8 text", str(path)) from None
    return SecretStr(lines[0] if lines else "")
