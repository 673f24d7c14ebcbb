"""Authority: who may take an action, and whether the table may deal at all.

It judges the verdict a command brings on who took it (``Actor``: the staff
list's role, a PIN right or wrong; ``scannerd.core.actors``), counts wrong PINs
towards a lockout, keeps the dealer signed in, and stops the table on an
alert the house names in ``suspend_on`` until a supervisor resumes it.
Its slice of the state: the lockouts, the dealer signed in, the suspension.
"""

from __future__ import annotations

from typing import Any

from scannerd.contract.alert_catalogue import message
from scannerd.core.actors import Lockouts, Need, Refused, vouch
from scannerd.core.house import HouseRules
from scannerd.core.inputs import Actor
from scannerd.core.judges.builder import Acted, EventBuilder
from scannerd.core.judges.judge import CommandRejected, Handler, optional_id


class Authority:
    def __init__(self, rules: HouseRules, events: EventBuilder) -> None:
        self.rules = rules
        self.events = events
        self.lockouts = Lockouts(rules.pin_attempts, rules.pin_lockout_s)
        self.dealer_id: str | None = None  # who is dealing, once signed in
        # While suspended: what stopped the table (a SuspensionEvent's cause, alert_id, since, message).
        self.suspended: dict[str, Any] | None = None

    def commands(self) -> dict[str, Handler]:
        return {
            "dealer_sign_in": self.dealer_sign_in,
            "dealer_sign_out": self.dealer_sign_out,
            "resume": self.resume,
        }

    def acted(self, ts: float, actor: Actor | None, need: Need = None) -> Acted:
        """An event's ``by`` and ``via`` for an action by ``actor``; CommandRejected when it may not take it.

        At the display without a PIN, the dealer signed in took it.
        """
        if actor is None:
            return {}
        try:
            by = vouch(actor, need, self.lockouts, ts)
        except Refused as exc:
            if exc.locked is not None:
                minutes = self.rules.pin_lockout_s / 60
                attempts = self.rules.pin_attempts
                text = message("PIN_LOCKOUT", attempts=attempts, staff_id=exc.locked, minutes=minutes)
                self.events.alert(ts, "PIN_LOCKOUT", text, None)
            raise CommandRejected(str(exc)) from None
        if by is None and actor.via == "display":
            by = self.dealer_id
        return {"by": by, "via": actor.via} if by is not None else {"via": actor.via}

    def dealer_sign_in(self, ts: float, args: dict[str, Any], actor: Actor | None) -> None:
        dealer_id = optional_id(args, "dealer_id")
        if dealer_id is None:
            raise CommandRejected("dealer_id is required")
        self._dealer(ts, dealer_id, self.acted(ts, actor, "pin"))

    def dealer_sign_out(self, ts: float, args: dict[str, Any], actor: Actor | None) -> None:
        if self.dealer_id is None:
            raise CommandRejected("no dealer is signed in")
        self._dealer(ts, None, self.acted(ts, actor))

    def _dealer(self, ts: float, dealer_id: str | None, acted: Acted) -> None:
        """A round keeps the dealer it opened with: a change of dealer mid-round is the next round's."""
        self.dealer_id = dealer_id
        self.events.dealer(ts, dealer_id, acted)

    def suspend(self, ts: float, cause: dict[str, Any]) -> None:
        """Stop the table on ``cause``, an alert the house suspends on (``EventBuilder.suspending``).

        The round it found open is void by then (the validator asks the deal first), so the
        ``suspension`` event comes last, after the void round and the shoe.
        """
        self.suspended = cause | {"since": float(ts)}
        self.events.suspension(ts, self.suspended, True)

    def resume(self, ts: float, args: dict[str, Any], actor: Actor | None) -> None:
        """A supervisor clears the suspension: the table may open betting and deal again."""
        suspended = self.suspended
        if suspended is None:
            raise CommandRejected("the table is not suspended")
        reason = args.get("reason")
        if not isinstance(reason, str) or not reason:
            raise CommandRejected("reason is required: say why the table may deal again")
        if actor is not None and actor.via == "gameserver" and args.get("supervisor_id") is None:
            raise CommandRejected("supervisor_id is required: name the supervisor who resumes the table")
        acted = self.acted(ts, actor, "supervisor")
        self.suspended = None
        self.events.suspension(ts, suspended, False, reason, acted)

    def saved(self) -> dict[str, Any]:
        """Its part of the snapshot; the suspension and lockouts only when there are some, as before them."""
        saved: dict[str, Any] = {"dealer_id": self.dealer_id}
        if self.suspended is not None:
            saved["suspended"] = self.suspended
        lockouts = self.lockouts.snapshot()
        if lockouts is not None:
            saved["lockouts"] = lockouts
        return saved

    def restore(self, snap: dict[str, Any]) -> None:
        self.dealer_id = snap.get("dealer_id")
        self.suspended = snap.get("suspended")
        self.lockouts.restore(snap.get("lockouts"))
