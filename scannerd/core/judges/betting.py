"""Betting: when a round may be bet on, for how long, and who opens and closes it.

With ``round_control = "server"`` the game server's ``betting_open`` and
``betting_close`` open and close it; with ``"auto"`` and a house betting time
the table runs its own betting, opening it once a hand is over and closing it
when the time runs out, at that very moment whichever input finds it over.
A round's betting time is the round's (``RoundState.betting_time``,
``betting_ends``, set when it opens): betting keeps no state of its own.
"""

from __future__ import annotations

from typing import Any

from scannerd.contract.alert_catalogue import message
from scannerd.core.house import HouseRules
from scannerd.core.inputs import Actor
from scannerd.core.judges.authority import Authority
from scannerd.core.judges.builder import EventBuilder
from scannerd.core.judges.deal import Deal
from scannerd.core.judges.judge import CommandRejected, Handler, optional_id
from scannerd.core.judges.shoe import ShoeJudge
from scannerd.core.judges.table_top import TableTop


class Betting:
    def __init__(
        self,
        rules: HouseRules,
        events: EventBuilder,
        top: TableTop,
        shoe_judge: ShoeJudge,
        deal: Deal,
        authority: Authority,
    ) -> None:
        self.rules = rules
        # Read once: each read of the rules (a pydantic model) is a generic lookup, here at every card.
        self.auto = rules.round_control == "auto"
        self.events = events
        self.top = top
        self.shoe_judge = shoe_judge
        self.deal = deal
        self.authority = authority

    def commands(self) -> dict[str, Handler]:
        return {"betting_open": self.betting_open, "betting_close": self.betting_close}

    def betting_open(self, ts: float, args: dict[str, Any], actor: Actor | None) -> None:
        round_id = optional_id(args, "round_id")
        shoe, rnd, suspended = self.top.shoe, self.top.round, self.authority.suspended
        if suspended is not None:
            raise CommandRejected(
                f"the table is suspended ({suspended['message']}): a supervisor must resume it"
            )
        if shoe is not None and shoe.closed:
            raise CommandRejected(f"shoe {shoe.shoe_id} is finished: start a new shoe")
        if rnd is not None and rnd.phase == "betting":
            raise CommandRejected(f"betting is already open for round {rnd.round_id}")
        if rnd is not None and rnd.phase == "confirming":
            raise CommandRejected(
                f"round {rnd.round_id} awaits the dealer's result: declare its winner first"
            )
        if rnd is not None and rnd.phase == "dealing" and rnd.last_hand:
            raise CommandRejected(
                f"round {rnd.round_id} is the last hand of the shoe and still has cards due: "
                "void it, then start a new shoe"
            )
        betting_time = args.get("betting_time_s", self.rules.betting_time_s)
        if betting_time is not None and (
            not isinstance(betting_time, int | float) or isinstance(betting_time, bool) or betting_time <= 0
        ):
            raise CommandRejected("betting_time_s must be a positive number of seconds")
        if rnd is not None and rnd.phase == "dealing":
            said = message("SHORT_DEAL", round_id=rnd.round_id)
            self.events.alert(ts, "SHORT_DEAL", said, None, rnd.round_id)
            self.deal.void(ts, "SHORT_DEAL")
        self.deal.open_round(ts, round_id, "betting", betting_time)

    def betting_close(self, ts: float, args: dict[str, Any], actor: Actor | None) -> None:
        rnd = self.top.round
        if rnd is None or rnd.phase != "betting":
            raise CommandRejected("betting is not open")
        self._close(ts)

    def _close(self, ts: float) -> None:
        """Betting closes: a burn still under way is given up, and the round deals."""
        rnd = self.top.round
        assert rnd is not None
        abandoned = self.shoe_judge.abandon_burn(ts, rnd.round_id)
        self.deal.start_dealing(ts)
        if abandoned:
            self.shoe_judge.publish(ts)

    # ------------------------------------------------------------------ the table's own betting

    def open_by_itself(self, ts: float) -> None:
        """With no game server and a house betting time, the table runs its own betting.

        Betting opens once the input that ended a hand (or the shoe's first link report) is
        judged, and closes when the time runs out, as the table's timer would. Only inputs
        a recording keeps open it, never a tick, so a replay opens it at the same time.
        """
        rnd, shoe = self.top.round, self.top.shoe
        if (
            self.auto
            and self.rules.betting_time_s is not None
            and self.shoe_judge.link_up
            and self.authority.suspended is None
            and self.deal.clearing_alert is None
            and (rnd is None or rnd.phase in ("complete", "void"))
            and not (shoe is not None and shoe.closed)
        ):
            self.deal.open_round(ts, None, "betting", self.rules.betting_time_s)

    def close_if_over(self, ts: float) -> None:
        """Close the table's own betting if its time ran out by ``ts``, at the moment it ran out."""
        ends = self.ends()
        if ends is not None and ts >= ends:
            self._close(ends)

    def ends(self) -> float | None:
        """When the betting the table closes itself runs out: a round in betting in auto mode, with a time."""
        rnd = self.top.round
        if not self.auto or rnd is None or rnd.phase != "betting":
            return None
        return rnd.betting_ends
