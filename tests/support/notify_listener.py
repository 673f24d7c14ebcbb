"""A service manager's end of the notify protocol, for tests: a datagram socket of the test's own."""

from __future__ import annotations

import socket
import time
from pathlib import Path
from types import TracebackType


class NotifyListener:
    """Binds ``NOTIFY_SOCKET`` (a path, or ``@name`` in the abstract namespace) and collects messages.

    Each message is a dict of its ``KEY=VALUE`` fields; ``messages`` keeps them all in order.
    """

    def __init__(self, address: Path | str) -> None:
        self.address = str(address)
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        self.sock.bind("\0" + self.address[1:] if self.address.startswith("@") else self.address)
        self.messages: list[dict[str, str]] = []

    @property
    def env(self) -> dict[str, str]:
        return {"NOTIFY_SOCKET": self.address}

    def receive(self, timeout: float = 10.0) -> dict[str, str] | None:
        """The next message, or None if none came within ``timeout`` seconds."""
        self.sock.settimeout(timeout)
        try:
            data = self.sock.recv(4096)
        except TimeoutError:
            return None
        message = dict(line.split("=", 1) for line in data.decode().splitlines())
        self.messages.append(message)
        return message

    def wait_for(self, key: str, value: str | None = None, timeout: float = 30.0) -> dict[str, str]:
        """Read messages until one has ``key`` (with ``value``, if given); fail after ``timeout``."""
        deadline = time.monotonic() + timeout
        while (left := deadline - time.monotonic()) > 0:
            message = self.receive(left)
            if message is not None and key in message and (value is None or message[key] == value):
                return message
        raise AssertionError(f"no {key}={value or '*'} within {timeout} s; got {self.messages}")

    def close(self) -> None:
        self.sock.close()

    def __enter__(self) -> NotifyListener:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()
