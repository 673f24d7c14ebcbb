"""A game's exact chances for a shoe of so many decks, as the audit weighs each hand with them.

The games compute their chances exactly, as fractions (scannerd/core/games):
each hand adds its chance of every result and of every value of every fact
to its groups' expectations, so it is turned into floats once per game and
deck count here. A fact's values are named as the report writes them: the
JSON spelling of the value (``true``, ``3``, ``null``, ``small``), since a
report's keys are strings and ``true`` and ``1`` must stay apart.
"""

from __future__ import annotations

import functools
import json
from dataclasses import dataclass
from typing import Any

from scannerd.core.games import played


@dataclass(frozen=True, slots=True, eq=False)
class Chances:
    """The results' chances in the game's order, and each fact's chance of each value.

    One object per game and deck count (``chances`` is cached), so a group counts its hands per
    object, by identity, and weighs them once when the report is written.
    """

    game: str
    decks: int
    results: dict[str, float]
    facts: dict[str, dict[str, float]]


def label(value: Any) -> str:
    """A fact's value as a report's key: a string as it is, anything else in its JSON spelling."""
    return value if isinstance(value, str) else json.dumps(value)


@functools.cache
def chances(game: str, decks: int) -> Chances:
    """``game``'s chances from a full shoe of ``decks`` decks (computed once per audit)."""
    rules = played(game)
    results = {r: float(p) for r, p in rules.outcome_odds(decks).items()}
    facts = {
        fact: {label(v): float(p) for v, p in by_value.items()}
        for fact, by_value in rules.fact_odds(decks).items()
    }
    return Chances(game, decks, results, facts)
