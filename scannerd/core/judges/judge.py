"""What every judge shares with the validator: how it declares the commands it judges, and refuses one.

A judge names its commands (``Judge.commands``) and the validator dispatches
each to the one judge that named it, so a command enters one file.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

from scannerd.contract.events import EventData
from scannerd.contract.idents import check_ident
from scannerd.core.inputs import Actor

Handler = Callable[[float, dict[str, Any], Actor | None], None]
"""A judged command: its time, its arguments and who took it. It refuses by raising ``CommandRejected``."""


class Judge(Protocol):
    """A judge that takes commands, as the validator dispatches them."""

    def commands(self) -> dict[str, Handler]:
        """The commands it judges, by the catalogue's names (``command_catalogue.JUDGED``)."""
        ...


class CommandRejected(Exception):
    """A command that makes no sense in the current state; the state is left untouched.

    Save what a refusal must remember: a wrong PIN counts, and the lockout it
    may bring is an alert (``events``, published with the refusal).
    """

    def __init__(self, text: str) -> None:
        super().__init__(text)
        self.events: list[EventData] = []


def optional_id(args: dict[str, Any], key: str) -> str | None:
    """A command's id argument, held to the contract's rules for ids; None when it gives none."""
    value = args.get(key)
    if value is None:
        return None
    try:
        return check_ident(value)
    except ValueError as exc:
        raise CommandRejected(f"{key} {exc}") from None
