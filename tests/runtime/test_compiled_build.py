"""The compiled build publishes what the pure build publishes, byte for byte.

A process imports one build or the other, so the pure one runs in a child
process on a copy of the sources without the extension modules
(``tests/support/builds.py``), while this process, the compiled build, judges
the same cases: every golden session, and the inputs the fuzz and property
tests draw (input streams of every kind, requests good and bad, a repeated
shoe's shuffle alerts, any bytes and good scans amid junk for every codec).
Every event, answer, state and decoded device event must be the same bytes.

Skipped where no compiled build runs (the default install, pure Python); CI
builds one and runs the whole suite on it (.ci/run).
"""

from __future__ import annotations

import os
import pickle
import shutil
import subprocess
import sys
from pathlib import Path
from typing import get_args

import pytest

from scannerd.runtime import build
from tests.support.builds import Case, cases, made

ROOT = Path(__file__).resolve().parents[2]
SOURCES = ("scannerd", "drivers", "simulators", "tests")

pytestmark = pytest.mark.skipif(
    build.running() != "compiled", reason="no compiled build here (SCANNERD_COMPILE=1, docs/performance.md)"
)


def pure_copy(into: Path) -> Path:
    """The sources alone, without what the compiled build added beside them."""
    for package in SOURCES:
        shutil.copytree(ROOT / package, into / package, ignore=shutil.ignore_patterns("*.so", "__pycache__"))
    return into


def test_the_compiled_build_publishes_the_pure_builds_bytes(tmp_path: Path) -> None:
    judged = cases(examples=300)
    given = tmp_path / "cases.pickle"
    given.write_bytes(pickle.dumps(judged))
    pure = pure_copy(tmp_path / "pure")
    out = tmp_path / "pure.pickle"
    child = subprocess.run(
        [sys.executable, "-m", "tests.support.builds", str(given), str(out)],
        cwd=pure,
        env={**os.environ, "PYTHONPATH": str(pure)},
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert child.returncode == 0, child.stderr[-3000:]
    pure_build, pure_made = pickle.loads(out.read_bytes())
    assert (pure_build, build.running()) == ("pure", "compiled")
    differing = [
        (case, theirs, ours)
        for case, theirs, ours in zip(judged, pure_made, map(made, judged), strict=True)
        if theirs != ours
    ]
    assert not differing, _first_difference(*differing[0])
    assert {type(case) for case in judged} == set(get_args(Case))


def _first_difference(case: object, pure: bytes, compiled: bytes) -> str:
    """The case and its first line that differs (or the line one build has and the other not)."""
    ours, theirs = compiled.splitlines(), pure.splitlines()
    at = next((n for n, pair in enumerate(zip(theirs, ours, strict=False)) if pair[0] != pair[1]), None)
    if at is None:
        at = min(len(ours), len(theirs))
    pure_line, compiled_line = theirs[at : at + 1], ours[at : at + 1]
    return f"{case!r}\nline {at}:\n  pure:     {pure_line!r}\n  compiled: {compiled_line!r}"
