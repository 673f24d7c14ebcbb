"""The card codes every driver speaks: what a codec turns any device's spelling into.

A card is a two-character code: rank from ``A23456789TJQK`` then suit from
``SHDC``. Drivers normalise whatever their device sends (``10``, suit-first
orders, numeric tables) into this one form, so everything past the driver
compares plain strings. It lives with the drivers so that they need nothing
from the daemon; what the game makes of a card (points, burn counts) is
``scannerd.core.cards``.
"""

from __future__ import annotations

RANKS = "A23456789TJQK"
SUITS = "SHDC"

ALL_CARDS: tuple[str, ...] = tuple(r + s for s in SUITS for r in RANKS)
CARD_SET = frozenset(ALL_CARDS)


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
