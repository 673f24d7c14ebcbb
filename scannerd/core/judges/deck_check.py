"""The deck check: at the shoe's end the rest of it is drawn through the reader and the whole shoe counted.

A regulator wants each shoe counted after play, so that no card went missing and none was added,
with a receipt naming the shoe, the cards short or over, the device and the dealer. The dealer (or
the game server) starts the count between hands: the shoe closes if it had not, and every card
drawn from then on is counted, not dealt (a card event at ``count``). Ending the count compares the
cards the shoe gave (those dealt and those counted) with ``decks`` full decks and publishes the
receipt, the ``deck_check`` event; a card missing or one too many raises ``DECK_SHORT`` or
``DECK_SURPLUS``. A card the reader could not read may be any card: a count with one is incomplete
and says so (``DECK_CHECK_INCOMPLETE``), and only more cards missing than were unread is short.

Its slice of the state: the count under way (``deck_check``) and the shoe device's own name for
itself (``shoe_device``), which the receipt states and which only a device's hello changes.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from scannerd.contract.alert_catalogue import message
from scannerd.core.cards import ALL_CARDS
from scannerd.core.house import HouseRules
from scannerd.core.inputs import Actor, DeviceNamed
from scannerd.core.judges.authority import Authority
from scannerd.core.judges.builder import Acted, EventBuilder
from scannerd.core.judges.judge import CommandRejected, Handler
from scannerd.core.judges.shoe import ShoeJudge
from scannerd.core.judges.table_top import TableTop


@dataclass(slots=True)
class Count:
    """A count under way: since when, and what it has drawn so far."""

    started: float
    dealt: int  # cards the shoe had given before the count
    cards: int = 0  # cards drawn in the count, unreadable ones included
    unreadable: int = 0  # of those
    counted: dict[str, int] = field(default_factory=dict)


class DeckCheck:
    def __init__(
        self,
        rules: HouseRules,
        events: EventBuilder,
        top: TableTop,
        shoe_judge: ShoeJudge,
        authority: Authority,
    ) -> None:
        self.rules = rules
        self.events = events
        self.top = top
        self.shoe_judge = shoe_judge
        self.authority = authority
        self.count: Count | None = None
        self.device: dict[str, str] | None = None

    def commands(self) -> dict[str, Handler]:
        return {"deck_check": self.deck_check}

    @property
    def counting(self) -> bool:
        return self.count is not None

    # ------------------------------------------------------------------ the device

    def named_anew(self, model: str, serial: str) -> bool:
        """Whether a device's hello names another device than the one known: only then is it judged."""
        return self.device != {"model": model, "serial": serial}

    def named(self, inp: DeviceNamed) -> None:
        self.device = {"model": inp.model, "serial": inp.serial}

    # ------------------------------------------------------------------ the command

    def deck_check(self, ts: float, args: dict[str, Any], actor: Actor | None) -> None:
        if args.get("action", "start") == "start":
            self._start(ts, actor)
        elif self.count is None:
            raise CommandRejected("no deck check is under way: start one first")
        else:
            self.end(ts, self.authority.acted(ts, actor))

    def _start(self, ts: float, actor: Actor | None) -> None:
        shoe, rnd = self.top.shoe, self.top.round
        if shoe is None:
            raise CommandRejected("no shoe to count: start one with new_shoe")
        if rnd is not None and rnd.open:
            raise CommandRejected(
                f"round {rnd.round_id} is still open: finish it or void it before the count"
            )
        if self.count is not None:
            raise CommandRejected(f"shoe {shoe.shoe_id} is already being counted")
        acted = self.authority.acted(ts, actor)
        if not shoe.closed:  # counted before its last hand: no card of it is dealt any more
            self.shoe_judge.close(ts)
            self.shoe_judge.publish(ts, acted)
        self.count = Count(float(ts), shoe.cards_dealt)
        self._receipt(ts, acted, None)

    # ------------------------------------------------------------------ cards

    def card(self, ts: float, card: str | None) -> None:
        """A card drawn while counting: counted, never dealt."""
        count = self.count
        assert count is not None
        count.cards += 1
        if card is None:
            count.unreadable += 1
        else:
            count.counted[card] = count.counted.get(card, 0) + 1
        self.events.card(ts, "count", card, None, count.dealt + count.cards)

    # ------------------------------------------------------------------ the end

    def end(self, ts: float, acted: Acted) -> None:
        """The count is over (ended, or a new shoe came): the receipt, then its alerts."""
        shoe, count = self.top.shoe, self.count
        assert shoe is not None and count is not None
        seen = dict(shoe.counts)
        for card, n in count.counted.items():
            seen[card] = seen.get(card, 0) + n
        decks = self.rules.decks
        missing = [card for card in ALL_CARDS for _ in range(decks - seen.get(card, 0))]
        surplus = [card for card in ALL_CARDS for _ in range(seen.get(card, 0) - decks)]
        unreadable = (shoe.cards_dealt - sum(shoe.counts.values())) + count.unreadable
        self._receipt(ts, acted, (missing, surplus, unreadable))
        self.count = None
        shoe_id = shoe.shoe_id
        if surplus:
            text = message("DECK_SURPLUS", shoe_id=shoe_id, n=len(surplus), cards=_listed(surplus))
            self.events.alert(ts, "DECK_SURPLUS", text, None)
        if len(missing) > unreadable:
            text = message("DECK_SHORT", shoe_id=shoe_id, n=len(missing) - unreadable, cards=_listed(missing))
            self.events.alert(ts, "DECK_SHORT", text, None)
        if unreadable:
            self.events.alert(
                ts, "DECK_CHECK_INCOMPLETE", message("DECK_CHECK_INCOMPLETE", n=unreadable), None
            )

    def _receipt(self, ts: float, acted: Acted, found: tuple[list[str], list[str], int] | None) -> None:
        count = self.count
        assert count is not None
        figures: dict[str, Any] = {
            "status": "counting" if found is None else "done",
            "started": count.started,
            "expected": self.rules.decks * 52,
            "dealt": count.dealt,
            "counted": count.cards,
        }
        if found is not None:
            missing, surplus, unreadable = found
            figures |= {"unreadable": unreadable, "complete": unreadable == 0, "missing": missing}
            figures["surplus"] = surplus
        figures["device"] = dict(self.device) if self.device else None
        if "by" not in acted and self.authority.dealer_id is not None:
            acted = {"by": self.authority.dealer_id, **acted}
        self.events.deck_check(ts, figures, acted)

    # ------------------------------------------------------------------ what it shows

    def view(self) -> dict[str, Any] | None:
        """The count under way as ``get_state`` shows it; None while there is none."""
        count = self.count
        if count is None:
            return None
        return {"started": count.started, "dealt": count.dealt, "counted": count.cards}

    # ------------------------------------------------------------------ snapshot

    def saved(self) -> dict[str, Any]:
        """Its part of the snapshot, each only while it holds something: a table that never counted
        a shoe saves what it did before."""
        saved: dict[str, Any] = {}
        if self.count is not None:
            count = self.count
            saved["deck_check"] = [
                count.started,
                count.dealt,
                count.cards,
                count.unreadable,
                dict(count.counted),
            ]
        if self.device is not None:
            saved["shoe_device"] = dict(self.device)
        return saved

    def restore(self, snap: dict[str, Any]) -> None:
        if snap.get("deck_check"):
            started, dealt, cards, unreadable, counted = snap["deck_check"]
            self.count = Count(float(started), int(dealt), int(cards), int(unreadable), dict(counted))
        if snap.get("shoe_device"):
            self.device = dict(snap["shoe_device"])


