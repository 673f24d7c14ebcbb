"""A network of its own for a test process, so two of the suite's processes can run side by side.

A table's daemon holds a machine-wide lock named for its table id (an
abstract Unix socket: ``scannerd/runtime/instance_lock.py``), so a second
daemon for the same table refuses to start. Tests reuse table ids (``T1``),
so two test processes starting daemons at once would meet that lock. An
abstract socket belongs to a network namespace, as do ports: a test process
in a namespace of its own, with its own loopback, shares neither with the
other. The suite runs in two processes (``pytest -n 2``); the second takes
its own namespace when it starts, before any test or thread. A test that
needs the outside world (the bundle's packages from the index) runs that
step's process back in the machine's network: ``host_network``.
"""

from __future__ import annotations

import ctypes
import fcntl
import os
import socket
import struct

CLONE_NEWNET = 0x40000000
SIOCGIFFLAGS = 0x8913
SIOCSIFFLAGS = 0x8914
IFF_UP = 0x1

_host: int | None = None  # the machine's network namespace, kept open once this process left it


def own_network() -> str | None:
    """Move this process into a new network namespace with its loopback up; the reason when it cannot.

    Only the calling thread moves (threads started later follow it): call it before any test runs.
    """
    global _host
    libc = ctypes.CDLL(None, use_errno=True)
    host = os.open("/proc/self/ns/net", os.O_RDONLY | os.O_CLOEXEC)
    if libc.unshare(CLONE_NEWNET) != 0:
        os.close(host)
        return f"unshare(CLONE_NEWNET): {os.strerror(ctypes.get_errno())}"
    _host = host
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
        request = struct.pack("16sH", b"lo", 0)
        flags = struct.unpack("16sH", fcntl.ioctl(sock, SIOCGIFFLAGS, request)[:18])[1]
        fcntl.ioctl(sock, SIOCSIFFLAGS, struct.pack("16sH", b"lo", flags | IFF_UP))
    return None


def host_network() -> None:
    """A child process's ``preexec_fn``: back into the machine's network, where the index is reached.

    Nothing in a process that never left it.
    """
    if _host is not None and ctypes.CDLL(None, use_errno=True).setns(_host, CLONE_NEWNET) != 0:
        raise OSError(ctypes.get_errno(), "setns(CLONE_NEWNET)")
