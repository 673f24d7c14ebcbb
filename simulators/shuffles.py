"""How a dealer turns the last shoe's discards into the next shoe: properly, lazily, or not at all.

The discards come off the table hand by hand, each hand on top of the last,
its cards picked up Player's side first then Banker's (docs/rules.md,
Picking up); the burn and the cards set aside lie under them and the cards
left behind the cut card go on top. Every kind below starts from that pile
(top card first) and gives the order the next shoe deals in, first card
first. ``full`` is the procedure the rules prescribe: the decks washed (spread
face down and mixed on the table, which leaves no order: a uniform shuffle),
then riffled and cut. The others are the lazy or false shuffles the shuffle
check (scannerd/core/shuffle_check.py, docs/shuffle.md) is there to catch.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from typing import Final

from scannerd.core.games.punto_banco import next_position
from scannerd.core.shoe_order import new_deck_order
from simulators.rules import FIRST_CARD_BURNS


def discard_pile(rack: Sequence[Sequence[str]], undealt: Sequence[str]) -> list[str]:
    """The discards top first: the cards left in the shoe on what went to the rack, last on top.

    ``rack`` is what went into the discard rack in turn: each card set aside (a burn, a card out
    of turn) as it was drawn, each hand as it was picked up, Player's cards then Banker's.
    """
    return [*undealt, *(card for group in reversed(rack) for card in group)]


def cut(rng: random.Random, cards: list[str]) -> list[str]:
    """Lift a packet from somewhere near the middle and put it under the rest."""
    n = len(cards)
    at = rng.randint(n // 4, 3 * n // 4)
    return cards[at:] + cards[:at]


def riffle(rng: random.Random, cards: list[str]) -> list[str]:
    """One riffle as hands make it (the Gilbert-Shannon-Reeds model): split, then drop in proportion."""
    at = sum(rng.random() < 0.5 for _ in cards)
    left, right = cards[:at], cards[at:]
    out: list[str] = []
    i = j = 0
    while i < len(left) or j < len(right):
        if rng.random() * (len(left) - i + len(right) - j) < len(left) - i:
            out.append(left[i])
            i += 1
        else:
            out.append(right[j])
            j += 1
    return out


def strip(rng: random.Random, cards: list[str]) -> list[str]:
    """Strip packets of 10 to 40 cards off the top onto a new pile: the packets' order reversed."""
    packets: list[list[str]] = []
    i = 0
    while i < len(cards):
        size = rng.randint(10, 40)
        packets.append(cards[i : i + size])
        i += size
    return [c for packet in reversed(packets) for c in packet]


def wash(rng: random.Random, cards: list[str]) -> list[str]:
    """The cards spread and mixed face down on the table: nothing of their order survives."""
    out = list(cards)
    rng.shuffle(out)
    return out


def full(rng: random.Random, cards: list[str]) -> list[str]:
    """The prescribed procedure: wash, three riffles, a cut."""
    out = wash(rng, cards)
    for _ in range(3):
        out = riffle(rng, out)
    return cut(rng, out)


def _riffle_cut(rng: random.Random, cards: list[str]) -> list[str]:
    return cut(rng, riffle(rng, cards))


def _strips(rng: random.Random, cards: list[str]) -> list[str]:
    return cut(rng, strip(rng, strip(rng, cards)))


def _none(rng: random.Random, cards: list[str]) -> list[str]:
    return list(cards)


Shuffle = Callable[[random.Random, list[str]], list[str]]

SHUFFLES: Final[dict[str, Shuffle]] = {
    "full": full,
    "pile": _none,  # the discards loaded as they were picked up
    "cut": cut,
    "riffle": riffle,
    "riffle-cut": _riffle_cut,
    "strip": _strips,
}
"""Every kind a dealer can be told to use but ``preset``, which ignores the pile."""

KINDS: Final = ("random", "preset", *SHUFFLES)
"""``random``: a fresh uniform order (the simulator's default); ``preset``: the last shoe's order again."""


FIRST_SHOES: Final = ("random", "new", "stacked", *(kind for kind in SHUFFLES if kind != "pile"))
"""How the first shoe is made from new decks: ``random`` a fresh uniform order (the default);
``new`` the decks as they come out of their boxes; ``stacked`` half the shoe a run of cards laid in
four times over (a cheat's stack), the rest shuffled; the others that shuffle of the new decks."""

STACK_RUN: Final = 52
"""Cards in the run a ``stacked`` shoe repeats: one deck's worth, one of each card."""


def stacked(rng: random.Random, decks: int) -> list[str]:
    """Half the shoe a run of ``STACK_RUN`` cards laid again and again, from its first card; the
    rest shuffled."""
    run = list(new_deck_order())
    rng.shuffle(run)
    copies = decks // 2
    rest = [card for card in new_deck_order() for _ in range(decks - copies)]
    rng.shuffle(rest)
    return run * copies + rest


def first_shoe(rng: random.Random, kind: str, decks: int) -> list[str] | None:
    """The order a first shoe of new decks deals in; None for ``random`` (the shoe's own shuffle)."""
    if kind == "random":
        return None
    if kind == "stacked":
        return stacked(rng, decks)
    new = new_deck_order() * decks
    return new if kind == "new" else SHUFFLES[kind](rng, new)


def deal(order: Sequence[str], cut_remaining: int = 14) -> tuple[list[str], list[list[str]], list[str]]:
    """A shoe dealt by the rules without mistakes: (cards drawn, what went to the rack, cards left).

    The first card turned burns as many more as its value, one by one into the rack; hands are
    dealt until the cut card, ``cut_remaining`` cards from the back, and the hand under way is
    the last. Each hand goes to the rack as picked up, Player's cards then Banker's.
    """
    cards = list(order)
    burn = 1 + FIRST_CARD_BURNS[cards[0][0]]
    rack = [[card] for card in cards[:burn]]
    i = burn
    while len(cards) - i > cut_remaining and len(cards) - i >= 6:
        player: list[str] = []
        banker: list[str] = []
        while (position := next_position(player, banker)) is not None:
            (player if position[0] == "p" else banker).append(cards[i])
            i += 1
        rack.append(player + banker)
    return cards[:i], rack, cards[i:]


def next_shoe(rng: random.Random, kind: str, loaded: Sequence[str], pile: list[str]) -> list[str]:
    """The order the next shoe deals in after a shoe ``loaded`` in that order left ``pile``."""
    if sorted(pile) != sorted(loaded):
        raise ValueError("the discards are not the cards the shoe was loaded with")
    if kind == "preset":
        return list(loaded)
    if kind == "random":
        return wash(rng, pile)
    return SHUFFLES[kind](rng, pile)
