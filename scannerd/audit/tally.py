"""One game's hands in a group: its results against their chances and, for a table or the totals, its facts.

A group (a table, a shoe, a dealer, a day, everything) may hold hands of
more than one game, and a chi-square over banker, player, dragon and tiger
means nothing: each game is tallied and tested on its own. A hand's chances
depend on its table's game and deck count only, so the tally counts hands
per ``Chances`` and weighs them when asked, rather than adding every chance
of every fact at every hand: expected count sum n p, variance sum n p (1 - p).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from scannerd.audit import stats
from scannerd.audit.chances import Chances, label
from scannerd.audit.facts import Facts


@dataclass
class GameTally:
    """``detailed``: keep the order of the results (for the running frequencies) and the facts."""

    names: tuple[str, ...]  # the game's results, in its order
    detailed: bool = False
    results: Counter[str] = field(default_factory=Counter)
    weights: Counter[Chances] = field(default_factory=Counter)  # hands per game and deck count
    sequence: list[str] = field(default_factory=list)  # the results in the order dealt
    fact_weights: Counter[Chances] = field(default_factory=Counter)  # hands that state their facts
    fact_counts: Counter[tuple[str, Any]] = field(default_factory=Counter)  # (fact, value): hands

    def add(self, winner: str, facts: Facts, odds: Chances) -> None:
        """A complete round; its facts only in detail, and only if it states them (a recent recording)."""
        self.results[winner] += 1
        self.weights[odds] += 1
        if self.detailed:
            self.sequence.append(winner)
            if facts:
                self.fact_weights[odds] += 1
                self.fact_counts.update(facts)

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
            out["fact_hands"] = self.fact_weights.total()
            out["facts"] = self.fact_rows()
        return out

    def fact_rows(self) -> list[dict[str, Any]]:
        """Every value of every fact the game states, observed against expected, and whether it is far out."""
        hands = self.fact_weights.total()
        if not hands:
            return []
        observed = Counter({(fact, label(value)): n for (fact, value), n in self.fact_counts.items()})
        rows = []
        for fact, values in _values(self.fact_weights).items():
            for value in values:
                chances = [(n, odds.facts[fact].get(value, 0.0)) for odds, n in self.fact_weights.items()]
                expected = sum(n * p for n, p in chances)
                variance = sum(n * p * (1 - p) for n, p in chances)
                count = observed[(fact, value)]
                z = stats.fact_z(count, expected, variance, hands)
                rows.append(
                    {
                        "fact": fact,
                        "value": value,
                        "observed": count,
                        "expected": round(expected, 2),
                        "chance": round(expected / hands, 6),
                        "z": None if z is None else round(z, 2),
                        "far": z is not None and abs(z) >= stats.FACT_Z,
                    }
                )
        return rows


def _values(weights: Counter[Chances]) -> dict[str, list[str]]:
    """Each fact's values that have a chance at any of the tallied deck counts, in a fixed order."""
    values: dict[str, list[str]] = {}
    for odds in weights:
        for fact, by_value in odds.facts.items():
            known = values.setdefault(fact, [])
            known += sorted(v for v in by_value if v not in known)
    return values
