"""From every file's facts to the report: groups per table, shoe, dealer and day, and what is flagged.

Beside the groups: what each staff id the events name is credited with
(scannerd/audit/staff.py), how long each table stood suspended
(scannerd/audit/suspensions.py), and the hands to look at on video, each
with its time range (scannerd/audit/review.py).

A round belongs to its table, its shoe, the dealer who opened it and the
UTC day it opened on; a misdeal to the same four through its round (or the
dealer signed in, and its own time); a suspect shuffle to its shoe, and
through the shoe to its table, dealers and days. Each hand is judged by its
table's game and deck count (the recording header's rules; exact chances
from scannerd/core/games), and a group that holds hands of more than one
game tests each game on its own (scannerd/audit/tally.py). Tables and the
totals also set each fact's count against its chance.

Flagged, and so exit status 1: a shoe the table raised ``SHUFFLE_SUSPECT``
for; a file whose chain, sequence or signature does not check out (exactly
what ``scannerd verify`` reports); a file whose replay does not end in the
state the next file's header recorded (scannerd/audit/published.py); a fact
of a table, or of all tables, whose count is far out (``stats.FACT_Z``
standard deviations: a fair table's chance of it is tiny). Results far from
the odds are shown with their p-value but not flagged: an archive has
thousands of groups, and some are bound to look unusual by chance.

A file that cannot be used at all (not a recording, a damaged line) is
listed with its reason and left out of every figure.
"""

from __future__ import annotations

import itertools
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, tzinfo
from typing import TYPE_CHECKING, Any

from scannerd import __version__
from scannerd.audit import review, suspensions
from scannerd.audit.chances import Chances, chances
from scannerd.audit.facts import DeckCheckFact, FileFacts, RoundFact, ShuffleFact
from scannerd.audit.published import differences
from scannerd.audit.staff import Staff
from scannerd.audit.stats import FACT_Z, Z
from scannerd.audit.suspensions import Period, periods
from scannerd.audit.tally import GameTally
from scannerd.core.games import GAMES
from scannerd.recording.signing import fingerprint
from scannerd.recording.source import Recorded
from scannerd.recording.verify import Verdict, judge

if TYPE_CHECKING:
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

FORMAT = "scannerd-audit"
VERSION = 4
"""4: ``review`` (the hands to look at on video, misdeals and voids, each with its time range).
3: ``staff`` (per staff id: hands, misdeals, acknowledgements, voids, sign-ins, resumes) and
``suspensions`` (time suspended per table and cause). 2: a group's results are per game (``games``),
and tables and totals hold their facts."""

BREAK_S = 300.0
"""A gap this long between two rounds of a shoe is a break, not dealing: the round counts its own length."""

NO_DEALER = "(none signed in)"
NO_SHOE = "(unknown)"

ShoeKey = tuple[str, str]


def _day(ts: float) -> str:
    return datetime.fromtimestamp(ts, UTC).date().isoformat()


@dataclass
class Group:
    """The hands, voids, misdeals and time of one table, shoe, dealer or day (or of everything).

    ``detailed`` (tables and the totals): each game's results in the order dealt, and its facts.
    """

    key: str
    detailed: bool = False
    hands: int = 0  # of every game
    games: dict[str, GameTally] = field(default_factory=dict)
    voids: Counter[str] = field(default_factory=Counter)
    misdeals: Counter[str] = field(default_factory=Counter)
    seconds: float = 0.0
    phase_seconds: list[float] = field(default_factory=lambda: [0.0, 0.0])  # betting, dealing: summed
    phase_rounds: list[int] = field(default_factory=lambda: [0, 0])  # the rounds each sum is of
    shoes: set[ShoeKey] = field(default_factory=set)
    suspect: set[ShoeKey] = field(default_factory=set)

    def add_round(self, table: str, rnd: RoundFact, seconds: float, odds: Chances) -> None:
        self.shoes.add((table, rnd.shoe_id or NO_SHOE))
        self.seconds += seconds
        for phase, spent in enumerate(rnd.times):
            if spent is not None:
                self.phase_seconds[phase] += spent
                self.phase_rounds[phase] += 1
        if rnd.void is not None:
            self.voids[rnd.void] += 1
        elif rnd.winner is not None:
            self.hands += 1
            tally = self.games.get(odds.game)
            if tally is None:
                tally = self.games[odds.game] = GameTally(tuple(odds.results), self.detailed)
            tally.add(rnd.winner, rnd.facts, odds)

    def to_json(self) -> dict[str, Any]:
        hours = self.seconds / 3600
        per_100 = {
            code: round(100 * n / self.hands, 2) for code, n in sorted(self.misdeals.items()) if self.hands
        }
        out: dict[str, Any] = {
            "key": self.key,
            "hands": self.hands,
            "games": {game: self.games[game].to_json() for game in GAMES if game in self.games},
            "void_rounds": sum(self.voids.values()),
            "voids": dict(sorted(self.voids.items())),
            "misdeals": dict(sorted(self.misdeals.items())),
            "misdeals_per_100_hands": per_100 if self.hands else {},
            "all_misdeals_per_100_hands": round(100 * sum(self.misdeals.values()) / self.hands, 2)
            if self.hands
            else None,
            "hours": round(hours, 2),
            "hands_per_hour": round(self.hands / hours, 1) if hours else None,
            **{
                f"mean_{phase}_s": round(spent / n, 1) if n else None
                for phase, spent, n in zip(
                    ("betting", "dealing"), self.phase_seconds, self.phase_rounds, strict=True
                )
            },
            "shoes": len(self.shoes),
            "suspect_shoes": sorted(f"{t}/{s}" for t, s in self.suspect),
        }
        return out


