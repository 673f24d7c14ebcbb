"""Why an outbox could not be opened, in words a technician can act on, naming the file.

SQLite says "unable to open database file" for a directory, a read-only file
system and a file the service may not write alike, and "disk I/O error" for
a full disk; the operator needs to know which, and where. The answer is an
``OSError`` so that ``scannerd run`` reports it as one line like any other
file it cannot use.
"""

from __future__ import annotations

import errno
import os
import sqlite3
from pathlib import Path


class OutboxOpenError(OSError):
    """The outbox file cannot be used; ``filename`` is its path, ``strerror`` the problem."""


def open_error(path: Path, exc: sqlite3.Error) -> OutboxOpenError:
    """The OutboxOpenError that says what is wrong with ``path``, given what SQLite raised."""
    code, problem = _diagnose(path, getattr(exc, "sqlite_errorname", ""))
    return OutboxOpenError(code, problem or f"cannot be opened: {exc}", str(path))


def _diagnose(path: Path, name: str) -> tuple[int, str]:
    if path.is_dir():
        return errno.EISDIR, "is a directory, not the outbox file"
    if name == "SQLITE_NOTADB":
        return errno.EIO, "is not an SQLite database (damaged, or another file); keep it for support"
    if name == "SQLITE_CORRUPT":
        return errno.EIO, "is damaged (truncated or corrupt); keep it for support"
    where = path if path.exists() else path.parent
    try:
        fs = os.statvfs(where)
    except OSError:
        fs = None
    if fs is not None and fs.f_flag & os.ST_RDONLY:
        return errno.EROFS, "is on a read-only file system"
    if name == "SQLITE_FULL" or (fs is not None and fs.f_bavail == 0):
        return errno.ENOSPC, "cannot be written: the disk is full"
    if not os.access(where, os.W_OK) or any(
        p.exists() and not os.access(p, os.W_OK) for p in (path, *_companions(path))
    ):
        return errno.EACCES, "cannot be written (file permissions, or the file is immutable)"
    return 0, ""


def _companions(path: Path) -> tuple[Path, Path]:
    """SQLite's write-ahead log and shared-memory files next to the database."""
    return path.with_name(path.name + "-wal"), path.with_name(path.name + "-shm")
