"""The reveal: at a table that squeezes, the cards its screens hold face down until shown.

Every card is judged and published at its scan, as without a squeeze; the
round keeps which positions the screens still hold back and when each card
was drawn (``RoundState.hidden``, its slice of the state). A ``reveal``
command shows some, the first input at or after a card's draw plus
``reveal_timeout_s`` shows it at that moment, and the next round or shoe
shows what is left.
"""

from __future__ import annotations

from typing import Any

from scannerd.core.games import Game
from scannerd.core.house import HouseRules
from scannerd.core.inputs import Actor
from scannerd.core.judges.authority import Authority
from scannerd.core.judges.builder import Acted, EventBuilder
from scannerd.core.judges.judge import CommandRejected, Handler, optional_id
from scannerd.core.judges.table_top import RoundState, TableTop


class Reveal:
    def __init__(
        self, rules: HouseRules, game: Game, events: EventBuilder, authority: Authority, top: TableTop
    ) -> None:
        self.rules = rules
        self.game = game
        self.events = events
        self.authority = authority
        self.top = top

    def commands(self) -> dict[str, Handler]:
        return {"reveal": self.reveal}

    def hold(self, rnd: RoundState, position: str, ts: float) -> None:
        """A card placed at ``position``: a squeezing table's screens hold it face down."""
        if self.events.squeeze:
            rnd.hidden.append([position, ts])

    def next_due(self) -> float | None:
        """When the earliest held-back card shows by itself (``reveal_timeout_s`` after it was drawn)."""
        rnd = self.top.round
        if rnd is None or not rnd.hidden:
            return None
        return min(drawn for _, drawn in rnd.hidden) + self.rules.reveal_timeout_s

    def overdue(self, ts: float) -> None:
        """Show every held-back card whose time is up, each at the moment it was, whatever input finds it."""
        rnd = self.top.round
        while rnd is not None and rnd.hidden:
            drawn = min(at for _, at in rnd.hidden)  # compared as stored: never recomputed from ``due``
            due = drawn + self.rules.reveal_timeout_s
            if ts < due:
                return
            self._show(due, rnd, [position for position, at in rnd.hidden if at == drawn], "timeout")

    def layout_cleared(self, ts: float) -> None:
        """The next round or shoe begins: the last round's cards are off the layout, none held back."""
        rnd = self.top.round
        if rnd is not None and rnd.hidden:
            self._show(ts, rnd, [position for position, _ in rnd.hidden], "next_round")

    def reveal(self, ts: float, args: dict[str, Any], actor: Actor | None) -> None:
        rnd = self.top.round
        if not self.events.squeeze:
            raise CommandRejected("this table does not squeeze: every card shows as it is drawn")
        if rnd is None or not rnd.hidden:
            raise CommandRejected("no card is held back")
        round_id = optional_id(args, "round_id")
        if round_id is not None and round_id != rnd.round_id:  # a late or repeated request
            raise CommandRejected(f"round {round_id} is not the round on the table ({rnd.round_id})")
        side, position = args.get("side"), args.get("position")
        if side is not None and position is not None:
            raise CommandRejected("give a side or a position, not both")
        if side is not None and side not in self.game.sides:
            raise CommandRejected(f"{side} is not a side at {self.game.name}")
        chosen = [
            held
            for held, _ in rnd.hidden
            if (position is None or held == position) and (side is None or held.startswith(side))
        ]
        if not chosen:
            raise CommandRejected(f"{position or side} has no card held back")
        self._show(ts, rnd, chosen, "request", self.authority.acted(ts, actor))

    def _show(
        self, ts: float, rnd: RoundState, positions: list[str], reason: str, acted: Acted | None = None
    ) -> None:
        rnd.hidden = [held for held in rnd.hidden if held[0] not in positions]
        self.events.reveal(ts, rnd.round_id, positions, reason, acted)