@dataclass
class _Shoe:
    table_id: str
    shoe_id: str
    game: str
    dealers: list[str] = field(default_factory=list)
    files: list[str] = field(default_factory=list)
    first: float | None = None
    last: float | None = None
    shuffle: ShuffleFact | None = None
    deck_check: DeckCheckFact | None = None  # its last count
    required: bool = False  # the house wants it counted at its end
    closed: bool = False  # a later shoe of its table began: it was over


class _Tally:
    """Every group's figures as the files are read, table by table: what ``build`` reports."""

    def __init__(self, zone: tzinfo) -> None:
        self.zone = zone
        self.groups: dict[str, dict[str, Group]] = {"tables": {}, "shoes": {}, "dealers": {}, "days": {}}
        self.total = Group("all", detailed=True)
        self.shoes: dict[ShoeKey, _Shoe] = {}
        self.staff = Staff()
        self.suspended: list[Period] = []
        self.to_review: list[dict[str, Any]] = []

    def group_of(self, kind: str, key: str) -> Group:
        return self.groups[kind].setdefault(key, Group(key, detailed=kind == "tables"))

    def members(self, table: str, shoe: str, dealer: str | None, ts: float) -> list[Group]:
        keys = {"tables": table, "shoes": f"{table}/{shoe}", "dealers": dealer or NO_DEALER, "days": _day(ts)}
        return [self.total, *(self.group_of(kind, k) for kind, k in keys.items())]

    def add_table(self, table: str, files: list[FileFacts]) -> None:
        """One table's files, told apart where they overlap: its rounds, misdeals, shuffles, stops."""
        self.group_of("tables", table)  # a table whose files hold no hand is a table
        merged = _merged_rounds(files)
        for rnd, odds, seconds in _timed(merged):
            self._add_round(table, rnd, odds, seconds)
        for f in files:
            self._add_file(table, f)
        last = max((f.last_ts for f in files if f.last_ts is not None), default=None)
        self.suspended += periods(table, [s for f in files for s in f.suspensions], last)
        misdeals = [m for f in files for m in f.misdeals]
        self.to_review += review.hands(table, [r for r, _ in merged], misdeals, self.zone)

    def _add_round(self, table: str, rnd: RoundFact, odds: Chances, seconds: float) -> None:
        shoe_id = rnd.shoe_id or NO_SHOE
        shoe = self.shoes.setdefault((table, shoe_id), _Shoe(table, shoe_id, odds.game))
        shoe.first = rnd.opened if shoe.first is None else min(shoe.first, rnd.opened)
        shoe.last = rnd.ended if shoe.last is None else max(shoe.last, rnd.ended)
        dealer = rnd.dealer_id or NO_DEALER
        if dealer not in shoe.dealers:
            shoe.dealers.append(dealer)
        for group in self.members(table, shoe_id, rnd.dealer_id, rnd.opened):
            group.add_round(table, rnd, seconds, odds)
        self.staff.add_round(table, rnd)

    def _add_file(self, table: str, f: FileFacts) -> None:
        self.staff.add_file(table, f)
        for misdeal in f.misdeals:
            for group in self.members(table, misdeal.shoe_id or NO_SHOE, misdeal.dealer_id, misdeal.ts):
                group.misdeals[misdeal.code] += 1
        for shuffle in f.shuffles:
            shoe_id = shuffle.shoe_id or NO_SHOE
            shoe = self.shoes.setdefault((table, shoe_id), _Shoe(table, shoe_id, f.game))
            shoe.shuffle = _stronger(shoe.shuffle, shuffle)
        for check in f.deck_checks:
            shoe_id = check.shoe_id or NO_SHOE
            self.shoes.setdefault((table, shoe_id), _Shoe(table, shoe_id, f.game)).deck_check = check
        for shoe_id in {r.shoe_id or NO_SHOE for r in f.rounds}:
            shoe = self.shoes[(table, shoe_id)]
            shoe.files.append(f.path.name)
            shoe.required = shoe.required or f.deck_check_required

    def close_table(self, table: str) -> list[_Shoe]:
        """A table whose files are all in: its shoes, each over unless the latest, suspects counted.

        A suspect shoe counts against its table, itself, its dealers and its days.
        """
        shoes = list(self.shoes.values())  # every one of this table: the tables before it were closed
        self.shoes.clear()
        dealt = sorted((s for s in shoes if s.first is not None), key=lambda s: s.first or 0.0)
        for shoe in dealt[:-1]:
            shoe.closed = True  # a later one began
        for shoe in shoes:
            if shoe.shuffle is None:
                continue
            suspect = (table, shoe.shoe_id)
            self.total.suspect.add(suspect)
            self.group_of("tables", table).suspect.add(suspect)
            self.group_of("shoes", f"{table}/{shoe.shoe_id}").suspect.add(suspect)
            for kind, keys in (("dealers", shoe.dealers), ("days", _shoe_days(shoe))):
                for k in keys:
                    self.group_of(kind, k).suspect.add(suspect)
        return shoes


