"""What keeps a web page from taking what its process needs: connections capped per client address.

The dealer display and the metrics share the process with the shoe's port,
the outbox and the broker's socket; the pit view shares its own with the
broker link it follows the tables through. Every connection costs a file
descriptor, so a few hundred idle connections (a misbehaving client, a port
scan left open) would use up the process's descriptors and it could not
reconnect to its broker. So every listener is served through a :class:`Gate`:

- **No thread per connection**: one asyncio loop serves them all.
- **A cap per client address** (an IPv6 client by its /64), under the
  listener's total: one host holding a thousand streams open locks out only
  itself, and the wall screen or the kiosk on another address is served.
- **Idle connections give way.** A connection with no request under way is
  closed to make room for a new one (a browser keeps several open for its
  keep-alive, which must not lock a second browser out); only when every
  connection of that address (or of all) is busy is the new one answered
  ``503`` straight from the accept, before any HTTP is parsed, so a flood
  costs almost nothing and never reaches the page's code.
- **Timeouts.** A connection whose request never comes is closed after the
  page's idle time (aiohttp's keep-alive timer, which also runs before a
  first request); a stream whose reader takes nothing for ``stall_s`` is
  closed; a peer that vanished is dropped by ``TCP_USER_TIMEOUT``.

Every process that serves a page also lifts its descriptor limit
(``scannerd/runtime/descriptors.py``).
"""

from __future__ import annotations

import asyncio
import ipaddress
import socket
from collections.abc import Awaitable, Callable
from typing import Any

import structlog
from aiohttp import web, web_response

log = structlog.get_logger(__name__)

SERVER_NAME = "scannerd"
"""The ``Server`` header of every response: no library or version for a scanner to look up."""
# aiohttp names itself and its version on every response, its own error pages included (a malformed
# request's 400 never reaches an app's hooks), so the name is set where aiohttp reads it.
web_response.SERVER_SOFTWARE = SERVER_NAME

UNACKNOWLEDGED_MS = 30_000
"""Sent data unacknowledged for this long ends a page's connection (half-open: the peer is gone)."""
STALLED_S = 30.0
"""A connection whose reader has taken nothing for this long, with our side's buffer full, is closed."""
IDLE_GRACE_S = 1.0
"""An idle connection younger than this is not given up: its browser may have just sent its request."""

_BUSY = (
    b"HTTP/1.1 503 Service Unavailable\r\n"
    b"Content-Type: text/plain\r\nContent-Length: 21\r\nConnection: close\r\nRetry-After: 5\r\n"
    b"Server: " + SERVER_NAME.encode() + b"\r\n\r\n"
    b"too many connections\n"
)

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


def address_key(peer: Any) -> str:
    """Whose connection it is: the client's IP address, an IPv6 one by its /64 (one host's share)."""
    host = peer[0] if isinstance(peer, tuple) and peer else str(peer)
    try:
        ip = ipaddress.ip_address(host)
    except ValueError:
        return str(host)
    if isinstance(ip, ipaddress.IPv6Address):
        if ip.ipv4_mapped is not None:
            return str(ip.ipv4_mapped)
        return str(ipaddress.IPv6Network((ip, 64), strict=False))
    return str(ip)


