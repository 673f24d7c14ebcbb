"""``scannerd pit`` as a command: a real process on a real broker, and its start-up errors."""

from __future__ import annotations

import json
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from scannerd.client import Availability
from scannerd.contract.events import AlertEvent, RoundEvent
from scannerd.contract.payloads import StatusPayload
from scannerd.core.house import HouseRules
from scannerd.core.inputs import CardDrawn
from scannerd.core.validator import Validator
from scannerd.pit import PitBoard
from scannerd.pit.board import RETURN_S
from tests.link.test_publisher_acl import USERS, shipped_conf
from tests.link.test_tls import passwords
from tests.support.broker import GameServer, wait_until
from tests.support.command import scannerd
from tests.support.pit import SimulatedPit
from tests.support.process import IDLE_CONNECTIONS, open_idle_streams, served, state_answers, table_pc_limits

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.timeout(60)
def test_the_command_serves_the_tables_it_hears_and_stops_on_ctrl_c(mosquitto, tmp_path):
    table = GameServer(mosquitto, ["unused/topic"])
    status = StatusPayload(state="online", version="0.1.0", table_id="BAC-09")
    table.request("casino/tables/BAC-09/status", status.model_dump(mode="json"), retain=True)
    out = tmp_path / "out.txt"
    with out.open("w") as sink:
        proc = subprocess.Popen(
            [sys.executable, "-m", "scannerd", "pit", "--host", mosquitto.host, "--port", str(mosquitto.port),
             "--listen", "127.0.0.1:0"],
            cwd=ROOT, stdout=sink, stderr=subprocess.STDOUT,
        )  # fmt: skip
    try:
        wait_until(lambda: "pit view   http://" in out.read_text(), 20, "the page's address")
        url = out.read_text().split("pit view   ", 1)[1].split()[0]
        with urllib.request.urlopen(url, timeout=10) as page:
            assert b"/static/pit.js" in page.read()

        wait_until(lambda: tables_on(int(url.rsplit(":", 1)[1].rstrip("/"))) == ["BAC-09"], 20, "BAC-09")
    finally:
        proc.send_signal(signal.SIGINT)
        code = proc.wait(15)
        table.close()
    assert code == 0 and "Traceback" not in out.read_text()


def tables_on(port: int) -> list[str]:
    """The tables the pit's page on ``port`` shows."""
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/api/state", timeout=10) as answer:
        return [t["table_id"] for t in json.loads(answer.read())["tables"]]


def test_no_broker_is_one_line_and_status_1(capsys):
    with socket.socket() as closed:
        closed.bind(("127.0.0.1", 0))
        port = closed.getsockname()[1]
    argv = ["--port", str(port), "--listen", "127.0.0.1:0", "--broker-wait", "0.5"]
    assert scannerd("pit", "--host", "127.0.0.1", *argv) == 1
    assert capsys.readouterr().err == f"pit: no MQTT broker answered at 127.0.0.1:{port} within 0.5 s\n"


def test_a_password_file_that_cannot_be_read_is_one_line_naming_it(capsys, tmp_path):
    missing = tmp_path / "no-such-password"
    assert scannerd("pit", "--username", "pit", "--password-file", str(missing)) == 2
    assert capsys.readouterr().err == (
        f"pit: cannot read the password file {missing}: No such file or directory\n"
    )


def test_a_refused_login_is_one_line_naming_the_broker_and_the_user_at_once(make_broker, capsys, tmp_path):
    broker = make_broker(extra=shipped_conf(passwords(tmp_path / "broker0", USERS)))
    (tmp_path / "wrong").write_text("not-the-password\n")
    where = ["--host", broker.host, "--port", str(broker.port), "--listen", "127.0.0.1:0"]
    login = ["--username", "gameserver", "--password-file", str(tmp_path / "wrong")]
    began = time.monotonic()
    assert scannerd("pit", *where, *login, "--broker-wait", "60") == 1
    assert time.monotonic() - began < 30  # told by the broker's answer, not by the wait running out
    assert capsys.readouterr().err == (
        f"pit: broker {broker.host}:{broker.port} refused user 'gameserver': Not authorized\n"
    )


