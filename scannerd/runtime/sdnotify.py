"""The systemd notify protocol, spoken directly over the datagram socket in ``$NOTIFY_SOCKET``.

No libsystemd: the protocol is one ``KEY=VALUE`` line per field in a single
datagram, which is simpler to own than a C dependency on the table PC. Outside
systemd (no ``NOTIFY_SOCKET``) every call is a silent no-op, so the same code
runs under systemd, in a terminal and in tests.
"""

from __future__ import annotations

import os
import socket
import threading
import time
from collections.abc import Mapping


class Notifier:
    """Sends state changes to the service manager that started this process."""

    def __init__(self, environ: Mapping[str, str] | None = None) -> None:
        env = os.environ if environ is None else environ
        address = env.get("NOTIFY_SOCKET", "")
        # A leading '@' names a socket in the abstract namespace, spelled with a NUL byte on the wire.
        self._address = "\0" + address[1:] if address.startswith("@") else address
        self._socket: socket.socket | None = None
        self._lock = threading.Lock()
        self.watchdog_timeout = _watchdog_timeout(env)

    @property
    def enabled(self) -> bool:
        """Whether a service manager is listening."""
        return bool(self._address)

    def send(self, *fields: str) -> bool:
        """Send ``KEY=VALUE`` fields in one datagram; False when nobody listens or it failed.

        Failures are not raised: losing a notification must never take the daemon down
        (if the manager really is gone, the watchdog or its absence decides what happens).
        """
        if not self._address:
            return False
        message = "\n".join(fields).encode()
        with self._lock:
            try:
                if self._socket is None:
                    self._socket = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM | socket.SOCK_CLOEXEC)
                self._socket.sendto(message, self._address)
            except OSError:
                return False
        return True

    def ready(self, status: str | None = None) -> bool:
        """Start-up finished: the device is open and the outbox restored."""
        return self.send("READY=1", *_status(status))

    def reloading(self) -> bool:
        """A reload (SIGHUP) began; ``ready()`` ends it. MONOTONIC_USEC lets newer systemd match them."""
        return self.send("RELOADING=1", f"MONOTONIC_USEC={time.monotonic_ns() // 1000}")

    def stopping(self, status: str | None = None) -> bool:
        """Shutdown began."""
        return self.send("STOPPING=1", *_status(status))

    def watchdog(self) -> bool:
        """Prove liveness; only call when the daemon is healthy."""
        return self.send("WATCHDOG=1")

    def status(self, text: str) -> bool:
        """Set the one-line status shown by ``systemctl status``."""
        return self.send(*_status(text))

    def close(self) -> None:
        with self._lock:
            if self._socket is not None:
                self._socket.close()
                self._socket = None


def _status(text: str | None) -> list[str]:
    # A newline would start a new field; a status is one line by definition.
    return [] if text is None else ["STATUS=" + " ".join(text.split())]


def _watchdog_timeout(env: Mapping[str, str]) -> float | None:
    """The watchdog timeout in seconds, if systemd set one for this very process.

    ``WATCHDOG_PID`` guards against a child inheriting its parent's watchdog settings.
    """
    usec = env.get("WATCHDOG_USEC", "")
    pid = env.get("WATCHDOG_PID", "")
    if not usec.isdigit() or int(usec) == 0:
        return None
    if pid and (not pid.isdigit() or int(pid) != os.getpid()):
        return None
    return int(usec) / 1_000_000
