"""One daemon per table: a lock beside the outbox, held for as long as the process lives.

Two daemons on one config would both open the shoe's port and split its
bytes, publish different events under the same ``seq`` and throw each other
off the broker (one MQTT client id). The lock is an ``flock`` on a file
next to the outbox, so it ends with the process however it ends (a SIGKILL
or a power cut leaves no stale lock to clean up), and the second daemon is
refused before it touches the outbox or the shoe.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
from pathlib import Path


class AlreadyRunning(Exception):
    """Another process holds the table's lock; the message says which and where."""


def lock_path(outbox: Path) -> Path:
    return outbox.with_name(outbox.stem + ".lock")


class InstanceLock:
    def __init__(self, outbox: Path) -> None:
        self.path = lock_path(outbox)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o640)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.pread(fd, 32, 0).decode(errors="replace").strip() or "unknown"
            os.close(fd)
            raise AlreadyRunning(
                f"another scannerd (pid {holder}) is already running for this table: "
                f"{self.path} is locked; stop it first"
            ) from None
        with contextlib.suppress(OSError):  # the pid is for people; a full disk must not cost the lock
            os.ftruncate(fd, 0)
            os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
        self._fd: int | None = fd

    def release(self) -> None:
        if self._fd is not None:
            with contextlib.suppress(OSError):
                os.close(self._fd)  # closing drops the flock
            self._fd = None
