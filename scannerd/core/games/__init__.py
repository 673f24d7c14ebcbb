"""The games a card-reading shoe deals: one interface (``Game``), one pure module per game.

The validator, the display, the audit and the simulator ask the table's game
rather than naming one: adding a game is a module and a line in ``GAMES``
(docs/architecture.md, "Adding a game").
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from scannerd.core.cards import hand_total
from scannerd.core.games import dragon_tiger, punto_banco
from scannerd.core.games.names import Side

Hands = Callable[[Sequence[str], Sequence[str]], Any]


@dataclass(frozen=True, slots=True)
class Call:
    """A fact the dealer calls out, on the hand it concerns, at the tables whose bets read it.

    EZ Baccarat's Dragon 7 pushes the Banker's bets and No Commission's Banker win on 6 pays
    half: a dealer settling at the table must see them as plainly as a natural.
    """

    fact: str
    called: Callable[[Any], bool]
    """Whether the fact's value is one to call."""
    side: int | None
    """The hand it is called on (0: the first side, 1: the second); None: both, as a tie is."""
    label: str
    variants: frozenset[str] | None = None
    """The commission variants that call it (``[rules] commission``); None: every table of the game."""


@dataclass(frozen=True, slots=True)
class Game:
    """What the table needs to know of a game: its two sides, the deal, the result and the facts.

    A round has two sides, each a hand of cards (Player and Banker, Dragon and Tiger); the
    functions take the first side's cards, then the second's.
    """

    name: str
    title: str
    """The game's name for people: a report's heading."""
    badge: str
    """What marks a table of this game among the baccarat tables (the pit's tiles); none for baccarat."""
    sides: tuple[Side, Side]
    positions: tuple[str, ...]
    """Every position a card of the round can take, in the order the first cards are dealt."""
    next_position: Callable[[Sequence[str], Sequence[str]], str | None]
    """Where the next card goes, or None when the round is complete."""
    total: Callable[[Sequence[str]], int]
    """A side's count: baccarat's points, Dragon Tiger's rank."""
    winner: Callable[[int, int], str]
    """From the two sides' counts: a side's name or ``tie``."""
    facts: Hands
    """A complete round's facts, in the contract's order."""
    outcome_odds: Callable[[int], Mapping[str, Fraction]]
    """The exact chance of each winner (and tie), from a full shoe of so many decks."""
    fact_odds: Callable[[int], Mapping[str, Mapping[Any, Fraction]]]
    """The exact chance of each value of each fact."""
    initials: Mapping[str, str]
    """The one-letter code of each winner, for the results the table keeps for the roads."""
    colours: Mapping[str, str]
    """Each side's and the tie's colour on every screen and report that draws them (hex)."""
    marks: Mapping[str, str]
    """How each winner is drawn on every board (the screens' roads and counts, the pit, ``watch``):
    a letter or symbol of its own, so none is told apart by colour alone. In ``sides`` order, then
    the tie: every board lists them so."""
    calls_naturals: bool
    """Whether a hand's natural and pair are called: the round event's ``natural`` and pairs, the
    dealer's NATURAL and PAIR marks. Baccarat's; null and never shown at other games."""
    calls: tuple[Call, ...]
    """The facts the dealer display calls out on a complete round, beside the winner."""

    def called(self, facts: Mapping[str, Any], variant: str | None) -> list[tuple[int | None, str]]:
        """The calls a complete round's facts make at a table of ``variant``: (side, label) each."""
        return [
            (call.side, call.label)
            for call in self.calls
            if (call.variants is None or variant in call.variants)
            and call.fact in facts
            and call.called(facts[call.fact])
        ]

    def side_of(self, position: str) -> int:
        """0 for a position on the first side, 1 on the second."""
        return 0 if position.startswith(self.sides[0]) else 1

    def positions_of(self, side: int) -> list[str]:
        """A side's positions in the order its cards are dealt: its hand's first card's place first."""
        return [p for p in self.positions if self.side_of(p) == side]

    def slot(self, position: str) -> int:
        """Which card of its side's hand a position is: 0 for the first."""
        return self.positions_of(self.side_of(position)).index(position)


PUNTO_BANCO = Game(
    name="punto_banco",
    title="punto banco",
    badge="",
    sides=("player", "banker"),
    positions=("player1", "banker1", "player2", "banker2", "player3", "banker3"),
    next_position=punto_banco.next_position,
    total=hand_total,
    winner=punto_banco.winner,
    facts=punto_banco.facts,
    outcome_odds=punto_banco.outcome_odds,
    fact_odds=punto_banco.fact_odds,
    initials={"B": "banker", "P": "player", "T": "tie"},
    colours={"player": "#1565c0", "banker": "#c62828", "tie": "#2e7d32"},
    marks={"player": "P", "banker": "B", "tie": "T"},
    calls_naturals=True,
    calls=(
        Call("dragon_7", bool, 1, "DRAGON 7", frozenset({"ez"})),
        Call("panda_8", bool, 0, "PANDA 8", frozenset({"ez"})),
        Call("banker_six", bool, 1, "SUPER 6", frozenset({"no_commission"})),
    ),
)

DRAGON_TIGER = Game(
    name="dragon_tiger",
    title="Dragon Tiger",
    badge="DT",
    sides=("dragon", "tiger"),
    positions=("dragon", "tiger"),
    next_position=dragon_tiger.next_position,
    total=dragon_tiger.total,
    winner=dragon_tiger.winner,
    facts=dragon_tiger.facts,
    outcome_odds=dragon_tiger.outcome_odds,
    fact_odds=dragon_tiger.fact_odds,
    initials={"D": "dragon", "G": "tiger", "T": "tie"},  # G: T is the tie's, as at punto banco
    colours={"dragon": "#c62828", "tiger": "#c98a00", "tie": "#2e7d32"},
    marks={"dragon": "D", "tiger": "T", "tie": "="},  # Tiger has the T players know; a tie is an equal
    calls_naturals=False,
    calls=(Call("suited_tie", bool, None, "SUITED"),),  # beside TIE: "TIE SUITED"
)

_ORDINALS = {"1": "FIRST", "2": "SECOND", "3": "THIRD"}


def position_words(position: str) -> str:
    """A position as the dealer is told it: ``player3`` -> ``PLAYER THIRD``, ``dragon`` -> ``DRAGON``."""
    if position[-1] in _ORDINALS:
        return f"{position[:-1].upper()} {_ORDINALS[position[-1]]}"
    return position.upper()


GAMES: dict[str, Game] = {game.name: game for game in (PUNTO_BANCO, DRAGON_TIGER)}
"""Every game by the name ``[rules] game`` gives it."""

ALL_SIDES: tuple[str, ...] = tuple(dict.fromkeys(side for game in GAMES.values() for side in game.sides))
"""Every game's sides, each once, in the games' own order: for what reads a round of any game."""


def played(name: str | None) -> Game:
    """The game of a house's ``[rules] game``; a recording from before tables chose one is punto banco."""
    return GAMES[name] if name is not None else PUNTO_BANCO
