"""Checking the validator's output against the simulated dealer's expectations.

Shared by the in-process and the end-to-end simulator tests: each step's
events (whatever path they took to the validator) must match what the
dealer's expectation model says a correct validator gives.
"""

from __future__ import annotations

from scannerd.events import AlertEvent, CardEvent, Event, RoundEvent
from simulators.actions import Draw, Step, Unreadable

_ENDS = ("complete", "void")


def mismatches(step: Step, events: list[Event], rejected: bool = False) -> list[str]:
    """What differs between ``step.expect`` and the events the validator gave for that step."""
    exp = step.expect
    problems: list[str] = []
    alerts = tuple(e.code for e in events if isinstance(e, AlertEvent))
    if alerts != exp.alerts:
        problems.append(f"alerts {alerts} != expected {exp.alerts}")
    if rejected != exp.rejected:
        problems.append(f"rejected={rejected}, expected {exp.rejected}")
    if isinstance(step.action, Draw | Unreadable):
        positions = [e.position for e in events if isinstance(e, CardEvent)]
        if positions != [exp.position]:
            problems.append(f"positions {positions} != expected [{exp.position}]")
    ends = [
        (e.phase, e.winner) for e in events if isinstance(e, RoundEvent) and e.phase in ("complete", "void")
    ]
    want = [(exp.round_end, exp.winner)] if exp.round_end else []
    if ends != want:
        problems.append(f"round ends {ends} != expected {want}")
    return [f"{step.action}: {p}" for p in problems]
