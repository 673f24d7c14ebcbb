"""What a card is worth at baccarat, and how the dealer reads it.

The codes themselves (ranks, suits, every card) are the drivers' vocabulary,
``drivers.cards``; they are named here too, so the rest of scannerd has one
place to import cards from.
"""

from __future__ import annotations

from collections.abc import Sequence

from drivers.cards import ALL_CARDS, RANKS, SUITS

__all__ = [
    "ALL_CARDS",
    "BURN_COUNT",
    "CARD_POINTS",
    "POINTS",
    "RANKS",
    "SUITS",
    "SUIT_SYMBOLS",
    "card_name",
    "hand_total",
]

# Baccarat point value per rank: A=1, 2-9 face, tens and faces count 0.
POINTS: dict[str, int] = {r: (i + 1 if i < 9 else 0) for i, r in enumerate(RANKS)}
# Burn count when the first card of a shoe is turned: as points, but 10/J/Q/K burn ten.
BURN_COUNT: dict[str, int] = {r: (i + 1 if i < 9 else 10) for i, r in enumerate(RANKS)}

CARD_POINTS: dict[str, int] = {c: POINTS[c[0]] for c in ALL_CARDS}

SUIT_SYMBOLS = {"S": "\u2660", "H": "\u2665", "D": "\u2666", "C": "\u2663"}


def card_name(code: str) -> str:
    """A card as the dealer reads it (``TS`` -> ``10\u2660``): codes are for machines, not the table."""
    rank = "10" if code[0] == "T" else code[0]
    return rank + SUIT_SYMBOLS.get(code[1:], code[1:])


def hand_total(cards: Sequence[str]) -> int:
    """Baccarat point count: the sum of the card values modulo ten."""
    return sum(CARD_POINTS[c] for c in cards) % 10
