"""The simulator's own knowledge of punto banco, written from docs, not from the daemon.

This deliberately does not import ``scannerd.core.games.punto_banco``: end-to-end tests
compare the daemon's validator against this dealer, and a shared bug would
let both agree on a wrong deal. The tables below are transcribed from
``docs/rules.md``; the banker's is written as "stands on", the opposite of
how the validator's is written, so a slip would not be copied.
"""

from __future__ import annotations

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


def fixed_burn(policy: BurnPolicy) -> int | None:
    """Cards burned under a fixed policy, or None when the first card decides."""
    if policy == "first-card-value":
        return None
    return 0 if policy == "none" else int(policy)