def test_a_broker_that_refuses_mqtt_5_is_one_line_naming_it_and_the_option(embedded_broker, capsys):
    """The demo's broker speaks MQTT 3.1.1 only: said as such, not as no broker at all."""
    where = ["--host", embedded_broker.host, "--port", str(embedded_broker.port), "--listen", "127.0.0.1:0"]
    began = time.monotonic()
    assert scannerd("pit", *where, "--broker-wait", "60") == 1
    assert time.monotonic() - began < 30  # told by the broker's answer, not by the wait running out
    assert capsys.readouterr().err == (
        f"pit: broker {embedded_broker.host}:{embedded_broker.port} refused MQTT 5: "
        "Unsupported protocol version (try --protocol 3.1.1)\n"
    )


@pytest.mark.timeout(60)
def test_a_password_changed_on_the_broker_while_running_ends_the_pit_in_one_line(make_broker, tmp_path):
    broker = make_broker(extra=shipped_conf(passwords(tmp_path / "broker0", USERS)))
    (tmp_path / "right").write_text(USERS["gameserver"] + "\n")
    out = tmp_path / "out.txt"
    with out.open("w") as sink:
        proc = subprocess.Popen(
            [sys.executable, "-m", "scannerd", "pit", "--host", broker.host, "--port", str(broker.port),
             "--listen", "127.0.0.1:0", "--username", "gameserver", "--password-file", tmp_path / "right"],
            cwd=ROOT, stdout=sink, stderr=subprocess.PIPE, text=True,
        )  # fmt: skip
    try:
        wait_until(lambda: "pit view   http://" in out.read_text(), 20, "the page's address")
        passwords(tmp_path / "broker0", {**USERS, "gameserver": "rotated"})  # the casino rotates it
        broker.restart()  # the pit reconnects with the password it has
        assert proc.wait(30) == 1
    finally:
        proc.kill()
    assert proc.stderr.read() == (  # type: ignore[union-attr]
        f"pit: broker {broker.host}:{broker.port} refused user 'gameserver': Not authorized\n"
    )


def test_a_bad_listen_address_is_refused_by_name(capsys):
    with pytest.raises(SystemExit) as exit_:
        scannerd("pit", "--listen", "everywhere")
    assert exit_.value.code == 2
    assert "'everywhere': expected HOST:PORT" in capsys.readouterr().err


def test_a_state_older_than_what_the_board_has_applied_is_not_taken():
    board = PitBoard()
    board.set_availability(
        "T1", Availability(status=StatusPayload(state="online", version="x", table_id="T1")), 0.0
    )
    later = RoundEvent(seq=500, ts=1.0, table_id="T1", round_id="R9", phase="betting", hand_no=9)
    assert board.apply(later)
    stale = {"table_id": "T1", "seq": 400, "link_up": True, "shoe": None, "round": None, "alerts": []}
    assert not board.load_state("T1", stale)
    assert board.tile("T1", 0.0)["round"]["hand_no"] == 9
    assert board.snapshot(0.0)["counts"] == {
        "tables": 1,
        "online": 1,
        "offline": 0,
        "misdeals": 0,
        "warnings": 0,
    }


