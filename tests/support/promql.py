"""The series a PromQL expression selects, read well enough to hold rules and dashboards to the metric list.

Not a PromQL parser: it tells a metric name from a function, an aggregation's
label list, a keyword or a duration, and reads each selector's label
matchers. That is all the check of the names needs, and it is strict where it
matters: a name it cannot place is reported as a metric, so a typo is never
taken for a function.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

TOKEN = re.compile(
    r"""\s+
    | "(?:\\.|[^"\\])*" | '(?:\\.|[^'\\])*' | `[^`]*`       # strings
    | \{[^}]*\}                                              # a selector's matchers
    | \[[^\]]*\]                                             # a range or a subquery
    | (?:\d+(?:ms|[smhdwy]))+                                # a duration (offset 5m)
    | \d+(?:\.\d+)?(?:[eE][+-]?\d+)? | 0x[0-9a-fA-F]+        # a number
    | \$\{?\w+\}?                                            # a Grafana variable
    | [A-Za-z_:][\w:]*                                       # a name
    | .""",
    re.VERBOSE,
)
LABEL_LISTS = frozenset({"by", "without", "on", "ignoring", "group_left", "group_right"})
KEYWORDS = frozenset({"and", "or", "unless", "bool", "offset", "atan2", "inf", "nan", "Inf", "NaN"})
# Followed by ``by (...)`` rather than their parenthesis as often as not.
AGGREGATIONS = frozenset(
    {
        "sum",
        "min",
        "max",
        "avg",
        "group",
        "stddev",
        "stdvar",
        "count",
        "count_values",
        "bottomk",
        "topk",
        "quantile",
        "limitk",
        "limit_ratio",
    }
)
MATCHER = re.compile(r"""([A-Za-z_]\w*)\s*(=~|!~|!=|=)\s*("(?:\\.|[^"\\])*"|'(?:\\.|[^'\\])*')""")


@dataclass(frozen=True)
class Selector:
    """A metric named in an expression, with its matchers as (label, operator, value)."""

    name: str
    matchers: tuple[tuple[str, str, str], ...]


def selectors(expr: str) -> list[Selector]:
    """Every series selector in ``expr``, in order."""
    tokens = [t for t in TOKEN.findall(expr) if not t.isspace()]
    found = []
    i = 0
    while i < len(tokens):
        token = tokens[i]
        following = tokens[i + 1] if i + 1 < len(tokens) else ""
        if token in LABEL_LISTS:
            if following == "(":
                i = tokens.index(")", i) + 1
                continue
        elif token in KEYWORDS or token in AGGREGATIONS or following == "(":
            pass  # a keyword, a function or an aggregation
        elif re.fullmatch(r"[A-Za-z_:][\w:]*", token):
            matchers: tuple[tuple[str, str, str], ...] = ()
            if following.startswith("{"):
                matchers = tuple((label, op, value[1:-1]) for label, op, value in MATCHER.findall(following))
            found.append(Selector(token, matchers))
        i += 1
    return found
