"""The regression library: every recorded session replays to exactly its golden output.

A difference is either a regression or an intended change of behaviour; for
the latter, ``python -m tests.sessions rebuild`` rewrites the golden files,
and the diff is reviewed like code (docs/recording.md).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.sessions import diff, golden_path, recordings
from tests.sessions.cases import CASES


@pytest.mark.parametrize("recording", recordings(), ids=lambda p: p.name)
def test_session_replays_to_its_golden_output(recording: Path) -> None:
    golden = golden_path(recording)
    assert golden.exists(), f"{golden.name} is missing: python -m tests.sessions rebuild {golden.stem}"
    difference = diff(recording)
    assert not difference, f"replay of {recording.name} differs from {golden.name}:\n{difference}"


def test_every_hand_written_case_is_in_the_library(tmp_path: Path) -> None:
    """The committed recordings are what cases.py writes: nobody edited one by hand or forgot a build."""
    names = {golden_path(p).stem: p for p in recordings()}
    for name, make in CASES.items():
        assert name in names, f"{name} is missing: python -m tests.sessions build {name}"
        session = make()
        session.write(tmp_path / names[name].name)
        assert (tmp_path / names[name].name).read_bytes() == names[name].read_bytes(), name


def test_the_library_covers_every_misdeal_driver_and_policy() -> None:
    """What the library is for: a golden file for each of these (and for each driver: the driver
    contract test)."""
    text = "".join(p.read_text() for p in (golden_path(r) for r in recordings()))
    for code in (
        "CARD_BEFORE_BETS_CLOSED",
        "EXTRA_CARD",
        "SHORT_DEAL",
        "UNREADABLE_CARD",
        "FOREIGN_CARD",
        "CARD_AFTER_SHOE_END",
        "BURN_MISMATCH",
        "ROUND_STALLED",
        "CUT_CARD",
        "DEVICE_DISCONNECTED",
        "DEVICE_RECONNECTED",
    ):
        assert f'"code":"{code}"' in text, code
