"""The scoreboard roads of a shoe, as table boards draw them: the bead road, the big road, and the
three roads derived from the big road with their ask marks (docs/rules.md, "The scoreboard").

Pure functions of the shoe's results in order, so the dealer display and any
other board draw exactly the same grid, and the drawing rules (ties, dragon
tails) are tested without a browser.

- Bead road: every hand, ties included, one cell each, filling each column
  top to bottom before starting the next.
- Big road: the two sides' wins only (Banker and Player, Dragon and Tiger).
  A column holds one winner's streak; a change of winner starts the next
  column. A tie is a mark on the cell of the hand before it (ties before the
  shoe's first decision mark the first cell). A streak longer than the board
  is tall, or one that runs into an earlier tail, turns right along its last
  free row: the "dragon tail".
- Big Eye Boy, Small Road, Cockroach Pig: whether the big road repeats its own shape, one red or
  blue mark per decision from a start on, placed as the big road places its wins.

Computed once, here, from the results alone: the dealer's display, the overlay, the pit, ``watch``
and the feed (``get_state``, the ``shoe`` event) all carry the same marks.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, NamedTuple

from scannerd.core.games import GAMES
from scannerd.core.games.names import Side, Winner

ROWS = 6


class Result(NamedTuple):
    """One completed hand of the shoe.

    A named tuple, as ``MarkCell``: immutable as a frozen dataclass, whose ``__init__`` stays
    interpreted even compiled and sets each field through ``object.__setattr__``, for a third
    of the cost at every hand.
    """

    winner: Winner
    player_pair: bool = False
    banker_pair: bool = False
    natural: bool = False


def results_of(rows: Sequence[Mapping[str, Any]]) -> list[Result]:
    """The shoe's results as ``get_state`` gives them (``HandResult``), for the roads."""
    return [Result(r["winner"], r["player_pair"], r["banker_pair"], r["natural"]) for r in rows]


@dataclass(frozen=True, slots=True)
class BeadCell:
    col: int
    row: int
    result: Result


@dataclass(slots=True)
class BigCell:
    """A big-road cell; ``winner`` is None only for ties seen before the shoe's first decision."""

    col: int
    row: int
    winner: Side | None
    ties: int = 0
    player_pair: bool = False
    banker_pair: bool = False


