"""The scoreboard roads of a shoe: bead road and big road, as table displays draw them.

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
"""

from __future__ import annotations

from dataclasses import dataclass

from scannerd.contract.events import Winner
from scannerd.core.games.names import Side

ROWS = 6


@dataclass(frozen=True, slots=True)
class Result:
    """One completed hand of the shoe."""

    winner: Winner
    player_pair: bool = False
    banker_pair: bool = False
    natural: bool = False


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
    cells: list[BigCell] = []
    taken: set[tuple[int, int]] = set()
    streak_col = -1  # column where the current streak started
    turned = False  # the current streak is running right along its tail
    for result in results:
        if result.winner == "tie":
            if not cells:
                cells.append(BigCell(0, 0, None))
                taken.add((0, 0))
                streak_col = 0
            cells[-1].ties += 1
            continue
        last = cells[-1] if cells else None
        if last is not None and last.winner is None:
            # Ties opened the shoe: the first decision is drawn in their cell.
            last.winner = result.winner
            last.player_pair, last.banker_pair = result.player_pair, result.banker_pair
            continue
        if last is not None and last.winner == result.winner:
            below = (last.col, last.row + 1)
            if not turned and below[1] < rows and below not in taken:
                col, row = below
            else:
                col, row = last.col + 1, last.row
                turned = True
        else:
            streak_col += 1
            while (streak_col, 0) in taken:  # an earlier tail ran along the top row
                streak_col += 1
            col, row = streak_col, 0
            turned = False
        cells.append(BigCell(col, row, result.winner, 0, result.player_pair, result.banker_pair))
        taken.add((col, row))
    return cells


def columns(cells: list[BeadCell] | list[BigCell]) -> int:
    """Columns the road spans (0 for an empty road)."""
    return max((c.col for c in cells), default=-1) + 1
