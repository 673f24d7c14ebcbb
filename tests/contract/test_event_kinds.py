"""Event kinds are one type, and every consumer that dispatches on them is held to all of them.

A kind added to the contract must be drawn by the screens, captioned, counted and printed, or
ignored on purpose: each consumer ``match``es the kind with ``assert_never`` last, so mypy names
the one that forgot. Shown here by adding a toy kind to a copy of the source and running mypy.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import get_args

from scannerd.contract.events import EventKind
from scannerd.contract.topics import EVENT_KINDS

ROOT = Path(__file__).resolve().parents[2]
CONSUMERS = {
    "scannerd/display/view.py",  # the dealer's screen, the overlay, the pit's tiles
    "scannerd/recording/captions.py",  # the video's captions
    "scannerd/runtime/metrics.py",  # the counts Prometheus reads
    "scannerd/commands/watch.py",  # the terminal's lines
}
"""Every module that does something per kind of event."""


def test_the_kind_type_is_every_event_the_contract_has() -> None:
    assert set(get_args(EventKind)) == set(EVENT_KINDS)


def test_mypy_names_every_consumer_that_forgets_a_new_kind(tmp_path: Path) -> None:
    copy = tmp_path / "src"
    for part in ("scannerd", "drivers"):
        shutil.copytree(ROOT / part, copy / part, ignore=shutil.ignore_patterns("*.so", "__pycache__"))
    shutil.copy(ROOT / "pyproject.toml", copy / "pyproject.toml")
    events = copy / "scannerd" / "contract" / "events.py"
    text = events.read_text()
    toy = text.replace('EventKind = Literal[\n    "card",', 'EventKind = Literal[\n    "toy", "card",', 1)
    assert toy != text, "EventKind is no longer where this test adds to it"
    events.write_text(toy)
    cache = tmp_path / "cache"
    if (ROOT / ".mypy_cache").is_dir():  # the checkout's own run (CI's) spares this one the libraries
        shutil.copytree(ROOT / ".mypy_cache", cache)
    run = subprocess.run(
        [sys.executable, "-m", "mypy", "--cache-dir", str(cache), *sorted(CONSUMERS)],
        cwd=copy,
        capture_output=True,
        text=True,
        timeout=600,
    )
    named = {m[1] for m in re.finditer(r"^(scannerd/\S+?\.py):\d+: error: .*assert_never", run.stdout, re.M)}
    assert named == CONSUMERS, run.stdout
