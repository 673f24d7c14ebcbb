"""Card codes and baccarat point values.

A card is a two-character code: rank from ``A23456789TJQK`` then suit from
``SHDC``. Drivers normalise whatever their device sends (``10``, suit-first
orders, numeric tables) into this one form, so everything past the driver
compares plain strings.
"""

from __future__ import annotations

RANKS = "A23456789TJQK"
SUITS = "SHDC"

ALL_CARDS: tuple[str, ...] = tuple(r + s for s in SUITS for r in RANKS)
CARD_SET = frozenset(ALL_CARDS)

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


def is_card(code: object) -> bool:
    """True for a well-formed card code such as ``"AS"`` or ``"TD"``."""
    return code in CARD_SET


def normalise(rank: str, suit: str) -> str | None:
    """Build a card code from a device's rank and suit text, or None if either is unknown."""
    rank = rank.strip().upper()
    # ``10`` is the only spelling of a rank that is not our one letter. ``1`` is not an ace: it is
    # what a ``10`` that lost its ``0`` on the wire looks like, so it stays unknown (unreadable).
    if rank == "10":
        rank = "T"
    suit = suit.strip().upper()
    code = rank + suit
    return code if code in CARD_SET else None


def hand_total(cards: list[str]) -> int:
    """Baccarat point count: the sum of the card values modulo ten."""
    return sum(CARD_POINTS[c] for c in cards) % 10
