"""The drawing rules of punto banco, as pure functions of the cards on the layout.

Kept apart from the validator's bookkeeping so the rule itself can be
checked exhaustively (see ``tests/core/test_baccarat.py``).
"""

from __future__ import annotations

import functools
from fractions import Fraction

from scannerd.core.cards import ALL_CARDS, CARD_POINTS

# Banker with a given total draws when the Player's third card has one of these values.
_BANKER_DRAWS_ON: dict[int, frozenset[int]] = {
    0: frozenset(range(10)),
    1: frozenset(range(10)),
    2: frozenset(range(10)),
    3: frozenset({0, 1, 2, 3, 4, 5, 6, 7, 9}),
    4: frozenset({2, 3, 4, 5, 6, 7}),
    5: frozenset({4, 5, 6, 7}),
    6: frozenset({6, 7}),
    7: frozenset(),
}


def player_draws(player_total: int, banker_total: int) -> bool:
    """Whether the Player takes a third card after the first four (no natural on either side)."""
    if player_total >= 8 or banker_total >= 8:
        return False
    return player_total <= 5


def banker_draws(banker_total: int, player_third: int | None, player_total: int = 0) -> bool:
    """Whether the Banker takes a third card.

    ``player_third`` is the point value of the Player's third card, or None when
    the Player stood; ``player_total`` (two-card) only matters for naturals.
    """
    if banker_total >= 8 or player_total >= 8:
        return False
    if player_third is None:
        return banker_total <= 5
    return player_third in _BANKER_DRAWS_ON.get(banker_total, frozenset())


_FIRST_FOUR = ("player1", "banker1", "player2", "banker2")


def _after_four(p: int, b: int) -> str | None:
    if player_draws(p, b):
        return "player3"
    return "banker3" if banker_draws(b, None, p) else None


# The rule functions above, tabulated once: the validator asks for the next position twice per card.
_AFTER_FOUR = tuple(tuple(_after_four(p, b) for b in range(10)) for p in range(10))
_AFTER_PLAYER_THIRD = tuple(
    tuple(tuple("banker3" if banker_draws(b, t, p) else None for t in range(10)) for b in range(10))
    for p in range(10)
)


def next_position(player: list[str], banker: list[str]) -> str | None:
    """The position the next card from the shoe goes to, or None when the round is complete."""
    n_player, n_banker = len(player), len(banker)
    if n_player + n_banker < 4:
        return _FIRST_FOUR[n_player + n_banker]
    if n_banker != 2 or n_player > 3:
        return None
    p = (CARD_POINTS[player[0]] + CARD_POINTS[player[1]]) % 10
    b = (CARD_POINTS[banker[0]] + CARD_POINTS[banker[1]]) % 10
    if n_player == 2:
        return _AFTER_FOUR[p][b]
    return _AFTER_PLAYER_THIRD[p][b][CARD_POINTS[player[2]]]


# A card of each point value, for walking the deal by value rather than by card.
_CARD_OF_VALUE = {CARD_POINTS[c]: c for c in reversed(ALL_CARDS)}


@functools.cache
def outcome_odds(decks: int = 8) -> dict[str, Fraction]:
    """The exact chance of each result from a full shoe of ``decks`` decks, by these drawing rules.

    An audit judges a table's results against these (scannerd/audit); deriving them from the
    rule the validator applies, rather than copying published figures, keeps both in step.
    Every ordered deal is walked by point value, weighted by how many cards of that value are
    left; a round that ends after fewer than six cards stands for every way the rest could fall.
    """
    left = [4 * 4 * decks] + [4 * decks] * 9  # value 0: tens and pictures
    total = 52 * decks
    results = ("banker", "player", "tie")
    # After four cards, what follows depends on each hand's points and the cards left, neither of
    # which the order within a hand changes: deals that differ only in that order are walked once.
    walked: dict[tuple[tuple[str, ...], tuple[str, ...]], list[int]] = {}

    def deal(player: list[str], banker: list[str]) -> list[int]:
        """Ways of each result from here on, counting every card that could come next."""
        position = next_position(player, banker)
        if position is None:
            rest = 1
            for k in range(len(player) + len(banker), 6):
                rest *= total - k
            p = sum(CARD_POINTS[c] for c in player) % 10
            b = sum(CARD_POINTS[c] for c in banker) % 10
            out = [0, 0, 0]
            out[results.index("player" if p > b else "banker" if b > p else "tie")] = rest
            return out
        key = (tuple(sorted(player)), tuple(sorted(banker))) if len(player) + len(banker) == 4 else None
        if key in walked:
            return walked[key]
        out = [0, 0, 0]
        for value, count in enumerate(left):
            if count:
                left[value] -= 1
                card = _CARD_OF_VALUE[value]
                if position.startswith("player"):
                    below = deal([*player, card], banker)
                else:
                    below = deal(player, [*banker, card])
                left[value] += 1
                for i in range(3):
                    out[i] += count * below[i]
        if key is not None:
            walked[key] = out
        return out

    ways = dict(zip(results, deal([], []), strict=True))
    deals = sum(ways.values())
    return {result: Fraction(n, deals) for result, n in ways.items()}
