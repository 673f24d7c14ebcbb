"""`scannerd demo`: one command brings up a whole table, and it deals rounds."""

import subprocess
import sys


def test_the_demo_deals_rounds_and_stops_cleanly(tmp_path):
    proc = subprocess.run(
        [sys.executable, "-m", "scannerd", "demo", "--seconds", "12", "--pace", "0.05",
         "--betting-time", "0.2", "--no-view", "--listen", "127.0.0.1:0", "--seed", "1",
         "--error-rate", "0", "--dir", str(tmp_path)],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert "dealer display   http://127.0.0.1:" in proc.stdout
    rounds = [line for line in proc.stdout.splitlines() if line.startswith("round ")]
    assert len(rounds) >= 2, proc.stdout
    assert not [line for line in proc.stdout.splitlines() if line.startswith("alert ")]
    assert "Traceback" not in proc.stderr
    assert list((tmp_path / "recordings").iterdir()), "the session was recorded"