class ChangedWhileAudited(ValueError):
    """A file whose header read otherwise when the files were put in order: ``str()`` names it."""


def _placed(facts: Iterable[FileFacts], unplaced: list[FileFacts]) -> Iterator[FileFacts]:
    """``facts`` table by table, as ``each_file`` hands them out; a file with no table goes to ``unplaced``.

    A table met again after another's began had a file whose header read otherwise when the files
    were put in order: written meanwhile, and its table's facts are no longer together.
    """
    done: set[str] = set()  # the tables begun
    current = ""
    for f in facts:
        if not f.table_id:
            unplaced.append(f)
            continue
        if f.table_id != current:
            if f.table_id in done:
                raise ChangedWhileAudited(
                    f"{f.path}: changed while it was audited (a table still writing it?): audit again"
                )
            done.add(f.table_id)
            current = f.table_id
        yield f


def build(
    facts: Iterable[FileFacts],
    key: Ed25519PublicKey | None = None,
    sources: Iterable[str] = (),
    zone: tzinfo = UTC,
) -> dict[str, Any]:
    """The whole report, as JSON-ready data: what report.json holds and report.html shows.

    ``facts`` come table by table (``each_file``'s order: by table id, then name), and each
    table's are let go of once its rows are written: a casino's year of files does not fit in
    memory at once, its rows and groups do. ``zone``: the surveillance system's, in which the hands
    to review give the line to type.
    """
    tally = _Tally(zone)
    rows = _Rows()
    unplaced: list[FileFacts] = []  # unusable before its header named the table: listed first

    for table, in_table in itertools.groupby(_placed(facts, unplaced), key=lambda f: f.table_id):
        rows.add_table(tally, table, sorted(in_table, key=lambda f: f.path.name), key)
    rows.files[:0] = [_file_row(f, Verdict(), {}, key) for f in sorted(unplaced, key=lambda f: f.path.name)]
    file_rows, shoe_rows = rows.files, rows.shoes
    groups = tally.groups
    totals = tally.total.to_json()
    tables = [g.to_json() for _, g in sorted(groups["tables"].items())]
    flags = _flags(shoe_rows, file_rows) + _fact_flags([(None, totals), *((t["key"], t) for t in tables)])
    return {
        "format": FORMAT,
        "version": VERSION,
        "scannerd": __version__,
        "sources": list(sources),
        "key": None if key is None else fingerprint(key),
        "flagged": bool(flags),
        "flags": flags,
        "review": {"zone": str(zone), "pad_s": review.PAD_S, "hands": tally.to_review},
        **_odds(rows.used),
        "totals": totals,
        "tables": tables,
        "dealers": [g.to_json() for _, g in sorted(groups["dealers"].items())],
        "days": [g.to_json() for _, g in sorted(groups["days"].items())],
        "staff": tally.staff.to_json(),
        "suspensions": suspensions.report(groups["tables"], tally.suspended),
        "shoes": shoe_rows,
        "files": file_rows,
        "notes": rows.verdict_notes + rows.file_notes,
    }


