"""Does this shoe's order repeat, or keep long runs of, a recent shoe's? A pure sequential test.

A properly shuffled shoe is a uniform random order of its cards, whatever
came before. A preset or switched shoe repeats an earlier order; a lazy
shuffle (a cut, one riffle, a strip, the washing skipped) keeps most of the
earlier shoe's neighbours next to each other. The dealer picks the discards
up hand by hand, each hand on top of the last (docs/rules.md), so an
unshuffled pile comes back with its hands in reverse order and each hand's
cards in the order they were picked up: neighbours then follow each other
in either direction, a card or two apart. What survives all of that is
*adjacency*, and that is what a shoe's fingerprint keeps.

Fingerprint: for each ordered pair of card faces (x, y), whether y was dealt
within ``WINDOW`` cards after x. That is 52 x 52 bits (a row of 7 bytes per face, 364 in
all) per shoe however many cards it dealt, and the only thing kept of a finished shoe.

Statistic: for each card y dealt after a card x, the earlier shoe says
whether y followed x there (``forward``), x followed y (``backward``) or
neither. Under a proper shuffle the next card is uniform over the cards not
yet dealt, so the chance of each outcome is known exactly from the shoe's
composition. The evidence is a likelihood ratio against a mixture of lazy
alternatives (a share of the cards placed by the earlier order, forwards or
backwards, the rest at random): a product of factors whose expectation
under a proper shuffle is 1, which makes it a test martingale. By Ville's
inequality it ever reaches 1/a with probability at most a, however often it
is looked at, so it can be judged after every card and an alarm raised the
moment it is overwhelming. The threshold splits the false-alarm budget over
the shoes compared: docs/shuffle.md has the bound and the measured power.

Cost: a card is compared with up to ``SHOES_KEPT`` earlier shoes, so what is
done per card and earlier shoe is kept to table lookups. Each finished shoe's
``Neighbours`` are worked out once, the first time it is compared with: bit
masks by face for the test of a pair, and for each face a ready itemgetter
of the faces around it, for the copies left. A miss is a count; only a hit
costs its seven logs (its chance, a ratio of two counts, takes too many
values for a table of them to pay), and the threshold is looked at only once
the hits since the last look could have reached it. Every figure is the same
float, computed the same way, as when each card was worked out in full.
"""

from __future__ import annotations

import base64
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from math import log  # a name of its own: a hit calls it once per alternative
from operator import itemgetter
from typing import Any

from scannerd.core.cards import ALL_CARDS
from scannerd.core.face_sets import FACES, ROW_BYTES, N, faces
from scannerd.core.shoe_order import OrderEvidence, OwnOrder

WINDOW = 2
"""y "follows" x when dealt 1 or 2 cards after it: a picked-up hand keeps its cards that close."""

SHOES_KEPT = 4
"""Earlier shoes each shoe is compared with: a switched shoe is usually the last one or two."""

FALSE_ALARM = 1e-6
"""The chance a properly shuffled shoe raises the alert, at most (split over ``SHOES_KEPT``)."""

MIN_CARDS = 52
"""A shoe that dealt fewer cards leaves no fingerprint: too little to compare a shoe with."""

# The lazy shuffles the evidence is a mixture over: the shares of cards that follow the earlier
# order forwards and backwards. A preset or cut keeps almost all forwards; a riffle about half;
# a pile loaded as picked up keeps them in both directions.
ALTERNATIVES: tuple[tuple[float, float], ...] = (
    (0.95, 0.0),
    (0.7, 0.0),
    (0.45, 0.0),
    (0.25, 0.0),
    (0.45, 0.45),
    (0.25, 0.25),
    (0.1, 0.1),
)

THRESHOLD = math.log(SHOES_KEPT / FALSE_ALARM)
"""Natural log of the evidence that raises the alert."""

CLEARED = math.log(1e-2)
"""Once every alternative's evidence is below 1/100, the earlier shoe is no longer compared with.

Against a properly shuffled shoe most comparisons get there within the shoe (docs/shuffle.md says
where), and the check's cost with them; no lazy shoe of the calibration bench ever fell that low
before its alert. Stopping never raises an alert, so it cannot add a false one.
"""
_CLEARED_EVERY = 16  # pairs between looks: the evidence only falls on a miss, and slowly

