"""What an id, a free text or a number may hold, for the config and for the game server's requests alike.

A table id becomes a topic level, a file name and a log field, so it is kept
to plain ASCII. Other ids (a shoe's, a round's) and free texts (a void's
reason) reach the dealer's screen, the journal and the game server's
records: they may be any printable text, but never a control character (a
NUL cuts a C string short, an escape sequence rewrites a terminal) nor an
invisible formatting one (a right-to-left override makes "S-12" show as
"21-S" on the screen).

A number too long for Python to convert is refused with a text saying so,
not with the interpreter's advice on raising its limit.
"""

from __future__ import annotations

import re
import unicodedata
from typing import Annotated

from pydantic import AfterValidator, StringConstraints

MAX_ID_LENGTH = 64
"""The longest id of any kind: a table's, a shoe's, a round's, a dealer's."""

TABLE_ID_PATTERN = rf"^[A-Za-z0-9][A-Za-z0-9_.-]{{0,{MAX_ID_LENGTH - 1}}}$"
"""The config, recording headers and every command's ``--table-id`` hold table ids to it."""

TABLE_ID_RULE = (
    f"use letters, digits, '_', '.' and '-', starting with a letter or digit (1-{MAX_ID_LENGTH} characters)"
)

_TABLE_ID = re.compile(TABLE_ID_PATTERN.removesuffix("$") + r"\Z")  # "$" would let a final newline by

# Unicode categories no id or text shown to people may hold: controls, invisible formatting (bidi
# overrides, zero-width joiners), surrogates, private use, unassigned code points, line separators.
_HIDDEN = frozenset({"Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp"})


def check_table_id(value: str) -> str:
    """``value`` if it is a table id, else ValueError with the rule in words."""
    if not _TABLE_ID.match(value):
        raise ValueError(TABLE_ID_RULE)
    return value


def check_plain_text(value: str) -> str:
    """``value`` if every character in it is one a person can see (or a plain space)."""
    if value.isascii() and value.isprintable():
        # Nearly every id: in ASCII the hidden characters are the controls, exactly what
        # ``isprintable`` refuses, and this asks no character's category (each id of each command).
        return value
    for char in value:
        if unicodedata.category(char) in _HIDDEN:
            name = unicodedata.name(char, "a control or formatting character")
            raise ValueError(f"must not contain U+{ord(char):04X} ({name.lower()})")
    return value


def check_ident(value: object) -> str:
    """``value`` if it is a shoe, round or dealer id, else ValueError saying why.

    The one rule for these ids: the request models hold the game server to it
    (``Ident``), and the validator every command that reaches it some other
    way (the dealer display, a replayed or simulated input).
    """
    if not isinstance(value, str):
        raise ValueError("must be a string")
    if not 1 <= len(value) <= MAX_ID_LENGTH:
        raise ValueError(f"must be 1 to {MAX_ID_LENGTH} characters")
    if not value.strip():
        raise ValueError("must not be blank")
    return check_plain_text(value)


TableId = Annotated[str, AfterValidator(check_table_id)]

PlainText = Annotated[str, AfterValidator(check_plain_text)]
"""Free text that may be shown to people."""

Ident = Annotated[
    str,
    StringConstraints(min_length=1, max_length=MAX_ID_LENGTH),  # for the schema, and said its own way
    AfterValidator(check_ident),
]
"""A shoe, round or dealer id from the game server: 1-64 visible characters (``check_ident``)."""
