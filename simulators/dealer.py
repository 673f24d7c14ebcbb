"""A dealer who deals punto banco by the rules, at a human pace, and errs on purpose.

The dealer is a generator of :class:`~simulators.actions.Step` objects and
knows nothing of devices or transports: the feeder turns its actions into
bytes for whichever driver is under test, and the game-server commands go to
whatever stands in for the game server. Every step carries the outcome a
correct validator gives (from :mod:`simulators.expected`), so a test can
check that the right alerts came out, not merely that some did.
"""

from __future__ import annotations

import random
from collections.abc import Generator, Iterator, Sequence
from typing import Final

from scannerd.core.cards import ALL_CARDS
from scannerd.core.house import HouseRules
from simulators.actions import Action, CutCard, Draw, Pause, ServerCommand, Step, Unplug, Unreadable
from simulators.expected import ExpectedTable
from simulators.rules import deal_of
from simulators.shoe import CUT_CARD, CutPlacement, Shoe
from simulators.shuffles import FIRST_SHOES, KINDS, discard_pile, first_shoe, next_shoe

# Mistakes a dealer makes within a round, and the one made when loading a shoe.
ROUND_MISTAKES: Final = (
    "early-card",
    "extra-card",
    "short-deal",
    "unreadable",
    "foreign-card",
    "unplug",
    "stall",
)
MISTAKES: Final = (*ROUND_MISTAKES, "skip-burn")
# What a careless dealer does unasked: a stall lasts the house's stall_timeout_s (30 s by default),
# too long for a demo or a noisy-wire test, so it is made only when a scenario asks for it.
RANDOM_MISTAKES: Final = tuple(m for m in MISTAKES if m != "stall")
# How much longer than stall_timeout_s a stalling dealer stops: clear of any rounding of times.
STALL_MARGIN_S: Final = 0.5
# Mistakes that only mean something when a game server opens and closes betting.
_SERVER_ONLY: Final = frozenset({"early-card", "extra-card", "short-deal", "skip-burn"})
# No random mistakes this close to the cut card: the last hand must stay well defined.
_CLEAR_OF_CUT: Final = 12
# A round takes at most six cards, plus an early and an extra card.
_ROUND_MAX_CARDS: Final = 8


