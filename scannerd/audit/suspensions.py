"""How long each table stood suspended, and for what: its suspension events paired into periods.

A table stops on an alert the house lists (``suspend_on``) and deals again
when a supervisor resumes it; both are ``suspension`` events naming the
same ``alert_id`` and ``since``, which is what pairs them, whichever files
they are in. A resume whose stop is in a file not given still says when
the stop was (``since``), so it is a whole period. A stop never resumed in
the recordings given is **open**: it counts up to the table's last event,
the last moment the recordings vouch for, and is marked so.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from scannerd.audit.facts import SuspensionFact


@dataclass(frozen=True, slots=True)
class Period:
    """One suspension of a table: from ``since`` until resumed (or, ``open``, until its last event)."""

    table_id: str
    cause: str
    alert_id: int
    since: float
    until: float
    open: bool
    by: str | None = None  # who resumed it, through what, and why
    via: str | None = None
    reason: str | None = None

    @property
    def seconds(self) -> float:
        return max(self.until - self.since, 0.0)

    def to_json(self) -> dict[str, Any]:
        return {
            "table_id": self.table_id,
            "cause": self.cause,
            "alert_id": self.alert_id,
            "since": self.since,
            "until": self.until,
            "seconds": round(self.seconds, 3),
            "open": self.open,
            "by": self.by,
            "via": self.via,
            "reason": self.reason,
        }


def periods(table_id: str, events: Iterable[SuspensionFact], last_ts: float | None) -> list[Period]:
    """A table's suspensions, paired; ``last_ts`` (its last event's time) ends those never resumed."""
    stops: dict[tuple[int, float], SuspensionFact] = {}
    resumes: dict[tuple[int, float], SuspensionFact] = {}
    for event in events:
        key = (event.alert_id, event.since)
        if event.suspended:
            stops.setdefault(key, event)
        else:
            resumes.setdefault(key, event)
    out = []
    for key in sorted(stops.keys() | resumes.keys(), key=lambda k: (k[1], k[0])):
        alert_id, since = key
        resume = resumes.get(key)
        if resume is not None:
            by, via, reason = resume.by, resume.via, resume.reason
            out.append(Period(table_id, resume.cause, alert_id, since, resume.ts, False, by, via, reason))
        else:
            until = since if last_ts is None else max(last_ts, since)
            out.append(Period(table_id, stops[key].cause, alert_id, since, until, True))
    return out


def _sums(periods: list[Period]) -> dict[str, Any]:
    return {
        "count": len(periods),
        "seconds": round(sum((p.seconds for p in periods), 0.0), 3),
        "open": sum(p.open for p in periods),
    }


def _by_cause(periods: list[Period]) -> dict[str, Any]:
    causes = sorted({p.cause for p in periods})
    return {cause: _sums([p for p in periods if p.cause == cause]) for cause in causes}


def report(tables: Iterable[str], found: list[Period]) -> dict[str, Any]:
    """Time suspended over all tables, per table (every table, suspended or not) and per cause."""
    return {
        **_sums(found),
        "causes": _by_cause(found),
        "tables": [
            {"table_id": table, **_sums(mine), "causes": _by_cause(mine)}
            for table in sorted(tables)
            for mine in ([p for p in found if p.table_id == table],)
        ],
        "periods": [p.to_json() for p in found],
    }
