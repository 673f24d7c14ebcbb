"""A dealing shoe as the dealer loads it: shuffled decks, the cut card, the burn.

The shuffle is driven by a caller-supplied ``random.Random`` so a seed
reproduces a whole session card for card. The cut card is a physical card
in the stack: ``draw`` hands it out when the dealer reaches it, exactly as
a shoe's sensor would see it pass.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Final

from scannerd.core.cards import ALL_CARDS
from scannerd.core.house import BurnPolicy
from simulators.rules import FIRST_CARD_BURNS, fixed_burn

# What ``draw`` returns when the plastic cut card comes out instead of a card.
CUT_CARD: Final = "CUT"

# Where the house puts the cut card: N cards from the back, a range of N to pick
# from at random (the player's cut), or None for no cut card (deal to the end).
CutPlacement = int | tuple[int, int] | None


class ShoeEmpty(Exception):
    """The dealer asked for a card from an empty shoe."""


class Shoe:
    """``decks`` x 52 cards in shuffled order with the cut card in place.

    ``order`` loads the cards in that order instead (first dealt first): the next shoe as a
    dealer's shuffle of the last one's discards left it (simulators/shuffles.py).
    """

    def __init__(
        self,
        rng: random.Random,
        decks: int = 8,
        cut: CutPlacement = 14,
        burn: BurnPolicy = "first-card-value",
        order: Sequence[str] | None = None,
    ) -> None:
        self.decks = decks
        self.burn_policy = burn
        if order is None:
            cards = list(ALL_CARDS) * decks
            rng.shuffle(cards)
        else:
            cards = list(order)
        self._cards = cards
        self._next = 0
        if cut is None:
            self.cut_remaining: int | None = None
        else:
            low, high = (cut, cut) if isinstance(cut, int) else cut
            if not 0 <= low <= high <= len(cards):
                raise ValueError(f"cut card position {cut!r} does not fit a {len(cards)}-card shoe")
            self.cut_remaining = rng.randint(low, high)
        self.cut_card_out = False

    @property
    def size(self) -> int:
        """Cards the shoe was loaded with (the cut card not counted)."""
        return len(self._cards)

    @property
    def loaded(self) -> list[str]:
        """Every card in the order it was loaded, first dealt first."""
        return list(self._cards)

    @property
    def drawn(self) -> list[str]:
        """The cards dealt so far, in order."""
        return self._cards[: self._next]

    @property
    def undealt(self) -> list[str]:
        """The cards still in the shoe, next first."""
        return self._cards[self._next :]

    @property
    def remaining(self) -> int:
        """Cards still in the shoe (the cut card not counted)."""
        return len(self._cards) - self._next

    @property
    def before_cut(self) -> int | None:
        """Cards left in front of the cut card, or None once it is out or if there is none."""
        if self.cut_remaining is None or self.cut_card_out:
            return None
        return self.remaining - self.cut_remaining

    def draw(self) -> str:
        """The next card code, or ``CUT_CARD`` when the cut card is the next thing out."""
        if self.before_cut == 0:
            self.cut_card_out = True
            return CUT_CARD
        if self._next >= len(self._cards):
            raise ShoeEmpty("the shoe is empty")
        card = self._cards[self._next]
        self._next += 1
        return card

    def burn(self) -> list[str]:
        """Draw the start-of-shoe burn by the house policy: every card out, first card first.

        With ``first-card-value`` the first card is turned and decides how many
        more follow. A cut card met on the way (only with an absurd placement)
        is in the list too, where it came out.
        """
        out: list[str] = []
        wanted = fixed_burn(self.burn_policy)
        while wanted is None or sum(code != CUT_CARD for code in out) < wanted:
            code = self.draw()
            out.append(code)
            if wanted is None and code != CUT_CARD:
                wanted = 1 + FIRST_CARD_BURNS[code[0]]
        return out