@dataclass
class _Rows:
    """What the report lists, table by table: each table's rows are written once its files are in,
    and its files let go of."""

    files: list[dict[str, Any]] = field(default_factory=list)
    shoes: list[dict[str, Any]] = field(default_factory=list)
    verdict_notes: list[str] = field(default_factory=list)
    file_notes: list[str] = field(default_factory=list)
    used: set[Chances] = field(default_factory=set)  # each game and deck count dealt

    def add_table(
        self, tally: _Tally, table: str, files: list[FileFacts], key: Ed25519PublicKey | None
    ) -> None:
        good = [f for f in files if f.error is None]
        verdict = judge([f.chained for f in good if f.chained is not None], key)
        replay_checks = _replay_checks(good)
        if good:
            tally.add_table(table, _told_apart(good))
        paths = {f.path.name: f.path for f in good}
        self.shoes += [
            _shoe_row(shoe, tally.groups["shoes"], verdict, paths) for shoe in tally.close_table(table)
        ]
        self.files += [_file_row(f, verdict, replay_checks, key) for f in files]
        self.verdict_notes += verdict.notes
        self.file_notes += [note for f in good for note in f.notes]
        self.used |= {chances(f.game, f.decks) for f in good}


def _odds(chances_used: set[Chances]) -> dict[str, Any]:
    """The exact odds of every game and deck count the archive holds, and the bands they are held to."""
    used = sorted(chances_used, key=_in_order)
    return {
        "odds": _by_game(used, lambda c: {r: round(p, 6) for r, p in c.results.items()}),
        "fact_odds": _by_game(
            used, lambda c: {f: {v: round(p, 6) for v, p in by.items()} for f, by in c.facts.items()}
        ),
        "band_z": Z,
        "fact_z": FACT_Z,
    }


def _in_order(odds: Chances) -> tuple[int, int]:
    """Games in the order ``GAMES`` names them (punto banco first), then deck counts."""
    return list(GAMES).index(odds.game), odds.decks


def _by_game(used: list[Chances], figures: Callable[[Chances], dict[str, Any]]) -> dict[str, Any]:
    """``figures`` of each game and deck count the files deal: game, then deck count as a string."""
    out: dict[str, dict[str, Any]] = {}
    for odds in used:
        out.setdefault(odds.game, {})[str(odds.decks)] = figures(odds)
    return out


def _told_apart(files: list[FileFacts]) -> list[FileFacts]:
    """A table's files with each shoe named once: a shoe id used again for another shoe becomes ``S1 (2)``.

    Shoe ids are the game server's, and one that restarts its count names a
    new shoe like an old one. A shoe goes on in the next file only when that
    file's saved state says it is still the shoe being dealt.
    """
    used: Counter[str] = Counter()
    ongoing: dict[str, str] = {}
    out = []
    for f in files:
        continuing = ((f.begins or {}).get("shoe") or {}).get("shoe_id")
        ids = (
            [r.shoe_id for r in f.rounds] + [m.shoe_id for m in f.misdeals] + [s.shoe_id for s in f.shuffles]
        )
        names: dict[str, str] = {}
        for shoe_id in dict.fromkeys(i for i in ids if i is not None):
            if shoe_id == continuing and shoe_id in ongoing:
                names[shoe_id] = ongoing[shoe_id]
            else:
                used[shoe_id] += 1
                names[shoe_id] = shoe_id if used[shoe_id] == 1 else f"{shoe_id} ({used[shoe_id]})"
        ongoing = names

        def name(item: Any, names: dict[str, str] = names) -> Any:
            return replace(item, shoe_id=names.get(item.shoe_id, item.shoe_id))

        out.append(
            replace(
                f,
                rounds=[name(r) for r in f.rounds],
                misdeals=[name(m) for m in f.misdeals],
                shuffles=[name(x) for x in f.shuffles],
            )
        )
    return out


