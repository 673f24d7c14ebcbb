"""`scannerd demo`: one command brings up a whole table, and it deals rounds."""

import re
import socket
import subprocess
import sys

import pytest

from tests.support.demo import demo_command, demo_process


@pytest.mark.parametrize(
    ("game", "winners"),
    [([], {"player", "banker", "tie"}), (["--game", "dragon_tiger"], {"dragon", "tiger", "tie"})],
)
def test_the_demo_deals_rounds_and_stops_cleanly(tmp_path, game, winners):
    proc = subprocess.run(
        [sys.executable, "-m", "scannerd", "demo", "--seconds", "6", "--pace", "0.05",
         "--betting-time", "0.2", "--no-view", "--listen", "127.0.0.1:0", "--seed", "1",
         "--error-rate", "0", "--dir", str(tmp_path), *game],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert "dealer display   http://127.0.0.1:" in proc.stdout
    rounds = re.findall(r" round \S+ hand=\d+ complete winner=(\w+)", proc.stdout)
    assert len(rounds) >= 2, proc.stdout
    assert set(rounds) <= winners
    assert " alert " not in proc.stdout
    assert "Traceback" not in proc.stderr
    assert list((tmp_path / "recordings").iterdir()), "the session was recorded"


def test_at_its_own_pace_the_first_hand_is_dealt_within_5_s(tmp_path):
    """A newcomer sees a hand at once: the shuffle's pause, the burn and the betting are brisk."""
    # Seed 6 turns up a ten first: the longest burn there is, eleven cards.
    argv = ["--no-view", "--listen", "127.0.0.1:0", "--seed", "6", "--error-rate", "0", "--dir", tmp_path]
    with demo_process(demo_command(*argv)) as demo:
        shown, _ = demo.wait_for(r"^  dealer display   http://", 60, "the display's address")
        dealt, _ = demo.wait_for(r" card player1 \S+ round=S1-R1$", 60, "the first hand's first card")
        assert demo.stop() == 0
    assert len(re.findall(r" card burn ", demo.text())) == 11, demo.text()
    assert dealt - shown < 5.0, demo.text()


def test_into_a_pipe_the_demo_writes_each_event_as_it_happens(tmp_path):
    """No terminal, no screen: a line per event, as ``watch`` writes them, not silence until the end."""
    quick = ["--pace", "0.05", "--betting-time", "0.2", "--listen", "127.0.0.1:0", "--error-rate", "0"]
    with demo_process(demo_command(*quick, "--seconds", "120", "--dir", tmp_path)) as demo:
        demo.wait_for(r" round S1-R1 hand=1 complete winner=", 60, "the first round's result")
        assert demo.proc.poll() is None, "said while the demo runs"
        assert demo.stop() == 0
    assert "\x1b" not in demo.text()  # no screen drawn into the pipe


def test_a_display_port_already_taken_is_one_line_naming_it(tmp_path):
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        proc = subprocess.run(
            [sys.executable, "-m", "scannerd", "demo", "--seconds", "5", "--no-view",
             "--listen", f"127.0.0.1:{port}", "--dir", str(tmp_path)],
            capture_output=True, text=True, timeout=120,
        )  # fmt: skip
    assert proc.returncode == 1
    assert proc.stderr.splitlines() == [proc.stderr.strip()] and str(port) in proc.stderr
    assert "Address already in use" in proc.stderr and "Traceback" not in proc.stderr
    assert "pick another address with --listen, e.g. --listen 127.0.0.1:0" in proc.stderr


def test_a_game_with_a_commission_it_has_not_is_one_line(tmp_path):
    proc = subprocess.run(
        [sys.executable, "-m", "scannerd", "demo", "--game", "dragon_tiger", "--commission", "ez",
         "--seconds", "1", "--no-view", "--listen", "127.0.0.1:0", "--dir", str(tmp_path)],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert proc.returncode == 2
    assert proc.stderr.strip() == "demo: commission = 'ez' is punto banco's; Dragon Tiger has none" or (
        "Dragon Tiger has none" in proc.stderr and len(proc.stderr.strip().splitlines()) == 1
    )
