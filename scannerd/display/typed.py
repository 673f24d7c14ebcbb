"""What a person typed at a screen with an action: a staff id and a PIN, taken off the request's body.

The rest of the body is the command's, judged by the parser the game
server's requests go through; the PIN never goes further than the staff
list's check (``scannerd.staff.roster``), and is never logged.
"""

from __future__ import annotations

from typing import Any

from aiohttp import web

from scannerd.contract.requests import RequestError, parse_request_data
from scannerd.display.stream import ack_error, json_body

TYPED = ("staff_id", "pin")
MAX_TYPED = 64
"""An id is at most 64 characters; a PIN at most 12 digits. Longer is not a mistake worth hashing."""


def credentials(body: dict[str, Any]) -> tuple[str | None, str | None] | str:
    """``body``'s staff id and PIN (removed from it), or the reason they cannot be used."""
    typed = [body.pop(key, None) for key in TYPED]
    for key, value in zip(TYPED, typed, strict=True):
        if value is not None and (not isinstance(value, str) or len(value) > MAX_TYPED):
            return f"{key} must be text of at most {MAX_TYPED} characters"
    return typed[0], typed[1]


async def parsed_with_credentials(
    request: web.Request, command: str
) -> tuple[dict[str, Any], str | None, str | None] | web.Response:
    """The command's arguments as the game server's parser takes them, and what was typed with them."""
    body = await json_body(request, command)
    if isinstance(body, web.Response):
        return body
    typed = credentials(body)
    if isinstance(typed, str):
        return ack_error(typed, 400, command)
    args = parsed_as_request(command, body)
    if isinstance(args, web.Response):
        return args
    return args, *typed


def parsed_as_request(command: str, body: dict[str, Any]) -> dict[str, Any] | web.Response:
    """``body`` judged by the game server's parser: the command's arguments, or the refusal."""
    try:
        return parse_request_data(command, body).args
    except RequestError as exc:
        return web.json_response(exc.response().model_dump(mode="json"), status=400)
