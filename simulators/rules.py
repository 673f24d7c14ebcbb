"""The simulator's own knowledge of the games, written from docs, not from the daemon.

This deliberately does not import ``scannerd.core.games``: end-to-end tests
compare the daemon's validator against this dealer, and a shared bug would
let both agree on a wrong deal. The tables below are transcribed from
``docs/rules.md``; the banker's is written as "stands on", the opposite of
how the validator's is written, so a slip would not be copied.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Final

from scannerd.core.house import BurnPolicy

# A=1, 2-9 at face value, tens and pictures nothing.
_VALUE: Final[dict[str, int]] = {"A": 1, "T": 0, "J": 0, "Q": 0, "K": 0} | {str(n): n for n in range(2, 10)}

# Turning the first card of a shoe burns this many more: as its value, but tens and pictures burn ten.
FIRST_CARD_BURNS: Final[dict[str, int]] = {rank: value or 10 for rank, value in _VALUE.items()}

# Banker total (after the Player drew) -> Player third-card values on which the Banker stands.
# 0-2 always draw and 7 always stands; 8 and 9 never get here (naturals).
_BANKER_STANDS_ON: Final[dict[int, frozenset[int]]] = {
    0: frozenset(),
    1: frozenset(),
    2: frozenset(),
    3: frozenset({8}),
    4: frozenset({0, 1, 8, 9}),
    5: frozenset({0, 1, 2, 3, 8, 9}),
    6: frozenset({0, 1, 2, 3, 4, 5, 8, 9}),
    7: frozenset(range(10)),
}

POSITIONS: Final = ("player1", "banker1", "player2", "banker2", "player3", "banker3")


def value(card: str) -> int:
    """Point value of a card code such as ``"TD"``."""
    return _VALUE[card[0]]


def points(cards: list[str]) -> int:
    """A hand's point count."""
    return sum(value(c) for c in cards) % 10


def next_card_for(player: list[str], banker: list[str]) -> str | None:
    """Whose card comes next, ``"player"`` or ``"banker"``, or None when the round is over."""
    if len(player) + len(banker) < 4:
        return "player" if len(player) == len(banker) else "banker"
    player_two, banker_two = points(player[:2]), points(banker[:2])
    if player_two >= 8 or banker_two >= 8:
        return None  # a natural: both stand
    if len(player) == 2 and len(banker) == 2:
        if player_two <= 5:
            return "player"
        return "banker" if banker_two <= 5 else None
    if len(player) == 3 and len(banker) == 2:
        return None if value(player[2]) in _BANKER_STANDS_ON[banker_two] else "banker"
    return None


def position_of(player: list[str], banker: list[str]) -> str | None:
    """The layout position the next card goes to, or None when the round is over."""
    hand = next_card_for(player, banker)
    if hand is None:
        return None
    return f"{hand}{(len(player) if hand == 'player' else len(banker)) + 1}"


def winner(player: list[str], banker: list[str]) -> str:
    """``player``, ``banker`` or ``tie`` by higher point count."""
    p, b = points(player), points(banker)
    return "tie" if p == b else ("player" if p > b else "banker")


# Dragon Tiger: ace low, king high, by rank alone (docs/rules.md, "Dragon Tiger").
_DT_RANK: Final[dict[str, int]] = {rank: n for n, rank in enumerate("A23456789TJQK", start=1)}


def dragon_tiger_position_of(dragon: list[str], tiger: list[str]) -> str | None:
    """Dragon's card first, then Tiger's; two cards make the round."""
    if not dragon:
        return "dragon"
    return "tiger" if not tiger else None


def dragon_tiger_winner(dragon: list[str], tiger: list[str]) -> str:
    d, t = _DT_RANK[dragon[0][0]], _DT_RANK[tiger[0][0]]
    return "tie" if d == t else ("dragon" if d > t else "tiger")


@dataclass(frozen=True)
class Deal:
    """How a game is dealt and decided, as this dealer knows it: the sides' names, where each card goes."""

    first_side: str
    position_of: Callable[[list[str], list[str]], str | None]
    winner: Callable[[list[str], list[str]], str]
    fewest_cards: int
    """The fewest cards a round of the game takes: a mistake is made before the last of them."""


DEALS: Final[dict[str, Deal]] = {
    "punto_banco": Deal("player", position_of, winner, 4),
    "dragon_tiger": Deal("dragon", dragon_tiger_position_of, dragon_tiger_winner, 2),
}


def deal_of(game: str | None) -> Deal:
    """The game a house deals; a table from before tables chose their game deals punto banco."""
    return DEALS[game or "punto_banco"]


def fixed_burn(policy: BurnPolicy) -> int | None:
    """Cards burned under a fixed policy, or None when the first card decides."""
    if policy == "first-card-value":
        return None
    return 0 if policy == "none" else int(policy)
