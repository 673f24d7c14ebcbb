"""The shuffle check as it was before its per-card work became table lookups: the reference.

``tests/core/test_shuffle_equivalence.py`` runs the same shoes through this and
``scannerd.core.shuffle_check`` and holds every card's outcome to be the same;
``bench/shuffle_check_cost.py`` times both in the same run. Its snapshots are
the format the daemon has saved since the check began, so restoring one into
the new check is the test that an old saved state loads and continues the same.
Kept as it was, not maintained: the statistic is documented in docs/shuffle.md.
"""

from __future__ import annotations

import base64
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from itertools import repeat
from typing import Any

from scannerd.core.cards import ALL_CARDS

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

A properly shuffled shoe gets there about 150 cards in, and the check's cost with it; no lazy shoe
of the calibration bench ever fell that low before its alert. Stopping never raises an alert, so
it cannot add a false one.
"""
_CLEARED_EVERY = 16  # pairs between looks: the evidence only falls on a miss, and slowly

# Under alternative k the next card follows the earlier order forwards with chance a_f, backwards
# with a_b, and is drawn as a proper shuffle would with the rest: the likelihood ratio of a forward
# hit whose chance by luck is p is (a_f + rest * p) / p, of a miss just the rest.
_FORWARD = tuple(a_f for a_f, _ in ALTERNATIVES)
_BACKWARD = tuple(a_b for _, a_b in ALTERNATIVES)
_REST = tuple(1.0 - a_f - a_b for a_f, a_b in ALTERNATIVES)
_LOG_REST = tuple(math.log(r) for r in _REST)

_Neighbours = tuple[int, tuple[str, ...], int, tuple[str, ...]]

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
    _table: list[_Neighbours] | None = field(default=None, repr=False, compare=False)

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

    def neighbours(self) -> list[_Neighbours]:
        """Per face x: the faces that followed it (mask, codes), and those only before it.

        Worked out once, when a finished shoe is first compared with: a card's check is then
        two bit tests, and a sum over a few faces on a hit.
        """
        if self._table is not None:
            return self._table
        before = [0] * _N
        for x, row in enumerate(self.rows):
            for y in _faces(row):
                before[y] |= 1 << x
        out = []
        for x, after in enumerate(self.rows):
            only_before = before[x] & ~after
            out.append((after, _codes(after), only_before, _codes(only_before)))
        self._table = out
        return out


def _faces(mask: int) -> list[int]:
    """The faces whose bits are set, visiting only those."""
    out = []
    while mask:
        low = mask & -mask
        out.append(low.bit_length() - 1)
        mask ^= low
    return out


def _codes(mask: int) -> tuple[str, ...]:
    return tuple(ALL_CARDS[f] for f in _faces(mask))


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

    def new_shoe(self, shoe_id: str) -> None:
        """Keep the shoe just finished (if it dealt enough) and start comparing the next with it."""
        done = self.current
        if done is not None and done.cards >= MIN_CARDS:
            self.history = [*self.history, done][-SHOES_KEPT:]
        self.current = Fingerprint(shoe_id)
        self.tail = []
        self.comparisons = [Comparison(fp.shoe_id) for fp in self.history]

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
        if card is None or face is None:
            self.tail = []
            return []
        crossed: list[Comparison] = []
        if self.tail and self.comparisons and seen.get(card, 0) <= decks:
            # Cards left before this one was drawn (foreign copies aside, which only a miscounted
            # shoe has): what a proper shuffle drew it from.
            total = decks * _N - sum(seen.values()) + 1
            crossed = self._judge(self.tail[-1], face, card, seen, decks, total)
        for prev in self.tail:
            fp.rows[prev] |= 1 << face
        fp.cards += 1
        self.tail = [*self.tail, face][-WINDOW:]
        return crossed

    def _judge(
        self, x: int, y: int, card: str, seen: Mapping[str, int], decks: int, total: int
    ) -> list[Comparison]:
        """Each comparison's factor for the pair (x, y); only a hit needs its chance worked out.

        A miss multiplies alternative k by the share it leaves to chance, whatever the odds.
        """
        crossed = []
        for fp, comp in zip(self.history, self.comparisons, strict=True):
            if comp.cleared:
                continue
            after, after_codes, before, before_codes = fp.neighbours()[x]
            comp.pairs += 1
            if after >> y & 1:
                comp.forward += 1
                codes, shares = after_codes, _FORWARD
            elif before >> y & 1:
                comp.backward += 1
                codes, shares = before_codes, _BACKWARD
            else:
                comp.misses += 1
                if comp.pairs % _CLEARED_EVERY == 0 and comp.alert_id is None:
                    comp.cleared = max(comp.log_ratios()) < CLEARED
                continue
            # Copies of those faces left before this card, which was one of them (a foreign copy
            # counts against them: only a miscounted shoe, already alerted, has one).
            left = decks * len(codes) - sum(map(seen.get, codes, repeat(0))) + 1
            if left <= 0 or total <= 0:
                continue  # no such card was left: the shoe's count is wrong, not its shuffle
            p = left / total
            comp.logs = [v + math.log(a / p + r) for v, a, r in zip(comp.logs, shares, _REST, strict=True)]
            if comp.alert_id is None:
                ratios = comp.log_ratios()  # their mean is never above their largest
                if max(ratios) >= THRESHOLD and _log_mean_exp(ratios) >= THRESHOLD:
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
                [
                    *(c.earlier, list(c.logs), c.pairs, c.forward, c.backward),
                    *(c.misses, c.cleared, c.alert_id, c.final),
                ]
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
            Comparison(e, [float(v) for v in logs], int(p), int(f), int(b), int(m), bool(c), a, bool(final))
            for e, logs, p, f, b, m, c, a, final in snap["comparisons"]
        ]
        return check
