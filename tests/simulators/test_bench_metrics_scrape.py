"""The scrape benchmark runs end to end: both daemons dealt every card, the scraper scraped throughout."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).parents[2]


@pytest.mark.timeout(200)
def test_the_scraped_and_the_unscraped_daemon_are_both_measured() -> None:
    command = ["-m", "bench.metrics_scrape", "--shoes", "1", "--cards", "60", "--interval", "0.01"]
    proc = subprocess.run([sys.executable, *command], capture_output=True, text=True, timeout=180, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout.strip().splitlines()[-1])
    assert report["settings"]["cards_per_daemon"] == 60
    assert report["lost"] == {"scraped": 0, "unscraped": 0}
    assert report["scrapes"] > 0 and report["scrape_bytes"] > 1000  # a real exposition each time
    assert report["scraped"]["n"] == report["unscraped"]["n"] == 60
    assert report["p99_ratio"] is not None
