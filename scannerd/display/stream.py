"""What the dealer display and the pit view share: a live page, its stream and its acknowledgements.

Both serve the same kind of page: the view is a JSON document with a
version that moves when it changes, sent whole at once and again after
every change, and each open stream waits on an event its server sets after
a change. The page (``static/shared/live.js``) counts the pings to tell a
dead link by its silence. Both take an acknowledgement as a JSON POST.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from aiohttp import web

from scannerd import __version__
from scannerd.contract.requests import Response

PING_S = 5.0
"""A quiet stream still sends a ping this often, so the page notices a dead link by its silence."""
NO_CACHE = {"Cache-Control": "no-cache"}
SHARED_STATIC = Path(__file__).with_name("static") / "shared"
"""The scripts both pages load."""


class LiveView:
    """The view a page is served: its JSON, a version that moves with each change, the streams waiting.

    Only the server's event loop touches it.
    """

    def __init__(self) -> None:
        self.version = 0
        self.json = "{}"
        self.clients: set[asyncio.Event] = set()

    def publish(self, view: dict[str, Any]) -> None:
        # The server's version lets a page left open for months reload itself after an upgrade.
        text = json.dumps({**view, "server_version": __version__}, separators=(",", ":"))
        if text == self.json:
            return  # nothing of this view moved (an alert, say, that only the dealer's page shows)
        self.json = text
        self.version += 1
        self.wake_all()

    def wake_all(self) -> None:
        """Every open stream looks again: at a new view, or at the server stopping."""
        for wake in self.clients:
            wake.set()


def add_live_page(
    app: web.Application,
    static_dir: Path,
    event: str,
    live: LiveView,
    running: Callable[[], bool],
) -> None:
    """The routes both pages have: the page and its files, its view once (/api/state) and live (/events)."""

    async def index(_request: web.Request) -> web.StreamResponse:
        return web.FileResponse(static_dir / "index.html", headers=NO_CACHE)

    async def state(_request: web.Request) -> web.Response:
        return web.Response(text=live.json, content_type="application/json", headers=NO_CACHE)

    async def events(request: web.Request) -> web.StreamResponse:
        return await stream_view(request, event, live, running)

    app.router.add_get("/", index)
    app.router.add_get("/events", events)
    app.router.add_get("/api/state", state)
    app.router.add_static("/static/shared", SHARED_STATIC)
    app.router.add_static("/static", static_dir)


async def json_body(request: web.Request, command: str) -> dict[str, Any] | web.Response:
    """A button's JSON object (empty if it sent another JSON value); or the answer that refuses it."""
    # JSON only: a page from elsewhere cannot send it without a CORS preflight, which we never grant.
    if request.content_type != "application/json":
        return ack_error("send the request as application/json", 415, command)
    try:
        body = await request.json()
    except (ValueError, RecursionError):  # RecursionError: nested deeper than the parser goes
        return ack_error("malformed JSON", 400, command)
    return body if isinstance(body, dict) else {}


async def ack_body(request: web.Request) -> dict[str, Any] | web.Response:
    """An acknowledgement's JSON object, its ``alert_id`` an integer; or the answer that refuses it."""
    body = await json_body(request, "ack_alert")
    if isinstance(body, web.Response):
        return body
    alert_id = body.get("alert_id")
    if not isinstance(alert_id, int) or isinstance(alert_id, bool):
        return ack_error("alert_id must be an integer", 400)
    return body


def ack_error(text: str, status: int, command: str = "ack_alert") -> web.Response:
    return web.json_response({"command": command, "status": "error", "error": text}, status=status)


def ack_answer(response: Response) -> web.Response:
    """The table's answer to the acknowledgement; refused (409) when it was not ``ok``.

    Without its ``data``: the table's state holds every card as drawn, which a squeeze table's
    screens must not have before it is revealed, and the page reads only the status and error.
    """
    answer = response.model_dump(mode="json", exclude={"data"})
    return web.json_response(answer, status=200 if response.status == "ok" else 409)


async def stream_view(
    request: web.Request,
    event: str,
    live: LiveView,
    running: Callable[[], bool],
) -> web.StreamResponse:
    """Serve ``live``'s view as SSE ``event``s, again at each change, until the page or the server goes."""
    response = web.StreamResponse(headers={"Content-Type": "text/event-stream", **NO_CACHE})
    await response.prepare(request)
    wake = asyncio.Event()
    live.clients.add(wake)
    sent = -1
    try:
        await response.write(b"retry: 1000\n\n")
        while running():
            version, data = live.version, live.json
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
        live.clients.discard(wake)
    return response
