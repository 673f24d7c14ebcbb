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
within ``WINDOW`` cards after x. That is 52 x 52 bits, a fixed 338 bytes per
shoe however many cards it dealt, and the only thing kept of a finished shoe.

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
"""

from __future__ import annotations

import base64
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from scannerd.cards import ALL_CARDS

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

_FACES = {card: i for i, card in enumerate(ALL_CARDS)}
_N = len(ALL_CARDS)
_ROW_BYTES = (_N + 7) // 8
_LOG_K = math.log(len(ALTERNATIVES))


def _log_mean_exp(logs: list[float]) -> float:
    top = max(logs)
    return top + math.log(sum(math.exp(v - top) for v in logs)) - _LOG_K


@dataclass(slots=True)
class Fingerprint:
    """Which faces followed which within ``WINDOW`` cards in one shoe: row x is a bit mask of y."""

    shoe_id: str
    rows: list[int] = field(default_factory=lambda: [0] * _N)
    cards: int = 0

    def encode(self) -> str:
        raw = b"".join(row.to_bytes(_ROW_BYTES, "little") for row in self.rows)
        return base64.b64encode(raw).decode()

    @classmethod
    def decode(cls, shoe_id: str, text: str, cards: int) -> Fingerprint:
        raw = base64.b64decode(text)
        if len(raw) != _N * _ROW_BYTES:
            raise ValueError(f"shuffle fingerprint of shoe {shoe_id!r} has {len(raw)} bytes")
        rows = [int.from_bytes(raw[i : i + _ROW_BYTES], "little") for i in range(0, len(raw), _ROW_BYTES)]
        return cls(shoe_id, rows, cards)

    def columns(self) -> list[int]:
        """Row y of the transpose: the faces y followed."""
        cols = [0] * _N
        for x, row in enumerate(self.rows):
            bit = 1 << x
            for y in range(_N):
                if row >> y & 1:
                    cols[y] |= bit
        return cols


@dataclass(slots=True)
class Comparison:
    """The evidence, so far in this shoe, that it repeats one earlier shoe."""

    earlier: str
    logs: list[float] = field(default_factory=lambda: [0.0] * len(ALTERNATIVES))
    pairs: int = 0  # neighbouring pairs judged
    forward: int = 0
    backward: int = 0
    alert_id: int | None = None  # the alert raised on it, once raised
    final: bool = False  # the shoe is over and the alert restated with the whole shoe's figures

    @property
    def log_evidence(self) -> float:
        return _log_mean_exp(self.logs)

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
        self._cols: dict[str, list[int]] = {}

    def new_shoe(self, shoe_id: str) -> None:
        """Keep the shoe just finished (if it dealt enough) and start comparing the next with it."""
        done = self.current
        if done is not None and done.cards >= MIN_CARDS:
            self.history = [*self.history, done][-SHOES_KEPT:]
        self.current = Fingerprint(shoe_id)
        self.tail = []
        self.comparisons = [Comparison(fp.shoe_id) for fp in self.history]
        self._cols = {}

    def finish(self) -> list[Comparison]:
        """At the shoe's end, once: the comparisons that raised an alert, their figures now final."""
        done = [c for c in self.comparisons if c.alert_id is not None and not c.final]
        for comparison in done:
            comparison.final = True
        return done

    def card(self, card: str | None, seen: Mapping[str, int], decks: int) -> list[Comparison]:
        """One card out of the shoe; the comparisons it made overwhelming (none raised before).

        ``seen`` counts this shoe's cards, this one included: what is left in the shoe is
        ``decks`` of each face less those. An unreadable card breaks the chain of neighbours.
        """
        fp = self.current
        if fp is None:
            return []
        face = _FACES.get(card) if card is not None else None
        if face is None:
            self.tail = []
            return []
        crossed: list[Comparison] = []
        if self.tail and self.comparisons and seen.get(card, 0) <= decks:
            left = [max(decks - seen.get(c, 0), 0) for c in ALL_CARDS]
            left[face] += 1
            crossed = self._judge(self.tail[-1], face, left)
        for prev in self.tail:
            fp.rows[prev] |= 1 << face
        fp.cards += 1
        self.tail = [*self.tail, face][-WINDOW:]
        return crossed

    def _judge(self, x: int, y: int, left: list[int]) -> list[Comparison]:
        total = sum(left)
        crossed = []
        for fp, comp in zip(self.history, self.comparisons, strict=True):
            follows = fp.rows[x]
            cols = self._cols.get(fp.shoe_id)
            if cols is None:
                cols = self._cols[fp.shoe_id] = fp.columns()
            precedes = cols[x] & ~follows
            p_f = sum(left[f] for f in range(_N) if follows >> f & 1) / total
            p_b = sum(left[f] for f in range(_N) if precedes >> f & 1) / total
            if follows >> y & 1:
                outcome, p = "f", p_f
                comp.forward += 1
            elif precedes >> y & 1:
                outcome, p = "b", p_b
                comp.backward += 1
            else:
                outcome, p = "n", 1.0 - p_f - p_b
            comp.pairs += 1
            if p <= 0.0:  # impossible under a proper shuffle: only a miscounted shoe gets here
                continue
            for k, (a_f, a_b) in enumerate(ALTERNATIVES):
                rest = 1.0 - a_f - a_b
                if outcome == "f":
                    q = a_f + rest * p
                elif outcome == "b":
                    q = a_b + rest * p
                else:
                    q = rest * p
                comp.logs[k] += math.log(q / p)
            if comp.alert_id is None and comp.log_evidence >= THRESHOLD:
                crossed.append(comp)
        return crossed

    # ------------------------------------------------------------------ state

    def snapshot(self) -> dict[str, Any]:
        """Small and JSON-ready: a fingerprint per shoe kept, the running figures of this one."""
        cur = self.current
        return {
            "history": [[fp.shoe_id, fp.cards, fp.encode()] for fp in self.history],
            "current": None if cur is None else [cur.shoe_id, cur.cards, cur.encode()],
            "tail": list(self.tail),
            "comparisons": [
                [c.earlier, list(c.logs), c.pairs, c.forward, c.backward, c.alert_id, c.final]
                for c in self.comparisons
            ],
        }

    @classmethod
    def restore(cls, snap: Mapping[str, Any]) -> ShuffleCheck:
        check = cls()
        check.history = [Fingerprint.decode(s, text, int(n)) for s, n, text in snap["history"]]
        cur = snap["current"]
        check.current = None if cur is None else Fingerprint.decode(cur[0], cur[2], int(cur[1]))
        check.tail = [int(f) for f in snap["tail"]]
        check.comparisons = [
            Comparison(e, [float(v) for v in logs], int(p), int(f), int(b), a, bool(final))
            for e, logs, p, f, b, a, final in snap["comparisons"]
        ]
        return check
