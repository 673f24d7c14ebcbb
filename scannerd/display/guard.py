"""What keeps a web page from taking what its process needs: a cap on its connections, a descriptor budget.

The dealer display shares the process with the shoe's port, the outbox and
the broker's socket; the pit view shares its own with the broker link it
follows the tables through. Every browser connection costs a file
descriptor, so without a cap a few hundred idle connections (a misbehaving
client, a port scan left open) use up the process's descriptors and it
cannot reconnect to its broker. A page needs a handful: past the cap a
connection is answered ``503`` straight from the accept and closed, before
any HTTP is parsed, so a flood costs almost nothing and never reaches the
page's code. Both servers listen through :func:`serve_capped`, and both
processes lift their descriptor limit (``scannerd/runtime/descriptors.py``).
"""

from __future__ import annotations

import asyncio
import socket
from collections.abc import Callable
from typing import Any

import structlog
from aiohttp import web

log = structlog.get_logger(__name__)

UNACKNOWLEDGED_MS = 30_000
"""Sent data unacknowledged for this long ends a page's connection (half-open: the peer is gone)."""

_BUSY = (
    b"HTTP/1.1 503 Service Unavailable\r\n"
    b"Content-Type: text/plain\r\nContent-Length: 21\r\nConnection: close\r\nRetry-After: 5\r\n\r\n"
    b"too many connections\n"
)


def capped_runner(app: web.Application, idle_s: float) -> web.AppRunner:
    """The app's runner; a connection with no request under way for ``idle_s`` is closed."""
    return web.AppRunner(app, access_log=None, shutdown_timeout=1.0, keepalive_timeout=idle_s)


async def serve_capped(
    runner: web.AppRunner, sock: socket.socket, limit: int, listen: str, page: str
) -> asyncio.Server:
    """``runner`` (set up) served on ``sock``: ``limit`` connections at once, its loop's errors counted."""
    loop = asyncio.get_running_loop()
    if loop.get_exception_handler() is None:  # one loop serving two pages: the first names its errors
        loop.set_exception_handler(LoopErrors(page))
    assert runner.server is not None, "the runner must be set up first"
    return await loop.create_server(ConnectionCap(runner.server, limit, listen, page), sock=sock)


class ConnectionCap:
    """An asyncio protocol factory: at most ``limit`` connections at once get ``make()``'s protocol."""

    def __init__(self, make: Callable[[], asyncio.Protocol], limit: int, listen: str, page: str) -> None:
        self._make = make
        self.limit = limit
        self.listen = listen
        self.page = page
        self.open = 0
        self.refused = 0  # since the cap was last reached; logged once per such episode

    def __call__(self) -> asyncio.Protocol:
        if self.open >= self.limit:
            if self.refused == 0:
                log.warning(
                    f"{self.page} connections at their limit: refusing more",
                    listen=self.listen,
                    limit=self.limit,
                )
            self.refused += 1
            return _Refused()
        self.open += 1
        return _Counted(self._make(), self._release)

    def _release(self) -> None:
        self.open -= 1
        if self.refused and self.open < self.limit:
            log.info(
                f"{self.page} connections below their limit again", listen=self.listen, refused=self.refused
            )
            self.refused = 0


class _Refused(asyncio.Protocol):
    """Answers 503 and closes: no parsing, no buffering, no task."""

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        transport.write(_BUSY)
        transport.close()


class _Counted(asyncio.Protocol):
    """The HTTP protocol, passed every call, giving its slot back when the connection ends."""

    def __init__(self, inner: asyncio.Protocol, release: Callable[[], None]) -> None:
        self._inner = inner
        self._release: Callable[[], None] | None = release

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        sock = transport.get_extra_info("socket")
        if sock is not None and hasattr(socket, "TCP_USER_TIMEOUT"):
            # A browser that vanished without closing (a kiosk PC powered off, a cable pulled) leaves
            # the stream's pings unacknowledged: drop it after this long, not after TCP's 15 minutes.
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_USER_TIMEOUT, UNACKNOWLEDGED_MS)
        self._inner.connection_made(transport)

    def data_received(self, data: bytes) -> None:
        self._inner.data_received(data)

    def eof_received(self) -> bool | None:
        return self._inner.eof_received()

    def pause_writing(self) -> None:
        self._inner.pause_writing()

    def resume_writing(self) -> None:
        self._inner.resume_writing()

    def connection_lost(self, exc: Exception | None) -> None:
        release, self._release = self._release, None
        if release is not None:
            release()
        self._inner.connection_lost(exc)


class LoopErrors:
    """A page's loop's exception handler: each kind of error logged once, then only counted.

    asyncio reports some failures (an accept that finds no descriptor left, a
    transport that breaks) from inside the loop, once per occurrence; under a
    flood that is thousands of tracebacks a second, which fill the disk and
    drown the log. The first of each kind is logged with its traceback; after
    that a line with the count comes at most every ``every_s`` seconds.
    """

    def __init__(self, page: str, every_s: float = 60.0) -> None:
        self.page = page
        self.every_s = every_s
        self._seen: dict[str, tuple[int, float]] = {}  # message -> (count since last line, time of line)

    def __call__(self, loop: asyncio.AbstractEventLoop, context: dict[str, Any]) -> None:
        message = str(context.get("message", f"{self.page} loop error"))
        exc = context.get("exception")
        now = loop.time()
        count, logged_at = self._seen.get(message, (0, -1.0))
        if logged_at < 0:
            log.error(f"{self.page} loop error", message=message, exc_info=exc)
            self._seen[message] = (0, now)
        elif now - logged_at >= self.every_s:
            log.error(f"{self.page} loop error repeated", message=message, count=count + 1, error=repr(exc))
            self._seen[message] = (0, now)
        else:
            self._seen[message] = (count + 1, logged_at)
