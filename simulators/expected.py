"""The outcome a correct validator gives for each dealer action, judged from the spec.

This is a second, deliberately plain reading of the validator's contract
(``docs/validator.md``) for the actions a dealer can take, so end-to-end
tests can say "this misdeal must raise exactly these alerts" without asking
the code under test. It shares nothing with ``scannerd.core.validator`` but the house settings.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field, replace

from drivers.cards import ALL_CARDS as _ALL_CARDS
from scannerd.core.house import HouseRules
from scannerd.core.judges.shoe import UNREADABLE_RUN
from simulators.actions import (
    Action,
    CutCard,
    Draw,
    Expect,
    Pause,
    ServerCommand,
    Unplug,
    Unreadable,
)
from simulators.rules import FIRST_CARD_BURNS, Deal, deal_of, fixed_burn


@dataclass
class _Round:
    deal: Deal
    hand_no: int
    phase: str  # betting | dealing | complete | void
    stalled: bool = False
    player: list[str] = field(default_factory=list)  # the first side's cards (Player, Dragon)
    banker: list[str] = field(default_factory=list)  # the second's (Banker, Tiger)

    @property
    def cards_due(self) -> bool:
        return self.phase == "dealing" and self.deal.position_of(self.player, self.banker) is not None


class ExpectedTable:
    """Follows the actions and says, for each, which alerts and placements must come out.

    ``device_reports_cut``: whether the device sends the cut card; when it
    does not, the house's virtual cut card (``cut_card_remaining``) stands in.
    """

    def __init__(self, rules: HouseRules, device_reports_cut: bool = True) -> None:
        self.rules = rules
        self.device_reports_cut = device_reports_cut
        self.shoe_known = False
        self.counts: Counter[str] = Counter()
        self.cards_dealt = 0
        self.burn_left: int | None = 0  # None: the first card will say
        self.cut_seen = False
        self.last_hand_no: int | None = None
        self.closed = False
        self.hand_no = 0
        self.round: _Round | None = None
        self.draws = 0  # every card drawn, for a run of unreadable ones
        self.unread: list[int] = []
        self.counting = False  # a deck check under way: cards are counted, not dealt
        self.counted: Counter[str] = Counter()
        self.counted_unread = 0

    # ------------------------------------------------------------------
    def apply(self, action: Action) -> Expect:
        match action:
            case ServerCommand(name="deck_check", args=args):
                return self._deck_check(args.get("action", "start"))
            case ServerCommand(name=name):
                return self._command(name)
            case Draw(card=card):
                return self._card(card)
            case Unreadable():
                return self._card(None)
            case CutCard():
                if not self.device_reports_cut:
                    return Expect()
                return Expect(alerts=self._cut_card())
            case Unplug():
                alerts: tuple[str, ...] = ("DEVICE_DISCONNECTED", "DEVICE_RECONNECTED")
                if self.round is not None and self.round.cards_due:
                    return Expect(alerts=alerts, round_end=self._end_round("void"))
                return Expect(alerts=alerts)
            case Pause(seconds=seconds):
                return self._pause(seconds)
        raise TypeError(f"not a dealer action: {action!r}")

    @property
    def burning(self) -> bool:
        return self.shoe_known and self.burn_left != 0

    # ------------------------------------------------------------------
    def _pause(self, seconds: float) -> Expect:
        """A pause of ``stall_timeout_s`` or more with a card due stalls the round, once.

        Only the pause counts: a scripted pause just short of the timeout may
        still stall a table that is slow between steps.
        """
        rnd = self.round
        if rnd is None or not rnd.cards_due or rnd.stalled or seconds < self.rules.stall_timeout_s:
            return Expect()
        rnd.stalled = True
        return Expect(alerts=("ROUND_STALLED",))

    def _command(self, name: str) -> Expect:
        if name == "new_shoe":
            self.shoe_known = True
            self.counts.clear()
            self.cards_dealt = 0
            self.burn_left = fixed_burn(self.rules.burn)
            self.cut_seen = False
            self.last_hand_no = None
            self.closed = False
            self.hand_no = 0
            self.round = None
            return Expect()
        if name == "betting_open":
            if self.closed:
                return Expect(rejected=True)
            alerts: tuple[str, ...] = ()
            ended = None
            if self.round is not None and self.round.cards_due:
                alerts = ("SHORT_DEAL",)
                ended = self._end_round("void")
            if self.closed:  # the short-dealt round was the last hand
                return Expect(alerts=alerts, round_end=ended)
            self.hand_no += 1
            self.round = _Round(deal_of(self.rules.game), self.hand_no, "betting")
            return Expect(alerts=alerts, round_end=ended)
        if name == "betting_close":
            if self.round is None or self.round.phase != "betting":
                return Expect(rejected=True)
            self.round.phase = "dealing"
            if self.burning:
                self.burn_left = 0  # the burn is given up, not carried into the round
                return Expect(alerts=("BURN_MISMATCH",))
            return Expect()
        raise ValueError(f"the dealer does not send {name!r}")

    def _deck_check(self, action: str) -> Expect:
        """The shoe counted at its end: what every copy of every card, dealt or counted, comes to."""
        if action == "start":
            if not self.shoe_known or self.counting:
                return Expect(rejected=True)
            self.closed = self.counting = True
            self.counted.clear()
            self.counted_unread = 0
            return Expect()
        if not self.counting:
            return Expect(rejected=True)
        self.counting = False
        seen = self.counts + self.counted
        decks = self.rules.decks
        missing = sum(max(decks - seen[card], 0) for card in _ALL_CARDS)
        surplus = sum(max(n - decks, 0) for n in seen.values())
        unread = self.cards_dealt - sum(self.counts.values()) + self.counted_unread
        alerts = [code for code, on in (("DECK_SURPLUS", surplus), ("DECK_SHORT", missing > unread)) if on]
        return Expect(alerts=(*alerts, *(("DECK_CHECK_INCOMPLETE",) if unread else ())))

    def _card(self, card: str | None) -> Expect:
        if self.counting:  # counted, never dealt, never alerted
            if card is None:
                self.counted_unread += 1
            else:
                self.counted[card] += 1
            return Expect(position="count")
        foreign = False
        if self.shoe_known:
            self.cards_dealt += 1
            if card is not None:
                self.counts[card] += 1
                foreign = self.counts[card] > self.rules.decks
        expect = self._place(card, foreign)
        if self._unreadable_run(card):
            expect = replace(expect, alerts=(*expect.alerts, "UNREADABLE_REPEATED"))
        if self._virtual_cut_now():
            cut_alerts = self._cut_card()
            return Expect(
                alerts=expect.alerts + cut_alerts,
                position=expect.position,
                round_end=expect.round_end,
                winner=expect.winner,
            )
        return expect

    def _unreadable_run(self, card: str | None) -> bool:
        """The reader's run: this many unreadable cards among the last so many drawn."""
        self.draws += 1
        if card is not None:
            return False
        count, window = UNREADABLE_RUN
        self.unread = [n for n in self.unread if n > self.draws - window] + [self.draws]
        if len(self.unread) < count:
            return False
        self.unread = []
        return True

    def _place(self, card: str | None, foreign: bool) -> Expect:
        # A foreign card is the one thing to say, even once the shoe is closed: it replaces
        # the early, extra or after-the-end alert.
        also = ("FOREIGN_CARD",) if foreign else ()
        if self.closed:
            return Expect(alerts=also or ("CARD_AFTER_SHOE_END",), position="discard")
        rnd = self.round
        # In auto mode a card with a place of its own (a burn, a foreign card) opens no round.
        opens = rnd is None or rnd.phase in ("complete", "void")
        if self.rules.round_control == "auto" and opens and not self.burning and not foreign:
            self.hand_no += 1
            rnd = self.round = _Round(deal_of(self.rules.game), self.hand_no, "dealing")
        if rnd is not None and rnd.phase == "dealing":
            if card is None:
                ended = self._end_round("void")
                return Expect(alerts=("UNREADABLE_CARD",), position="discard", round_end=ended)
            if foreign:
                return Expect(alerts=also, position="discard", round_end=self._end_round("void"))
            deal = rnd.deal
            position = deal.position_of(rnd.player, rnd.banker)
            assert position is not None  # a dealing round always has a card due
            (rnd.player if position.startswith(deal.first_side) else rnd.banker).append(card)
            if deal.position_of(rnd.player, rnd.banker) is None:
                return Expect(
                    position=position,
                    round_end=self._end_round("complete"),
                    winner=deal.winner(rnd.player, rnd.banker),
                )
            return Expect(position=position)
        if rnd is not None and rnd.phase == "betting":
            return Expect(alerts=also or ("CARD_BEFORE_BETS_CLOSED",), position="discard")
        if self.burning:
            if self.burn_left is None:
                self.burn_left = 1 + FIRST_CARD_BURNS[card[0]] if card else 1
            assert self.burn_left is not None
            self.burn_left -= 1
            return Expect(alerts=also, position="burn")
        if rnd is not None and rnd.phase == "void":
            return Expect(alerts=also, position="discard")
        return Expect(alerts=also or ("EXTRA_CARD",), position="discard")

    def _end_round(self, phase: str) -> str:
        assert self.round is not None
        self.round.phase = phase
        if self.last_hand_no is not None and self.round.hand_no >= self.last_hand_no:
            self.closed = True
        return phase

    def _virtual_cut_now(self) -> bool:
        n = self.rules.cut_card_remaining
        if self.device_reports_cut or n is None or not self.shoe_known or self.cut_seen:
            return False
        return self.rules.decks * 52 - self.cards_dealt <= n

    def _cut_card(self) -> tuple[str, ...]:
        if not self.shoe_known:
            return ("CUT_CARD",)  # no shoe to end: every cut card is news
        if self.cut_seen:
            return ()
        self.cut_seen = True
        extra = 1 if self.rules.last_hand == "one-more" else 0
        if self.round is not None and (self.round.cards_due or self.round.phase == "betting"):
            self.last_hand_no = self.round.hand_no + extra  # the hand being dealt, or about to be
        else:
            self.last_hand_no = self.hand_no + 1 + extra
        return ("CUT_CARD",)
