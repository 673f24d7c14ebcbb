"""What a replayed session came to, for a person: hands and their results, alerts by code, voids.

``scannerd replay`` prints this unless asked for the messages themselves:
someone handed a recording from a table first wants to know what happened
there, not thousands of JSON lines. It is counted from the very events the
table published, so it cannot disagree with them.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field

from scannerd.contract.events import AlertData, CardData, RoundData
from scannerd.contract.requests import Response
from scannerd.core.games import PUNTO_BANCO, Game, played
from scannerd.recording.format import Header
from scannerd.recording.replay import Published
from scannerd.recording.source import Recorded


@dataclass
class Summary:
    game: Game = PUNTO_BANCO
    cards: int = 0
    winners: Counter[str] = field(default_factory=Counter)  # complete hands by winner
    naturals: int = 0
    voids: Counter[str] = field(default_factory=Counter)  # void rounds by reason
    alerts: Counter[str] = field(default_factory=Counter)  # raised (not acknowledged) alerts by code
    responses: int = 0

    def add(self, message: Published) -> None:
        event = message.source
        if isinstance(event, CardData):
            self.cards += 1
        elif isinstance(event, RoundData) and event.phase == "complete" and event.winner is not None:
            self.winners[event.winner] += 1
            self.naturals += bool(event.natural)
        elif isinstance(event, RoundData) and event.phase == "void":
            self.voids[event.reason or "unknown"] += 1
        elif isinstance(event, AlertData) and not event.acknowledged:
            self.alerts[event.code] += 1
        elif isinstance(event, Response):
            self.responses += 1

    @property
    def hands(self) -> int:
        return sum(self.winners.values())

    def lines(self) -> list[str]:
        results = ", ".join(f"{w} {self.winners[w]}" for w in (*reversed(self.game.sides), "tie"))
        naturals = f"; {self.naturals} naturals" if self.game.calls_naturals else ""
        return [
            f"hands     {self.hands} ({results}{naturals})",
            f"voids     {_counts(self.voids)}",
            f"alerts    {_counts(self.alerts)}",
            f"cards     {self.cards}",
            f"commands  {self.responses} answered",
        ]


def _counts(counter: Counter[str]) -> str:
    """``3: EXTRA_CARD 2, SHORT_DEAL 1``, the most frequent first; ``0`` when there are none."""
    if not counter:
        return "0"
    return f"{sum(counter.values())}: " + ", ".join(
        f"{k} {n}" for k, n in sorted(counter.items(), key=_order)
    )


def _order(item: tuple[str, int]) -> tuple[int, str]:
    return -item[1], item[0]


def summarize(messages: Iterable[Published], game: Game = PUNTO_BANCO) -> Summary:
    summary = Summary(game)
    for message in messages:
        summary.add(message)
    return summary


def summary_text(path: Recorded, header: Header, messages: Iterable[Published]) -> str:
    """What ``scannerd replay`` prints for one file: which table and when, then its summary."""
    lines = [f"{path}: table {header.table_id}, {header.driver} shoe, recorded from {header.started_at}"]
    lines += [f"  {line}" for line in summarize(messages, played(header.rules.game)).lines()]
    return "".join(line + "\n" for line in lines)
