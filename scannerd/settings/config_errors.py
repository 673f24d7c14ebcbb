"""Config errors in a technician's words: one line, each problem as ``dotted.key: what is wrong``.

pydantic's own texts quote regular expressions, Python type names and its
internals ("Input should be a valid integer, unable to parse string as an
integer", "Value should have at most 128 items after validation"). The person
reading them is at a table PC with a config file open: they need the key,
what kind of value it takes, and its range.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping
from types import UnionType
from typing import Any, Union, get_args, get_origin

from annotated_types import Ge, Gt, Le, Lt
from pydantic import BaseModel, ValidationError
from pydantic.fields import FieldInfo
from pydantic_core import ErrorDetails

TOO_MANY_DIGITS = f"a number has more than {sys.get_int_max_str_digits()} digits"
"""Python's refusal of a long number, in words: for the config file and for a request alike."""


def describe(exc: ValidationError, root: type[BaseModel], overrides: Mapping[str, str] | None = None) -> str:
    """All problems of a validation error on one line, each as ``dotted.key: message``.

    A key set from the environment says so, since the file then looks innocent.
    """
    origin = {key: name for name, key in (overrides or {}).items()}
    problems: dict[str, list[str]] = {}
    for error in exc.errors(include_url=False):
        key, field = _locate(root, error["loc"])
        message = _message(error, key, field, typed=not _from_env(key, origin))
        messages = problems.setdefault(key, [])
        if message not in messages:
            messages.append(message)
    return "; ".join(
        f"{key}: {_either(messages)}{_from_env(key, origin)}" if key else _either(messages)
        for key, messages in problems.items()
    )


def _either(messages: list[str]) -> str:
    """One key's messages (a union's members) as one: "expected A, or B", not "expected A or expected B"."""
    if len(messages) > 1 and messages[0].startswith("expected "):
        # A union member's range reads as one more thing expected: "or a number from 0 to 60".
        kinds = [m.replace("must be ", "a number ", 1) if m.startswith("must be ") else m for m in messages]
        if all(k.startswith(("expected ", "a number ")) for k in kinds):
            return "expected " + ", or ".join(k.removeprefix("expected ") for k in kinds)
    return " or ".join(messages)


def _from_env(key: str, origin: Mapping[str, str]) -> str:
    """`` (from SCANNERD_X)`` when ``key`` or a section above it came from the environment."""
    parts = key.split(".")
    for depth in range(len(parts), 0, -1):
        name = origin.get(".".join(parts[:depth]))
        if name:
            return f" (from {name})"
    return ""


# What each kind of value is called, for a technician who wrote the wrong kind.
_KINDS = {
    "int": "a whole number",
    "float": "a number",
    "bool": "true or false",
    "string": "text in quotes",
    "path": "a path in quotes",
    "dict": 'a table of keys, such as { key = "value" }',
    "model": "a section of keys",
}


def _message(error: ErrorDetails, key: str, field: FieldInfo | None, *, typed: bool) -> str:
    """The problem in a technician's words: no regular expressions, no parser jargon.

    ``typed``: the value came from the file, where a quoted number is a string.
    """
    kind, ctx = error["type"], error.get("ctx", {})
    if kind == "missing":
        return "required key is missing"
    if kind == "extra_forbidden":
        return "unknown key"
    if kind == "value_error":
        return str(ctx["error"])
    if kind == "literal_error":
        return f"expected {ctx['expected']}"
    if kind in ("greater_than", "greater_than_equal", "less_than", "less_than_equal", "finite_number"):
        limits = _range(field) or _range_of(ctx) or "a finite number"
        unit = " seconds" if key.endswith("_s") else ""
        return f"must be {limits}{unit}" + (", not inf or nan" if kind == "finite_number" else "")
    if kind in ("string_too_short", "too_short"):  # "too_*": a length checked after a text validator
        return (
            "must not be empty"
            if ctx["min_length"] == 1
            else f"must be at least {ctx['min_length']} characters"
        )
    if kind in ("string_too_long", "too_long"):
        return f"must be at most {ctx['max_length']} characters"
    if kind == "int_parsing_size":
        return TOO_MANY_DIGITS
    for prefix, name in _KINDS.items():
        if kind.startswith(f"{prefix}_"):
            unquote = typed and isinstance(error.get("input"), str) and prefix in ("int", "float", "bool")
            return f"expected {name}" + (", without quotes" if unquote else "")
    return str(error["msg"])


def _range(field: FieldInfo | None) -> str:
    """The documented range of a key, from its bounds (``ge=1, le=12``: "from 1 to 12")."""
    bounds: dict[str, Any] = {}
    rules = list(field.metadata) if field else []
    for member in get_args(field.annotation) if field else ():  # ``"none" | Annotated[int, Field(le=60)]``
        rules += [r for info in getattr(member, "__metadata__", ()) for r in getattr(info, "metadata", ())]
    for rule in rules:
        for cls, name in ((Ge, "ge"), (Gt, "gt"), (Le, "le"), (Lt, "lt")):
            if isinstance(rule, cls):
                bounds[name] = getattr(rule, name)
    return _range_of(bounds)


def _range_of(bounds: Mapping[str, Any]) -> str:
    low = f"at least {_number(bounds['ge'])}" if "ge" in bounds else None
    low = f"more than {_number(bounds['gt'])}" if "gt" in bounds else low
    high = f"at most {_number(bounds['le'])}" if "le" in bounds else None
    high = f"less than {_number(bounds['lt'])}" if "lt" in bounds else high
    if "ge" in bounds and "le" in bounds:
        return f"from {_number(bounds['ge'])} to {_number(bounds['le'])}"
    return ", ".join(part for part in (low, high) if part)


def _number(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else str(value)


def _locate(root: type[BaseModel], loc: tuple[int | str, ...]) -> tuple[str, FieldInfo | None]:
    """The config key a pydantic error location points at (without union-member tags), and its field.

    For ``burn = "x"`` pydantic reports ``rules.burn.literal['first-card-value','none']``
    and ``rules.burn.int``; the operator's key is ``rules.burn``.
    """
    node: Any = root
    parts: list[str] = []
    field: FieldInfo | None = None
    for part in loc:
        if node is dict:
            parts.append(str(part))
            field = None
            break
        fields = getattr(node, "model_fields", None)
        if fields is None:
            break  # below a plain field: what follows names union members, not keys
        parts.append(str(part))
        field = fields.get(part)
        if field is None:
            break  # an unknown key
        node = section_type(field.annotation)
    return ".".join(parts), field


def section_type(annotation: Any) -> Any:
    """The model (or ``dict``) a field holds, looking through ``X | None``; None for plain values."""
    candidates = get_args(annotation) if get_origin(annotation) in (Union, UnionType) else (annotation,)
    for candidate in candidates:
        if isinstance(candidate, type) and issubclass(candidate, BaseModel):
            return candidate
        if candidate is dict or get_origin(candidate) is dict:
            return dict
    return None
