"""`scannerd demo`: one command brings up a whole table, and it deals rounds."""

import json
import re
import shlex
import socket
import subprocess
import sys
import urllib.request

import pytest

from tests.support.broker import free_port, wait_until
from tests.support.demo import demo_command, demo_process

QUICK = ["--pace", "0.05", "--betting-time", "0.2", "--listen", "127.0.0.1:0", "--error-rate", "0"]
"""A demo that deals fast, wherever a port is free, with no mistakes."""


@pytest.mark.parametrize(
    ("game", "winners"),
    [([], {"player", "banker", "tie"}), (["--game", "dragon_tiger"], {"dragon", "tiger", "tie"})],
)
def test_the_demo_deals_rounds_and_stops_cleanly(tmp_path, game, winners):
    proc = subprocess.run(
        demo_command("--seconds", "6", *QUICK, "--no-view", "--seed", "1", "--dir", tmp_path, *game),
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
    with demo_process(demo_command(*QUICK, "--seconds", "120", "--dir", tmp_path)) as demo:
        demo.wait_for(r" round S1-R1 hand=1 complete winner=", 60, "the first round's result")
        assert demo.proc.poll() is None, "said while the demo runs"
        assert demo.stop() == 0
    assert "\x1b" not in demo.text()  # no screen drawn into the pipe


def test_a_squeeze_table_holds_each_hand_face_down_until_the_game_server_reveals_it(tmp_path):
    with demo_process(demo_command(*QUICK, "--squeeze", "--seconds", "120", "--dir", tmp_path)) as demo:
        complete, _ = demo.wait_for(r" round S1-R1 hand=1 complete", 60, "the first hand dealt")
        revealed, reveal = demo.wait_for(r" reveal S1-R1 ", 60, "the first hand's reveal")
        assert demo.stop() == 0
    cards = re.findall(r" card (?:player|banker)\d (.+) round=S1-R1", demo.text())
    assert cards and set(cards) == {"face down"}, demo.text()
    assert "winner=" not in demo.found(r" round S1-R1 hand=1 complete")[1]  # type: ignore[index]
    assert reveal.endswith("(request)") and "player1 banker1 player2 banker2" in reveal
    assert revealed - complete > 2.0  # the players' squeeze: the reveal comes seconds after the last card


@pytest.mark.parametrize(
    ("option", "page"), [("--overlay-listen", "stream overlay"), ("--pit-listen", "pit view")]
)
def test_a_page_is_served_where_its_option_says(tmp_path, option, page):
    port = free_port()
    with demo_process(demo_command(*QUICK, option, f"127.0.0.1:{port}", "--dir", tmp_path)) as demo:
        _, line = demo.wait_for(rf"^  {page} +http://", 60, f"the {page}'s address")
        assert line.split()[-1] == f"http://127.0.0.1:{port}/"
        with urllib.request.urlopen(line.split()[-1], timeout=10) as answer:
            assert answer.status == 200
        assert demo.stop() == 0


def test_the_demos_pit_shows_its_table_and_so_does_the_pit_command_it_prints(tmp_path):
    with demo_process(demo_command(*QUICK, "--dir", tmp_path)) as demo:
        _, served = demo.wait_for(r"^  pit view +http://", 60, "the pit's address")
        _, printed = demo.wait_for(r"^ +scannerd pit ", 60, "the pit command")
        assert tables_at(served.split()[-1]) == ["DEMO-1"]
        _scannerd, *command = shlex.split(printed)
        with demo_process([sys.executable, "-m", "scannerd", *command, "--listen", "127.0.0.1:0"]) as pit:
            _, line = pit.wait_for(r"^pit view   http://", 60, "the pit command's address")
            assert tables_at(line.split()[2]) == ["DEMO-1"]
            assert pit.stop() == 0
        assert demo.stop() == 0


def tables_at(url: str) -> list[str]:
    """The tables a pit page shows, once it has heard of any (a pit just started may not yet)."""
    seen: list[str] = []

    def heard() -> bool:
        with urllib.request.urlopen(url + "api/state", timeout=10) as answer:
            seen[:] = [table["table_id"] for table in json.loads(answer.read())["tables"]]
        return bool(seen)

    wait_until(heard, 30, f"a table on {url}")
    return seen


@pytest.mark.parametrize(
    ("option", "page"),
    [("--listen", "dealer display"), ("--overlay-listen", "stream overlay"), ("--pit-listen", "pit view")],
)
def test_a_port_already_taken_is_one_line_naming_it(tmp_path, option, page):
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        others = [] if option == "--listen" else ["--listen", "127.0.0.1:0"]
        argv = ["--seconds", "5", "--no-view", *others, option, f"127.0.0.1:{port}", "--dir", tmp_path]
        proc = subprocess.run(
            demo_command(*argv),
            capture_output=True, text=True, timeout=120,
        )  # fmt: skip
    assert proc.returncode == 1
    assert proc.stderr.splitlines() == [proc.stderr.strip()] and f"the {page} cannot listen" in proc.stderr
    assert str(port) in proc.stderr and "Address already in use" in proc.stderr
    assert "Traceback" not in proc.stderr
    assert f"pick another address with {option}, e.g. {option} 127.0.0.1:0" in proc.stderr


def test_a_game_with_a_commission_it_has_not_is_one_line(tmp_path):
    proc = subprocess.run(
        demo_command("--game", "dragon_tiger", "--commission", "ez", "--seconds", "1", "--no-view",
                     "--listen", "127.0.0.1:0", "--dir", tmp_path),
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert proc.returncode == 2
    assert proc.stderr.strip() == "demo: commission = 'ez' is punto banco's; Dragon Tiger has none" or (
        "Dragon Tiger has none" in proc.stderr and len(proc.stderr.strip().splitlines()) == 1
    )