@pytest.mark.timeout(240)
def test_a_flood_of_idle_connections_leaves_the_pit_its_broker_and_its_page(make_broker, tmp_path):
    """1,100 idle event streams, then the broker restarts: the pit answers, reconnects and follows on."""
    broker = make_broker(persistence=True)
    tables = SimulatedPit(broker, 2)
    tables.set_online("BAC-01", True)
    log = tmp_path / "pit.log"
    with log.open("w") as sink:
        proc = subprocess.Popen(
            [sys.executable, "-m", "scannerd", "pit", "--host", broker.host, "--port", str(broker.port),
             "--listen", "127.0.0.1:0"],
            cwd=ROOT, stdout=sink, stderr=subprocess.STDOUT, preexec_fn=table_pc_limits,
        )  # fmt: skip
    held: list[socket.socket] = []
    try:
        wait_until(lambda: "pit view   http://" in log.read_text(), 20, "the page's address")
        port = int(log.read_text().split("pit view   ", 1)[1].split()[0].rsplit(":", 1)[1].rstrip("/"))
        held = open_idle_streams(port, IDLE_CONNECTIONS)
        assert len(held) == IDLE_CONNECTIONS, f"only {len(held)} connections opened"
        extra = open_idle_streams(port, 1)[0]
        assert extra.recv(100).startswith(b"HTTP/1.1 503")  # an answer at once, not silence
        extra.close()
        # The wall screen on another address gets the page and the state while that host holds on.
        for path in ("/", "/api/state"):
            wait_until(lambda p=path: served(port, p, "127.0.0.2") == 200, 5, f"{path} from another host")

        tables.across(broker.restart)  # the pit must open a new socket to its broker
        tables.set_online("BAC-02", True)  # a table the pit has not seen: it asks for its state
        wait_until(lambda: ("BAC-02", "get_state", {}) in tables.requests, 60, "the pit to ask BAC-02")

        for sock in held:
            sock.close()
        held = []
        wait_until(lambda: state_answers(port), 30, "the page to serve again")
        wait_until(lambda: tables_on(port) == ["BAC-01", "BAC-02"], 30, "the new table on the page")
    finally:
        for sock in held:
            sock.close()
        proc.send_signal(signal.SIGINT)
        proc.wait(15)
        tables.close()
    text = log.read_text()
    assert "Traceback" not in text
    assert len(text.splitlines()) < 100, text[-3000:]
    assert text.count("refusing more") == 1  # logged once, not once per refused connection


def status(state: str) -> Availability:
    return Availability(status=StatusPayload(state=state, version="x", table_id="T1"))  # type: ignore[arg-type]


def test_a_will_the_broker_sent_as_it_went_is_not_a_table_gone_until_its_time_to_return_is_up():
    board = PitBoard()
    board.set_connection(True, 0.0)
    board.set_availability("T1", status("online"), 1.0)
    board.set_availability("T1", status("offline"), 100.0)  # the broker shutting down sends the will ...
    board.set_connection(False, 100.5)  # ... then closes the pit's connection
    assert board.tile("T1", 101.0)["online"] is None
    assert board.snapshot(101.0)["broker"] == {
        "connected": False,
        "lost_at": 100.5,
        "back_at": None,
        "returning": False,
    }
    board.set_connection(True, 130.0)
    assert board.tile("T1", 130.0 + RETURN_S - 1)["online"] is None  # its own backoff brings it back
    assert board.tile("T1", 130.0 + RETURN_S)["online"] is False  # no: it is gone
    assert board.snapshot(130.0 + RETURN_S)["counts"]["offline"] == 1


def test_a_table_gone_before_the_broker_went_stays_offline_throughout():
    board = PitBoard()
    board.set_connection(True, 0.0)
    board.set_availability("T1", status("online"), 1.0)
    board.set_availability("T1", status("offline"), 10.0)
    board.set_connection(False, 100.0)
    board.set_connection(True, 110.0)
    board.set_availability("T1", status("offline"), 110.5)  # the retained status, told again
    assert board.tile("T1", 111.0)["online"] is False


def test_a_tile_shows_an_open_misdeal_ahead_of_a_newer_warning():
    board = PitBoard()
    alert = {"seq": 1, "ts": 1.0, "table_id": "T1", "round_id": None, "card": None}
    board.apply(AlertEvent(**alert, alert_id=1, code="EXTRA_CARD", severity="misdeal", message="m"))
    board.apply(
        AlertEvent(**{**alert, "seq": 2}, alert_id=2, code="BURN_MISMATCH", severity="warning", message="w")
    )
    assert [a["severity"] for a in board.tile("T1", 0.0)["alerts"]] == ["misdeal", "warning"]


def test_a_dragon_tiger_tile_is_one_by_its_state_and_its_events():
    v = Validator("T2", HouseRules(game="dragon_tiger", round_control="auto", burn="none"))
    board = PitBoard()
    assert board.load_state("T2", v.state())
    for n, card in enumerate(["9H", "KD", "4C", "4S"], start=1):
        for event in v.handle(CardDrawn(float(n), card)):
            board.apply(event.model.model_validate(event))
    tile = board.tile("T2", 0.0)
    assert tile["game"] == "dragon_tiger"
    assert tile["last_result"]["winner"] == "tie"
    assert tile["counts"] == {"tiger": 1, "dragon": 0, "tie": 1, "hands": 2}
    assert [c["winner"] for c in tile["road"]["cells"]] == ["tiger"]
