"""One daemon per table: two locks, held for as long as the process lives.

Two daemons for one table would both open the shoe's port and split its
bytes, publish different events under the same ``seq`` and throw each other
off the broker (one MQTT client id). Both locks end with the process however
it ends (a SIGKILL or a power cut leaves nothing stale to clean up), and the
second daemon is refused before it touches the outbox or the shoe:

- an ``flock`` on a file next to the outbox: one daemon per outbox, whatever
  table id its config names;
- a Unix socket bound in the abstract namespace under the table id: one
  daemon per table id on the machine, whatever state directory its config
  names, and nothing on disk that someone tidying up could delete.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import socket
import struct
from pathlib import Path


class AlreadyRunning(Exception):
    """Another process holds the table's lock; the message says which and where."""


def lock_path(outbox: Path) -> Path:
    return outbox.with_name(outbox.stem + ".lock")


class InstanceLock:
    def __init__(self, outbox: Path, table_id: str) -> None:
        self._table = _table_lock(table_id)
        try:
            self._fd: int | None = self._file_lock(outbox)
        except BaseException:
            self._table.close()
            raise

    def _file_lock(self, outbox: Path) -> int:
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
        return fd

    def release(self) -> None:
        if self._fd is not None:
            with contextlib.suppress(OSError):
                os.close(self._fd)  # closing drops the flock
            self._fd = None
        self._table.close()


def _table_lock(table_id: str) -> socket.socket:
    """The table id's socket, bound (and listening, so a second daemon can ask who holds it)."""
    name = f"\0scannerd/table/{table_id}"
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM | socket.SOCK_CLOEXEC)
    try:
        sock.bind(name)
    except OSError:
        sock.close()
        raise AlreadyRunning(
            f"another scannerd (pid {_holder(name)}) is already running for table {table_id} "
            "on this machine; stop it first"
        ) from None
    sock.listen(1)
    return sock


def _holder(name: str) -> str:
    """The pid of the process listening on ``name``, as the kernel gives it to a peer."""
    probe = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM | socket.SOCK_CLOEXEC)
    try:
        probe.settimeout(1.0)
        probe.connect(name)
        creds = probe.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
        return str(struct.unpack("3i", creds)[0])
    except OSError:
        return "unknown"
    finally:
        probe.close()
