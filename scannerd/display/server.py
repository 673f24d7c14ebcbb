"""The dealer display's web server: one page, its assets, a live event stream and the acknowledge button.

It runs its own asyncio loop on its own thread, so nothing the browser does
can slow the deal: the daemon hands events over with ``on_events`` (which
only queues them onto the loop) and the page gets the whole view again,
pushed by server-sent events, as soon as it changes. Sending the whole view
(a few kilobytes) rather than changes means a page that reconnects after a
restart is simply right again, with nothing to resynchronise.
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
import threading
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import structlog
from aiohttp import web

from scannerd.contract.events import EventData
from scannerd.contract.payloads import DevicePayload, DisplayHealth
from scannerd.contract.requests import Response
from scannerd.core.inputs import Actor
from scannerd.core.listeners import TableListener
from scannerd.display.access import DISPLAY, OVERLAY, Page, access_middleware
from scannerd.display.binding import bind_retrying
from scannerd.display.guard import Gate
from scannerd.display.overlay import overlay_view
from scannerd.display.settings import DisplaySettings, OverlaySettings
from scannerd.display.stream import NO_CACHE, LiveView, ack_answer, ack_body, ack_error, add_live_page
from scannerd.display.typed import credentials, parsed_with_credentials
from scannerd.display.view import TableView, staff_pins
from scannerd.settings.credentials import read_secret
from scannerd.settings.files import read_utf8
from scannerd.staff.roster import Roster

log = structlog.get_logger(__name__)

STATIC_DIR = Path(__file__).with_name("static")
OVERLAY_DIR = STATIC_DIR / "overlay"
START_TIMEOUT_S = 10.0
IDLE_S = 10.0
"""A connection with no request under way for this long is closed (one that never sends a byte, too)."""
TOKEN_CREDENTIAL = "display-token"
"""Looked up in ``$CREDENTIALS_DIRECTORY`` when no ``[display] token_file`` is set."""


@dataclass
class _Endpoint:
    """One address the display's server listens on (the dealer's page, the stream's overlay) and its state."""

    page: Page
    settings: DisplaySettings | OverlaySettings  # where it listens, its names and its connection cap
    port: int | None = None  # the port listened on: the one the OS chose for port 0, kept across restarts
    tried: bool = False  # the first attempt to listen was made
    error: str | None = None  # why it cannot listen, while it cannot
    server: asyncio.Server | None = field(default=None, repr=False)
    gate: Gate | None = field(default=None, repr=False)  # its connections, once served

    def gated(self, idle_s: float) -> Gate:
        """The gate its connections come through, as its settings cap them."""
        s = self.settings
        self.gate = Gate(self.page.name, self.listen, s.max_connections, s.max_per_address, idle_s)
        return self.gate

    @property
    def listen(self) -> str:
        assert self.settings.listen is not None, "an endpoint is made only for an address"
        return self.settings.listen

    def url(self) -> str:
        host = self.settings.host
        if host in ("0.0.0.0", "::", ""):
            host = "127.0.0.1"
        if ":" in host:
            host = f"[{host}]"
        return f"http://{host}:{self.port if self.port is not None else self.settings.port}/"

    def socket(self) -> socket.socket:
        host = self.settings.host
        # Our own socket, so the port the OS picked for port 0 is known to ``url``.
        # After a restart, the same port again: the kiosk's URL must stay valid.
        port = self.port if self.port is not None else self.settings.port
        sock = socket.create_server((host, port), family=socket.AF_INET6 if ":" in host else socket.AF_INET)
        self.port = sock.getsockname()[1]
        return sock