def bead_road(results: list[Result], rows: int = ROWS) -> list[BeadCell]:
    return [BeadCell(i // rows, i % rows, r) for i, r in enumerate(results)]


def big_road(results: list[Result], rows: int = ROWS) -> list[BigCell]:
    """Each decision in its cell, ties marked on the one before (or on a first cell of their own)."""
    return _fold(results, rows).big


class Placer:
    """Where each of a road's entries goes, as it comes: a run of one label down a column, the next run
    in the next free column. A run longer than the board is tall, or one that runs into an earlier
    tail, turns right along its last free row: the "dragon tail"."""

    def __init__(self, rows: int = ROWS) -> None:
        self.rows = rows
        self.taken: set[tuple[int, int]] = set()
        self.streak_col = -1  # column where the current run started
        self.turned = False  # the current run is running right along its tail
        self.at: tuple[int, int] | None = None  # the last entry's place
        self.last: str | None = None  # ... and its label

    def add(self, label: str | None) -> tuple[int, int]:
        if self.at is not None and self.last == label:
            col, row = self.at
            if not self.turned and row + 1 < self.rows and (col, row + 1) not in self.taken:
                place = (col, row + 1)
            else:
                place, self.turned = (col + 1, row), True
        else:
            self.streak_col += 1
            while (self.streak_col, 0) in self.taken:  # an earlier tail ran along the top row
                self.streak_col += 1
            place, self.turned = (self.streak_col, 0), False
        self.at, self.last = place, label
        self.taken.add(place)
        return place

    def relabel(self, label: str) -> None:
        """The last entry is ``label`` after all: the big road's first cell, ties alone until a decision."""
        self.last = label


def columns(cells: Sequence[BeadCell] | Sequence[BigCell] | Sequence[MarkCell]) -> int:
    """Columns the road spans (0 for an empty road)."""
    return max((c.col for c in cells), default=-1) + 1


# ------------------------------------------------------------------ the derived roads

Mark = Literal["red", "blue"]
"""A derived road's mark: red, the big road repeats itself there; blue, it does not."""

DerivedRoad = Literal["big_eye_boy", "small_road", "cockroach_pig"]
DERIVED: dict[DerivedRoad, int] = {"big_eye_boy": 1, "small_road": 2, "cockroach_pig": 3}
"""Each derived road by name, with how many columns back it compares."""


class MarkCell(NamedTuple):
    """A derived road's mark in its cell; made as each hand places it, so a named tuple (``Result``)."""

    col: int
    row: int
    mark: Mark


def streaks(results: Sequence[Result]) -> list[int]:
    """The big road's columns as their lengths: each side's run of wins, ties left out.

    A run that turned right along a dragon tail keeps its whole length: the derived roads read the
    big road's columns as runs, not as the cells they were drawn in.
    """
    return _fold(results).lengths


def _mark(lengths: Sequence[int], col: int, row: int, offset: int) -> Mark | None:
    """The mark a derived road gives the big road's win at ``col``, ``row``; None before the road starts.
    It reads only the columns before ``col``: ``lengths`` need not hold that column yet.

    It starts at the big road's column ``offset`` + 1, second row (counting from one), or, if that
    column has a single win, at the first row of the column after it. A decision that opens a
    column compares the two columns before it that lie ``offset`` apart: equal lengths, red. Any
    other looks ``offset`` columns back at its own row: a win there, red; none there but one just
    above it, blue; neither, red.
    """
    if col < offset or (col == offset and row == 0):
        return None
    if row == 0:
        return "red" if lengths[col - 1] == lengths[col - 1 - offset] else "blue"
    return "blue" if lengths[col - offset] == row else "red"


def derived_marks(lengths: Sequence[int], offset: int) -> list[Mark]:
    """A derived road's marks in order, one for each decision from its start on (``_mark``)."""
    marks = (_mark(lengths, col, row, offset) for col, length in enumerate(lengths) for row in range(length))
    return [m for m in marks if m is not None]


def placed(marks: Sequence[Mark], rows: int = ROWS) -> list[MarkCell]:
    """A derived road's marks on its grid: a run of one colour down a column, as the big road's wins."""
    placer = Placer(rows)
    cells = []
    for mark in marks:
        col, row = placer.add(mark)
        cells.append(MarkCell(col, row, mark))
    return cells


def ask(results: Sequence[Result], side: Side) -> dict[DerivedRoad, Mark | None]:
    """What each derived road would add if the next hand were ``side``'s (问路): None where it adds none."""
    return _fold(results).ask(side)


# ------------------------------------------------------------------ the roads, hand by hand


def code(result: Result, letters: Mapping[str, str]) -> str:
    """A hand's result as the shoe keeps it and the feed's bead road shows it: the winner's letter
    (``letters``: the game's, by winner), then ``n`` for a natural, ``p`` / ``b`` for a player / banker
    pair."""
    return letters[result.winner] + "n" * result.natural + "p" * result.player_pair + "b" * result.banker_pair


def decoded(codes: Sequence[str], initials: Mapping[str, str]) -> list[Result]:
    """The results ``code`` made (``initials``: the game's winners by letter)."""
    return [Result(initials[c[0]], "p" in c, "b" in c, "n" in c) for c in codes]  # type: ignore[arg-type]


class Roads:
    """A shoe's roads as its hands complete: each hand places its marks once, as a board draws them.

    What the feed carries (``columns``: the ``roads`` of a shoe event and of ``get_state``) is kept
    column by column, each column replaced, never changed, when a hand touches it: an event that
    carried the roads keeps what it said while the shoe goes on.
    """

    def __init__(self, letters: Mapping[str, str], rows: int = ROWS) -> None:
        self.letters = letters  # the game's letter for each winner (``Game.initials``, reversed)
        self.rows = rows
        self.count = 0
        self.big: list[BigCell] = []
        self.lengths: list[int] = []
        self.derived: dict[DerivedRoad, list[MarkCell]] = {name: [] for name in DERIVED}
        self._big = Placer(rows)
        self._placers = {name: Placer(rows) for name in DERIVED}
        self._grid: dict[str, list[tuple[str | None, ...]]] = {road: [] for road in ("bead", "big", *DERIVED)}
        self._columns: dict[str, Any] | None = None

    def add(self, result: Result) -> str:
        """One more hand of the shoe; its ``code``."""
        said = code(result, self.letters)
        self._put("bead", self.count // self.rows, self.count % self.rows, said)
        self.count += 1
        self._columns = None
        if result.winner == "tie":
            if not self.big:
                col, row = self._big.add(None)
                self.big.append(BigCell(col, row, None))
            self.big[-1].ties += 1
            self._put_big(self.big[-1])
            return said
        first = self.big[-1] if self.big and self.big[-1].winner is None else None
        if first is not None:  # ties opened the shoe: the first decision is drawn in their cell
            first.winner, first.player_pair, first.banker_pair = (
                result.winner,
                result.player_pair,
                result.banker_pair,
            )
            self._big.relabel(result.winner)
            self._put_big(first)
            self.lengths.append(1)
        else:
            same = bool(self.big) and self.big[-1].winner == result.winner
            # Each call spelt out, not ``*place``: compiled, a call with a star is a generic one, made
            # for every hand (docs/performance.md).
            col, row = self._big.add(result.winner)
            cell = BigCell(col, row, result.winner, 0, result.player_pair, result.banker_pair)
            self.big.append(cell)
            self._put_big(cell)
            if same:
                self.lengths[-1] += 1
            else:
                self.lengths.append(1)
        col, row = len(self.lengths) - 1, self.lengths[-1] - 1
        for name, offset in DERIVED.items():
            mark = _mark(self.lengths, col, row, offset)
            if mark is not None:
                mark_col, mark_row = self._placers[name].add(mark)
                cell_ = MarkCell(mark_col, mark_row, mark)
                self.derived[name].append(cell_)
                self._put(name, cell_.col, cell_.row, mark)
        return said

    def ask(self, side: Side) -> dict[DerivedRoad, Mark | None]:
        """What each derived road would add if the next hand were ``side``'s (问路): None where none."""
        lengths = self.lengths
        # The run goes on a row, or the next column opens. A mark reads only the columns before its
        # own (``_mark``), so the lengths as they are serve: no copy with the next hand in it.
        if lengths and self.big[-1].winner == side:
            col, row = len(lengths) - 1, lengths[-1]
        else:
            col, row = len(lengths), 0
        return {name: _mark(lengths, col, row, offset) for name, offset in DERIVED.items()}

    def columns(self, sides: Sequence[Side]) -> dict[str, Any]:
        """The roads as the feed carries them (``ShoeRoads``): each road's columns of ``rows`` cells, top
        to bottom, null where nothing is drawn; the ask marks for a next hand of each of ``sides``."""
        if self._columns is None:
            self._columns = {
                "rows": self.rows,
                **{road: list(grid) for road, grid in self._grid.items()},
                "ask": {side: self.ask(side) for side in sides},
            }
        return self._columns

    def _put_big(self, cell: BigCell) -> None:
        letter = self.letters[cell.winner] if cell.winner is not None else self.letters["tie"]
        flags = "p" * cell.player_pair + "b" * cell.banker_pair
        self._put("big", cell.col, cell.row, letter + flags + (str(cell.ties) if cell.ties else ""))

    def _put(self, road: str, col: int, row: int, value: str) -> None:
        grid = self._grid[road]
        while len(grid) <= col:
            grid.append((None,) * self.rows)
        column = grid[col]
        grid[col] = (*column[:row], value, *column[row + 1 :])


def _fold(results: Sequence[Result], rows: int = ROWS) -> Roads:
    """The roads of ``results``, hand by hand: the one way every road is derived."""
    roads = Roads(_LETTERS, rows)
    for result in results:
        roads.add(result)
    return roads


_LETTERS = {winner: letter for game in GAMES.values() for letter, winner in game.initials.items()}
"""Each winner's letter, every game's (``Game.initials``); a fold for a screen's cells uses no code."""


def scoreboard(results: Sequence[Result], sides: Sequence[Side]) -> dict[str, Any]:
    """The shoe's five roads and the ask marks as the screens draw them, cell by cell.

    ``sides``: the game's, in its order; the ask marks are given for a next hand of each.
    """
    roads = _fold(results)
    bead = bead_road(list(results))
    board: dict[str, Any] = {
        "rows": ROWS,
        "bead": [
            {
                "col": c.col,
                "row": c.row,
                "winner": c.result.winner,
                "player_pair": c.result.player_pair,
                "banker_pair": c.result.banker_pair,
                "natural": c.result.natural,
            }
            for c in bead
        ],
        "bead_columns": columns(bead),
        "big": [
            {
                "col": c.col,
                "row": c.row,
                "winner": c.winner,
                "ties": c.ties,
                "player_pair": c.player_pair,
                "banker_pair": c.banker_pair,
            }
            for c in roads.big
        ],
        "big_columns": columns(roads.big),
    }
    for name, cells in roads.derived.items():
        board[name] = [{"col": c.col, "row": c.row, "mark": c.mark} for c in cells]
        board[f"{name}_columns"] = columns(cells)
    board["ask"] = {side: roads.ask(side) for side in sides}
    return board
