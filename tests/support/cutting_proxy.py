"""A real TCP proxy between the table and its storage, that cuts or holds an upload halfway.

It relays bytes both ways, as the network does, until it is armed: then the
next HTTP ``PUT`` through it is let through up to half its body, and there the
proxy drops the connection (``cut``) or stops relaying it (``hold``), as a
network gone mid-upload does. Armed to ``drop``, it closes the next connection
as soon as it is made, unanswered, as a busy storage or its balancer now and
then does. ``reached`` is set at that point, so a test waits
for the moment itself rather than sleeping towards it.
"""

from __future__ import annotations

import contextlib
import re
import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Literal

Mode = Literal["cut", "hold", "drop"]

_LENGTH = re.compile(rb"\r\ncontent-length: *(\d+)\r\n", re.IGNORECASE)


class CuttingProxy:
    """Listens on 127.0.0.1:``port`` and relays every connection to ``target``."""

    def __init__(self, target: tuple[str, int]) -> None:
        self.target = target
        self._server = socket.create_server(("127.0.0.1", 0))
        self.port = self._server.getsockname()[1]
        self._armed: Mode | None = None
        self._lock = threading.Lock()
        self.reached = threading.Event()
        self.cuts = 0
        self._sockets: list[socket.socket] = []
        self._closed = False
        threading.Thread(target=self._accept, name="proxy-accept", daemon=True).start()

    @property
    def endpoint(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def arm(self, mode: Mode) -> None:
        """The next PUT is cut (or held) halfway through its body; or the next connection dropped."""
        with self._lock:
            self._armed = mode
            self.reached.clear()

    def _take(self) -> Mode | None:
        with self._lock:
            mode, self._armed = self._armed, None
            return mode

    def _accept(self) -> None:
        while not self._closed:
            try:
                client, _ = self._server.accept()
            except OSError:
                return
            try:
                upstream = socket.create_connection(self.target, timeout=5)
            except OSError:
                client.close()  # the storage is down: so is the way to it
                continue
            if self._armed == "drop" and self._take():
                self.cuts += 1
                self._close(client, upstream)
                self.reached.set()
                continue
            upstream.settimeout(None)
            with self._lock:
                self._sockets += [client, upstream]
            threading.Thread(target=self._up, args=(client, upstream), daemon=True).start()
            threading.Thread(target=self._pump, args=(upstream, client), daemon=True).start()

    def _up(self, client: socket.socket, upstream: socket.socket) -> None:
        """The table's side: relayed; while armed, a PUT's headers at once and then half its body."""
        pending = b""  # bytes held while armed, until a PUT's headers are whole
        budget: int | None = None  # the armed PUT's body still to relay before it stops
        mode: Mode | None = None
        with contextlib.suppress(OSError):
            while data := client.recv(65536):
                if budget is None and self._armed in ("cut", "hold"):
                    pending += data
                    start = pending.find(b"PUT ")
                    end = pending.find(b"\r\n\r\n", max(start, 0))
                    if start >= 0 and end < 0:
                        continue  # its headers are not whole yet
                    length = _LENGTH.search(pending, start, end + 2) if start >= 0 else None
                    if length is None:
                        upstream.sendall(pending)
                        pending = b""
                        continue
                    mode = self._take()
                    upstream.sendall(pending[: end + 4])
                    budget, data, pending = int(length[1]) // 2, pending[end + 4 :], b""
                if budget is not None and mode is not None:
                    if len(data) < budget:
                        upstream.sendall(data)
                        budget -= len(data)
                        continue
                    upstream.sendall(data[:budget])
                    self._stop_at_half(mode, client, upstream)
                    return
                upstream.sendall(data)
        self._close(client, upstream)

    def _stop_at_half(self, mode: Mode, client: socket.socket, upstream: socket.socket) -> None:
        self.cuts += 1
        if mode == "cut":
            self._close(client, upstream)
        self.reached.set()  # held: neither side hears more, until the test lets the proxy go

    def _pump(self, source: socket.socket, sink: socket.socket) -> None:
        with contextlib.suppress(OSError):
            while data := source.recv(65536):
                sink.sendall(data)
        self._close(source, sink)

    @staticmethod
    def _close(*socks: socket.socket) -> None:
        for sock in socks:
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)
            sock.close()

    def close(self) -> None:
        self._closed = True
        self._server.close()
        with self._lock:
            self._close(*self._sockets)


@contextmanager
def cutting_proxy(target: tuple[str, int]) -> Iterator[CuttingProxy]:
    proxy = CuttingProxy(target)
    try:
        yield proxy
    finally:
        proxy.close()