# Under alternative k the next card follows the earlier order forwards with chance a_f, backwards
# with a_b, and is drawn as a proper shuffle would with the rest: the likelihood ratio of a forward
# hit whose chance by luck is p is (a_f + rest * p) / p, of a miss just the rest.
_REST = tuple(1.0 - a_f - a_b for a_f, a_b in ALTERNATIVES)
_LOG_REST = tuple(math.log(r) for r in _REST)
_FORWARD = tuple((a_f, r) for (a_f, _), r in zip(ALTERNATIVES, _REST, strict=True))  # (share, rest)
_BACKWARD = tuple((a_b, r) for (_, a_b), r in zip(ALTERNATIVES, _REST, strict=True))
# A hit whose chance is p raises no alternative's log ratio by more than log(top share / p + top
# rest): between looks at the threshold, that is what is taken off how far below it they were.
_FORWARD_RISE = (max(a for a, _ in _FORWARD), max(_REST))
_BACKWARD_RISE = (max(a for a, _ in _BACKWARD), max(_REST))
_ROUNDING = 1e-6  # more than hundreds of sums of logs can round by: a look comes a bit early

_LOG_K = math.log(len(ALTERNATIVES))
_NONE = N  # a slot of the shoe's counts by face that stays 0: a pick of one face is still a tuple

_Pick = Callable[[list[int]], tuple[int, ...]]  # an itemgetter of some faces' counts, and two 0s


def _log_mean_exp(logs: list[float]) -> float:
    top = max(logs)
    return top + math.log(sum(math.exp(v - top) for v in logs)) - _LOG_K


@dataclass(slots=True)
class Fingerprint:
    """Which faces followed which within ``WINDOW`` cards in one shoe: row x is a bit mask of y."""

    shoe_id: str
    rows: list[int] = field(default_factory=lambda: [0] * N)
    cards: int = 0
    _neighbours: Neighbours | None = field(default=None, repr=False, compare=False)

    def encode(self) -> str:
        raw = b"".join(row.to_bytes(ROW_BYTES, "little") for row in self.rows)
        return base64.b64encode(raw).decode()

    @classmethod
    def decode(cls, shoe_id: str, text: str, cards: int) -> Fingerprint:
        raw = base64.b64decode(text)
        if len(raw) != N * ROW_BYTES:
            raise ValueError(f"shuffle fingerprint of shoe {shoe_id!r} has {len(raw)} bytes")
        rows = [int.from_bytes(raw[i : i + ROW_BYTES], "little") for i in range(0, len(raw), ROW_BYTES)]
        return cls(shoe_id, rows, cards)

    def neighbours(self) -> Neighbours:
        """The tables a card is judged by, worked out once, when the finished shoe is first compared with.

        A finished shoe is compared with by the next ``SHOES_KEPT`` shoes and never changes.
        """
        if self._neighbours is None:
            self._neighbours = Neighbours(self.rows)
        return self._neighbours


class Neighbours:
    """One earlier shoe's neighbours of each face x, as tables indexed by x.

    ``after[x]`` is the bit mask of the faces that followed x there, ``before[x]`` of those only
    before it: a pair (x, y) is a shift and an and or two. A hit's chance needs how many copies of
    those faces are left: ``after_sides[x]`` (``before_sides[x]``) is an itemgetter that takes
    their counts out of the shoe's counts by face in one call, and how many faces it names.
    """

    __slots__ = ("after", "after_sides", "before", "before_sides")

    def __init__(self, rows: list[int]) -> None:
        after = [faces(row) for row in rows]
        before = [0] * N
        for x, ys in enumerate(after):
            bit = 1 << x
            for y in ys:
                before[y] |= bit
        self.after = list(rows)
        self.before = [b & ~a for a, b in zip(rows, before, strict=True)]
        self.after_sides = [_side(ys) for ys in after]
        self.before_sides = [_side(faces(mask)) for mask in self.before]


def _side(faces: list[int]) -> tuple[_Pick, int]:
    return itemgetter(_NONE, _NONE, *faces), len(faces)


@dataclass(slots=True)
class Comparison:
    """The evidence, so far in this shoe, that it repeats one earlier shoe."""

    earlier: str
    logs: list[float] = field(default_factory=lambda: [0.0] * len(ALTERNATIVES))  # over the hits
    pairs: int = 0  # neighbouring pairs judged
    forward: int = 0
    backward: int = 0
    misses: int = 0  # pairs neither way: each multiplies alternative k by its share left to chance
    cleared: bool = False  # the evidence fell below CLEARED: not compared any more in this shoe
    alert_id: int | None = None  # the alert raised on it, once raised
    final: bool = False  # the shoe is over and the alert restated with the whole shoe's figures
    # How far below THRESHOLD the largest log ratio is at least; at or below 0, it must be looked
    # at. Not kept in a snapshot: 0 after a restore, so the first hit looks.
    headroom: float = field(default=0.0, compare=False)

    @property
    def log_evidence(self) -> float:
        return _log_mean_exp(self.log_ratios())

    def log_ratios(self) -> list[float]:
        """The log likelihood ratio of each alternative: the hits' and the misses' together."""
        misses = self.misses
        return [v + misses * m for v, m in zip(self.logs, _LOG_REST, strict=True)]

    def figures(self) -> dict[str, Any]:
        """What an alert says of it (``ShuffleEvidence``): the earlier shoe and the statistic."""
        return {
            "earlier_shoe_id": self.earlier,
            "log10_evidence": round(self.log_evidence / math.log(10), 2),
            "pairs": self.pairs,
            "forward": self.forward,
            "backward": self.backward,
            "final": self.final,
        }


