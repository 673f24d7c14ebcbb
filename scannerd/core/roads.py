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
from typing import Any, Literal

from scannerd.core.games.names import Side, Winner

ROWS = 6


@dataclass(frozen=True, slots=True)
class Result:
    """One completed hand of the shoe."""

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
    cells: list[BigCell] = []
    for result in results:
        if result.winner == "tie":
            if not cells:
                cells.append(BigCell(0, 0, None))
            cells[-1].ties += 1
        elif cells and cells[-1].winner is None:
            # Ties opened the shoe: the first decision is drawn in their cell.
            cells[-1].winner = result.winner
            cells[-1].player_pair, cells[-1].banker_pair = result.player_pair, result.banker_pair
        else:
            cells.append(BigCell(0, 0, result.winner, 0, result.player_pair, result.banker_pair))
    for cell, (col, row) in zip(cells, _places([c.winner for c in cells], rows), strict=True):
        cell.col, cell.row = col, row
    return cells


def _places(labels: Sequence[str | None], rows: int) -> list[tuple[int, int]]:
    """Where each of a road's entries goes: a run of one label down a column, the next run in the
    next free column. A run longer than the board is tall, or one that runs into an earlier tail,
    turns right along its last free row: the "dragon tail"."""
    out: list[tuple[int, int]] = []
    taken: set[tuple[int, int]] = set()
    streak_col = -1  # column where the current run started
    turned = False  # the current run is running right along its tail
    for n, label in enumerate(labels):
        if n and labels[n - 1] == label:
            col, row = out[-1]
            if not turned and row + 1 < rows and (col, row + 1) not in taken:
                place = (col, row + 1)
            else:
                place, turned = (col + 1, row), True
        else:
            streak_col += 1
            while (streak_col, 0) in taken:  # an earlier tail ran along the top row
                streak_col += 1
            place, turned = (streak_col, 0), False
        out.append(place)
        taken.add(place)
    return out


def columns(cells: Sequence[BeadCell] | Sequence[BigCell] | Sequence[MarkCell]) -> int:
    """Columns the road spans (0 for an empty road)."""
    return max((c.col for c in cells), default=-1) + 1


# ------------------------------------------------------------------ the derived roads

Mark = Literal["red", "blue"]
"""A derived road's mark: red, the big road repeats itself there; blue, it does not."""

DerivedRoad = Literal["big_eye_boy", "small_road", "cockroach_pig"]
DERIVED: dict[DerivedRoad, int] = {"big_eye_boy": 1, "small_road": 2, "cockroach_pig": 3}
"""Each derived road by name, with how many columns back it compares."""


@dataclass(frozen=True, slots=True)
class MarkCell:
    col: int
    row: int
    mark: Mark


def streaks(results: Sequence[Result]) -> list[int]:
    """The big road's columns as their lengths: each side's run of wins, ties left out.

    A run that turned right along a dragon tail keeps its whole length: the derived roads read the
    big road's columns as runs, not as the cells they were drawn in.
    """
    lengths: list[int] = []
    last: str | None = None
    for result in results:
        if result.winner == "tie":
            continue
        if result.winner == last:
            lengths[-1] += 1
        else:
            lengths.append(1)
            last = result.winner
    return lengths


def derived_marks(lengths: Sequence[int], offset: int) -> list[Mark]:
    """A derived road's marks in order, one for each decision from its start on.

    It starts at the big road's column ``offset`` + 1, second row (counting from one), or, if that
    column has a single win, at the first row of the column after it. A decision that opens a
    column compares the two columns before it that lie ``offset`` apart: equal lengths, red. Any
    other looks ``offset`` columns back at its own row: a win there, red; none there but one just
    above it, blue; neither, red.
    """
    marks: list[Mark] = []
    for col, length in enumerate(lengths):
        for row in range(length):
            if col < offset or (col == offset and row == 0):
                continue
            if row == 0:
                marks.append("red" if lengths[col - 1] == lengths[col - 1 - offset] else "blue")
            else:
                back = lengths[col - offset]
                marks.append("blue" if back == row else "red")
    return marks


def placed(marks: Sequence[Mark], rows: int = ROWS) -> list[MarkCell]:
    """A derived road's marks on its grid: a run of one colour down a column, as the big road's wins."""
    return [MarkCell(col, row, mark) for mark, (col, row) in zip(marks, _places(marks, rows), strict=True)]


def ask(results: Sequence[Result], side: Side) -> dict[DerivedRoad, Mark | None]:
    """What each derived road would add if the next hand were ``side``'s (问路): None where it adds none."""
    now, then = streaks(results), streaks([*results, Result(side)])
    out: dict[DerivedRoad, Mark | None] = {}
    for name, offset in DERIVED.items():
        before, after = derived_marks(now, offset), derived_marks(then, offset)
        out[name] = after[-1] if len(after) > len(before) else None
    return out


def scoreboard(results: Sequence[Result], sides: Sequence[Side]) -> dict[str, Any]:
    """The shoe's five roads and the ask marks, JSON-ready: what every board draws, as data.

    ``sides``: the game's, in its order; the ask marks are given for a next hand of each.
    """
    bead, big, lengths = bead_road(list(results)), big_road(list(results)), streaks(results)
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
            for c in big
        ],
        "big_columns": columns(big),
    }
    for name, offset in DERIVED.items():
        cells = placed(derived_marks(lengths, offset))
        board[name] = [{"col": c.col, "row": c.row, "mark": c.mark} for c in cells]
        board[f"{name}_columns"] = columns(cells)
    board["ask"] = {side: ask(results, side) for side in sides}
    return board
