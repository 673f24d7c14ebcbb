"""A casino's week on file: signed, chained recordings of many tables, some shoes lazily shuffled.

What ``scannerd audit`` is for is an archive like this one: each table's
recorder rotating at every shoe, its files chained and signed, several
dealers taking turns, and now and then a shoe that was not shuffled
properly. Each table is one simulated dealer (simulators/dealer.py) dealing
shoe after shoe, whole shoes with the odd mistake; a seeded draw picks which
shoes are made from the last one's discards by a lazy kind
(simulators/shuffles.py) instead of the full procedure, and the list of them
is handed back, so a test knows exactly which shoes an audit must flag.

The files are written as a table's recorder writes them (docs/recording.md):
a shoe's ``new_shoe`` command is the last line of the file before it, the
next file's header holds the table's state at that moment (the validator's,
shuffle history included, found by replaying the file just written, as the
live table had it), and every file is chained to the one before and sealed,
signed when a key is given.

With a ``Crew`` (simulators/staff.py) the dealers are the crew's, each with
the mistakes of their habits, signing in with their PIN and acknowledging
alerts, and the table suspends on the crew's codes until its supervisor
resumes it: what the audit's figures per staff member are checked against.

    python -m simulators.week DIR [--tables 10] [--days 7] [--shoes-per-day 1] [--lazy 6]
                                  [--seed 0] [--key FILE]
"""

from __future__ import annotations

import argparse
import random
import sys
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any

from drivers.registry import get_driver_class
from scannerd import __version__
from scannerd.core.house import HouseRules
from scannerd.recording.chain import Chain
from scannerd.recording.format import ChainLink, Header, RecordingReader, RecordingWriter, whole_second
from scannerd.recording.replay import Replayer
from scannerd.recording.signing import fingerprint, load_private_key
from simulators.actions import ServerCommand, Step, Unplug
from simulators.recording import Transcriber
from simulators.scenario import Scenario
from simulators.staff import Crew, WatchedWriter

if TYPE_CHECKING:
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

LAZY_KINDS = ("preset", "pile", "cut", "strip")
"""The lazy shuffles every shoe of the calibration bench caught (docs/shuffle.md); a riffle is not sure."""

DRIVER = "beetek"
OPENS_AT_H = 12  # UTC hour the first table opens each day; the others a few minutes apart
PACE_S = 5.0  # seconds between a dealer's cards, about 80 hands an hour
ERROR_RATE = 0.03  # the chance a round goes wrong: a few misdeals a shoe
DEALERS = 6  # in the casino's pool, taking turns at the tables


@dataclass(frozen=True, slots=True)
class WeekShoe:
    """One shoe dealt: where, when, by whom, and how it was made from the shoe before."""

    table_id: str
    shoe_id: str
    day: date
    dealer_id: str
    shuffle: str  # "full", or one of LAZY_KINDS

    @property
    def lazy(self) -> bool:
        return self.shuffle != "full"


def write_week(
    out: Path,
    *,
    tables: int = 10,
    days: int = 7,
    shoes_per_day: int = 1,
    lazy: int = 6,
    seed: int = 0,
    first_day: date = date(2024, 5, 6),
    key: Ed25519PrivateKey | None = None,
    crew: Crew | None = None,
    part: tuple[int, int] = (0, 1),
) -> list[WeekShoe]:
    """Write ``tables`` x ``days`` x ``shoes_per_day`` shoes into ``out``; every shoe dealt, in order.

    ``lazy`` shoes, drawn with ``seed`` among those that follow another shoe
    of their table, are made by a lazy shuffle; the rest by the full procedure.
    ``crew``: the dealers who take turns and how they work (default: ``DEALERS`` nameless ones).
    ``part`` (k, n) writes only the tables whose index is k modulo n: n
    processes with the same arguments write one casino together, each table
    as a single process would (a table's files depend on its own shoes only).
    ValueError names a count that leaves no week to write.
    """
    for name, count in (("tables", tables), ("days", days), ("shoes per day", shoes_per_day)):
        if count < 1:
            raise ValueError(f"{name} must be at least 1, not {count}")
    if lazy < 0:
        raise ValueError(f"lazy shoes cannot be fewer than none, not {lazy}")
    k, n = part
    if not 0 <= k < n:
        raise ValueError(f"part {k} of {n} is not one of the parts")
    out.mkdir(parents=True, exist_ok=True)
    rng = random.Random(seed)
    plan = [(t, d, s) for t in range(tables) for d in range(days) for s in range(shoes_per_day)]
    followers = [p for p in plan if p[1:] != (0, 0)]
    chosen = rng.sample(followers, min(lazy, len(followers)))
    kinds = {p: LAZY_KINDS[i % len(LAZY_KINDS)] for i, p in enumerate(sorted(chosen))}
    shoes: list[WeekShoe] = []
    for t in range(k, tables, n):
        table = _Table(out, f"BAC-{t + 1:02d}", seed * 1000 + t, key, crew)
        for d in range(days):
            day = first_day + timedelta(days=d)
            opens = datetime(day.year, day.month, day.day, OPENS_AT_H, tzinfo=UTC) + timedelta(minutes=7 * t)
            for s in range(shoes_per_day):
                turn = t + 2 * d + s
                dealer_id = (
                    list(crew.dealers)[turn % len(crew.dealers)] if crew else f"D{turn % DEALERS + 1:02d}"
                )
                kind = kinds.get((t, d, s), "full")
                shoe_id = table.deal_shoe(opens.timestamp() if s == 0 else None, dealer_id, kind)
                shoes.append(WeekShoe(table.table_id, shoe_id, day, dealer_id, kind))
        table.close()
    return shoes