class ShuffleCheck:
    """The current shoe's fingerprint and its comparisons with the last ``SHOES_KEPT`` shoes."""

    def __init__(self) -> None:
        self.history: list[Fingerprint] = []
        self.current: Fingerprint | None = None
        self.tail: list[int] = []  # faces of the last WINDOW readable cards, oldest first
        self.comparisons: list[Comparison] = []
        # The comparisons not cleared, each with its earlier shoe's tables: what a card is judged by.
        self.active: list[tuple[Comparison, Neighbours]] = []
        # This shoe's cards by face as ``seen`` last had them, and all of ``seen`` then (see _count).
        self.counts: list[int] = [0] * (N + 1)
        self.counted = 0
        # The shoe's cards drawn, readable or not, when ``seen`` was last read: -1 until it is read.
        self.dealt = -1
        self.order = OwnOrder()  # this shoe against new decks and itself: no earlier shoe needed

    def new_shoe(self, shoe_id: str) -> None:
        """Keep the shoe just finished (if it dealt enough) and start comparing the next with it."""
        done = self.current
        if done is not None and done.cards >= MIN_CARDS:
            self.history = [*self.history, done][-SHOES_KEPT:]
        self.current = Fingerprint(shoe_id)
        self.tail = []
        self.comparisons = [Comparison(fp.shoe_id) for fp in self.history]
        self.counts = [0] * (N + 1)
        self.counted = 0
        self.dealt = 0
        self.order = OwnOrder()
        self._activate()

    def _activate(self) -> None:
        """Pair each comparison still compared with its earlier shoe's tables."""
        pairs = zip(self.comparisons, self.history, strict=True)
        self.active = [(comp, fp.neighbours()) for comp, fp in pairs if not comp.cleared]

    def finish(self) -> list[Comparison | OrderEvidence]:
        """At the shoe's end, once: the comparisons that raised an alert, their figures now final."""
        done = [c for c in self.comparisons if c.alert_id is not None and not c.final]
        for comparison in done:
            comparison.final = True
        return [*done, *self.order.finish()]

    def card(
        self, card: str | None, seen: Mapping[str, int], decks: int, dealt: int | None = None
    ) -> list[Comparison | OrderEvidence]:
        """One card out of the shoe; the comparisons it made overwhelming (none raised before).

        ``seen`` counts this shoe's cards, this one included, and only grows until the next
        shoe: what is left in the shoe is ``decks`` of each face less those. ``dealt`` is the
        shoe's cards drawn so far, this one and unreadable ones included, when the caller counts
        them (see ``_count``). An unreadable card breaks the chain of neighbours.
        """
        fp = self.current
        if fp is None:
            return []
        if card is None:
            self.tail = []
            self._count(None, 0, seen, dealt)
            return []
        face = FACES.get(card)
        held = seen.get(card, 0)
        self._count(face, held, seen, dealt)
        if face is None:
            self.tail = []
            return []
        crossed: list[Comparison | OrderEvidence] = []
        tail = self.tail
        rows = fp.rows
        if tail and held <= decks:  # else a foreign copy, which only a miscounted shoe has
            x = tail[-1]
            # Cards left before this one was drawn: what a proper shuffle drew it from.
            total = decks * N - self.counted + 1
            if self.active:
                self._judge(x, face, total, decks, crossed)
            counts = self.counts
            counts[face] -= 1  # its own order is judged by the cards left before this one
            own = self.order.judge(x, face, rows[x], counts, decks, total)
            counts[face] += 1
            if own is not None:
                crossed.append(own)
        bit = 1 << face
        for prev in tail:
            rows[prev] |= bit
        fp.cards += 1
        if len(tail) == WINDOW:
            del tail[0]
        tail.append(face)
        return crossed

    def _count(self, y: int | None, held: int, seen: Mapping[str, int], dealt: int | None) -> None:
        """Bring the counts by face up to ``seen``, which holds ``held`` of the card drawn (face ``y``).

        When the shoe drew exactly this card since the last one (``dealt`` one more), ``seen`` gained
        this card only, so one count is set: a card a time, with no sum over ``seen``. Otherwise (a
        check restored from a snapshot, which keeps no counts; a caller that does not count) the
        counts are read again whole.
        """
        if dealt is not None and dealt == self.dealt + 1:
            self.dealt = dealt
            if held:
                counts = self.counts
                if y is None:  # a card no deck has: in ``seen``, in no count by face
                    self.counted += 1
                else:
                    self.counted += held - counts[y]
                    counts[y] = held
            return
        self.dealt = -1 if dealt is None else dealt
        self.counts = [seen.get(c, 0) for c in ALL_CARDS] + [0]
        self.counted = sum(seen.values())

    def _judge(
        self, x: int, y: int, total: int, decks: int, crossed: list[Comparison | OrderEvidence]
    ) -> None:
        """Each active comparison's factor for the pair (x, y), y counted, ``total`` cards left before it;
        those it made overwhelming go to ``crossed`` (the card's own list: none made for each card).

        A miss multiplies alternative k by the share it leaves to chance, whatever the odds: it is
        counted, and added in when the evidence is looked at. Only a hit needs its chance worked
        out, from the shoe's counts by face.
        """
        counts = self.counts
        cleared = False
        for comp, nb in self.active:
            comp.pairs += 1
            if nb.after[x] >> y & 1:
                comp.forward += 1
                (pick, size), shares, rise = nb.after_sides[x], _FORWARD, _FORWARD_RISE
            elif nb.before[x] >> y & 1:
                comp.backward += 1
                (pick, size), shares, rise = nb.before_sides[x], _BACKWARD, _BACKWARD_RISE
            else:
                comp.misses += 1
                if comp.pairs % _CLEARED_EVERY == 0 and comp.alert_id is None:
                    comp.cleared = max(comp.log_ratios()) < CLEARED
                    cleared = cleared or comp.cleared
                continue
            # Copies of those faces left before this card, which was one of them (a foreign copy
            # counts against them: only a miscounted shoe, already alerted, has one).
            left = decks * size - sum(pick(counts)) + 1
            if left <= 0 or total <= 0:
                continue  # no such card was left: the shoe's count is wrong, not its shuffle
            p = left / total
            comp.logs = [v + log(a / p + r) for v, (a, r) in zip(comp.logs, shares, strict=False)]
            if comp.alert_id is not None:
                continue
            # Misses only lower the ratios: only the hits since the last look can have raised them.
            comp.headroom -= log(rise[0] / p + rise[1])
            if comp.headroom <= _ROUNDING:
                ratios = comp.log_ratios()  # their mean is never above their largest
                top = max(ratios)
                if top >= THRESHOLD and _log_mean_exp(ratios) >= THRESHOLD:
                    crossed.append(comp)
                comp.headroom = THRESHOLD - top
        if cleared:
            self.active = [(comp, nb) for comp, nb in self.active if not comp.cleared]

    # ------------------------------------------------------------------ state

    def snapshot(self) -> dict[str, Any]:
        """Small and JSON-ready: a fingerprint per shoe kept, the running figures of this one."""
        cur = self.current
        return {
            "history": [[fp.shoe_id, fp.cards, fp.encode()] for fp in self.history],
            "current": None if cur is None else [cur.shoe_id, cur.cards, cur.encode()],
            "tail": list(self.tail),
            "comparisons": [
                [
                    *(c.earlier, list(c.logs), c.pairs, c.forward, c.backward),
                    *(c.misses, c.cleared, c.alert_id, c.final),
                ]
                for c in self.comparisons
            ],
            "order": self.order.snapshot(),
        }

    @classmethod
    def restore(cls, snap: Mapping[str, Any]) -> ShuffleCheck:
        check = cls()
        check.history = [Fingerprint.decode(s, text, int(n)) for s, n, text in snap["history"]]
        cur = snap["current"]
        check.current = None if cur is None else Fingerprint.decode(cur[0], cur[2], int(cur[1]))
        check.tail = [int(f) for f in snap["tail"]]
        check.comparisons = [
            Comparison(e, [float(v) for v in logs], int(p), int(f), int(b), int(m), bool(c), a, bool(final))
            for e, logs, p, f, b, m, c, a, final in snap["comparisons"]
        ]
        if "order" in snap:  # saved before a shoe's own order was judged: it starts from here
            check.order = OwnOrder.restore(snap["order"])
        check._activate()
        return check
