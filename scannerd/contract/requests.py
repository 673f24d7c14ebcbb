"""Game-server requests: parse and check them, and the shape of the answer (the table runs them).

Parsing is pure and total: whatever bytes arrive on ``{base}/request/<cmd>``,
the result is either a ``Request`` or a ``RequestError`` whose text tells the
sender what was wrong. The transaction id is recovered whenever the payload
is a JSON object, so even a rejected request can be matched to its answer.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Final, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from scannerd.contract.command_catalogue import COMMANDS, usable_transaction
from scannerd.contract.request_fast_path import fast_args
from scannerd.settings.config_errors import TOO_MANY_DIGITS

MAX_REQUEST_BYTES = 16 * 1024

Transaction = str | int


class Response(BaseModel):
    """The answer on ``{base}/response/<command>``."""

    model_config = ConfigDict(extra="forbid")

    command: str
    status: Literal["ok", "error", "busy"] = Field(
        description="'busy': not run, the table has too many requests waiting; ask again later."
    )
    transaction: Transaction | None = Field(None, description="The request's transaction, echoed.")
    error: str | None = Field(None, description="Why the request was refused (status 'error' or 'busy').")
    data: dict[str, Any] | None = Field(
        None,
        description="On 'ok': the table state after the command, as get_state returns it: "
        "table_id, seq, link_up, shoe, round, alerts, dealer_id while a dealer is signed in, and "
        "results (the shoe's completed hands) in get_state's answer only.",
    )


@dataclass(slots=True, unsafe_hash=True)
class Request:
    """A well-formed request: ``args`` as the validator's Command takes them.

    ``pit_user`` is the broker user a pit's request topic names
    (``{base}/request/<command>/pit/<user>``): the broker lets only that user
    publish there, so it is who acted. None for the game server's topic.

    One for every command: never changed once made, through ``Final`` fields rather than
    ``frozen=True``, for the reason ``scannerd.core.inputs`` gives.
    """

    command: Final[str]
    transaction: Final[Transaction | None] = None
    args: Final[dict[str, Any]] = field(default_factory=dict)
    pit_user: Final[str | None] = None


class RequestError(ValueError):
    """A request that cannot be run; ``str()`` is the text for the response."""

    def __init__(self, command: str, text: str, transaction: Transaction | None = None) -> None:
        super().__init__(text)
        self.command = command
        self.transaction = transaction

    def response(self) -> Response:
        return Response(command=self.command, status="error", transaction=self.transaction, error=str(self))


def parse_request(command: str, payload: bytes, max_bytes: int = MAX_REQUEST_BYTES) -> Request:
    """Turn a request's topic level and payload into a Request, or raise RequestError."""
    if len(payload) > max_bytes:
        raise RequestError(command, f"request too large: {len(payload)} bytes (limit {max_bytes})")
    try:
        raw: Any = json.loads(payload.decode("utf-8")) if payload.strip() else {}
    except UnicodeDecodeError:
        raise RequestError(command, "payload is not UTF-8 text") from None
    except json.JSONDecodeError as exc:
        raise RequestError(command, f"malformed JSON: {exc}") from None
    except ValueError:  # an integer with more digits than Python converts
        raise RequestError(command, f"malformed JSON: {TOO_MANY_DIGITS}") from None
    except RecursionError:
        raise RequestError(command, "malformed JSON: nested too deeply") from None
    if not isinstance(raw, dict):
        raise RequestError(command, f"request must be a JSON object, not {type(raw).__name__}")
    transaction = raw.get("transaction")
    if not usable_transaction(transaction):
        transaction = None
    model = COMMANDS.get(command)
    if model is None:
        known = ", ".join(COMMANDS)
        raise RequestError(command, f"unknown command {command!r} (known: {known})", transaction)
    fast = fast_args(command, raw)  # a round's requests, well-formed: what the model would give
    if fast is not None:
        return Request(command, *fast)
    try:
        parsed = model.model_validate(raw)
    except ValidationError as exc:
        raise RequestError(command, _explain(exc), transaction) from None
    args = parsed.model_dump(exclude={"transaction"}, exclude_none=True)
    return Request(command, parsed.transaction, args)


def parse_request_data(command: str, args: Mapping[str, Any]) -> Request:
    """A request given as data (a recording's ``cmd`` line, a display's button): exactly as if its
    JSON had come over MQTT, the same request or the same refusal.

    A round's well-formed requests are read as they are, without the trip through JSON text: the
    fast path vouches only for ids, choices and a transaction that is a short string (ids and
    choices are short too), so such a request is far inside ``MAX_REQUEST_BYTES`` and its JSON
    reads back as this data. Anything else takes that trip.
    """
    if not _long_integer(args.get("transaction")):
        fast = fast_args(command, args)
        if fast is not None:
            return Request(command, *fast)
    return parse_request(command, json.dumps(args).encode())


def _long_integer(transaction: object) -> bool:
    """An integer transaction whose JSON may be too long for a request: the fast path vouches for
    the others (``fast_args`` checks a string's length and every other kind)."""
    return type(transaction) is int and not -(10**18) < transaction < 10**18


def _explain(exc: ValidationError) -> str:
    parts = []
    for err in exc.errors(include_url=False):
        where = ".".join(str(p) for p in err["loc"]) or "request"
        msg = str(err["ctx"]["error"]) if err["type"] == "value_error" else err["msg"]
        parts.append(f"{where}: {msg}")
    return "invalid request: " + "; ".join(parts)
