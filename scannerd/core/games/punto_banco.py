"""Punto banco (baccarat): its drawing rule, its result and the facts of a round, as pure functions.

Kept apart from the validator's bookkeeping so the rule itself can be
checked exhaustively (see ``tests/core/test_punto_banco.py``), and the exact
chance of every fact derived from the same rule the validator applies.
The facts are defined in docs/rules.md; the commission variants (standard,
No Commission, EZ) deal alike and differ only in which facts their bets read.
"""

from __future__ import annotations

import functools
from collections import Counter
from collections.abc import Sequence
from fractions import Fraction
from typing import Any

from scannerd.core.cards import ALL_CARDS, CARD_POINTS, hand_total

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


def next_position(player: Sequence[str], banker: Sequence[str]) -> str | None:
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


Ending = tuple[int, int, int, int]
"""How a round ended, as far as its drawing goes: Player's points, Banker's, Player's cards, Banker's."""


def winner(player_total: int, banker_total: int) -> str:
    return "player" if player_total > banker_total else "banker" if banker_total > player_total else "tie"


def _bonus(own: int, other: int, natural: bool) -> str:
    """One side's Dragon Bonus fact: a natural win or tie, a win by points (the margin says how), or none."""
    if natural:
        return "natural_win" if own > other else "natural_tie" if own == other else "none"
    return "win" if own > other else "none"


def ending_facts(ending: Ending) -> dict[str, Any]:
    """The facts that follow from how the round ended, whatever the cards' ranks and suits."""
    p, b, n_player, n_banker = ending
    natural = n_player == n_banker == 2 and max(p, b) >= 8
    return {
        "player_cards": n_player,
        "banker_cards": n_banker,
        "margin": abs(p - b),
        "size": "small" if n_player + n_banker == 4 else "big",
        "banker_six": n_banker if b == 6 and b > p else 0,
        "dragon_7": n_banker == 3 and b == 7 and b > p,
        "panda_8": n_player == 3 and p == 8 and p > b,
        "player_bonus": _bonus(p, b, natural),
        "banker_bonus": _bonus(b, p, natural),
    }


def facts(player: Sequence[str], banker: Sequence[str]) -> dict[str, Any]:
    """Every fact of a complete round, in the contract's order (``PuntoBancoFacts``, docs/rules.md)."""
    out = ending_facts((hand_total(player), hand_total(banker), len(player), len(banker)))
    out["either_pair"] = player[0][0] == player[1][0] or banker[0][0] == banker[1][0]
    out["player_perfect_pair"] = player[0] == player[1]
    out["banker_perfect_pair"] = banker[0] == banker[1]
    return out


# A card of each point value, for walking the deal by value rather than by card.
_CARD_OF_VALUE = {CARD_POINTS[c]: c for c in reversed(ALL_CARDS)}


@functools.cache
def ending_odds(decks: int = 8) -> dict[Ending, Fraction]:
    """The exact chance of each way a round can end, from a full shoe of ``decks`` decks.

    An audit judges a table's results and facts against these (scannerd/audit); deriving them
    from the rule the validator applies, rather than copying published figures, keeps both in
    step. Every ordered deal is walked by point value, weighted by how many cards of that value
    are left; a round that ends after fewer than six cards stands for every way the rest could fall.
    """
    left = [4 * 4 * decks] + [4 * decks] * 9  # value 0: tens and pictures
    total = 52 * decks
    # After four cards, what follows depends on each hand's points and the cards left, neither of
    # which the order within a hand changes: deals that differ only in that order are walked once.
    walked: dict[tuple[tuple[str, ...], tuple[str, ...]], Counter[Ending]] = {}

    def deal(player: list[str], banker: list[str]) -> Counter[Ending]:
        """Ways of each ending from here on, counting every card that could come next."""
        position = next_position(player, banker)
        if position is None:
            rest = 1
            for k in range(len(player) + len(banker), 6):
                rest *= total - k
            return Counter({(hand_total(player), hand_total(banker), len(player), len(banker)): rest})
        key = (tuple(sorted(player)), tuple(sorted(banker))) if len(player) + len(banker) == 4 else None
        if key in walked:
            return walked[key]
        out: Counter[Ending] = Counter()
        for value, count in enumerate(left):
            if count:
                left[value] -= 1
                card = _CARD_OF_VALUE[value]
                if position.startswith("player"):
                    below = deal([*player, card], banker)
                else:
                    below = deal(player, [*banker, card])
                left[value] += 1
                for ending, ways in below.items():
                    out[ending] += count * ways
        if key is not None:
            walked[key] = out
        return out

    ways = deal([], [])
    deals = sum(ways.values())
    return {ending: Fraction(n, deals) for ending, n in ways.items()}


@functools.cache
def outcome_odds(decks: int = 8) -> dict[str, Fraction]:
    """The exact chance of a Banker win, a Player win and a tie."""
    odds = dict.fromkeys(("banker", "player", "tie"), Fraction(0))
    for (p, b, _, _), chance in ending_odds(decks).items():
        odds[winner(p, b)] += chance
    return odds


def _pair_odds(decks: int) -> dict[str, dict[Any, Fraction]]:
    """The pair facts read the first four cards only, whose chances have a closed form.

    Of the 52d cards, a hand's two first cards share a rank with chance (4d-1)/(52d-1) and are the
    same card (rank and suit) with (d-1)/(52d-1). Either pair is one minus neither, counted over
    the first four cards drawn in order: Player's two against Banker's two.
    """
    n, of_rank = 52 * decks, 4 * decks

    def falling(x: int, k: int) -> int:
        out = 1
        for i in range(k):
            out *= x - i
        return out

    pair = Fraction(of_rank - 1, n - 1)
    perfect = Fraction(decks - 1, n - 1)
    both_same_rank = 13 * falling(of_rank, 4)
    both_other_ranks = 13 * 12 * falling(of_rank, 2) ** 2
    both = Fraction(both_same_rank + both_other_ranks, falling(n, 4))
    either = 2 * pair - both
    return {
        "either_pair": {True: either, False: 1 - either},
        "player_perfect_pair": {True: perfect, False: 1 - perfect},
        "banker_perfect_pair": {True: perfect, False: 1 - perfect},
    }


@functools.cache
def fact_odds(decks: int = 8) -> dict[str, dict[Any, Fraction]]:
    """The exact chance of each value of each fact, from a full shoe of ``decks`` decks."""
    odds: dict[str, dict[Any, Fraction]] = {}
    for ending, chance in ending_odds(decks).items():
        for name, value in ending_facts(ending).items():
            by_value = odds.setdefault(name, {})
            by_value[value] = by_value.get(value, Fraction(0)) + chance
    return odds | _pair_odds(decks)
