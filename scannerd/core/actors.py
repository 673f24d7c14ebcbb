"""Who may take an operator action: the staff list's verdict as the command brought it, and lockouts.

The display checks a PIN against the staff list; what it found arrives with
the command (``Actor``). Judging it, and counting wrong PINs, is the
validator's, as a pure function of the commands and their times, so that a
replay refuses and locks the same id at the same moment and the lockout's
alert takes its ``seq`` in order.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Literal

from scannerd.core.inputs import Actor

Need = Literal["pin", "supervisor"] | None
"""What an action asks of whoever takes it at the display: nothing, a staff PIN, a supervisor's PIN."""

WRONG = "wrong staff id or PIN"
"""The same words for an id the list does not hold and a wrong PIN: no one learns which ids exist."""


class Refused(Exception):
    """The action is refused; ``locked`` is the id this refusal locked, if it did."""

    def __init__(self, text: str, locked: str | None = None) -> None:
        super().__init__(text)
        self.locked = locked


@dataclass(slots=True)
class Lockouts:
    """``attempts`` wrong PINs in a row lock an id for ``lock_s`` seconds; a right one clears its count."""

    attempts: int
    lock_s: float
    wrong: dict[str, int] = field(default_factory=dict)  # wrong PINs in a row, per id
    until: dict[str, float] = field(default_factory=dict)  # locked ids, and until when

    def locked(self, staff_id: str, ts: float) -> float | None:
        """When ``staff_id``'s lock ends, while it is locked at ``ts``; a lock that ended is forgotten."""
        end = self.until.get(staff_id)
        if end is not None and ts >= end:
            del self.until[staff_id]
            end = None
        return end

    def failed(self, staff_id: str, ts: float) -> bool:
        """Count a wrong PIN; True when it locks the id (its count starts again after the lock)."""
        count = self.wrong.get(staff_id, 0) + 1
        if count < self.attempts:
            self.wrong[staff_id] = count
            return False
        self.wrong.pop(staff_id, None)
        self.until[staff_id] = ts + self.lock_s
        return True

    def passed(self, staff_id: str) -> None:
        self.wrong.pop(staff_id, None)

    def snapshot(self) -> dict[str, Any] | None:
        """None while nothing is counted, so a table that never saw a wrong PIN saves what it did before."""
        if not self.wrong and not self.until:
            return None
        return {"wrong": dict(self.wrong), "until": dict(self.until)}

    def restore(self, snap: dict[str, Any] | None) -> None:
        self.wrong = dict(snap["wrong"]) if snap else {}
        self.until = dict(snap["until"]) if snap else {}


def vouch(actor: Actor | None, need: Need, lockouts: Lockouts, ts: float) -> str | None:
    """Who took the action (an event's ``by``), or Refused; None when the actor names no one.

    At the display, with a staff list (``role`` set), a typed PIN is judged
    and counted, and an action that needs one is refused without it. A staff
    member the game server names must be on the list, a supervisor where one
    is needed. Without a list the table takes what it is told, as before.
    """
    if actor is None:
        return None
    if actor.via == "display" and actor.role is not None:
        if actor.pin is not None:
            _pin(actor, lockouts, ts)
        elif need is not None:
            raise Refused("a staff id and PIN are needed for this")
        if need == "supervisor" and actor.role != "supervisor":
            raise Refused(f"{actor.by} is not a supervisor: a supervisor's PIN is needed")
    elif actor.via == "gameserver" and actor.role == "unknown":
        raise Refused(f"{actor.by} is not on the table's staff list")
    elif actor.via == "gameserver" and need == "supervisor" and actor.role == "dealer":
        raise Refused(f"{actor.by} is not a supervisor")
    return actor.by


def _pin(actor: Actor, lockouts: Lockouts, ts: float) -> None:
    staff_id = actor.by
    if staff_id is None:
        raise Refused(WRONG)
    end = lockouts.locked(staff_id, ts)
    if end is not None:
        until = datetime.fromtimestamp(end, UTC).strftime("%H:%M:%S UTC")
        raise Refused(f"{staff_id} is locked after too many wrong PINs, until {until}")
    if actor.role == "unknown":  # not counted: only the list's ids can be locked, so the count stays small
        raise Refused(WRONG)
    if actor.pin == "wrong":
        raise Refused(WRONG, staff_id if lockouts.failed(staff_id, ts) else None)
    lockouts.passed(staff_id)
