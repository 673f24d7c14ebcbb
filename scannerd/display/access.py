"""Who may use a page that acknowledges alerts: the Host and Origin a browser names, and an optional token.

The dealer display and the pit view both take this middleware. Their pages
can acknowledge misdeals, so a page from anywhere else must not be able to
drive them through the kiosk's (or the pit's wall screen's) browser. DNS
rebinding is the way in: a page at ``evil.example`` makes its name resolve
to the table PC (or the pit's machine) and then talks to the page as if it
were same-origin. The browser still names ``evil.example`` in ``Host`` (and
``Origin``), so only names the page knows are served: IP addresses,
``localhost`` and the names its settings allow (``[display] allowed_hosts``,
``scannerd pit --allowed-host``); a rebinding attack needs a name of its
own, never a bare address. A write must come from the page's own origin, or
from a client that is not a browser and sends no ``Origin``.

A page on another machine is reached over the network, where anyone
can post; a token file then makes acknowledging need the token:
as ``Authorization: Bearer ...``, or from a kiosk that opened
``/?token=...`` once and got it back as a cookie only this site sends.
Cookies do not tell ports apart, so each page has a cookie of its own: a
display and a pit on one machine do not overwrite each other's token.
"""

from __future__ import annotations

import hmac
import ipaddress
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass

from aiohttp import web

_READS = ("GET", "HEAD")

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


def host_name(host: str) -> str:
    """The name in a ``Host`` header, without its port or brackets, lower case."""
    host = host.strip().lower()
    if host.startswith("["):
        return host[1 : host.find("]")] if "]" in host else host
    name, sep, port = host.rpartition(":")
    return name.rstrip(".") if sep and port.isdigit() else host.rstrip(".")


def allowed_names(allowed_hosts: Iterable[str]) -> frozenset[str]:
    """The names a request may give for the host besides an address: ``localhost`` and those allowed."""
    return frozenset({"localhost", *(host_name(h) for h in allowed_hosts)})


def known_host(name: str, names: frozenset[str]) -> bool:
    """Whether a ``Host`` header's name (``host_name``) is an address or one of ``names``: what a
    rebinding attack, which needs a name of its own, cannot give."""
    if name in names:
        return True
    try:
        ipaddress.ip_address(name)
    except ValueError:
        return False
    return True


@dataclass(frozen=True)
class Page:
    """Which page refuses: its name in the answers and its cookie, and where its allowed hosts are set."""

    name: str
    hosts_setting: str

    @property
    def cookie(self) -> str:
        return f"scannerd_{self.name}"


DISPLAY = Page("display", "[display] allowed_hosts")
PIT = Page("pit", "the pit's --allowed-host")
OVERLAY = Page("overlay", "[overlay] allowed_hosts")


def access_middleware(
    allowed_hosts: Iterable[str], token: str | None, page: Page = DISPLAY
) -> Callable[..., Awaitable[web.StreamResponse]]:
    """An aiohttp middleware that refuses what the module docstring describes, with a reason."""
    names = allowed_names(allowed_hosts)

    @web.middleware
    async def check(request: web.Request, handler: Handler) -> web.StreamResponse:
        name = host_name(request.host)
        if not known_host(name, names):
            return refuse(f"unknown host {name!r}: add it to {page.hosts_setting}", 403)
        if request.method not in _READS:
            origin = request.headers.get("Origin")
            if origin is not None and origin != f"{request.scheme}://{request.host}":
                return refuse(f"cross-origin request from {origin!r} refused", 403)
            if token is not None and not _has_token(request, token, page):
                return refuse(f"this {page.name} needs its token: open the page as /?token=...", 401)
        elif token is not None and "token" in request.query:
            return _take_token(request, token, page)
        return await handler(request)

    return check


def _has_token(request: web.Request, token: str, page: Page) -> bool:
    scheme, _, given = request.headers.get("Authorization", "").partition(" ")
    if scheme.lower() != "bearer":
        given = request.cookies.get(page.cookie, "")
    return hmac.compare_digest(given.encode(), token.encode())


def _take_token(request: web.Request, token: str, page: Page) -> web.StreamResponse:
    """``/?token=...``: the right token becomes a cookie and the address loses it (history, screen)."""
    if not hmac.compare_digest(request.query["token"].encode(), token.encode()):
        return refuse(f"wrong {page.name} token", 401)
    rest = {k: v for k, v in request.query.items() if k != "token"}
    response = web.Response(status=303, headers={"Location": str(request.rel_url.with_query(rest))})
    response.set_cookie(page.cookie, token, httponly=True, samesite="Strict", path="/")
    return response


def refuse(text: str, status: int) -> web.Response:
    return web.json_response({"status": "error", "error": text}, status=status)
