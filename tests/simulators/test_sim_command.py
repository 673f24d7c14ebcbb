import socket
from pathlib import Path

import pytest

from scannerd.cli import main

SCENARIOS = Path(__file__).parents[2] / "samples" / "scenarios"


@pytest.mark.timeout(60)
@pytest.mark.parametrize("driver", ["linecode", "usb-framed"])
def test_simulate_checks_a_scenario_through_the_real_driver(driver, capsys, tmp_path):
    rc = main(
        [
            "simulate",
            "--driver",
            driver,
            "--check",
            "--pace",
            "0",
            "--quiet",
            "--link",
            str(tmp_path / "shoe"),
            "--scenario",
            str(SCENARIOS / "foreign-card.txt"),
        ]
    )
    out = capsys.readouterr().out
    assert rc == 0, out
    assert "0 mismatches" in out
    assert "validator: FOREIGN_CARD" in out
    assert "channel " in out


def test_a_serial_device_says_where_to_connect(capsys, tmp_path):
    scenario = tmp_path / "one.txt"
    scenario.write_text("rounds 1\n")
    link = tmp_path / "shoe"
    assert main(["simulate", "--pace", "0", "--link", str(link), "--scenario", str(scenario)]) == 0
    out = capsys.readouterr().out
    assert f"channel {link}" in out
    assert '"cut_card_remaining":14' in out  # the Bee-Tek shoe cannot see the cut card


def test_a_bad_scenario_is_refused(capsys, tmp_path):
    bad = tmp_path / "bad.txt"
    bad.write_text("rounds two\n")
    assert main(["simulate", "--scenario", str(bad)]) == 2
    assert "line 1" in capsys.readouterr().err


def test_a_file_that_is_not_a_scenario_or_a_link_that_cannot_be_made_is_refused(capsys, tmp_path):
    binary = tmp_path / "binary"
    binary.write_bytes(b"\x7fELF\xd0\xff")
    assert main(["simulate", "--scenario", str(binary)]) == 2
    assert "binary: not a scenario" in capsys.readouterr().err
    one_round = tmp_path / "one.txt"
    one_round.write_text("rounds 1\n")
    assert main(["simulate", "--link", str(tmp_path), "--scenario", str(one_round)]) == 2
    assert "cannot put the device at" in capsys.readouterr().err
    assert not (tmp_path.parent / (tmp_path.name + ".new")).exists()


def test_check_and_game_server_do_not_mix(capsys):
    assert main(["simulate", "--driver", "usb-hid", "--game-server"]) == 2


@pytest.mark.timeout(60)
def test_a_game_server_without_a_broker_is_one_line_and_status_1(capsys, tmp_path):
    with socket.socket() as closed:  # a port that was free a moment ago: nothing answers there
        closed.bind(("127.0.0.1", 0))
        port = closed.getsockname()[1]
    argv = ["simulate", "--game-server", "--mqtt-host", "127.0.0.1", "--mqtt-port", str(port)]
    assert main([*argv, "--broker-wait", "0.5", "--link", str(tmp_path / "shoe")]) == 1
    assert capsys.readouterr().err == f"simulate: no MQTT broker answered at 127.0.0.1:{port} within 0.5 s\n"
