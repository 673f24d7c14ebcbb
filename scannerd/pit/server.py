"""The pit view's web server: one page, its assets, a live stream of the whole pit, and acknowledging.

Built like the dealer display's (``scannerd/display/server.py``): aiohttp on
its own thread and loop, the whole view pushed by server-sent events so a
page that reconnects is simply right again. Fifty tables change many times a
second between them, so changes are gathered for ``COALESCE_S`` and the
pit is serialised once for all of them.

It is guarded by the display's own code, since the pit's page can
acknowledge a table's misdeal just as the dealer's can: the same Host,
Origin and token checks (``scannerd/display/access.py``) and the same cap on
connections with its idle timeout (``scannerd/display/guard.py``), so idle
browsers cannot take the descriptors the pit needs to reach its broker.
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import structlog
from aiohttp import web
from prometheus_client.exposition import CONTENT_TYPE_LATEST

from scannerd.client import RequestTimeout
from scannerd.contract.idents import check_table_id
from scannerd.contract.requests import Response
from scannerd.display.access import PIT, access_middleware
from scannerd.display.guard import Gate
from scannerd.display.settings import DisplaySettings
from scannerd.display.stream import (
    NO_CACHE,
    LiveView,
    ack_answer,
    ack_body,
    ack_error,
    add_live_page,
    json_body,
)
from scannerd.display.typed import parsed_as_request

log = structlog.get_logger(__name__)

STATIC_DIR = Path(__file__).with_name("static")
COALESCE_S = 0.1
START_TIMEOUT_S = 10.0
IDLE_S = 10.0
"""A connection with no request under way for this long is closed, as at the dealer display."""

Acknowledge = Callable[[str, int], Response]
"""(table_id, alert_id) -> the table's answer to ``ack_alert``; raises RequestTimeout without one."""
Resume = Callable[[str, str], Response]
"""(table_id, reason) -> the table's answer to ``resume``; raises RequestTimeout without one."""


