"""What one recording's replay shows, kept small: its rounds, misdeals, shuffles, who acted, and its state.

This runs in a replay worker (a process of the pool or a Dask worker), so it
hands back plain, picklable facts rather than the thousands of events they
come from: a round is its shoe, hand number, dealer, times, result and the
facts its side bets read (a dozen name and value pairs), and who voided it; a misdeal
its code; a suspect shuffle its latest figures (the restatement at the
shoe's end replaces the early alert); an acknowledgement, a sign-in and a
suspension who took them (``by``, ``via``) and when. The file's chain is walked here too, since
the file is at hand; whether the files follow one another is decided once
all are in (scannerd/recording/verify.py ``judge``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from drivers.base import DriverInitError
from scannerd.contract.events import (
    AlertData,
    CardData,
    DealerData,
    DeckCheckData,
    EventData,
    RevealData,
    RoundData,
    SuspensionData,
)
from scannerd.core.games import played
from scannerd.core.table import SavedState
from scannerd.recording.format import PastTheEnd, RecordingError, RecordingReader
from scannerd.recording.replay import replayer_for
from scannerd.recording.replay_many import reader_notes
from scannerd.recording.source import Recorded
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
    hand_no: int  # as the dealer counts them: the round events' hand number in its shoe
    dealer_id: str | None
    opened: float  # Unix seconds of its first round event
    ended: float  # of its last: the round's end, what its time is counted to
    last: float  # of its last event of any kind: a squeeze's reveal, an alert, may come after its end
    winner: str | None = None
    void: str | None = None
    facts: Facts = ()
    times: tuple[float | None, float | None] = (None, None)  # seconds betting, dealing: as its event says
    void_by: str | None = None  # who voided it (an OPERATOR_VOID), as the void event says
    void_via: str | None = None


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
    against: str | None  # None: an earlier shoe's order (earlier_shoe_id); "new_decks"; "own"
    earlier_shoe_id: str | None
    log10_evidence: float
    pairs: int
    forward: int
    backward: int
    final: bool
    ts: float


@dataclass(frozen=True, slots=True)
class DeckCheckFact:
    """A shoe's count at its end, as its receipt says: ``clean``, ``short``, ``surplus`` or
    ``incomplete`` (unread cards, none proved missing), the worst of them."""

    shoe_id: str | None
    outcome: str
    missing: tuple[str, ...]
    surplus: tuple[str, ...]
    unreadable: int
    by: str | None
    ts: float


def outcome(missing: int, surplus: int, unreadable: int) -> str:
    """A receipt's verdict as the table's alerts give it: a surplus, more missing than unread, unread."""
    if surplus:
        return "surplus"
    if missing > unreadable:
        return "short"
    return "incomplete" if unreadable else "clean"


@dataclass(frozen=True, slots=True)
class AckFact:
    """An alert acknowledged: by whom, through what, and how long after it was first published.

    ``raised`` is the alert's first time in this file, or in the state the file began with when
    it was raised in an earlier one (then a suspect shuffle's is its last restatement's); None only
    if neither holds it.
    """

    alert_id: int
    code: str
    severity: str
    ts: float
    raised: float | None
    by: str | None
    via: str | None


@dataclass(frozen=True, slots=True)
class SignInFact:
    """A dealer signed in (a ``dealer`` event naming one): who, when, and who vouched for it."""

    dealer_id: str
    ts: float
    by: str | None
    via: str | None


@dataclass(frozen=True, slots=True)
class SuspensionFact:
    """A ``suspension`` event: the table stopped (``suspended``) or a supervisor resumed it.

    ``alert_id`` and ``since`` name the suspension both events are of, so a resume pairs with its
    stop even when the two are in different files, or the stop in a file not given.
    """

    suspended: bool
    cause: str
    alert_id: int
    since: float
    ts: float
    by: str | None = None
    via: str | None = None
    reason: str | None = None


@dataclass
class FileFacts:
    """One file: what its replay published, its chain, and the table's state where it begins and ends.

    ``game`` is the game its header's rules deal (``scannerd.core.games.played``): every round in it
    is judged by that game's chances for ``decks`` decks.
    """

    path: Recorded
    table_id: str = ""
    game: str = "punto_banco"
    decks: int = 8
    deck_check_required: bool = False  # the header's rules: every shoe is to be counted at its end
    rounds: list[RoundFact] = field(default_factory=list)
    misdeals: list[MisdealFact] = field(default_factory=list)
    shuffles: list[ShuffleFact] = field(default_factory=list)
    deck_checks: list[DeckCheckFact] = field(default_factory=list)
    acks: list[AckFact] = field(default_factory=list)
    sign_ins: list[SignInFact] = field(default_factory=list)
    suspensions: list[SuspensionFact] = field(default_factory=list)  # the one the file began in first
    last_ts: float | None = None  # the time of the last event its replay published
    chained: ChainedFile | None = None
    begins: dict[str, Any] | None = None  # the validator state the header saved
    ends: dict[str, Any] | None = None  # the validator state the replay ends in
    notes: tuple[str, ...] = ()
    error: str | None = None  # the file cannot be used: why, naming it


class _Collector:
    """Replayed events into facts; a misdeal is its round's dealer's, else the one signed in."""

    def __init__(self, facts: FileFacts, begins: dict[str, Any]) -> None:
        self.facts = facts
        self.rounds: dict[tuple[str | None, str], dict[str, Any]] = {}
        self.dealer = begins.get("dealer_id")  # signed in: in the file's saved state, then as the events say
        self.misdeals: dict[int, MisdealFact] = {}
        self.shuffles: dict[int, ShuffleFact] = {}
        # When each alert was first published: those still open when the file began, from its state.
        self.raised: dict[int, float] = {a["alert_id"]: a["ts"] for a in begins.get("open_alerts", [])}
        self.suspensions = [_suspended_at_start(s)] if (s := begins.get("suspended")) else []

    def add(self, event: EventData | Any) -> None:
        if isinstance(event, EventData):
            last = self.facts.last_ts
            self.facts.last_ts = event.ts if last is None else max(last, event.ts)
        if isinstance(event, RoundData):
            self._round(event)
        elif isinstance(event, (CardData, RevealData)):
            self._of_round(event)
        elif isinstance(event, DealerData):
            self.dealer = event.dealer_id
            if event.dealer_id is not None:
                self.facts.sign_ins.append(SignInFact(event.dealer_id, event.ts, event.by, event.via))
        elif isinstance(event, SuspensionData):
            self.suspensions.append(
                SuspensionFact(
                    event.suspended,
                    event.cause,
                    event.alert_id,
                    event.since,
                    event.ts,
                    event.by,
                    event.via,
                    event.reason,
                )
            )
        elif isinstance(event, DeckCheckData) and event.status == "done":
            verdict = outcome(len(event.missing), len(event.surplus), event.unreadable)
            self.facts.deck_checks.append(
                DeckCheckFact(
                    event.shoe_id,
                    verdict,
                    tuple(event.missing),
                    tuple(event.surplus),
                    event.unreadable,
                    event.by,
                    event.ts,
                )
            )
        elif isinstance(event, AlertData) and event.acknowledged:
            if not event.cleared:  # a clearing is the table's own word, no one's acknowledgement
                raised = self.raised.get(event.alert_id)
                self.facts.acks.append(
                    AckFact(event.alert_id, event.code, event.severity, event.ts, raised, event.by, event.via)
                )
        elif isinstance(event, AlertData):
            self._raised(event)

    def _round(self, event: RoundData) -> None:
        key = (event.shoe_id, event.round_id)
        rnd = self.rounds.setdefault(
            key, {"opened": event.ts, "hand_no": event.hand_no, "dealer_id": event.dealer_id}
        )
        rnd["ended"] = event.ts
        rnd["last"] = max(rnd.get("last", event.ts), event.ts)
        rnd["dealer_id"] = rnd["dealer_id"] or event.dealer_id
        if event.phase == "complete":
            rnd["winner"] = event.winner
            rnd["facts"] = tuple(event.facts.items()) if event.facts else ()
        elif event.phase == "void":
            rnd["void"] = event.reason or "unknown"
            rnd["void_by"], rnd["void_via"] = event.by, event.via
        if event.times is not None:
            rnd["times"] = (event.times.betting_s, event.times.dealing_s)

    def _raised(self, event: AlertData) -> None:
        """An alert as raised: a suspect shuffle's figures, or a misdeal with the dealer it is on."""
        if event.alert_id not in self.raised:
            self._of_round(event)
        self.raised.setdefault(event.alert_id, event.ts)
        if event.code == "SHUFFLE_SUSPECT" and event.shuffle is not None:
            figures = event.shuffle
            self.shuffles[event.alert_id] = ShuffleFact(
                event.shoe_id,
                figures.get("against"),
                figures.get("earlier_shoe_id"),
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

    def _of_round(self, event: EventData) -> None:
        """A card, a reveal or an alert as first raised: its round's last event so far, if the round is here.

        An acknowledgement is not: it is an action on the alert, taken whenever someone gets to it.
        """
        rnd = self.rounds.get((event.shoe_id, event.round_id or ""))
        if rnd is not None:
            rnd["last"] = max(rnd["last"], event.ts)

    def finish(self) -> None:
        self.facts.rounds = [
            RoundFact(
                shoe,
                round_id,
                r["hand_no"],
                r["dealer_id"],
                r["opened"],
                r["ended"],
                r["last"],
                r.get("winner"),
                r.get("void"),
                r.get("facts", ()),
                r.get("times", (None, None)),
                r.get("void_by"),
                r.get("void_via"),
            )
            for (shoe, round_id), r in self.rounds.items()
        ]
        self.facts.misdeals = list(self.misdeals.values())
        self.facts.shuffles = list(self.shuffles.values())
        self.facts.suspensions = self.suspensions


def _suspended_at_start(suspended: dict[str, Any]) -> SuspensionFact:
    """The suspension a file began in, as its saved state holds it: the stop, should its file be missing."""
    return SuspensionFact(
        True, suspended["cause"], suspended["alert_id"], suspended["since"], suspended["since"]
    )


def collect(path: Recorded) -> FileFacts:
    """Replay ``path`` and walk its chain; a top-level function, so a worker can be given it by name."""
    facts = FileFacts(path)
    try:
        facts.chained = read_chained(path)
        with RecordingReader(path) as reader:
            header = reader.header
            facts.table_id, facts.decks = header.table_id, header.rules.decks
            facts.deck_check_required = header.rules.deck_check_required
            facts.game = played(header.rules.game).name
            saved = SavedState.from_dict(header.state)
            facts.begins = saved.validator if saved is not None else None
            replayer = replayer_for(reader)
            collector = _Collector(facts, facts.begins or {})
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


def lost(path: Recorded, note: str) -> FileFacts:
    """A file whose worker died: it cannot be judged, which the report must say."""
    return FileFacts(path, error=note)
