"""The stage benchmark finds every stamp it relies on: a renamed hot-path function must not blank a step."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from bench.latency_stages import STEPS

ROOT = Path(__file__).parents[2]


@pytest.mark.timeout(300)
def test_every_step_of_every_card_is_stamped() -> None:
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "bench.latency_stages",
            "--shoes",
            "1",
            "--cards",
            "150",
            "--interval",
            "0.005",
        ],
        capture_output=True,
        text=True,
        timeout=280,
        cwd=ROOT,
    )
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout.strip().splitlines()[-1])
    cards = report["settings"]["cards_per_process"]
    assert cards == 150
    steps = report["ms_since_frame_written"]
    for name, kind in (("daemon", "daemon"), ("daemon_no_store", "daemon"), ("bare_bridge", "bare_bridge")):
        assert set(steps[name]) == {*STEPS[kind], "arrived"}
        for step, figures in steps[name].items():
            # Fed five times faster than dealing pace, a few cards overlap and cannot be paired with
            # their stamps; a step whose function was renamed would have none at all.
            assert figures["n"] >= 0.95 * cards, (name, step)
        assert steps[name]["arrived"]["n"] == cards
    assert set(report["ratio_to_bare_bridge"]) == {"daemon", "daemon_no_store"}