def _merged_rounds(files: list[FileFacts]) -> list[tuple[RoundFact, Chances]]:
    """A table's rounds in the order opened, each with its file's chances; one that straddles two is one."""
    merged: dict[tuple[str | None, str], tuple[RoundFact, Chances]] = {}
    for f in files:
        odds = chances(f.game, f.decks)
        for rnd in f.rounds:
            key = (rnd.shoe_id, rnd.round_id)
            before = merged.get(key)
            if before is None:
                merged[key] = rnd, odds
            else:
                earlier = before[0]
                merged[key] = (
                    replace(
                        rnd,
                        dealer_id=earlier.dealer_id or rnd.dealer_id,
                        opened=min(earlier.opened, rnd.opened),
                        ended=max(earlier.ended, rnd.ended),
                        last=max(earlier.last, rnd.last),
                        winner=rnd.winner or earlier.winner,
                        void=rnd.void or earlier.void,
                        facts=rnd.facts or earlier.facts,
                        times=rnd.times if rnd.times != (None, None) else earlier.times,
                        void_by=rnd.void_by or earlier.void_by,
                        void_via=rnd.void_via or earlier.void_via,
                    ),
                    odds,
                )
    return sorted(merged.values(), key=lambda r: r[0].opened)


def _timed(rounds: list[tuple[RoundFact, Chances]]) -> Iterable[tuple[RoundFact, Chances, float]]:
    """Each round with the time it took: until the next round of its shoe opened, unless that was a break."""
    for (rnd, odds), after in itertools.zip_longest(rounds, [r for r, _ in rounds[1:]]):
        gap = after.opened - rnd.opened if after is not None and after.shoe_id == rnd.shoe_id else None
        yield rnd, odds, gap if gap is not None and gap <= BREAK_S else rnd.ended - rnd.opened


def kept(against: str | None, earlier_shoe_id: str | None) -> str:
    """What order a suspect shoe keeps, in the report's words (its figures' ``against``)."""
    if against == "new_decks":
        return "the order of new decks"
    if against == "own":
        return "runs of its own cards (stacked)"
    return f"the order of shoe {earlier_shoe_id}"


def _stronger(a: ShuffleFact | None, b: ShuffleFact) -> ShuffleFact:
    """The figures to report for a shoe: the whole shoe's once stated, else the strongest so far."""
    if a is None:
        return b
    return max(a, b, key=lambda s: (s.final, s.log10_evidence))


def _shoe_days(shoe: _Shoe) -> list[str]:
    if shoe.first is None or shoe.last is None:
        return []
    return sorted({_day(shoe.first), _day(shoe.last)})


def _replay_checks(files: list[FileFacts]) -> dict[str, str]:
    """For each of a table's files whose successor is here: '' when its replay ends in the state the
    next begins with."""
    checks: dict[str, str] = {}
    for before, after in itertools.pairwise(files):
        if after.begins is None or before.ends is None or not _consecutive(before, after):
            continue
        checks[before.path.name] = "; ".join(differences(before.ends, after.begins))
    return checks


def _consecutive(before: FileFacts, after: FileFacts) -> bool:
    """Whether ``after`` is the file the table began next, as far as the chain can say."""
    a = before.chained.header.chain if before.chained else None
    b = after.chained.header.chain if after.chained else None
    return a is None or b is None or b.file == a.file + 1


def _file_row(
    f: FileFacts, verdict: Verdict, replay_checks: dict[str, str], key: Ed25519PublicKey | None
) -> dict[str, Any]:
    row: dict[str, Any] = {"file": str(f.path), "name": f.path.name, "table_id": f.table_id or None}
    if f.error is not None:
        return row | {"error": f.error}
    chained = f.chained
    link = chained.header.chain if chained else None
    problems = verdict.by_file.get(f.path, [])
    if link is None or link.key is None:
        signature = "unsigned"
    elif key is None:
        signature = "not checked (no --key)"
    else:
        signature = "verified" if not problems else "not verified"
    if f.path.name in replay_checks:
        replay = replay_checks[f.path.name] or "matches"
    else:
        replay = "not compared (no next file of the table, or it saved no state)"
    return row | {
        "chain_file": link.file if link else None,
        "lines": chained.lines if chained else None,
        "sealed": chained.sealed if chained else False,
        "chain": "intact" if not problems else "; ".join(problems),
        "signature": signature,
        "signed_by": link.key if link else None,
        "replay": replay,
        "replay_differs": bool(replay_checks.get(f.path.name)),
        "rounds": len(f.rounds),
    }


