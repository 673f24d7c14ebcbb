"""One game's hands in a group: its results against their chances.

A group (a table, a shoe, a dealer, a day, everything) may hold hands of
more than one game, and a chi-square over banker, player, dragon and tiger
means nothing: each game is tallied and tested on its own. A hand's chances
depend on its table's game and deck count only, so the tally counts hands
per ``Chances`` and weighs them when asked: expected count sum n p.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from scannerd.audit import stats
from scannerd.audit.chances import Chances


@dataclass
class GameTally:
    """``detailed``: keep the order of the results, for the running frequencies."""

    names: tuple[str, ...]  # the game's results, in its order
    detailed: bool = False
    results: Counter[str] = field(default_factory=Counter)
    weights: Counter[Chances] = field(default_factory=Counter)  # hands per game and deck count
    sequence: list[str] = field(default_factory=list)  # the results in the order dealt

    def add(self, winner: str, odds: Chances) -> None:
        self.results[winner] += 1
        self.weights[odds] += 1
        if self.detailed:
            self.sequence.append(winner)

    @property
    def hands(self) -> int:
        return self.weights.total()

    def expected(self) -> dict[str, float]:
        return {r: sum(n * odds.results[r] for odds, n in self.weights.items()) for r in self.names}

    def to_json(self) -> dict[str, Any]:
        expected = self.expected()
        x2, p = stats.chi_square(self.results, expected) if self.hands else (0.0, None)
        out: dict[str, Any] = {
            "hands": self.hands,
            "results": {r: self.results[r] for r in self.names},
            "expected": {r: round(e, 2) for r, e in expected.items()},
            "chi_square": round(x2, 3),
            "p_value": None if p is None else round(p, 4),
        }
        if self.detailed:
            points = stats.running(self.sequence, self.names)
            out["running"] = [[point[0], *(round(f, 4) for f in point[1:])] for point in points]
        return out