LISTED = 6
"""Different cards an alert names: a shoe short by a whole deck would fill the dealer's banner; the receipt
names every one."""


def _listed(cards: list[str]) -> str:
    """Each card once, with how many of it where more than one: ``KH 7C x2``, the first few only."""
    counts: dict[str, int] = {}
    for card in cards:
        counts[card] = counts.get(card, 0) + 1
    named = [card if n == 1 else f"{card} x{n}" for card, n in counts.items()]
    more = len(named) - LISTED
    return " ".join(named[:LISTED]) + (f" and {more} more" if more > 0 else "")


def deck_check_text(event: Mapping[str, Any], *, cards: bool = True) -> str:
    """A deck check's event in words, for captions and a log; without ``cards`` only the counts, as
    the dealer's screen has room for (the alerts name the cards)."""
    if event["status"] == "counting":
        return f"deck check of shoe {event['shoe_id']} begun after {event['dealt']} cards"
    seen = event["dealt"] + event["counted"]
    found = [
        f"{len(event[key])} {key}" + (f" ({_listed(event[key])})" if cards else "")
        for key in ("missing", "surplus")
        if event[key]
    ]
    if event["unreadable"]:
        found.append(f"{event['unreadable']} unread: incomplete")
    if not cards:  # one line of a narrow panel: the worst of it (the alerts say the rest)
        return f"count: {found[0] if found else 'complete'}"
    return f"deck check of shoe {event['shoe_id']}: {seen} cards, {', '.join(found) or 'complete'}"
