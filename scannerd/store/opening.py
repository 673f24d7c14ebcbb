"""A start's table: the state it restores, and the ``seq`` it goes on from, never one used before.

What a start finds on disk decides what the table may publish next:
- a saved state: the table goes on from it, unless the machine itself died (a batch published
  may not have been synced: ``seq`` skips ahead) or the state is older than what was published
  (an outbox put back from a copy, its WAL lost, its journal broken: ``seq`` goes above the
  ceiling, and the state counts as lost);
- no saved state: a new table starts from its clock; one that had state and lost it goes on above
  the ceiling, and the loss is said.
The decisions live here, beside the outbox and the ceiling they read; the daemon only wires the
table they give.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import structlog

from scannerd.contract.topics import Topics
from scannerd.core.table import SavedState, Table
from scannerd.store.journal import restore
from scannerd.store.outbox import Outbox
from scannerd.store.seq_ceiling import SeqCeiling, clock_floor

log = structlog.get_logger(__name__)

SEQ_SKIP_AFTER_POWER_LOSS = 1000
"""More than one read's events: the most that can be published and not yet synced when the power goes."""

_STALE = (
    "saved state older than what was published (an outbox put back from a copy, or its WAL lost): "
    "seq continues above anything published"
)


@dataclass(frozen=True, slots=True)
class Opened:
    """The table a start goes on with, and what it found."""

    table: Table
    saved: SavedState | None
    """The saved state found, its driver's part too (the round left open is judged: ``Restarted``)."""
    state_lost: bool
    """The table had state and it is gone or stale: ``STATE_LOST`` is raised."""


def open_table(
    outbox: Outbox,
    ceiling: SeqCeiling,
    make_table: Callable[[SavedState | None], Table],
    topics: Topics,
    now: float,
) -> Opened:
    """The table as the outbox and the ceiling left it, its ``seq`` reserved above anything published."""
    restored = restore(outbox, make_table, topics)
    saved = restored.saved
    if saved is not None and outbox.power_lost:
        # The last batch may have been published and then lost with the power: never reuse
        # its seqs for other events, or a consumer dropping repeats by seq would drop them.
        saved = saved.skip_seq(SEQ_SKIP_AFTER_POWER_LOSS)
        log.warning(
            "the machine stopped without a clean shutdown: seq skips ahead", skipped=SEQ_SKIP_AFTER_POWER_LOSS
        )
    table = make_table(saved)
    validator = table.validator
    lost = False
    if saved is not None:
        log.info("state restored", next_seq=validator.next_seq, journal_rows=restored.replayed)
        if restored.broken is not None:
            why = (
                "the outbox's journal disagrees with the events stored with it: the state after "
                "the last row that agrees is kept, seq continues above anything published"
            )
            lost = _above_ceiling(table, outbox, ceiling, now, why, journal=restored.broken,
                                  rows_not_judged=restored.rows_left)  # fmt: skip
        elif validator.next_seq <= ceiling.published:
            lost = _above_ceiling(table, outbox, ceiling, now, _STALE)
    else:
        lost = _fresh(table, outbox, ceiling, now)
    reserve(ceiling, validator.next_seq)
    return Opened(table, saved, lost)


def _fresh(table: Table, outbox: Outbox, ceiling: SeqCeiling, now: float) -> bool:
    """No saved state: ``seq`` starts above anything this table can have published before.

    With the ceiling file present the table had state, and it is gone: a consumer may have lost
    events, so the dealer, the pit and the log are told (True).
    """
    validator = table.validator
    validator.next_seq = max(clock_floor(now), ceiling.value or 1)
    if ceiling.value is None and not ceiling.damaged:
        log.info("no saved state: a new table", next_seq=validator.next_seq)
        return False
    log.error(
        "saved state lost: the outbox holds none, seq continues above anything published",
        outbox=str(outbox.path),
        ceiling_file=str(ceiling.path),
        next_seq=validator.next_seq,
    )
    return True


def _above_ceiling(
    table: Table, outbox: Outbox, ceiling: SeqCeiling, now: float, why: str, **detail: object
) -> bool:
    """The saved state is older than what was published: numbers from it would be reused."""
    validator = table.validator
    stale = validator.next_seq
    validator.next_seq = max(clock_floor(now), ceiling.value or 1)
    log.error(
        why,
        **detail,
        outbox=str(outbox.path),
        stale_next_seq=stale,
        published=ceiling.published,
        next_seq=validator.next_seq,
    )
    return True


def reserve(ceiling: SeqCeiling, seq: int) -> None:
    """Move the ceiling up to cover ``seq``; a full disk is said, and the clock floor still holds."""
    if ceiling.covers(seq):
        return
    try:
        ceiling.reserve(seq)
    except OSError as exc:
        log.error("could not move the seq ceiling up", file=str(ceiling.path), error=str(exc))