def _shoe_row(
    shoe: _Shoe, groups: dict[str, Group], verdict: Verdict, paths: dict[str, Recorded]
) -> dict[str, Any]:
    """``paths``: its table's usable files, by name."""
    key = f"{shoe.table_id}/{shoe.shoe_id}"
    group = groups.get(key) or Group(key)
    problems = [p for name in shoe.files for p in verdict.by_file.get(paths[name], [])]
    s = shoe.shuffle
    return group.to_json() | {
        "table_id": shoe.table_id,
        "shoe_id": shoe.shoe_id,
        "game": shoe.game,
        "dealers": shoe.dealers,
        "first": shoe.first,
        "last": shoe.last,
        "day": _day(shoe.first) if shoe.first is not None else None,
        "files": shoe.files,
        "chain": "intact" if not problems else "; ".join(problems),
        "suspect": s is not None,
        "deck_check": _deck_check(shoe),
        "shuffle": None
        if s is None
        else {
            "kept": kept(s.against, s.earlier_shoe_id),
            "against": s.against,
            "earlier_shoe_id": s.earlier_shoe_id,
            "log10_evidence": s.log10_evidence,
            "pairs": s.pairs,
            "forward": s.forward,
            "backward": s.backward,
            "final": s.final,
        },
    }


def _deck_check(shoe: _Shoe) -> dict[str, Any] | None:
    """Its count at its end (``done``: what the receipt found), ``not_done`` for a shoe over without
    one; None for one still dealt, or not required and not counted."""
    check = shoe.deck_check
    if check is None:
        return {"status": "not_done", "required": shoe.required} if shoe.closed else None
    return {
        "status": check.outcome,
        "required": shoe.required,
        "missing": list(check.missing),
        "surplus": list(check.surplus),
        "unreadable": check.unreadable,
        "by": check.by,
    }


def _deck_flag(shoe: dict[str, Any]) -> str | None:
    """Why a shoe's count is flagged: cards short or over, or a required count not done."""
    check = shoe["deck_check"]
    if check is None or check["status"] in ("clean", "incomplete"):
        return None
    if check["status"] == "not_done":
        return "closed without a deck check, which the house requires" if check["required"] else None
    found = [f"{k} {' '.join(check[k])}" for k in ("missing", "surplus") if check[k]]
    return f"deck check {check['status']}: {'; '.join(found)}"


def _flags(shoes: list[dict[str, Any]], files: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Everything the report is there to raise, shoes first: what someone must look at."""
    flags: list[dict[str, Any]] = []
    for shoe in shoes:
        deck = _deck_flag(shoe)
        if deck is not None:
            flags.append(
                {
                    "kind": "deck_check",
                    "table_id": shoe["table_id"],
                    "shoe_id": shoe["shoe_id"],
                    "day": shoe["day"],
                    "dealers": shoe["dealers"],
                    "detail": deck,
                }
            )
        if shoe["suspect"]:
            s = shoe["shuffle"]
            flags.append(
                {
                    "kind": "shuffle",
                    "table_id": shoe["table_id"],
                    "shoe_id": shoe["shoe_id"],
                    "day": shoe["day"],
                    "dealers": shoe["dealers"],
                    "detail": f"keeps {s['kept']}: evidence "
                    f"10^{s['log10_evidence']:g} after {s['pairs']} pairs ({s['forward']} forward, "
                    f"{s['backward']} backward)",
                }
            )
    for row in files:
        if "error" in row:
            continue
        if row["chain"] != "intact":
            flags.append(
                {"kind": "chain", "table_id": row["table_id"], "file": row["name"], "detail": row["chain"]}
            )
        if row["replay_differs"]:
            flags.append(
                {"kind": "replay", "table_id": row["table_id"], "file": row["name"], "detail": row["replay"]}
            )
    return flags


def _fact_flags(groups: list[tuple[str | None, dict[str, Any]]]) -> list[dict[str, Any]]:
    """A flag for each fact of a table (or of all tables: ``table_id`` None) with a value far out."""
    flags: list[dict[str, Any]] = []
    for table_id, group in groups:
        for game, tally in group["games"].items():
            far: dict[str, list[str]] = {}
            for row in tally["facts"]:
                if row["far"]:
                    far.setdefault(row["fact"], []).append(
                        f"{row['value']} {row['observed']} of {tally['fact_hands']} hands "
                        f"({row['observed'] / tally['fact_hands']:.4f}) against a chance of "
                        f"{row['chance']:.4f}, z = {row['z']:+.2f}"
                    )
            flags.extend(
                {"kind": "facts", "table_id": table_id, "game": game, "fact": fact, "detail": "; ".join(said)}
                for fact, said in far.items()
            )
    return flags


def unreadable(report: dict[str, Any]) -> list[dict[str, Any]]:
    """The files the report could not use."""
    return [row for row in report["files"] if "error" in row]