class Display(TableListener):
    """The dealer display of one table.

    ``get_state`` returns the validator's ``get_state`` view (it seeds the page
    on start); ``request`` runs a game-server command as the daemon would and
    answers with its :class:`~scannerd.contract.requests.Response` (the acknowledge
    button). ``round_control`` is the house setting, which decides what the
    dealer is told to do between rounds. ``on_health`` is called (from the
    display's thread) whenever :attr:`health` changes. ``idle_s`` is how long
    a connection may sit without a request (shorter in tests of the limit).

    A display that cannot listen (port taken, host that does not resolve)
    never stops the table: it says why once, shows it in :attr:`health` and
    tries again with backoff until it can.

    ``overlay`` (with its ``listen`` set) adds the stream's overlay, on an address of its own, fed
    in the same step as the dealer's page (``scannerd/display/overlay.py``).
    """

    def __init__(
        self,
        settings: DisplaySettings,
        table_id: str,
        get_state: Callable[[], dict[str, Any]],
        request: Callable[[str, dict[str, Any], Actor], Response],
        *,
        staff: Roster | None = None,
        overlay: OverlaySettings | None = None,
        ack_needs_pin: bool = False,
        round_control: str = "server",
        on_health: Callable[[], None] = lambda: None,
        environ: dict[str, str] | None = None,
        idle_s: float = IDLE_S,
    ) -> None:
        self.settings = settings
        self._idle_s = idle_s
        self.table_id = table_id
        self._get_state = get_state
        self._request = request
        self._staff = staff
        self._ack_needs_pin = ack_needs_pin and staff is not None
        # touched only on the loop thread once started
        self._view = TableView(table_id, round_control, pins=staff_pins(staff is not None, ack_needs_pin))
        self._live = LiveView()
        self._endpoint = _Endpoint(DISPLAY, settings)
        if overlay is not None and overlay.listen is None:
            overlay = None  # not served
        self._overlay_endpoint = _Endpoint(OVERLAY, overlay) if overlay is not None else None
        self._overlay_live = LiveView()
        # read at start, as the token: a theme that cannot be read is the config's error, said once
        theme = overlay.theme_file if overlay is not None else None
        self._theme = read_utf8(theme) if theme is not None else ""
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._ready = threading.Event()
        self._stop: asyncio.Event | None = None
        self._on_health = on_health
        self.health = DisplayHealth(state="retrying", listen=settings.listen, error="not started")
        token = read_secret(settings.token_file, TOKEN_CREDENTIAL, environ)  # at start, as a file error
        self._token = token.get_secret_value() if token is not None else None

    # ------------------------------------------------------------------ control (any thread)

    def start(self) -> None:
        """Seed the view from ``get_state`` and start serving; returns after the first attempt to listen."""
        if self.alive:
            return
        self._view.load_state(self._get_state())
        self._ready.clear()
        self._thread = threading.Thread(target=self._run, name="display", daemon=True)
        self._thread.start()
        self._ready.wait(START_TIMEOUT_S)

    def stop(self, timeout: float = 5.0) -> None:
        loop, stop = self._loop, self._stop
        if loop is not None and stop is not None:
            with contextlib.suppress(RuntimeError):  # the loop already ended
                loop.call_soon_threadsafe(stop.set)
        if self._thread is not None:
            self._thread.join(timeout)
        self._loop = None

    @property
    def alive(self) -> bool:
        """Whether the server thread runs (a watchdog's cue: False after a crash)."""
        return self._thread is not None and self._thread.is_alive()

    @property
    def url(self) -> str:
        """Where the page is; the actual port when the settings asked for port 0."""
        return self._endpoint.url()

    @property
    def overlay_url(self) -> str | None:
        """Where the overlay is, when there is one."""
        return self._overlay_endpoint.url() if self._overlay_endpoint is not None else None

    @property
    def overlay_error(self) -> str | None:
        """Why the overlay cannot listen, while it cannot (the dealer's page has ``health`` for that)."""
        return self._overlay_endpoint.error if self._overlay_endpoint is not None else None

    # ------------------------------------------------------------------ inputs (daemon threads, never block)

    def on_events(self, events: Sequence[EventData]) -> None:
        """A daemon listener: queue the batch onto the display's loop and return at once."""
        self._call_soon(self._apply_events, list(events))

    def on_device(self, payload: DevicePayload) -> None:
        """The device's link, model and firmware changed."""
        self._call_soon(self._apply_device, payload)

    def _call_soon(self, fn: Callable[..., None], arg: Any) -> None:
        loop = self._loop
        if loop is None:
            return  # not running: start() seeds from get_state instead
        with contextlib.suppress(RuntimeError):  # closed between the check and the call: stopping
            loop.call_soon_threadsafe(fn, arg)

    # ------------------------------------------------------------------ the loop thread

    def _apply_events(self, events: list[EventData]) -> None:
        changed = False
        for event in events:
            changed |= self._view.apply(event)  # already its published JSON's data
        if changed:
            self._publish()

    def _apply_device(self, payload: DevicePayload) -> None:
        self._view.set_device(payload.model_dump(mode="json"))
        self._publish()

    def _publish(self) -> None:
        self._live.publish(self._view.snapshot())
        if self._overlay_endpoint is not None:
            self._overlay_live.publish(overlay_view(self._view))

    def _run(self) -> None:
        try:
            asyncio.run(self._serve())
        except BaseException as exc:
            log.exception("display server died")
            if not isinstance(exc, Exception):
                raise
        finally:
            self._ready.set()

    async def _serve(self) -> None:
        self._stop = asyncio.Event()
        self._loop = asyncio.get_running_loop()  # from now on events reach the view, listening or not
        self._publish()
        served = [(self._endpoint, self._app())]
        if self._overlay_endpoint is not None:
            served.append((self._overlay_endpoint, self._overlay_app()))
        runners = [endpoint.gated(self._idle_s).runner(app) for endpoint, app in served]
        for runner in runners:
            await runner.setup()
        listening = [
            asyncio.create_task(self._listen(endpoint, runner))
            for (endpoint, _), runner in zip(served, runners, strict=True)
        ]
        try:
            await self._stop.wait()
        finally:
            self._loop = None
            for task in listening:
                task.cancel()
            for endpoint, _ in served:
                if endpoint.server is not None:
                    endpoint.server.close()
                    endpoint.server = None
            self._live.wake_all()  # let every stream handler see the stop and return
            self._overlay_live.wake_all()
            for runner in runners:
                await runner.cleanup()

    async def _listen(self, endpoint: _Endpoint, runner: web.AppRunner) -> None:
        """Listen, trying again with backoff while it cannot, until it can or the display stops."""
        assert self._stop is not None and endpoint.gate is not None
        dealer = endpoint is self._endpoint  # the dealer's page is the one the status reports on

        def retrying(reason: str) -> None:
            endpoint.error = reason
            if dealer:
                self._set_health(DisplayHealth(state="retrying", listen=endpoint.listen, error=reason))
            self._tried(endpoint)

        sock = await bind_retrying(endpoint.socket, self._stop, endpoint.page.name, endpoint.listen, retrying)
        if sock is None:
            return
        endpoint.server = await endpoint.gate.serve(runner, sock)
        endpoint.error = None
        log.info(f"{endpoint.page.name} listening", url=endpoint.url())
        if dealer:
            self._set_health(DisplayHealth(state="listening", listen=endpoint.listen))
        self._tried(endpoint)

    def _tried(self, endpoint: _Endpoint) -> None:
        """``start`` returns once every address has been tried once."""
        endpoint.tried = True
        if self._endpoint.tried and (self._overlay_endpoint is None or self._overlay_endpoint.tried):
            self._ready.set()

    def _set_health(self, health: DisplayHealth) -> None:
        if health != self.health:
            self.health = health
            self._on_health()

    def _overlay_app(self) -> web.Application:
        """The overlay's pages: read-only, with no button and nothing but ``overlay_view``'s view."""
        assert self._overlay_endpoint is not None
        names = self._overlay_endpoint.settings.allowed_hosts
        app = web.Application(middlewares=[access_middleware(names, None, OVERLAY)])
        theme = self._theme

        async def theme_css(_request: web.Request) -> web.Response:
            return web.Response(text=theme, content_type="text/css", headers=NO_CACHE)

        app.router.add_get("/theme.css", theme_css)
        add_live_page(
            app,
            OVERLAY_DIR,
            "overlay",
            self._overlay_live,
            lambda: self._stop is not None and not self._stop.is_set(),
        )
        return app

    def _app(self) -> web.Application:
        app = web.Application(
            middlewares=[access_middleware(self.settings.allowed_hosts, self._token, DISPLAY)]
        )
        add_live_page(
            app,
            STATIC_DIR,
            "view",
            self._live,
            lambda: self._stop is not None and not self._stop.is_set(),
        )
        app.router.add_post("/api/ack", self._ack)
        app.router.add_post("/api/dealer/{action:sign_in|sign_out}", self._dealer)
        app.router.add_post("/api/resume", self._button("resume", True, "table resume at the display"))
        app.router.add_post("/api/deck_check", self._button("deck_check", False, "deck check at the display"))
        app.router.add_post(
            "/api/confirm_result", self._button("confirm_result", False, "result declared at the display")
        )
        return app

    async def _ack(self, request: web.Request) -> web.Response:
        """The acknowledge button: ``{"alert_id": n}``, with ``staff_id`` and ``pin`` where the house asks."""
        body = await ack_body(request)
        if isinstance(body, web.Response):
            return body
        alert_id = body["alert_id"]
        typed = credentials(body)
        if isinstance(typed, str):
            return ack_error(typed, 400)
        response = await self._act("ack_alert", {"alert_id": alert_id}, typed, self._ack_needs_pin)
        log.info("alert acknowledged at the display", alert_id=alert_id, status=response.status, by=typed[0])
        return ack_answer(response)

    async def _dealer(self, request: web.Request) -> web.Response:
        """The sign-in control: ``sign_in`` with ``{"dealer_id": "D-117", "pin": "4321"}`` (the PIN with
        a staff list), or ``sign_out`` with ``{}``.

        The body but the PIN is judged by the same parser as the game server's request, and run as one.
        """
        command = f"dealer_{request.match_info['action']}"
        parsed = await parsed_with_credentials(request, command)
        if isinstance(parsed, web.Response):
            return parsed
        args, _, pin = parsed
        response = await self._act(command, args, (args.get("dealer_id"), pin), command == "dealer_sign_in")
        log.info("dealer sign-in at the display", command=command, status=response.status, **args)
        return ack_answer(response)

    def _button(
        self, command: str, needs_pin: bool, said: str
    ) -> Callable[[web.Request], Awaitable[web.Response]]:
        """A page's button that runs ``command``: its body (``staff_id`` and ``pin`` beside the command's
        own arguments) judged by the game server's parser, run as the staff list says, logged, answered.

        The supervisor's RESUME (``{"reason": ...}``, a PIN needed), COUNT SHOE / END COUNT
        (``{"action": "start"}`` or ``"end"``) and the winner's buttons (``{"winner": ...}``).
        """

        async def run(request: web.Request) -> web.Response:
            parsed = await parsed_with_credentials(request, command)
            if isinstance(parsed, web.Response):
                return parsed
            args, staff_id, pin = parsed
            response = await self._act(command, args, (staff_id, pin), needs_pin)
            log.info(said, status=response.status, by=staff_id, **args)
            return ack_answer(response)

        return run

    async def _act(
        self, command: str, args: dict[str, Any], typed: tuple[Any, Any], needs_pin: bool
    ) -> Response:
        """Check what was typed against the staff list and run the command, off the loop.

        Both block: Argon2 is slow on purpose, and the daemon runs the command under its lock;
        the loop must keep streaming meanwhile.
        """
        staff_id, pin = typed

        def run() -> Response:
            return self._request(command, args, self._actor(staff_id, pin, needs_pin))

        return await asyncio.get_running_loop().run_in_executor(None, run)

    def _actor(self, staff_id: str | None, pin: str | None, needs_pin: bool) -> Actor:
        """Who acts at the display: the staff list's verdict on what was typed, when there is a list.

        Without a list, whoever was named (the dealer signing in), or the dealer at the table. With
        one, an action that needs a PIN and got none is the validator's to refuse (``role`` says a
        list is kept), so the refusal is judged and recorded like any other.
        """
        roster = self._staff
        if roster is None:
            return Actor("display", staff_id)
        if staff_id is None or pin is None:
            return Actor("display", role="unknown" if needs_pin else None)
        return roster.at_display(staff_id, pin)
