"""The outbox's journal: what the table was given, stored with its events instead of a snapshot per store.

A validator snapshot is the whole table (the shoe, the round, the open alerts,
the shuffle check's history of recent shoes): kilobytes, built and written for
every read from the shoe. What changed it is a few dozen bytes: the inputs the
``Table`` judged. So each store journals those inputs (and the driver's part
of the state, which is small and is not an input) in the transaction of
their events, and the whole state is written only now and then
(``Schedule``): at the first store after a start, at a new shoe, every
``SNAPSHOT_EVERY`` inputs and at a clean stop. A snapshot trims the journal
it covers (``scannerd.store.outbox``).

A start restores the newest snapshot and judges the journal's inputs after it
through the same pure ``Table``, which makes the same events again: they are
not published again (they are in the outbox already, under their seqs), but
their digest must equal the one stored with the row. A row whose inputs do
not make the events it was stored with (the validator changed between the
two runs, a row damaged on disk) stops the replay: the state is the one
after the last row that agreed, and the daemon treats the rest as lost
(``STATE_LOST``, seq moved above anything published), since the events
stored are what consumers have, and a state that disagrees with them cannot
be trusted to number the next ones.

The inputs are encoded as the validator takes them, not as a recording keeps
them: a recording's device bytes need the codec's half-read frames and the
framed shoe's dedup to decode again, which no snapshot holds; the judged
input is exact on its own.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, fields
from typing import Any, get_args

from scannerd.contract.events import EventData
from scannerd.contract.topics import Topics
from scannerd.core.inputs import Actor, Command, ValidatorInput
from scannerd.core.table import SavedState, Table
from scannerd.core.validator import CommandRejected
from scannerd.store.outbox import JournalRow, Outbox, digest

SNAPSHOT_EVERY = 256
"""Inputs journalled between snapshots. ``python -m bench.store_cost`` on the project's machine
(docs/performance.md): a store with a snapshot (3 to 5 KB of state, growing with the shuffle check's
shoes) costs about 0.2 ms more than one with a journal row (about 125 bytes), so one in 256 adds under
1 us a card; a start on the longest journal this leaves judges it again in about 9 ms. Fewer would
cost every card more for a start nobody waits on; more would save nothing measurable."""

_KINDS: dict[str, type] = {cls.__name__: cls for cls in get_args(ValidatorInput)}


def encode(inputs: Sequence[ValidatorInput], device: dict[str, Any] | None) -> str:
    """One store's journal entry: its inputs in the order judged, and the driver's state after them."""
    items = [{"in": type(i).__name__, **_fields(i)} for i in inputs]
    return json.dumps({"inputs": items, "device": device}, separators=(",", ":"), ensure_ascii=False)


def _fields(inp: ValidatorInput) -> dict[str, Any]:
    """An input's fields as JSON; a command's actor as its dict, left out when no one is named."""
    values = {f.name: getattr(inp, f.name) for f in fields(inp)}
    if isinstance(inp, Command):
        actor = values.pop("actor")
        if actor is not None:
            values["actor"] = actor.to_dict()
    return values


def decode(text: str) -> tuple[list[ValidatorInput], dict[str, Any] | None]:
    """The inputs and device state of an entry; ValueError (or KeyError, TypeError) when it is not one."""
    entry = json.loads(text)
    inputs = []
    for item in entry["inputs"]:
        values = dict(item)
        if "actor" in values:
            values["actor"] = Actor(**values["actor"])
        inputs.append(_KINDS[values.pop("in")](**values))
    return inputs, entry["device"]


@dataclass(frozen=True, slots=True)
class Restored:
    """What a start finds: the state to go on from, and whether the journal agreed with its events."""

    saved: SavedState | None  # the newest snapshot with the journal after it judged; None: no state
    replayed: int  # journal rows judged
    broken: str | None = None  # why the replay stopped short of the journal's end (the row, the fault)
    rows_left: int = 0  # rows after the one that broke it, not judged


def restore(outbox: Outbox, make_table: Callable[[SavedState | None], Table], topics: Topics) -> Restored:
    """The table's state at its last store: the newest snapshot, then the journal after it, judged."""
    saved = SavedState.from_dict(outbox.state())
    rows = outbox.journal()
    if not rows:
        return Restored(saved, 0)
    table = make_table(saved)
    device = saved.device if saved is not None else None
    for n, row in enumerate(rows):
        try:
            device = _judge(table, row, topics)
        except _Broken as exc:
            # The row's inputs may have been judged in part: the state is the one before it, again.
            good = _replay(make_table(saved), rows[:n], topics, saved)
            return Restored(good, n, f"journal row {row.id}: {exc}", len(rows) - n)
    return Restored(table.saved_state(device), len(rows))


def _replay(table: Table, rows: Sequence[JournalRow], topics: Topics, saved: SavedState | None) -> SavedState:
    """The state after rows already known to agree with their events."""
    device = saved.device if saved is not None else None
    for row in rows:
        device = _judge(table, row, topics)
    return table.saved_state(device)


class _Broken(Exception):
    """A journal row the replay cannot go past; ``str()`` says what is wrong with it."""


def _judge(table: Table, row: JournalRow, topics: Topics) -> dict[str, Any] | None:
    """The row's device state once its inputs are judged; _Broken when they do not make its events."""
    try:
        inputs, device = decode(row.entry)
        events = [event for inp in inputs for event in _events(table, inp)]
    except (ValueError, KeyError, TypeError) as exc:  # a damaged row, or one of another validator
        raise _Broken(f"unreadable ({type(exc).__name__}: {exc})") from None
    if digest(topics.messages(events)) != row.digest:
        raise _Broken("its inputs make other events than the ones stored with it")
    return device


def _events(table: Table, inp: ValidatorInput) -> list[EventData]:
    """What the input made live: a command the validator refused made nothing and changed nothing."""
    try:
        return table.judge(inp).events
    except CommandRejected:
        return []


class Schedule:
    """When a store writes the whole state rather than a journal row; the daemon's, under its lock."""

    def __init__(self) -> None:
        # The first store after a start: the state may have changed by no input (seq moved on after
        # a power cut or a lost state, a journal that broke off), and a snapshot records it.
        self.due = True
        self._inputs = 0
        self._shoe: object = None

    def snapshot_now(self, inputs: int, shoe: object) -> bool:
        """Whether this store, of ``inputs`` journalled inputs with ``shoe`` under way, is a snapshot.

        A new shoe is a boundary: what the shuffle check keeps of the last
        shoe is settled, and a restart in this shoe replays none of the last.
        """
        self._inputs += inputs
        if not (self.due or self._inputs >= SNAPSHOT_EVERY or shoe is not self._shoe):
            return False
        self.due = False
        self._inputs = 0
        self._shoe = shoe
        return True
