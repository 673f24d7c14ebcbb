"""Does a shoe's own order give it away? New decks left in their order, or a run of cards dealt twice.

The comparison with earlier shoes (``scannerd.core.shuffle_check``) has
nothing to go on for the first shoe of a table, of the day or after new
decks: exactly the shoe a cheat brings in. That shoe is judged against what
its own cards say:

- ``new_decks``: new decks come out of their boxes in one order (ace to king
  in two suits, king to ace in the other two). Decks loaded unshuffled, or
  riffled a time or three, or stripped, keep most cards next to their
  neighbour in that order, one way or the other.
- ``own``: a stacked shoe is made of a known run of cards, laid in more
  than once (an eight-deck shoe has eight copies of each card): a card that
  follows, a card or two later, a card it already followed in this shoe.

Each pair of neighbouring cards (x, y) is a hit when y is one of the cards
that follow x in the relation (or, for new decks, come before it), and under
a proper shuffle the chance of a hit is known exactly from the cards left.
The alternative places a share of the cards by the relation and leaves the
rest to chance, as in the comparison with earlier shoes; but a stack can
start anywhere in the shoe, so each alternative's log likelihood ratio is a
CUSUM (it never goes below 0, so it is ready the moment order begins). Each
start is a test martingale and Ville's inequality bounds each by 1/c; a union
over every start a shoe has and every alternative gives the threshold
(docs/shuffle.md, "A shoe's own order").
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from scannerd.core.cards import RANKS
from scannerd.core.face_sets import FACES, N, faces
from scannerd.core.house import MAX_DECKS

FALSE_ALARM = 1e-5
"""The chance a properly shuffled shoe raises a ``SHUFFLE_SUSPECT`` from its own order, at most."""

# (forward, backward): the shares of cards the alternative places by the relation. New decks run up
# in two suits and down in two, so either way; a riffle keeps about half, three riffles less.
_ALTERNATIVES: dict[str, tuple[tuple[float, float], ...]] = {
    "new_decks": ((0.9, 0.0), (0.0, 0.9), (0.45, 0.0), (0.0, 0.45), (0.15, 0.15)),
    "own": ((0.9, 0.0), (0.4, 0.0), (0.15, 0.0)),
}

THRESHOLD = math.log(sum(map(len, _ALTERNATIVES.values())) * MAX_DECKS * N / FALSE_ALARM)
"""Natural log of the evidence that raises the alert: a union over alternatives and starts."""


def new_deck_order() -> list[str]:
    """One new deck as it leaves its box: spades and diamonds ace to king, clubs and hearts king to ace."""
    up = [r + s for s in "SD" for r in RANKS]
    down = [r + s for s in "CH" for r in reversed(RANKS)]
    return up + down


def _new_deck_rows() -> list[int]:
    """Which faces follow each face within two cards in new decks laid one after another."""
    faces = [FACES[c] for c in new_deck_order() * 2]
    rows = [0] * N
    for i, x in enumerate(faces):
        for y in faces[i + 1 : i + 3]:
            rows[x] |= 1 << y
    return rows


_NEW_AFTER = _new_deck_rows()
_NEW_BEFORE = [sum(1 << x for x in range(N) if _NEW_AFTER[x] >> y & 1) & ~_NEW_AFTER[y] for y in range(N)]

# Each alternative's log ratio on a miss, by which of the relation's two sets has a face in it: a
# share the relation cannot place goes to chance. (A set whose faces are all dealt still takes its
# share: the alternative then loses that mass, which keeps the ratio's expectation at most 1.)
# Indexed by ``_sets(after, before)``: a number, not a key to hash, at every pair.
_REST = {
    against: tuple(tuple(1.0 - a_f * f - a_b * b for a_f, a_b in shares) for f in (0, 1) for b in (0, 1))
    for against, shares in _ALTERNATIVES.items()
}
_MISS = {against: tuple(tuple(map(math.log, rests)) for rests in by) for against, by in _REST.items()}


def _sets(after: int, before: int) -> int:
    """Which of a relation's two sets hold a face: the index into ``_REST`` and ``_MISS``."""
    return 2 * (after != 0) + (before != 0)


