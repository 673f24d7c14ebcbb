"""What a query may name: the table's metrics with their own labels, and the values a label can take."""

from __future__ import annotations

import re
import typing

from scannerd.contract.alert_catalogue import ALERT_CODES, Severity
from tests.support.metric_names import ROUND_RESULTS, SCRAPE_SERIES, series
from tests.support.promql import selectors

TARGET_LABELS = frozenset({"job", "instance"})
"""What Prometheus adds to every series it scrapes."""

VALUES = {
    "code": frozenset(ALERT_CODES),
    "severity": frozenset(typing.get_args(Severity)),
    "result": frozenset(ROUND_RESULTS),
}
"""The labels whose values are fixed by the table; a matcher on any other value can never match."""


def problems(expr: str) -> list[str]:
    """What in ``expr`` names a metric no table serves, a label it does not carry, or a value it never has."""
    found = []
    for selector in selectors(expr):
        if selector.name in SCRAPE_SERIES:
            labels = TARGET_LABELS | {"table_id"}
        else:
            known = series(selector.name)
            if known is None:
                found.append(f"{selector.name}: no table serves it")
                continue
            labels = known[1] | TARGET_LABELS
        for label, op, value in selector.matchers:
            if label not in labels:
                found.append(f"{selector.name}: no label {label!r}")
            elif label in VALUES and op in ("=", "!=") and value not in VALUES[label]:
                found.append(f"{selector.name}: {label} is never {value!r}")
            elif (
                label in VALUES
                and op in ("=~", "!~")
                and not any(re.fullmatch(value, v) for v in VALUES[label])
            ):
                found.append(f"{selector.name}: {label} never matches {value!r}")
    return found
