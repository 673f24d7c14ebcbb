"""The dealer's word beside the shoe's: at a table that confirms results, a hand's result waits for it.

With ``[rules] confirm_result`` a round whose last card is in is
``confirming`` (the deal puts it there: ``Deal._await_word``): its cards and
totals are published, its winner is not. The dealer declares the winner at
the display, the game server for them, or with the shoe's button. A
declaration that agrees with the cards completes the round, naming who
declared it (``confirmed_by``); one that differs raises ``RESULT_MISMATCH``
and the round waits on, for a declaration that agrees (once a supervisor has
looked) or a void. No declaration within ``confirm_within_s`` raises
``RESULT_UNCONFIRMED`` once; the declaration that settles the hand clears it.
Its slice of the state is the round's (``RoundState.confirm_due`` and after).
"""

from __future__ import annotations

from typing import Any

from scannerd.contract.alert_catalogue import message
from scannerd.core.games import Game
from scannerd.core.house import HouseRules
from scannerd.core.inputs import Actor
from scannerd.core.judges.authority import Authority
from scannerd.core.judges.builder import Acted, EventBuilder
from scannerd.core.judges.deal import Deal
from scannerd.core.judges.judge import CommandRejected, Handler, optional_id
from scannerd.core.judges.table_top import RoundState, TableTop


class Confirmation:
    def __init__(
        self,
        rules: HouseRules,
        game: Game,
        events: EventBuilder,
        top: TableTop,
        deal: Deal,
        authority: Authority,
    ) -> None:
        self.rules = rules
        self.game = game
        self.events = events
        self.top = top
        self.deal = deal
        self.authority = authority
        self.winners = (*game.sides, "tie")

    def commands(self) -> dict[str, Handler]:
        return {"confirm_result": self.confirm_result}

    def _awaiting(self) -> RoundState | None:
        rnd = self.top.round
        return rnd if rnd is not None and rnd.phase == "confirming" else None

    def confirm_result(self, ts: float, args: dict[str, Any], actor: Actor | None) -> None:
        if not self.rules.confirm_result:
            raise CommandRejected("this table does not confirm results: each hand's result is the cards'")
        rnd = self._awaiting()
        if rnd is None:
            raise CommandRejected("no hand awaits the dealer's result")
        round_id = optional_id(args, "round_id")
        if round_id is not None and round_id != rnd.round_id:  # a late or repeated request
            raise CommandRejected(f"round {round_id} is not the round on the table ({rnd.round_id})")
        winner = args.get("winner")
        if winner not in self.winners:
            raise CommandRejected(
                f"{winner} is not a result at {self.game.name}: one of {', '.join(self.winners)}"
            )
        self._declared(ts, rnd, winner, self.authority.acted(ts, actor))

    def button(self, ts: float, name: str) -> None:
        """The shoe's button: a winner's name declares it for the dealer signed in; any other is ignored,
        as is a press with no hand awaiting its result (the dealer pressed early, or twice)."""
        rnd = self._awaiting()
        if rnd is not None and name in self.winners:
            by = self.authority.dealer_id
            self._declared(ts, rnd, name, {"by": by, "via": "shoe"} if by is not None else {"via": "shoe"})

    def _declared(self, ts: float, rnd: RoundState, declared: str, acted: Acted) -> None:
        judged = self.game.winner(self.game.total(rnd.player), self.game.total(rnd.banker))
        if declared != judged:
            said = message("RESULT_MISMATCH", hand_no=rnd.hand_no, declared=declared, judged=judged)
            self.events.alert(ts, "RESULT_MISMATCH", said, None, rnd.round_id)
            return
        if rnd.unconfirmed_alert is not None and rnd.unconfirmed_alert in self.events.open_alerts:
            self.events.acknowledge(ts, rnd.unconfirmed_alert, acted, cleared=True)
        rnd.confirmed_by, rnd.confirmed_via = acted.get("by"), acted.get("via")
        self.deal.settle(ts, rnd)

    # ------------------------------------------------------------------ time

    def next_due(self) -> float | None:
        """When the hand awaiting the dealer's word is overdue, until that has been said."""
        rnd = self._awaiting()
        return rnd.confirm_due if rnd is not None and rnd.unconfirmed_alert is None else None

    def overdue(self, ts: float) -> None:
        due = self.next_due()
        rnd = self.top.round
        if due is not None and ts >= due and rnd is not None:
            rnd.unconfirmed_alert = self.events.next_seq
            said = message("RESULT_UNCONFIRMED", hand_no=rnd.hand_no)
            self.events.alert(ts, "RESULT_UNCONFIRMED", said, None, rnd.round_id)
