"""What one recording's replay shows, kept small: its rounds, misdeals and shuffle alerts, and its state.

This runs in a replay worker (a process of the pool or a Dask worker), so it
hands back plain, picklable facts rather than the thousands of events they
come from: a round is its shoe, dealer, times, result and the facts its
side bets read (a dozen name and value pairs); a misdeal its
code; a suspect shuffle its latest figures (the restatement at the shoe's
end replaces the early alert). The file's chain is walked here too, since
the file is at hand; whether the files follow one another is decided once
all are in (scannerd/recording/verify.py ``judge``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from drivers.base import DriverInitError
from scannerd.contract.events import AlertData, DealerData, EventData, RoundData
from scannerd.core.games import played
from scannerd.core.table import SavedState
from scannerd.recording.format import PastTheEnd, RecordingError, RecordingReader
from scannerd.recording.replay import replayer_for
from scannerd.recording.replay_many import reader_notes
from scannerd.recording.verify import ChainedFile, read_chained

Facts = tuple[tuple[str, Any], ...]
"""A complete round's facts as its event states them, (name, value) in the contract's order."""


@dataclass(frozen=True, slots=True)
class RoundFact:
    """A round as the table judged it: ``winner`` for a complete hand, ``void`` (the reason) if void.

    ``facts`` is empty for a round that states none: one recorded before tables chose their game.
    """

    shoe_id: str | None
    round_id: str
    dealer_id: str | None
    opened: float  # Unix seconds of its first event
    ended: float  # of its last
    winner: str | None = None
    void: str | None = None
    facts: Facts = ()
    times: tuple[float | None, float | None] = (None, None)  # seconds betting, dealing: as its event says


@dataclass(frozen=True, slots=True)
class MisdealFact:
    shoe_id: str | None
    round_id: str | None
    dealer_id: str | None
    code: str
    ts: float


@dataclass(frozen=True, slots=True)
class ShuffleFact:
    """A ``SHUFFLE_SUSPECT`` alert's figures as last stated (``final``: over the whole shoe)."""

    shoe_id: str | None
    earlier_shoe_id: str
    log10_evidence: float
    pairs: int
    forward: int
    backward: int
    final: bool
    ts: float


@dataclass
class FileFacts:
    """One file: what its replay published, its chain, and the table's state where it begins and ends.

    ``game`` is the game its header's rules deal (``scannerd.core.games.played``): every round in it
    is judged by that game's chances for ``decks`` decks.
    """

    path: Path
    table_id: str = ""
    game: str = "punto_banco"
    decks: int = 8
    rounds: list[RoundFact] = field(default_factory=list)
    misdeals: list[MisdealFact] = field(default_factory=list)
    shuffles: list[ShuffleFact] = field(default_factory=list)
    chained: ChainedFile | None = None
    begins: dict[str, Any] | None = None  # the validator state the header saved
    ends: dict[str, Any] | None = None  # the validator state the replay ends in
    notes: tuple[str, ...] = ()
    error: str | None = None  # the file cannot be used: why, naming it


class _Collector:
    """Replayed events into facts; a misdeal is its round's dealer's, else the one signed in."""

    def __init__(self, facts: FileFacts, dealer: str | None) -> None:
        self.facts = facts
        self.rounds: dict[tuple[str | None, str], dict[str, Any]] = {}
        self.dealer = dealer  # signed in: in the file's saved state, then as the events say
        self.misdeals: dict[int, MisdealFact] = {}
        self.shuffles: dict[int, ShuffleFact] = {}

    def add(self, event: EventData | Any) -> None:
        if isinstance(event, RoundData):
            key = (event.shoe_id, event.round_id)
            rnd = self.rounds.setdefault(key, {"opened": event.ts, "dealer_id": event.dealer_id})
            rnd["ended"] = event.ts
            rnd["dealer_id"] = rnd["dealer_id"] or event.dealer_id
            if event.phase == "complete":
                rnd["winner"] = event.winner
                rnd["facts"] = tuple(event.facts.items()) if event.facts else ()
            elif event.phase == "void":
                rnd["void"] = event.reason or "unknown"
            if event.times is not None:
                rnd["times"] = (event.times.betting_s, event.times.dealing_s)
        elif isinstance(event, DealerData):
            self.dealer = event.dealer_id
        elif isinstance(event, AlertData) and not event.acknowledged:
            if event.code == "SHUFFLE_SUSPECT" and event.shuffle is not None:
                figures = event.shuffle
                self.shuffles[event.alert_id] = ShuffleFact(
                    event.shoe_id,
                    figures.earlier_shoe_id,
                    figures.log10_evidence,
                    figures.pairs,
                    figures.forward,
                    figures.backward,
                    figures.final,
                    event.ts,
                )
            elif event.severity == "misdeal" and event.alert_id not in self.misdeals:
                voided = self.rounds.get((event.shoe_id, event.round_id or ""))
                dealer = voided["dealer_id"] if voided else self.dealer
                self.misdeals[event.alert_id] = MisdealFact(
                    event.shoe_id, event.round_id, dealer, event.code, event.ts
                )

    def finish(self) -> None:
        self.facts.rounds = [
            RoundFact(
                shoe,
                round_id,
                r["dealer_id"],
                r["opened"],
                r["ended"],
                r.get("winner"),
                r.get("void"),
                r.get("facts", ()),
                r.get("times", (None, None)),
            )
            for (shoe, round_id), r in self.rounds.items()
        ]
        self.facts.misdeals = list(self.misdeals.values())
        self.facts.shuffles = list(self.shuffles.values())


def collect(path: Path) -> FileFacts:
    """Replay ``path`` and walk its chain; a top-level function, so a worker can be given it by name."""
    facts = FileFacts(path)
    try:
        facts.chained = read_chained(path)
        with RecordingReader(path) as reader:
            header = reader.header
            facts.table_id, facts.decks = header.table_id, header.rules.decks
            facts.game = played(header.rules.game).name
            saved = SavedState.from_dict(header.state)
            facts.begins = saved.validator if saved is not None else None
            replayer = replayer_for(reader)
            collector = _Collector(facts, (facts.begins or {}).get("dealer_id"))
            past = None
            try:
                for line in reader.lines():
                    for message in replayer.feed(line):
                        collector.add(message.source)
            except PastTheEnd as exc:
                # Nothing after it is the table's: counted up to there, and the chain check flags the file.
                past = f"{exc}: replayed up to there, nothing after it"
            collector.finish()
            facts.ends = None if past else replayer.table.validator.snapshot()
            facts.notes = reader_notes(reader) + ((past,) if past else ())
    except (RecordingError, DriverInitError) as exc:
        facts.error = str(exc)
    return facts


def lost(path: Path, note: str) -> FileFacts:
    """A file whose worker died: it cannot be judged, which the report must say."""
    return FileFacts(path, error=note)
