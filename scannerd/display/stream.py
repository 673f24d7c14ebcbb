"""The live stream a page listens to: its whole view at once, again after every change, a ping when quiet.

The dealer display and the pit serve the same kind of page: the view is a
JSON document with a version that moves when it changes, and each open
stream waits on an event its server sets after a change. The page counts the
pings to tell a dead link by its silence.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from aiohttp import web

PING_S = 5.0
"""A quiet stream still sends a ping this often, so the page notices a dead link by its silence."""
NO_CACHE = {"Cache-Control": "no-cache"}


async def stream_view(
    request: web.Request,
    event: str,
    view: Callable[[], tuple[int, str]],
    clients: set[asyncio.Event],
    running: Callable[[], bool],
) -> web.StreamResponse:
    """Serve ``view()`` (its version and JSON) as SSE ``event``s until the page or the server goes."""
    response = web.StreamResponse(headers={"Content-Type": "text/event-stream", **NO_CACHE})
    await response.prepare(request)
    wake = asyncio.Event()
    clients.add(wake)
    sent = -1
    try:
        await response.write(b"retry: 1000\n\n")
        while running():
            version, data = view()
            if sent != version:
                sent = version
                await response.write(f"event: {event}\ndata: {data}\n\n".encode())
            try:
                await asyncio.wait_for(wake.wait(), PING_S)
            except TimeoutError:
                await response.write(b"event: ping\ndata: {}\n\n")
            wake.clear()
    except ConnectionError:
        pass  # the browser went away
    finally:
        clients.discard(wake)
    return response
