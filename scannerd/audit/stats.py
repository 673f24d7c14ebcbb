"""The statistics of a table's results and facts: goodness of fit, a binomial z per fact, and a band.

Every game has three results (its two sides and the tie): three
categories, two degrees of freedom. Pearson's statistic
X^2 = sum (observed - expected)^2 / expected is, for a fair game, close to
chi-square with two degrees of freedom, whose upper tail has the closed form
exp(-x/2): no statistics library is needed for it, and none is shipped to a
table PC. The approximation wants every expected count at ``MIN_EXPECTED``
or more; with punto banco's tie chance of 0.095 that is about 53 hands (67 at
Dragon Tiger, tie 0.075), so a shorter group gets no p-value rather than a
misleading one.

A fact's value (Panda 8, a Dragon's big card) is there or not in each hand:
its count is a sum of independent yes-or-no trials, each with its own exact
chance, so z = (observed - expected) / sqrt(sum p (1 - p)) is close to a
standard normal for a fair game. A value is far out at |z| >= ``FACT_Z``,
tested once it is expected ``FACT_MIN_EXPECTED`` times or more, and missed
as often (docs/audit.md gives what that threshold costs a fair table).

The band around a running frequency is pointwise: after n hands the
frequency of a result with chance p falls within p +- Z sqrt(p (1 - p) / n)
in about 95% of fair games at that n. A fair table's line leaves the band
now and then; the p-value, not the band, is the test (docs/audit.md).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

MIN_EXPECTED = 5.0
Z = 1.96
"""The band's half-width in standard deviations: 95% pointwise."""

FACT_Z = 5.0
"""How far out a fact's value is flagged, in standard deviations (two-sided: 5.7e-7 of fair tests)."""

FACT_MIN_EXPECTED = 10.0
"""A value expected fewer times (or missed fewer times) than this is not tested: its count is too skewed."""

POINTS = 120
"""At most this many points of a running frequency are kept: enough for a plot, small in the JSON."""


def chi_square(observed: Mapping[str, int], expected: Mapping[str, float]) -> tuple[float, float | None]:
    """Pearson's statistic over a game's three results, and its p-value (None when too few hands)."""
    x2 = sum((observed.get(r, 0) - e) ** 2 / e for r, e in expected.items() if e > 0)
    if min(expected.values()) < MIN_EXPECTED:
        return x2, None
    return x2, math.exp(-x2 / 2)


def fact_z(observed: int, expected: float, variance: float, hands: int) -> float | None:
    """How many standard deviations a value's count lies from its expectation; None when too rare to say."""
    if min(expected, hands - expected) < FACT_MIN_EXPECTED:
        return None
    return (observed - expected) / math.sqrt(variance)


def band(p: float, n: int) -> tuple[float, float]:
    """Where the frequency of a result with chance ``p`` lies after ``n`` hands, in 95% of fair games."""
    half = Z * math.sqrt(p * (1 - p) / n)
    return p - half, p + half


def running(results: Sequence[str], names: Sequence[str]) -> list[tuple[float, ...]]:
    """(n, then the frequency of each of ``names`` after n hands), at up to ``POINTS`` evenly spread n."""
    counts = dict.fromkeys(names, 0)
    step = max(1, math.ceil(len(results) / POINTS))
    out: list[tuple[float, ...]] = []
    for n, result in enumerate(results, start=1):
        counts[result] += 1
        if n % step == 0 or n == len(results):
            out.append((n, *(counts[name] / n for name in names)))
    return out