class Gate:
    """One listener's connections: ``limit`` in all, ``per_address`` from one client address.

    ``page`` names the listener in the log; ``idle_s`` is how long a connection may sit without a
    request (the first one too) before it is closed.
    """

    def __init__(
        self,
        page: str,
        listen: str,
        limit: int,
        per_address: int,
        idle_s: float,
        stall_s: float = STALLED_S,
    ) -> None:
        self.page = page
        self.listen = listen
        self.limit = limit
        self.per_address = min(per_address, limit)
        self.idle_s = idle_s
        self.stall_s = stall_s
        self.refused = 0  # connections answered 503, since the gate was made
        self._by_address: dict[str, list[_Slot]] = {}
        self._by_transport: dict[asyncio.BaseTransport, _Slot] = {}
        self._refusing: dict[str, int] = {}  # why refused (an address, or all) -> refused since it began
        self._make: Callable[[], asyncio.Protocol] | None = None

    @property
    def open(self) -> int:
        return len(self._by_transport)

    def runner(self, app: web.Application) -> web.AppRunner:
        """The app's runner, its requests counted so the gate knows which connections are idle."""
        app.middlewares.insert(0, self._middleware)
        return web.AppRunner(app, access_log=None, shutdown_timeout=1.0, keepalive_timeout=self.idle_s)

    async def serve(self, runner: web.AppRunner, sock: socket.socket) -> asyncio.Server:
        """``runner`` (set up) served on ``sock`` through the gate, its loop's errors counted."""
        loop = asyncio.get_running_loop()
        if loop.get_exception_handler() is None:  # one loop serving two pages: the first names its errors
            loop.set_exception_handler(LoopErrors(self.page))
        assert runner.server is not None, "the runner must be set up first"
        self._make = runner.server
        return await loop.create_server(lambda: _Slot(self), sock=sock)

    @web.middleware
    async def _middleware(self, request: web.Request, handler: Handler) -> web.StreamResponse:
        slot = self._by_transport.get(request.transport) if request.transport is not None else None
        if slot is None:
            return await handler(request)
        slot.active += 1
        try:
            return await handler(request)
        finally:
            slot.active -= 1
            slot.idle_since = asyncio.get_running_loop().time()

    # ------------------------------------------------------------------ the slots (the loop only)

    def admit(self, slot: _Slot, now: float) -> bool:
        """Whether ``slot``'s connection is served, idle ones given up to make room; False: refused."""
        mine = self._by_address.setdefault(slot.key, [])
        if len(mine) >= self.per_address and not self._give_up(mine, now):
            return self._refuse(slot.key, f"from {slot.key}")
        if self.open >= self.limit and not self._give_up(list(self._by_transport.values()), now):
            return self._refuse(slot.key, "in all")
        mine.append(slot)
        assert slot.transport is not None
        self._by_transport[slot.transport] = slot
        return True

    def release(self, slot: _Slot, given_up: bool = False) -> None:
        """``slot``'s connection is gone: its place is free (``given_up``: for the one that asked)."""
        if slot.transport is None or self._by_transport.pop(slot.transport, None) is None:
            return
        mine = self._by_address[slot.key]
        mine.remove(slot)
        if not mine:
            del self._by_address[slot.key]
        if given_up:
            return  # the place is taken at once: still at the limit
        for why, below in (
            (f"from {slot.key}", len(mine) < self.per_address),
            ("in all", self.open < self.limit),
        ):
            if below and why in self._refusing:
                refused = self._refusing.pop(why)
                log.info(
                    f"{self.page} connections {why} below their limit again",
                    listen=self.listen,
                    refused=refused,
                )

    def protocol(self) -> asyncio.Protocol:
        """The page's own protocol for an admitted connection."""
        assert self._make is not None, "serve() first"
        return self._make()

    def _give_up(self, slots: list[_Slot], now: float) -> bool:
        """Close the connection idle the longest among ``slots``, if one has been idle long enough."""
        idle = [s for s in slots if s.active == 0 and now - s.idle_since >= IDLE_GRACE_S]
        if not idle:
            return False
        oldest = min(idle, key=lambda s: s.idle_since)
        self.release(oldest, given_up=True)
        assert oldest.transport is not None
        oldest.transport.close()
        return True

    def _refuse(self, key: str, why: str) -> bool:
        self.refused += 1
        count = self._refusing.get(why, 0)
        if count == 0:  # once per episode; the count when it ends
            limit = self.limit if why == "in all" else self.per_address
            log.warning(
                f"{self.page} connections {why} at their limit: refusing more",
                listen=self.listen,
                limit=limit,
                address=key,
            )
        self._refusing[why] = count + 1
        return False


class _Slot(asyncio.Protocol):
    """One connection: refused with 503, or the page's HTTP protocol, passed every call."""

    def __init__(self, gate: Gate) -> None:
        self._gate = gate
        self._inner: asyncio.Protocol | None = None
        self.transport: asyncio.Transport | None = None
        self.key = ""
        self.active = 0  # requests under way on it
        self.idle_since = 0.0
        self._stall: asyncio.TimerHandle | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        loop = asyncio.get_running_loop()
        self.transport, self.idle_since = transport, loop.time()
        self.key = address_key(transport.get_extra_info("peername"))
        gate = self._gate
        if not gate.admit(self, self.idle_since):
            self.transport = None  # never counted: nothing to release
            transport.write(_BUSY)
            transport.close()
            return
        sock = transport.get_extra_info("socket")
        if sock is not None and hasattr(socket, "TCP_USER_TIMEOUT"):
            # A browser that vanished without closing (a kiosk PC powered off, a cable pulled) leaves
            # the stream's pings unacknowledged: drop it after this long, not after TCP's 15 minutes.
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_USER_TIMEOUT, UNACKNOWLEDGED_MS)
        self._inner = gate.protocol()
        self._inner.connection_made(transport)

    def data_received(self, data: bytes) -> None:
        if self._inner is not None:
            self._inner.data_received(data)

    def eof_received(self) -> bool | None:
        return self._inner.eof_received() if self._inner is not None else None

    def pause_writing(self) -> None:
        # A reader that stopped reading (a stream left open in a frozen tab, a client that never
        # reads) keeps its slot and our buffers until it is closed: it gets ``stall_s`` to catch up.
        if self.transport is not None and self._stall is None:
            self._stall = asyncio.get_running_loop().call_later(self._gate.stall_s, self._stalled)
        if self._inner is not None:
            self._inner.pause_writing()

    def resume_writing(self) -> None:
        if self._stall is not None:
            self._stall.cancel()
            self._stall = None
        if self._inner is not None:
            self._inner.resume_writing()

    def _stalled(self) -> None:
        self._stall = None
        if self.transport is not None:
            log.info(f"{self._gate.page} connection closed: its reader took nothing", address=self.key)
            self.transport.abort()

    def connection_lost(self, exc: Exception | None) -> None:
        if self._stall is not None:
            self._stall.cancel()
            self._stall = None
        self._gate.release(self)
        if self._inner is not None:
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
