"""A game's exact chances for a shoe of so many decks, as the audit weighs each hand with them.

The games compute their chances exactly, as fractions (scannerd/core/games):
each hand adds its chance of every result to its groups' expectations, so
they are turned into floats once per game and deck count here.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

from scannerd.core.games import played


@dataclass(frozen=True, slots=True, eq=False)
class Chances:
    """The results' chances in the game's order.

    One object per game and deck count (``chances`` is cached), so a group counts its hands per
    object, by identity, and weighs them once when the report is written.
    """

    game: str
    decks: int
    results: dict[str, float]


@functools.cache
def chances(game: str, decks: int) -> Chances:
    """``game``'s chances from a full shoe of ``decks`` decks (computed once per audit)."""
    return Chances(game, decks, {r: float(p) for r, p in played(game).outcome_odds(decks).items()})
