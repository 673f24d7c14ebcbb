"""Replacing a small file whole: what a table keeps between starts must survive a crash at any moment.

The seq ceiling, the last start's configuration and the staff list are each
a few lines that a start reads back. A write cut short by a power cut must
leave the old file or the new one, never half of either: a temporary file
beside it, synced, renamed over it, and the directory synced so the rename
itself lasts.
"""

from __future__ import annotations

import contextlib
import errno
import os
import tempfile
from pathlib import Path


def replace_whole(path: Path, text: str, mode: int) -> None:
    """``path`` holds ``text`` (with ``mode``), or, after a crash, what it held before."""
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            os.fchmod(f.fileno(), mode)
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    with contextlib.suppress(OSError):  # a file system that cannot sync a directory still renamed it
        dir_fd = os.open(path.parent, os.O_RDONLY)
        try:
            os.fsync(dir_fd)
        finally:
            os.close(dir_fd)


def read_utf8(path: Path) -> str:
    """A small text file the house wrote (a secret, a theme); one not UTF-8 (an editor's UTF-16, say)
    is an OSError naming it, like any other file that cannot be used, for the one line the operator sees."""
    try:
        return path.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise OSError(errno.EILSEQ, "is not UTF-8 text", str(path)) from None
