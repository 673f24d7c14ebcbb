"""The shoe: the cards it holds and has given, its burn, its cut card and end, its link, its order.

The shoe judge counts every card drawn against the shoe's composition (a card
seen more than ``decks`` times is foreign), runs the burn, finds the last hand
from the cut card, closes the shoe when that hand ends, and hands each card to
the shuffle check (``scannerd.core.shuffle_check``), raising its alerts. Its
slice of the state: the shoe on the table (``TableTop.shoe``) and the round's
``last_hand``, the shuffle check, the device's link, and the run of unreadable
cards. Where a card goes in a round is the deal's (``deal.py``).
"""

from __future__ import annotations

from typing import Any

from scannerd.contract.alert_catalogue import message
from scannerd.core.cards import BURN_COUNT
from scannerd.core.house import HouseRules
from scannerd.core.judges.builder import Acted, EventBuilder
from scannerd.core.judges.table_top import ShoeState, TableTop, plain
from scannerd.core.shoe_order import OrderEvidence
from scannerd.core.shuffle_check import Comparison, ShuffleCheck

UNREADABLE_RUN = (3, 20)
"""UNREADABLE_REPEATED: this many unreadable cards among the last so many drawn. One is a bent card;
three in a short run is the reader."""


class ShoeJudge:
    def __init__(self, table_id: str, rules: HouseRules, events: EventBuilder, top: TableTop) -> None:
        self.table_id = table_id
        self.rules = rules
        # Read once: each read of the rules (a pydantic model) is a generic lookup, here at every card.
        self.decks = rules.decks
        self.cut_card_remaining = rules.cut_card_remaining
        self.events = events
        self.top = top
        self.shuffle = ShuffleCheck()  # this shoe's order against the last shoes'
        self.link_up = True
        self.draws = 0  # cards drawn since the table started, for the unreadable cards' run
        self.unread: list[int] = []  # which of those draws were unreadable, the last run's only

    # ------------------------------------------------------------------ a shoe begins and ends

    def start(self, ts: float, shoe_id: str, acted: Acted) -> None:
        """A new shoe on the table, burning as the house says; the one before ends here if it had not."""
        if self.top.shoe is not None:
            self._finish_shuffle(ts)  # a shoe ended early, before its last hand
        self.shuffle.new_shoe(shoe_id)
        burn = self.rules.burn_fixed()
        self.top.shoe = ShoeState(shoe_id, {}, burn, burning=burn != 0)
        self.publish(ts, acted)

    def hand_started(self, shoe: ShoeState) -> int:
        """A round opens in ``shoe``: its hand number."""
        shoe.hands_started += 1
        return shoe.hands_started

    def close(self, ts: float) -> None:
        """The last hand is over: no card is dealt from this shoe any more."""
        shoe = self.top.shoe
        assert shoe is not None
        shoe.closed = True
        self._finish_shuffle(ts)

    # ------------------------------------------------------------------ cards

    def draw(self, card: str | None) -> tuple[int | None, str | None]:
        """Count a card drawn: its number in the shoe, and the card when the shoe holds fewer copies of it.

        Both None before the first shoe, which has no composition to count against.
        """
        shoe = self.top.shoe
        if shoe is None:
            return None, None
        shoe.cards_dealt += 1
        if card is None:
            return shoe.cards_dealt, None
        seen = shoe.counts.get(card, 0) + 1
        shoe.counts[card] = seen
        return shoe.cards_dealt, card if seen > self.decks else None

    def drawn_after_end(self, ts: float, card: str | None, card_no: int | None, foreign: str | None) -> None:
        """A card from a closed shoe is set aside, with one alert: a foreign card outranks every code."""
        self.events.card(ts, "discard", card, None, card_no)
        if foreign is not None:
            self.foreign_alert(ts, foreign, None)
        else:
            self.events.alert(ts, "CARD_AFTER_SHOE_END", message("CARD_AFTER_SHOE_END"), card)
        self._unreadable_run(ts, card)

    def burn(self, ts: float, card: str | None, card_no: int | None, foreign: str | None) -> bool:
        """A burn card; True when it finished the burn (the caller publishes the shoe, last)."""
        shoe = self.top.shoe
        assert shoe is not None
        self.events.card(ts, "burn", card, None, card_no)
        if shoe.burn_done == 0 and shoe.burn_required is None and card is not None:
            shoe.burn_required = 1 + BURN_COUNT[card[0]]
        shoe.burn_done += 1
        finished = False
        # An unreadable turned card leaves the count unknown: the burn then runs until betting closes.
        if shoe.burn_required is not None and shoe.burn_done >= shoe.burn_required:
            shoe.burning = False
            finished = True
        if foreign is not None:
            self.foreign_alert(ts, foreign, None)
        return finished

    def abandon_burn(self, ts: float, round_id: str) -> bool:
        """Betting closed on an unfinished burn: it is given up, and the cards go to the round. True if so."""
        shoe = self.top.shoe
        if shoe is None or not shoe.burning:
            return False
        if shoe.burn_required is None:
            said = message("BURN_MISMATCH", "unturned")
        else:
            said = message("BURN_MISMATCH", done=shoe.burn_done, required=shoe.burn_required)
        self.events.alert(ts, "BURN_MISMATCH", said, None, round_id)
        shoe.burning = False
        return True

    def foreign_alert(self, ts: float, card: str, round_id: str | None) -> None:
        text = message("FOREIGN_CARD", card=card, decks=self.decks)
        self.events.alert(ts, "FOREIGN_CARD", text, card, round_id)

    def checked(self, ts: float, card: str | None) -> None:
        """Every card judged in an open shoe: the unreadable cards' run, then the shuffle check."""
        self._unreadable_run(ts, card)
        shoe = self.top.shoe
        if shoe is not None:
            for comparison in self.shuffle.card(card, shoe.counts, self.decks, shoe.cards_dealt):
                self._shuffle_alert(ts, comparison)

    def _unreadable_run(self, ts: float, card: str | None) -> None:
        """Too many unreadable cards in a short run: the reader, not a card, is at fault."""
        self.draws += 1
        if card is not None:
            return
        count, window = UNREADABLE_RUN
        self.unread = [n for n in self.unread if n > self.draws - window] + [self.draws]
        if len(self.unread) >= count:
            self.unread = []  # the next run is counted afresh
            text = message("UNREADABLE_REPEATED", count=count, window=window)
            rnd = self.top.round
            self.events.alert(ts, "UNREADABLE_REPEATED", text, None, rnd.round_id if rnd else None)

    # ------------------------------------------------------------------ the cut card

    def virtual_cut_card(self, ts: float) -> bool:
        """A virtual cut card (``cut_card_remaining``) comes out behind the card just drawn once only that
        many are left; True when that changed the shoe (the caller publishes it)."""
        shoe, remaining = self.top.shoe, self.cut_card_remaining
        reached = (
            shoe is not None
            and not shoe.cut_card_seen
            and remaining is not None
            and self._remaining(shoe) <= remaining
        )
        return reached and self.cut_card(ts)

    def cut_card_seen(self, ts: float) -> None:
        """The device saw the cut card."""
        if self.cut_card(ts):
            self.publish(ts)

    def cut_card(self, ts: float) -> bool:
        """The cut card came out; True when that changed the shoe (the caller publishes it)."""
        shoe, rnd = self.top.shoe, self.top.round
        if shoe is None:
            self.events.alert(ts, "CUT_CARD", message("CUT_CARD"), None)
            return False
        if shoe.cut_card_seen or shoe.closed:
            return False
        shoe.cut_card_seen = True
        in_hand = rnd is not None and rnd.phase in ("betting", "dealing")
        this_hand = rnd.hand_no if in_hand and rnd is not None else shoe.hands_started + 1
        last = this_hand + (1 if self.rules.last_hand == "one-more" else 0)
        shoe.last_hand_no = last
        if in_hand and rnd is not None and rnd.hand_no == last:
            rnd.last_hand = True
        if in_hand and last == this_hand:
            case = "this_hand"
        elif last == shoe.hands_started + 1:
            case = "next_hand"
        else:
            case = "two_more"
        self.events.case_alert(ts, "CUT_CARD", case, rnd.round_id if in_hand and rnd else None)
        return True

    # ------------------------------------------------------------------ the device's link

    def relink(self, up: bool) -> bool:
        """The link went down or came back: True when that changed it."""
        if up == self.link_up:
            return False
        self.link_up = up
        return True

    # ------------------------------------------------------------------ the shuffle check

    def _finish_shuffle(self, ts: float) -> None:
        """The shoe is over: restate each shuffle alert it raised with the whole shoe's figures.

        Under the same ``alert_id`` while the pit has not acknowledged it, as a new alert once it has.
        """
        for comparison in self.shuffle.finish():
            self._shuffle_alert(ts, comparison)

    def _shuffle_alert(self, ts: float, comparison: Comparison | OrderEvidence) -> None:
        """Raise (or restate) the alert on a shoe that keeps an earlier shoe's order, new decks' or
        its own."""
        shoe = self.top.shoe
        assert shoe is not None
        figures = comparison.figures()
        text = message("SHUFFLE_SUSPECT", figures.get("against"), shoe_id=shoe.shoe_id, **figures)
        if comparison.alert_id is None or not self.events.restate(ts, comparison.alert_id, text, figures):
            comparison.alert_id = self.events.next_seq
            self.events.alert(ts, "SHUFFLE_SUSPECT", text, None, shuffle=figures)

    # ------------------------------------------------------------------ what it shows

    def publish(self, ts: float, acted: Acted | None = None) -> None:
        """The shoe's event, with its state after the whole input: it goes last."""
        shoe = self.top.shoe
        assert shoe is not None
        self.events.shoe(ts, self._figures(shoe), acted)

    def view(self) -> dict[str, Any] | None:
        """The shoe as ``get_state`` shows it; None before the first shoe."""
        shoe = self.top.shoe
        if shoe is None:
            return None
        return {"table_id": self.table_id, "shoe_id": shoe.shoe_id} | self._figures(shoe)

    def _figures(self, shoe: ShoeState) -> dict[str, Any]:
        figures = self._counts(shoe)
        if self.events.identity is not None:  # the builder's, made once from the rules
            figures["identity"] = dict(self.events.identity)
        return figures

    def _counts(self, shoe: ShoeState) -> dict[str, Any]:
        if shoe.closed:
            status = "closed"
        elif shoe.burning:
            status = "burning"
        elif shoe.last_hand_no is not None:
            status = "last_hand"
        else:
            status = "dealing"
        return {
            "status": status,
            "decks": self.decks,
            "cards_dealt": shoe.cards_dealt,
            "cards_remaining": max(self._remaining(shoe), 0),
            "burn_required": shoe.burn_required,
            "burn_done": shoe.burn_done,
            "cut_card_seen": shoe.cut_card_seen,
            "hands_dealt": shoe.hands_started,
            "last_hand_no": shoe.last_hand_no,
        }

    def _remaining(self, shoe: ShoeState) -> int:
        return self.decks * 52 - shoe.cards_dealt

    # ------------------------------------------------------------------ snapshot

    def saved(self) -> dict[str, Any]:
        """Its part of the snapshot; the unreadable run only while one is counted, as before it was kept."""
        shoe = self.top.shoe
        saved: dict[str, Any] = {
            "shoe": plain(shoe, "counts") if shoe else None,
            "link_up": self.link_up,
            "shuffle": self.shuffle.snapshot(),
        }
        if self.unread:
            saved["unread"] = [self.draws, list(self.unread)]
        return saved

    def restore(self, snap: dict[str, Any]) -> None:
        self.top.shoe = ShoeState(**snap["shoe"]) if snap["shoe"] else None
        self.link_up = bool(snap["link_up"])
        if snap.get("unread"):
            self.draws, self.unread = snap["unread"][0], list(snap["unread"][1])
        if snap.get("shuffle") is not None:  # saved before the shuffle check: nothing to compare yet
            self.shuffle = ShuffleCheck.restore(snap["shuffle"])