class _Table:
    """One table's dealer, wire and recorder: a file per shoe, each chained to the one before."""

    def __init__(
        self, out: Path, table_id: str, seed: int, key: Ed25519PrivateKey | None, crew: Crew | None = None
    ) -> None:
        self.out = out
        self.table_id = table_id
        self.key = key
        self.crew = crew
        reports_cut = get_driver_class(DRIVER).reports_cut_card
        scenario = Scenario(seed=seed, pace=PACE_S, error_rate=ERROR_RATE, shuffle="full")
        if crew is not None:
            house = HouseRules(suspend_on=crew.suspend_on)
            scenario = Scenario(
                seed=seed, house=house, pace=PACE_S, error_rate=crew.error_rate, shuffle="full"
            )
        self.rules = scenario.rules_for(reports_cut)
        self.dealer = scenario.dealer(device_reports_cut=reports_cut)
        self.wire = Transcriber(DRIVER, scenario)
        self.files = 0
        self.chain: Chain | None = None
        self.writer: RecordingWriter | None = None
        self.path: Path | None = None
        self.now = 0.0

    def deal_shoe(self, opens: float | None, dealer_id: str, shuffle: str) -> str:
        """A whole shoe, from ``opens`` (None: straight after the last); the shoe's id."""
        if opens is not None:
            self.now = max(self.now, opens)
        if self.writer is None:
            self._open(None, "")
            self.now = self.wire.connect(self._writer, self.now)
        crew = self.crew
        signs_in = crew.signs_in(dealer_id) if crew else None
        self._writer.cmd(self.now, "dealer_sign_in", {"dealer_id": dealer_id}, signs_in)
        self.dealer.shuffle = shuffle  # how this shoe is made from the last one's discards
        if crew is not None:
            self.dealer.mistakes = crew.dealers[dealer_id].mistakes
        for step in self.dealer.deal_shoe():
            if crew is not None and isinstance(self._writer, WatchedWriter):
                self.now = crew.before(self._writer, self.now, step, dealer_id)
            self.now = self.wire.write(self._writer, self.now, step)
            if crew is not None and isinstance(self._writer, WatchedWriter):
                self.now = crew.after(self._writer, self.now, dealer_id)
            action = step.action
            new_shoe = isinstance(action, ServerCommand) and action.name == "new_shoe"
            if new_shoe and self.dealer.shoes_started > 1:
                self._rotate(str(action.args["shoe_id"]))
        return f"S{self.dealer.shoes_started}"

    @property
    def _writer(self) -> RecordingWriter:
        assert self.writer is not None
        return self.writer

    def _rotate(self, shoe_id: str) -> None:
        """The shoe the table accepted ends the file, as the recorder does; the next holds the state."""
        state = self._finish()
        self._open(state, shoe_id)

    def _open(self, state: dict[str, Any] | None, shoe_id: str) -> None:
        started = whole_second(self.now)
        prev = self.chain.digest if self.chain else None
        self.files += 1
        header = Header(
            table_id=self.table_id,
            driver=DRIVER,
            started_at=started,
            rules=self.rules,
            state=state,
            scannerd=__version__,
            chain=ChainLink(
                file=self.files,
                prev=prev.hex() if prev else None,
                key=fingerprint(self.key.public_key()) if self.key else None,
            ),
        )
        stem = f"{self.table_id}-{started.strftime('%Y%m%dT%H%M%SZ')}" + (f"-{shoe_id}" if shoe_id else "")
        self.path = self.out / f"{stem}.jsonl.gz"
        self.chain = Chain(prev) if prev else Chain()
        writes = RecordingWriter if self.crew is None else WatchedWriter
        self.writer = writes.create(self.path, header, self.chain, self.key)

    def _finish(self) -> dict[str, Any]:
        """Seal and close the file; the table's state at its end, as its replay leaves it."""
        writer, path = self._writer, self.path
        writer.seal()
        writer.close()
        self.writer = None
        assert path is not None
        with RecordingReader(path) as reader:
            replayer = Replayer(reader.header)
            for line in reader.lines():
                replayer.feed(line)
        return replayer.table.saved_state().to_dict()

    def close(self) -> None:
        """The table's last file sealed; a crew's table first has its cable out (``unplugged_at_end_s``)."""
        seconds = self.crew.unplugged_at_end_s if self.crew else None
        if self.writer is not None and seconds is not None:
            self.now = self.wire.write(self.writer, self.now, Step(PACE_S, Unplug(seconds)))
        if self.writer is not None:
            self._finish()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m simulators.week", description=__doc__.split("\n")[0])
    parser.add_argument("out", type=Path, metavar="DIR")
    parser.add_argument("--tables", type=int, default=10)
    parser.add_argument("--days", type=int, default=7)
    parser.add_argument("--shoes-per-day", type=int, default=1)
    parser.add_argument("--lazy", type=int, default=6, help="shoes made by a lazy shuffle")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--key", type=Path, metavar="FILE", help="the private key to sign with")
    args = parser.parse_args(argv)
    key = load_private_key(args.key) if args.key else None
    try:
        shoes = write_week(
            args.out,
            tables=args.tables,
            days=args.days,
            shoes_per_day=args.shoes_per_day,
            lazy=args.lazy,
            seed=args.seed,
            key=key,
        )
    except ValueError as exc:
        parser.error(str(exc))
    for shoe in shoes:
        if shoe.lazy:
            print(f"lazy: {shoe.table_id} {shoe.shoe_id} {shoe.day} {shoe.dealer_id} {shoe.shuffle}")
    print(f"wrote {len(shoes)} shoes of {args.tables} tables into {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
