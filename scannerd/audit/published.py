"""Does a file's replay end where the table says it was? The check of replay against what was published.

A recording keeps the table's inputs, not the events it published
(docs/recording.md), so it cannot be compared with them line by line. What
it does keep is the table's own word on where it stood: each file's header
holds the validator's state when the file began, saved by the live table
under the same lock that published its events. That state says how many
events the table had published (``next_seq``: every event carries the next
number), the shoe and its counts, the results of the shoe so far, the open
alerts, the dealer and the shuffle history. Replaying the file before it
must end in exactly that state; anything else means the replay does not
reproduce what the table published, whether the files, the code or the
table are to blame.

Two fields are left out: a round's ``last_activity`` and ``betting_ends``.
They are times, which a step of the wall clock moves without a line in the
file (the recorder starts a new file there, docs/recording.md).
"""

from __future__ import annotations

from typing import Any

CLOCK_FIELDS = frozenset({"last_activity", "betting_ends"})


def differences(replayed: dict[str, Any], recorded: dict[str, Any]) -> list[str]:
    """What differs between a replay's end state and the state the next file's header recorded."""
    out: list[str] = []
    for key in sorted(set(replayed) | set(recorded)):
        mine, theirs = replayed.get(key), recorded.get(key)
        if key == "round" and isinstance(mine, dict) and isinstance(theirs, dict):
            mine = {k: v for k, v in mine.items() if k not in CLOCK_FIELDS}
            theirs = {k: v for k, v in theirs.items() if k not in CLOCK_FIELDS}
        if mine != theirs:
            out.append(_describe(key, mine, theirs))
    return out


def _describe(key: str, replayed: Any, recorded: Any) -> str:
    if key == "next_seq":
        return f"the replay published up to seq {replayed - 1}, the table up to seq {recorded - 1}"
    if isinstance(replayed, dict) and isinstance(recorded, dict):
        keys = sorted(k for k in set(replayed) | set(recorded) if replayed.get(k) != recorded.get(k))
        pairs = ((k, _short(replayed.get(k)), _short(recorded.get(k))) for k in keys[:3])
        shown = ", ".join(f"{k} {mine} (table: {theirs})" for k, mine, theirs in pairs)
        return f"{key}: {shown}" + (f" and {len(keys) - 3} more" if len(keys) > 3 else "")
    if isinstance(replayed, list) and isinstance(recorded, list):
        if len(replayed) == len(recorded):
            return f"{key}: {len(replayed)} in both, not the same ones"
        return f"{key}: {len(replayed)} in the replay, {len(recorded)} at the table"
    return f"{key}: {_short(replayed)} in the replay, {_short(recorded)} at the table"


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."