class Dealer:
    """Deals shoe after shoe under ``rules``; every random choice comes from ``rng``.

    ``pace`` is the seconds between cards (pauses between rounds and shoes are
    multiples of it; 0 for tests). ``error_rate`` is the chance that a round
    (or a shoe's burn) goes wrong, the kind picked from ``mistakes``. ``shuffle`` is how
    each shoe after the first is made from the last one's discards (``simulators.shuffles``):
    ``random`` loads a fresh uniform order, the others a proper or a lazy shuffle. ``first_shoe``
    is how the first shoe is made from new decks (``FIRST_SHOES``): a cheat's shoe is brought in then.
    """

    def __init__(
        self,
        rules: HouseRules,
        rng: random.Random,
        *,
        pace: float = 1.0,
        cut: CutPlacement = 14,
        device_reports_cut: bool = True,
        error_rate: float = 0.0,
        mistakes: Sequence[str] = RANDOM_MISTAKES,
        unplug_seconds: float = 2.0,
        shuffle: str = "random",
        first_shoe: str = "random",
    ) -> None:
        unknown = set(mistakes) - set(MISTAKES)
        if unknown:
            raise ValueError(f"unknown mistakes: {sorted(unknown)}")
        if shuffle not in KINDS:
            raise ValueError(f"unknown shuffle {shuffle!r}: one of {', '.join(KINDS)}")
        if first_shoe not in FIRST_SHOES:
            raise ValueError(f"unknown first shoe {first_shoe!r}: one of {', '.join(FIRST_SHOES)}")
        self.shuffle = shuffle
        self.first_shoe = first_shoe
        self.rules = rules
        self.rng = rng
        self.pace = pace
        self.cut = cut
        self.error_rate = error_rate
        self.server = rules.round_control == "server"
        self.mistakes = tuple(m for m in mistakes if self.server or m not in _SERVER_ONLY)
        self.unplug_seconds = unplug_seconds
        self.expected = ExpectedTable(rules, device_reports_cut)
        self.shoe: Shoe | None = None
        self.shoes_started = 0
        self.rounds_dealt = 0
        self.shoe_rounds = 0  # rounds of the current shoe: round ids count from 1 in each shoe
        # Rounds still to deal from this shoe after the current one; None until the cut card.
        self._rounds_after: int | None = None
        self._in_round = False
        self._rack: list[list[str]] = []  # what went to the discard rack in turn, for the next shuffle

    # ------------------------------------------------------------------ steps
    def _step(self, delay: float, action: Action) -> Step:
        return Step(delay, action, self.expected.apply(action))

    def _command(self, delay: float, name: str, **args: object) -> Step:
        return self._step(delay, ServerCommand(name, dict(args)))

    def _next_card(self) -> Generator[Step, None, str]:
        """Take the next card out of the shoe, yielding the cut card if it comes first."""
        assert self.shoe is not None
        card = self.shoe.draw()
        if card == CUT_CARD:
            yield self._step(self.pace, CutCard())
            extra = 1 if self.rules.last_hand == "one-more" else 0
            self._rounds_after = extra if self._in_round else extra + 1
            card = self.shoe.draw()
        return card

    def _draw(self, burn: bool = False) -> Generator[Step, None, str]:
        card = yield from self._next_card()
        yield self._step(self.pace, Draw(card, burn=burn))
        return card

    # ------------------------------------------------------------------ shoes
    @property
    def shoe_finished(self) -> bool:
        """True when the current shoe has dealt its last hand (or cannot deal another).

        With a game server the table's display (the validator) says when the
        shoe is closed, and the dealer goes by it: foreign cards shift its count.
        Without one, the dealer goes by the cut card and the house's last-hand rule.
        """
        if self.shoe is None or self.shoe.remaining + (0 if self.shoe.cut_card_out else 1) < _ROUND_MAX_CARDS:
            return True
        return self.expected.closed if self.server else self._rounds_after == -1

    def start_shoe(self, skip_burn: bool = False) -> Iterator[Step]:
        """Load a freshly shuffled shoe, tell the game server, and burn (unless skipping it)."""
        last = self.shoe
        if last is None:
            order = first_shoe(self.rng, self.first_shoe, self.rules.decks)
            self.shoe = Shoe(self.rng, self.rules.decks, self.cut, self.rules.burn, order=order)
        elif self.shuffle == "random":
            self.shoe = Shoe(self.rng, self.rules.decks, self.cut, self.rules.burn)
        else:
            pile = discard_pile(self._rack, last.undealt)
            order = next_shoe(self.rng, self.shuffle, last.loaded, pile)
            self.shoe = Shoe(self.rng, self.rules.decks, self.cut, self.rules.burn, order=order)
        self._rack = []
        self.shoes_started += 1
        self.shoe_rounds = 0
        self._rounds_after = None
        if not self.server:
            return  # without a game server nobody knows a shoe began: no burn to judge
        yield self._command(5 * self.pace, "new_shoe", shoe_id=f"S{self.shoes_started}")
        if skip_burn:
            return
        for code in self.shoe.burn():
            if code == CUT_CARD:
                yield self._step(self.pace, CutCard())
                self._rounds_after = 1 if self.rules.last_hand == "one-more" else 0
            else:
                yield self._step(self.pace, Draw(code, burn=True))
                self._rack.append([code])

    # ------------------------------------------------------------------ rounds
    def deal_round(self, mistake: str | None = None) -> Iterator[Step]:
        """One round, dealt right or with ``mistake``; loads a new shoe first if needed."""
        if mistake is not None and mistake not in ROUND_MISTAKES:
            raise ValueError(f"{mistake!r} is not a mistake made within a round")
        if mistake in _SERVER_ONLY and not self.server:
            raise ValueError(f"{mistake!r} needs a game server opening and closing betting")
        if self.shoe_finished:
            yield from self.start_shoe()
        self.rounds_dealt += 1
        self.shoe_rounds += 1
        # Which card of the round the mistake hits (unreadable, foreign, unplug, short deal).
        deal = deal_of(self.rules.game)
        at = self.rng.randrange(1, deal.fewest_cards)
        if self.server:
            yield self._command(
                3 * self.pace, "betting_open", round_id=f"S{self.shoes_started}-R{self.shoe_rounds}"
            )
            if mistake == "early-card":
                self._rack.append([(yield from self._draw())])  # set aside
            yield self._command(0.0, "betting_close")
        self._in_round = True
        player: list[str] = []
        banker: list[str] = []
        brought_in: str | None = None  # a foreign card played in the hand: not the shoe's
        try:
            while (position := deal.position_of(player, banker)) is not None:
                dealt = len(player) + len(banker)
                if dealt == at and mistake == "stall":  # stops with a card due, then deals on
                    yield self._step(self.pace, Pause(self.rules.stall_timeout_s + STALL_MARGIN_S))
                if dealt == at and mistake == "short-deal":
                    return
                if dealt == at and mistake == "unplug":
                    yield self._step(self.pace, Unplug(self.unplug_seconds))
                    return
                if dealt == at and mistake == "foreign-card":
                    foreign = Draw(self._foreign_card())
                    step = self._step(self.pace, foreign)
                    yield step
                    if step.expect.round_end == "void":
                        return
                    card = foreign.card  # seen too few times to tell: it plays as a card
                    brought_in = card
                elif dealt == at and mistake == "unreadable":
                    card = yield from self._next_card()
                    yield self._step(self.pace, Unreadable(card))
                    self._rack.append([card])  # set aside
                    return
                else:
                    card = yield from self._draw()
                (player if position.startswith(deal.first_side) else banker).append(card)
        finally:
            self._in_round = False
            picked_up = player + banker
            if brought_in is not None:
                picked_up.remove(brought_in)
            self._rack.append(picked_up)
            if self._rounds_after is not None:
                self._rounds_after -= 1
        if mistake == "extra-card":
            self._rack.append([(yield from self._draw())])  # set aside

    def _foreign_card(self) -> str:
        """A copy of the card seen most often in this shoe: the soonest a ninth copy shows."""
        counts = self.expected.counts
        most = max((counts[c] for c in ALL_CARDS), default=0)
        return self.rng.choice([c for c in ALL_CARDS if counts[c] == most])

    def unplug(self, seconds: float) -> Iterator[Step]:
        """Pull the device's cable between rounds for ``seconds``."""
        yield self._step(self.pace, Unplug(seconds))

    # ------------------------------------------------------------------ sessions
    def _clear_of_cut(self) -> bool:
        shoe = self.shoe
        if shoe is None:
            return True
        if shoe.cut_card_out or shoe.remaining < _CLEAR_OF_CUT + _ROUND_MAX_CARDS:
            return False
        return shoe.before_cut is None or shoe.before_cut >= _CLEAR_OF_CUT

    def _random_mistake(self, kinds: Sequence[str]) -> str | None:
        if not kinds or self.rng.random() >= self.error_rate:
            return None
        return self.rng.choice(list(kinds))

    def play(self, rounds: int | None = None, shoes: int | None = None) -> Iterator[Step]:
        """Deal with random mistakes at ``error_rate``: ``rounds`` rounds, ``shoes`` shoes, or forever."""
        shoes_done = 0
        dealt = 0
        while (rounds is None or dealt < rounds) and (shoes is None or shoes_done < shoes):
            if self.shoe_finished:
                if self.shoe is not None and shoes is not None:
                    shoes_done += 1
                    if shoes_done >= shoes:
                        return
                yield from self._load()
            yield from self._careless_round()
            dealt += 1

    def deal_shoe(self) -> Iterator[Step]:
        """Load the next shoe and deal it to its last hand, with random mistakes at ``error_rate``."""
        yield from self._load()
        while not self.shoe_finished:
            yield from self._careless_round()

    def count_shoe(self) -> Iterator[Step]:
        """The deck check at the shoe's end, as a house that requires it has the dealer do it: the rest
        of the shoe drawn through the reader, the cut card set aside by hand."""
        shoe = self.shoe
        if shoe is None or not self.server:
            return
        yield self._command(5 * self.pace, "deck_check")
        counted: list[str] = []
        while shoe.remaining:
            card = shoe.draw()
            if card != CUT_CARD:
                yield self._step(self.pace, Draw(card))
                counted.append(card)
        self._rack.append(counted)  # onto the discards: the next shuffle starts from every card
        yield self._command(self.pace, "deck_check", action="end")

    def _load(self) -> Iterator[Step]:
        if self.rules.deck_check_required:
            yield from self.count_shoe()
        skip = "skip-burn" in self.mistakes and self._random_mistake(["skip-burn"]) is not None
        yield from self.start_shoe(skip_burn=skip)

    def _careless_round(self) -> Iterator[Step]:
        kinds = [m for m in self.mistakes if m in ROUND_MISTAKES]
        yield from self.deal_round(self._random_mistake(kinds) if self._clear_of_cut() else None)