class PitServer:
    """Serves ``snapshot()`` (the board's, JSON-ready) as ``page`` says; ``changed()`` after every change.

    ``page`` takes the dealer display's settings (listen, max_connections, max_per_address,
    allowed_hosts); ``token``, when set, is what acknowledging needs.
    """

    def __init__(
        self,
        page: DisplaySettings,
        snapshot: Callable[[], dict[str, Any]],
        acknowledge: Acknowledge,
        resume: Resume,
        *,
        metrics: Callable[[], bytes] = bytes,
        detail: Callable[[str], dict[str, Any] | None] = lambda _table_id: None,
        token: str | None = None,
        idle_s: float = IDLE_S,
    ) -> None:
        self.page = page
        self.host, self.port = page.host, page.port
        self._token = token
        self._idle_s = idle_s
        self._snapshot = snapshot
        self._acknowledge = acknowledge
        self._resume = resume
        self._metrics = metrics
        self._detail = detail
        self._live = LiveView()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._stop: asyncio.Event | None = None
        self._pending = False
        self._ready = threading.Event()
        self._error: BaseException | None = None
        self._thread: threading.Thread | None = None

    # ------------------------------------------------------------------ control (any thread)

    def start(self) -> None:
        """Start serving; raises OSError if the address is taken."""
        self._thread = threading.Thread(target=self._run, name="pit-server", daemon=True)
        self._thread.start()
        if not self._ready.wait(START_TIMEOUT_S):
            raise TimeoutError(f"the pit view did not start listening on {self.host}:{self.port}")
        if self._error is not None:
            raise self._error
        log.info("pit view listening", url=self.url)

    def stop(self, timeout: float = 5.0) -> None:
        loop, stop = self._loop, self._stop
        if loop is not None and stop is not None:
            with contextlib.suppress(RuntimeError):
                loop.call_soon_threadsafe(stop.set)
        if self._thread is not None:
            self._thread.join(timeout)

    @property
    def url(self) -> str:
        host = "127.0.0.1" if self.host in ("0.0.0.0", "") else self.host
        return f"http://{f'[{host}]' if ':' in host else host}:{self.port}/"

    def changed(self) -> None:
        """Something on the board changed (any thread; never blocks)."""
        loop = self._loop
        if loop is not None:
            with contextlib.suppress(RuntimeError):
                loop.call_soon_threadsafe(self._schedule)

    # ------------------------------------------------------------------ the loop thread

    def _schedule(self) -> None:
        if not self._pending and self._loop is not None:
            self._pending = True
            self._loop.call_later(COALESCE_S, self._publish)

    def _publish(self) -> None:
        self._pending = False
        self._live.publish(self._snapshot())

    def _run(self) -> None:
        try:
            asyncio.run(self._serve())
        except Exception as exc:
            if self._ready.is_set():
                log.exception("pit view server died")
            else:
                self._error = exc
                self._ready.set()

    async def _serve(self) -> None:
        self._stop = asyncio.Event()
        self._publish()
        app = web.Application(middlewares=[access_middleware(self.page.allowed_hosts, self._token, PIT)])
        add_live_page(
            app,
            STATIC_DIR,
            "pit",
            self._live,
            lambda: self._stop is not None and not self._stop.is_set(),
        )
        app.router.add_post("/api/ack", self._ack)
        app.router.add_post("/api/resume", self._resume_table)
        app.router.add_get("/metrics", self._scrape)
        app.router.add_get("/api/table/{table_id}", self._table)
        page = self.page
        gate = Gate(PIT.name, page.listen, page.max_connections, page.max_per_address, self._idle_s)
        runner = gate.runner(app)
        await runner.setup()
        server: asyncio.Server | None = None
        try:
            sock = socket.create_server(
                (self.host, self.port), family=socket.AF_INET6 if ":" in self.host else socket.AF_INET
            )
            self.port = sock.getsockname()[1]
            server = await gate.serve(runner, sock)
            self._loop = asyncio.get_running_loop()
            self._ready.set()
            await self._stop.wait()
        finally:
            self._loop = None
            if server is not None:
                server.close()
            self._live.wake_all()
            await runner.cleanup()

    async def _table(self, request: web.Request) -> web.Response:
        """One table's detail (its scoreboard's five roads and ask marks), asked when its tile is opened:
        the wall's stream carries only what fifty tiles show."""
        table_id = request.match_info["table_id"]
        detail = self._detail(table_id) if _is_table_id(table_id) else None
        if detail is None:
            return ack_error(f"no table {table_id!r} on this pit", 404, "table")
        return web.json_response(detail, headers=NO_CACHE)

    async def _scrape(self, _request: web.Request) -> web.Response:
        body = await asyncio.get_running_loop().run_in_executor(None, self._metrics)
        return web.Response(body=body, headers={"Content-Type": CONTENT_TYPE_LATEST})

    async def _ack(self, request: web.Request) -> web.Response:
        """``{"table_id": "BAC-01", "alert_id": n}`` -> the table's ack_alert answer, sent as a request."""
        body = await ack_body(request)
        if isinstance(body, web.Response):
            return body
        table_id, alert_id = body.get("table_id"), body["alert_id"]
        if not isinstance(table_id, str) or not _is_table_id(table_id):
            return ack_error("table_id must be a table id", 400)
        loop = asyncio.get_running_loop()
        try:
            response = await loop.run_in_executor(None, self._acknowledge, table_id, alert_id)
        except RequestTimeout as exc:
            return ack_error(str(exc), 504)
        log.info(
            "alert acknowledged from the pit", table_id=table_id, alert_id=alert_id, status=response.status
        )
        return ack_answer(response)

    async def _resume_table(self, request: web.Request) -> web.Response:
        """``{"table_id": "BAC-01", "reason": "..."}`` -> the table's answer to ``resume``.

        The pit boss resumes as the pit's broker user: the table records that name (docs/staff.md).
        """
        body = await json_body(request, "resume")
        if isinstance(body, web.Response):
            return body
        table_id = body.pop("table_id", None)
        if not isinstance(table_id, str) or not _is_table_id(table_id):
            return ack_error("table_id must be a table id", 400, "resume")
        args = parsed_as_request("resume", body)  # the reason, judged as the game server's would be
        if isinstance(args, web.Response):
            return args
        loop = asyncio.get_running_loop()
        try:
            response = await loop.run_in_executor(None, self._resume, table_id, args["reason"])
        except RequestTimeout as exc:
            return ack_error(str(exc), 504, "resume")
        log.info("table resumed from the pit", table_id=table_id, status=response.status)
        return ack_answer(response)


def _is_table_id(value: str) -> bool:
    try:
        check_table_id(value)
    except ValueError:
        return False
    return True
