"""Dragon Tiger: one card to Dragon, one to Tiger, the higher rank wins; its facts and their exact chances.

Rank alone decides, ace low (1) to king high (13); equal ranks tie, and a
tie of the same suit too is the suited tie. With one card a side, every
chance has a closed form over the shoe's composition (docs/rules.md).
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from fractions import Fraction
from typing import Any

from scannerd.core.cards import RANKS

RANK_VALUE: dict[str, int] = {rank: i + 1 for i, rank in enumerate(RANKS)}
"""A card's rank as Dragon Tiger counts it: ace 1, two to ten as marked, jack 11, queen 12, king 13."""

_POSITIONS = ("dragon", "tiger")
_RED = frozenset("HD")


def next_position(dragon: Sequence[str], tiger: Sequence[str]) -> str | None:
    """Dragon's card, then Tiger's, then nothing: the round is two cards."""
    dealt = len(dragon) + len(tiger)
    return _POSITIONS[dealt] if dealt < 2 else None


def total(cards: Sequence[str]) -> int:
    """A side's rank (0 before its card is drawn)."""
    return RANK_VALUE[cards[0][0]] if cards else 0


def winner(dragon: int, tiger: int) -> str:
    return "dragon" if dragon > tiger else "tiger" if tiger > dragon else "tie"


def _size(rank: int) -> str | None:
    """Small is ace to six, big eight to king; a seven is neither."""
    return "small" if rank < 7 else "big" if rank > 7 else None


def card_facts(card: str) -> dict[str, Any]:
    """One side's facts, read from its card alone."""
    rank = RANK_VALUE[card[0]]
    return {
        "size": _size(rank),
        "parity": "odd" if rank % 2 else "even",
        "colour": "red" if card[1] in _RED else "black",
    }


def facts(dragon: Sequence[str], tiger: Sequence[str]) -> dict[str, Any]:
    """Every fact of a complete round, in the contract's order (``DragonTigerFacts``, docs/rules.md)."""
    d, t = dragon[0], tiger[0]
    out: dict[str, Any] = {"suited_tie": d == t}
    for side, card in (("dragon", d), ("tiger", t)):
        out.update({f"{side}_{name}": value for name, value in card_facts(card).items()})
    return out


@functools.cache
def outcome_odds(decks: int = 8) -> dict[str, Fraction]:
    """Tiger's card matches Dragon's rank with chance (4d-1)/(52d-1); either side wins half the rest."""
    tie = Fraction(4 * decks - 1, 52 * decks - 1)
    return {"dragon": (1 - tie) / 2, "tiger": (1 - tie) / 2, "tie": tie}


@functools.cache
def fact_odds(decks: int = 8) -> dict[str, dict[Any, Fraction]]:
    """Each side's card is any of the 52 faces alike; a suited tie is Tiger's card the same as Dragon's."""
    suited = Fraction(decks - 1, 52 * decks - 1)
    odds: dict[str, dict[Any, Fraction]] = {"suited_tie": {True: suited, False: 1 - suited}}
    one = Fraction(1, 52)
    for side in ("dragon", "tiger"):
        for rank in RANKS:
            for suit in "SHDC":
                for name, value in card_facts(rank + suit).items():
                    by_value = odds.setdefault(f"{side}_{name}", {})
                    by_value[value] = by_value.get(value, Fraction(0)) + one
    return odds
