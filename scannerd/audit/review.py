"""The hands someone must look at on video, each with the time range to find it by.

A row for each round a misdeal was raised in or that was voided, and for
each misdeal of no round (an extra card after a hand, a card after the
shoe's end), at its alert's time. Surveillance finds a hand in its video
management system by camera (the table), date and start and end time, in
the local time the system shows; so each row gives its range twice: as UTC
instants (RFC 3339, what ``scannerd captions --from``/``--to`` take, and
what no change of zone or clock makes ambiguous) and as one line to type,
``T1  2024-05-06  14:00:55 - 14:02:10``, in the zone ``scannerd audit --tz``
names.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from datetime import UTC, datetime, tzinfo
from typing import Any

from scannerd.audit.facts import MisdealFact, RoundFact
from scannerd.recording.format import rfc3339

PAD_S = 5
"""Seconds the range reaches before a hand's first event and after its last.

An event is stamped when the table read its input: the dealer's hands are
over the layout before the first card leaves the shoe and after the last,
and the video recorder keeps its own clock, a second or two off the table's
even when both are kept by a time service.
"""


def hands(
    table_id: str, rounds: Iterable[RoundFact], misdeals: Iterable[MisdealFact], zone: tzinfo
) -> list[dict[str, Any]]:
    """A table's rows in time order; a misdeal naming a round not in these recordings is a row of its own."""
    by_key = {(r.shoe_id, r.round_id): r for r in rounds}
    codes: dict[tuple[str | None, str], list[str]] = {}
    rows: list[tuple[float, dict[str, Any]]] = []
    for m in misdeals:
        if m.round_id is not None and (m.shoe_id, m.round_id) in by_key:
            codes.setdefault((m.shoe_id, m.round_id), []).append(m.code)
            continue
        about: dict[str, Any] = {
            "shoe_id": m.shoe_id,
            "hand_no": None,
            "round_id": m.round_id,
            "dealer_id": m.dealer_id,
            "misdeals": [m.code],
            "void": None,
            "void_by": None,
            "void_via": None,
        }
        rows.append((m.ts, _row(table_id, about, m.ts, m.ts, zone)))
    for key, r in by_key.items():
        if key in codes or r.void is not None:
            about = {
                "shoe_id": r.shoe_id,
                "hand_no": r.hand_no,
                "round_id": r.round_id,
                "dealer_id": r.dealer_id,
                "misdeals": codes.get(key, []),
                "void": r.void,
                "void_by": r.void_by,
                "void_via": r.void_via,
            }
            rows.append((r.opened, _row(table_id, about, r.opened, r.last, zone)))
    return [row for _, row in sorted(rows, key=lambda r: r[0])]


def _row(table_id: str, about: dict[str, Any], first: float, last: float, zone: tzinfo) -> dict[str, Any]:
    """A hand's row: its range padded, and widened to whole seconds so that it holds every event."""
    start, end = math.floor(first - PAD_S), math.ceil(last + PAD_S)
    return {
        "table_id": table_id,
        **about,
        "from": rfc3339(datetime.fromtimestamp(start, UTC)),
        "to": rfc3339(datetime.fromtimestamp(end, UTC)),
        "line": line(table_id, start, end, zone),
    }


def line(table_id: str, start: float, end: float, zone: tzinfo) -> str:
    """``T1  2024-05-06  14:00:55 - 14:02:10`` in ``zone``; the end's date too when it is another day."""
    a, b = (datetime.fromtimestamp(t, zone) for t in (start, end))
    until = f"{b:%H:%M:%S}" if b.date() == a.date() else f"{b:%Y-%m-%d}  {b:%H:%M:%S}"
    return f"{table_id}  {a:%Y-%m-%d}  {a:%H:%M:%S} - {until}"
