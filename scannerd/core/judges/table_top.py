"""What lies on the table: the shoe being dealt and the round on the layout, as a snapshot keeps them.

Every judge reads them; each part has one writer, so a fact of the deal is
changed in one place. The shoe judge (``shoe.py``) writes the shoe and the
round's ``last_hand``; the deal (``deal.py``) puts a round on the table and
writes its cards, phase and times; the reveal (``reveal.py``) writes the cards
it holds face down (``hidden``); the confirmation (``confirmation.py``) the
dealer's word on its result; the deal the shoe's roads. The betting time is the round's from its
opening. Only a step of the wall clock moves the round's times all at once.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Any

from scannerd.core.roads import Roads


@dataclass(slots=True)
class ShoeState:
    shoe_id: str
    counts: dict[str, int]
    burn_required: int | None  # burn cards in all, the turned card included; None until known
    burning: bool
    cards_dealt: int = 0
    burn_done: int = 0
    cut_card_seen: bool = False
    hands_started: int = 0
    last_hand_no: int | None = None
    closed: bool = False


@dataclass(slots=True)
class RoundState:
    round_id: str
    hand_no: int
    phase: str  # betting | dealing | confirming | complete | void
    last_activity: float
    last_hand: bool = False
    stalled: bool = False
    player: list[str] = field(default_factory=list)
    banker: list[str] = field(default_factory=list)
    betting_time: float | None = None  # seconds betting stays open, when a time was given
    betting_ends: float | None = None  # when that time runs out (event time)
    dealer_id: str | None = None  # the dealer signed in when the round opened
    opened: float | None = None  # when the round opened (event time); None in a snapshot from before
    dealing_from: float | None = None  # when its dealing began: betting closed, or its first card
    # Squeeze: the cards the screens still hold face down, each [position, when it was drawn].
    hidden: list[list[Any]] = field(default_factory=list)
    # confirm_result: when the dealer's word is overdue, the alert saying so, and whose word it was.
    confirm_due: float | None = None
    unconfirmed_alert: int | None = None
    confirmed_by: str | None = None
    confirmed_via: str | None = None

    @property
    def open(self) -> bool:
        """Not over: cards are due, or its result awaits the dealer's word. No new round or shoe yet."""
        return self.phase in ("betting", "dealing", "confirming")

    def shift(self, step: float) -> None:
        """The wall clock stepped: the round has waited as long as it really has, whatever it says now.

        So has its betting time left, and neither phase took the step as time spent betting or dealing.
        """
        self.last_activity += step
        if self.betting_ends is not None:
            self.betting_ends += step
        if self.opened is not None:
            self.opened += step
        if self.dealing_from is not None:
            self.dealing_from += step
        if self.confirm_due is not None:
            self.confirm_due += step
        # A squeezed card waits its time, whatever the clock did. New entries, not changed
        # ones: a snapshot taken before shares the old (``plain`` copies the list only).
        self.hidden = [[position, drawn + step] for position, drawn in self.hidden]

    def times(self, ended: float) -> dict[str, float | None]:
        """How long the round spent betting and dealing, for the house's pace (``PhaseTimes``)."""
        betting = dealing = None
        if self.opened is not None:  # until betting closed, or until a void that came first
            betting = float((ended if self.dealing_from is None else self.dealing_from) - self.opened)
        if self.dealing_from is not None:
            dealing = float(ended - self.dealing_from)
        return {"betting_s": betting, "dealing_s": dealing}


def plain(state: ShoeState | RoundState, *containers: str) -> dict[str, Any]:
    """``asdict`` without its deep copy of every value, which was most of the cost of storing a card.

    ``python -m bench.latency_stages`` measures what storing costs a card (docs/performance.md).
    The state's fields are numbers, strings and the named containers of them, which are copied.
    """
    out = {f.name: getattr(state, f.name) for f in fields(state)}
    for name in containers:
        out[name] = out[name].copy()
    return out


class TableTop:
    """The shoe and the round on the table now: no shoe before the first ``new_shoe``, no round before
    the first opens and once a new shoe clears the layout (an ended round stays until the next)."""

    def __init__(self) -> None:
        self.shoe: ShoeState | None = None
        self.round: RoundState | None = None
        # The shoe's roads, hand by hand (the deal's; rebuilt from its results on a restore), which
        # every shoe event carries: None while no shoe is known.
        self.roads: Roads | None = None