@dataclass(slots=True)
class OrderEvidence:
    """The evidence, so far in this shoe, that its order is one relation's."""

    against: str  # "new_decks" or "own"
    cusums: list[float]  # each alternative's log likelihood ratio since it was last at 0
    pairs: int = 0
    forward: int = 0
    backward: int = 0
    peak: float = 0.0  # the largest of the cusums at any card of this shoe
    alert_id: int | None = None
    final: bool = False
    # The largest of the cusums now. At 0 every cusum is, and a miss leaves them there (its log
    # ratio is never above 0): most pairs of a proper shoe are such misses, and cost no loop.
    level: float = 0.0
    # The relation's alternatives and its tables, looked up once rather than at every pair.
    shares: tuple[tuple[float, float], ...] = field(init=False, repr=False, compare=False)
    rest: tuple[tuple[float, ...], ...] = field(init=False, repr=False, compare=False)
    miss: tuple[tuple[float, ...], ...] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        self.shares, self.rest, self.miss = (
            _ALTERNATIVES[self.against],
            _REST[self.against],
            _MISS[self.against],
        )

    def figures(self) -> dict[str, Any]:
        """What an alert says of it (``ShuffleEvidence``): what it was judged against, the statistic."""
        return {
            "against": self.against,
            "log10_evidence": round(self.peak / math.log(10), 2),
            "pairs": self.pairs,
            "forward": self.forward,
            "backward": self.backward,
            "final": self.final,
        }

    def step(self, after: int, before: int, y: int, counts: list[int], decks: int, total: int) -> bool:
        """The pair (x, y), x's relation being the faces ``after`` it and ``before`` it (bit masks).

        ``counts`` are this shoe's cards by face before y; ``total`` the cards left then. True the
        first time the threshold is reached.
        """
        self.pairs += 1
        cusums = self.cusums
        shares = self.shares
        if after >> y & 1 or before >> y & 1:
            forward = bool(after >> y & 1)
            related = faces(after if forward else before)
            p = (decks * len(related) - sum(counts[f] for f in related)) / total
            if forward:
                self.forward += 1
            else:
                self.backward += 1
            if p <= 0:
                return False  # no such card was left: the shoe's count is wrong, not its shuffle
            rest = self.rest[_sets(after, before)]
            for k, (a_f, a_b) in enumerate(shares):
                ratio = (a_f if forward else a_b) / p + rest[k]
                cusums[k] = max(0.0, cusums[k] + math.log(ratio))
        elif after or before:
            if self.level == 0.0:
                return False
            miss = self.miss[_sets(after, before)]
            for k, m in enumerate(miss):
                value = cusums[k] + m
                cusums[k] = value if value > 0.0 else 0.0
        else:
            return False
        self.level = top = max(cusums)
        if top > self.peak:
            self.peak = top
        return top >= THRESHOLD and self.alert_id is None


def _evidence(against: str) -> OrderEvidence:
    return OrderEvidence(against, [0.0] * len(_ALTERNATIVES[against]))


@dataclass(slots=True)
class OwnOrder:
    """One shoe's own order, judged pair by pair: against new decks, and against itself so far."""

    new_decks: OrderEvidence = field(default_factory=lambda: _evidence("new_decks"))
    own: OrderEvidence = field(default_factory=lambda: _evidence("own"))

    def judge(
        self, x: int, y: int, followed: int, counts: list[int], decks: int, total: int
    ) -> OrderEvidence | None:
        """The pair (x, y): the evidence that reached its threshold with it, if the shoe has no alert
        of its own order yet (None at nearly every card: no list made for each).

        One alert a shoe: eight new decks in their order also repeat themselves, and the pit needs
        to hear once that the shoe was not shuffled, not twice; the other relation's figures go on.
        ``followed`` is the faces that followed x earlier in this shoe (its fingerprint's row);
        ``counts`` this shoe's cards by face before y was drawn, ``total`` the cards left then.
        """
        if total <= 0:
            return None
        # Both relations step with every pair, whichever crosses: their figures go on.
        new_decks = self.new_decks.step(_NEW_AFTER[x], _NEW_BEFORE[x], y, counts, decks, total)
        own = self.own.step(followed, 0, y, counts, decks, total)
        if self.new_decks.alert_id is not None or self.own.alert_id is not None:
            return None
        if new_decks:
            return self.new_decks
        return self.own if own else None

    def finish(self) -> list[OrderEvidence]:
        """At the shoe's end, once: the evidence that raised an alert, its figures now final."""
        done = [e for e in (self.new_decks, self.own) if e.alert_id is not None and not e.final]
        for evidence in done:
            evidence.final = True
        return done

    def snapshot(self) -> list[list[Any]]:
        return [
            [e.against, list(e.cusums), e.pairs, e.forward, e.backward, e.peak, e.alert_id, e.final]
            for e in (self.new_decks, self.own)
        ]

    @classmethod
    def restore(cls, snap: list[list[Any]]) -> OwnOrder:
        order = cls()
        for against, cusums, pairs, forward, backward, peak, alert_id, final in snap:
            if against not in _ALTERNATIVES or len(cusums) != len(_ALTERNATIVES[against]):
                raise ValueError(f"shoe order: no relation {against!r} with {len(cusums)} figures")
            evidence = OrderEvidence(
                against, [float(v) for v in cusums], int(pairs), int(forward), int(backward)
            )
            evidence.peak, evidence.alert_id, evidence.final = float(peak), alert_id, bool(final)
            evidence.level = max(evidence.cusums, default=0.0)
            setattr(order, against, evidence)
        return order
