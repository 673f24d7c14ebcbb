"""Per staff member: the hands they dealt, their misdeals, and the actions the events say they took.

The audit runs on the casino's side, without the tables' staff lists, so a
staff id is whatever the events name: a round's ``dealer_id`` (the dealer
signed in when it opened), a ``dealer`` event's ``dealer_id`` (a sign-in),
and the ``by`` of an action's event (an acknowledged alert, an operator's
void, a resume). ``by`` is a staff id, a pit's broker user or
``gameserver`` (the game server acting without naming anyone), and each is
a row of its own; ``via`` says through what, kept beside each count.

A misdeal is its round's dealer's; one of no round (a card between rounds,
after the shoe's end) is the dealer's signed in at its time, and counted
again apart (``misdeals_outside_rounds``) so the two can be told apart.
What no one is named for (hands with no dealer signed in, actions from
recordings made before actions carried who took them) is the row whose
``staff_id`` is null, so every column adds up to the whole archive's.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from scannerd.audit.facts import FileFacts, RoundFact

OPERATOR_VOID = "OPERATOR_VOID"


@dataclass
class StaffMember:
    """What the events credit one staff id with (``staff_id`` None: no one named)."""

    staff_id: str | None
    tables: set[str] = field(default_factory=set)
    hands: int = 0
    misdeals: Counter[str] = field(default_factory=Counter)
    misdeals_outside_rounds: int = 0
    ack_seconds: list[float] = field(default_factory=list)  # of the acknowledgements that can be timed
    acknowledged: Counter[str] = field(default_factory=Counter)  # by via
    voids: Counter[str] = field(default_factory=Counter)  # by via
    sign_ins: Counter[str] = field(default_factory=Counter)  # by via
    resumes: Counter[str] = field(default_factory=Counter)  # by via

    def to_json(self) -> dict[str, Any]:
        misdeals = sum(self.misdeals.values())
        acks = self.ack_seconds
        return {
            "staff_id": self.staff_id,
            "tables": sorted(self.tables),
            "hands": self.hands,
            "misdeals": dict(sorted(self.misdeals.items())),
            "all_misdeals": misdeals,
            "misdeals_per_100_hands": round(100 * misdeals / self.hands, 2) if self.hands else None,
            "misdeals_outside_rounds": self.misdeals_outside_rounds,
            **_counted("acknowledged", self.acknowledged),
            "mean_ack_s": round(sum(acks) / len(acks), 2) if acks else None,
            "max_ack_s": round(max(acks), 2) if acks else None,
            **_counted("voids", self.voids),
            **_counted("sign_ins", self.sign_ins),
            **_counted("resumes", self.resumes),
        }


def _counted(name: str, by_via: Counter[str]) -> dict[str, Any]:
    """``name``: the count; ``name_via``: the same per channel (display, pit, gameserver)."""
    return {name: by_via.total(), f"{name}_via": dict(sorted(by_via.items()))}


def _via(via: str | None) -> str:
    """A channel's name; a recording from before actions carried who took them names none."""
    return via or "unknown"


class Staff:
    """Every staff id the events name, with what they are credited with; fed table by table."""

    def __init__(self) -> None:
        self.members: dict[str | None, StaffMember] = {}

    def _member(self, staff_id: str | None, table: str) -> StaffMember:
        member = self.members.setdefault(staff_id, StaffMember(staff_id))
        member.tables.add(table)
        return member

    def add_round(self, table: str, rnd: RoundFact) -> None:
        """A round, once however many files it straddles: a hand for its dealer, a void for who voided."""
        if rnd.void is None and rnd.winner is not None:
            self._member(rnd.dealer_id, table).hands += 1
        if rnd.void == OPERATOR_VOID:
            self._member(rnd.void_by, table).voids[_via(rnd.void_via)] += 1

    def add_file(self, table: str, f: FileFacts) -> None:
        """A file's misdeals, acknowledgements, sign-ins and resumes."""
        for misdeal in f.misdeals:
            member = self._member(misdeal.dealer_id, table)
            member.misdeals[misdeal.code] += 1
            if misdeal.round_id is None:
                member.misdeals_outside_rounds += 1
        for ack in f.acks:
            member = self._member(ack.by, table)
            member.acknowledged[_via(ack.via)] += 1
            if ack.raised is not None:
                member.ack_seconds.append(ack.ts - ack.raised)
        for sign_in in f.sign_ins:
            self._member(sign_in.dealer_id, table).sign_ins[_via(sign_in.via)] += 1
        for s in f.suspensions:
            if not s.suspended:
                self._member(s.by, table).resumes[_via(s.via)] += 1

    def to_json(self) -> list[dict[str, Any]]:
        """A row per staff id, in order, and last the row of what no one is named for (if any)."""
        named = sorted((k, m) for k, m in self.members.items() if k is not None)
        rows = [m.to_json() for _, m in named]
        if None in self.members:
            rows.append(self.members[None].to_json())
        return rows
