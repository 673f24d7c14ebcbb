"""Which build of scannerd runs: its judging modules compiled by mypyc, or the pure-Python reference.

The same source is both. The default install is pure Python and needs no
compiler; ``SCANNERD_COMPILE=1`` builds a wheel whose modules below are C
extension modules, made from these very files by mypyc
(``release/build_backend.py``, docs/performance.md). They are the pure hot
path: the codecs, the table, the validator, its judges and what they judge
with, each card passing through them. Nothing here is pydantic, which mypyc
cannot usefully compile, and nothing is subclassed or patched from
interpreted code. The pure modules stay the reference: the compiled build
publishes the same bytes (tests/runtime/test_compiled_build.py holds it to
that) and the pure one is the fallback.
"""

from __future__ import annotations

from importlib.machinery import EXTENSION_SUFFIXES
from importlib.util import find_spec
from typing import Literal

COMPILED: tuple[str, ...] = (
    "drivers.cards",
    "drivers.codecs.beetek",
    "drivers.codecs.framed",
    "drivers.codecs.hid",
    "drivers.codecs.linecode",
    "scannerd.core.actors",
    "scannerd.core.cards",
    "scannerd.core.face_sets",
    "scannerd.core.games",
    "scannerd.core.games.dragon_tiger",
    "scannerd.core.games.punto_banco",
    "scannerd.core.ingest",
    "scannerd.core.judges.alerts",
    "scannerd.core.judges.authority",
    "scannerd.core.judges.betting",
    "scannerd.core.judges.builder",
    "scannerd.core.judges.confirmation",
    "scannerd.core.judges.deal",
    "scannerd.core.judges.deck_check",
    "scannerd.core.judges.judge",
    "scannerd.core.judges.reveal",
    "scannerd.core.judges.sensors",
    "scannerd.core.judges.shoe",
    "scannerd.core.judges.table_top",
    "scannerd.core.recall",
    "scannerd.core.roads",
    "scannerd.core.shoe_order",
    "scannerd.core.shuffle_check",
    "scannerd.core.table",
    "scannerd.core.validator",
)
"""The modules a compiled build compiles, by name."""

Build = Literal["compiled", "pure"]


def is_compiled(module: str) -> bool:
    """Whether ``module`` is loaded from an extension module (found, not imported: only its packages)."""
    spec = find_spec(module)
    return spec is not None and spec.origin is not None and spec.origin.endswith(tuple(EXTENSION_SUFFIXES))


def running() -> Build:
    """``compiled`` when every one of ``COMPILED`` is an extension module here; ``pure`` otherwise."""
    return "compiled" if all(is_compiled(module) for module in COMPILED) else "pure"


def described() -> str:
    """The build as ``scannerd --version`` names it."""
    return "compiled: mypyc" if running() == "compiled" else "pure Python"
