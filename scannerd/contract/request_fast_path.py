"""The well-formed requests a game server sends every round, read without running their models.

A round is ``betting_open`` with its round id and ``betting_close`` with
nothing: validating each through its pydantic model was a large part of a
replay's time (docs/performance.md). This path reads a request whose every
field is one it can judge for sure (an id, a choice from a list, absent) and
gives the arguments the model would give, in the model's order. Anything
else, and anything it finds wrong, goes to the model, which accepts or
refuses it in the words it always has: this path never refuses.
``tests/contract/test_request_fast_path.py`` holds it to the model over
generated requests.
"""

from __future__ import annotations

import types
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Literal, Union, get_args, get_origin

from pydantic_core import PydanticUndefined

from scannerd.contract.command_catalogue import COMMANDS, RequestBase, usable_transaction
from scannerd.contract.idents import Ident, check_ident

_NOT_SURE = object()
"""What a field's check gives for a value it cannot vouch for: the model must judge the request."""


@dataclass(frozen=True, slots=True)
class _Field:
    name: str
    required: bool
    default: Any  # what the model fills in when the request leaves the field out
    read: Callable[[Any], Any]  # the value as the model keeps it, or _NOT_SURE


def fast_args(command: str, raw: Mapping[str, Any]) -> tuple[Any, dict[str, Any]] | None:
    """The request's transaction and arguments as its model would give them, or None when only the
    model can say (an unknown command, a field this path does not judge, a value it doubts)."""
    plan = _PLANS.get(command)
    if plan is None:
        return None
    fields, names = plan
    transaction = raw.get("transaction")
    if transaction is not None and not usable_transaction(transaction):
        return None
    if not names.issuperset(raw):  # a key the model forbids: its refusal names it
        return None
    args: dict[str, Any] = {}
    for field in fields:
        if field.name in raw:
            value = field.read(raw[field.name])
            if value is _NOT_SURE:
                return None
        elif field.required:
            return None
        else:
            value = field.default
        if value is not None:  # the model's arguments leave out what is None
            args[field.name] = value
    return transaction, args


def _plan(model: type[RequestBase]) -> tuple[tuple[_Field, ...], frozenset[str]]:
    fields = []
    for name, info in model.model_fields.items():
        if name == "transaction":
            continue
        required = info.default is PydanticUndefined and info.default_factory is None
        default = None if required or info.default_factory is not None else info.default
        if info.default_factory is not None:  # a default made per request: the model's to make
            fields.append(_Field(name, required, None, _doubt))
            continue
        fields.append(_Field(name, required, default, _reader(info.annotation, info.metadata)))
    return tuple(fields), frozenset(model.model_fields)


def _reader(annotation: Any, metadata: list[Any]) -> Callable[[Any], Any]:
    """How this path reads a field of ``annotation``: an id, a choice of strings, either or null."""
    if metadata:  # constraints beside the type (a range, a length): the model's to check
        return _doubt
    nullable = False
    if get_origin(annotation) in (Union, types.UnionType):
        options = [a for a in get_args(annotation) if a is not type(None)]
        if len(options) != 1:
            return _doubt
        nullable, annotation = True, options[0]
    if annotation == Ident:
        inner = _read_ident
    elif get_origin(annotation) is Literal and all(type(a) is str for a in get_args(annotation)):
        choices = frozenset(get_args(annotation))

        def inner(value: Any) -> Any:
            return value if type(value) is str and value in choices else _NOT_SURE

    else:
        return _doubt
    if not nullable:
        return inner
    return lambda value: None if value is None else inner(value)


def _read_ident(value: Any) -> Any:
    if type(value) is not str:
        return _NOT_SURE
    try:
        return check_ident(value)
    except ValueError:
        return _NOT_SURE


def _doubt(value: Any) -> Any:
    return _NOT_SURE


_PLANS = {command: _plan(model) for command, model in COMMANDS.items()}
