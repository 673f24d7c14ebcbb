"""``scannerd watch`` against a real Mosquitto: what a table publishes, drawn in the terminal."""

from __future__ import annotations

import contextlib
import io
import os
import pty
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import paho.mqtt.client as mqtt
import pytest
from paho.mqtt.enums import CallbackAPIVersion
from rich.console import Console

from drivers.events import DeviceCard
from scannerd.cli import main
from scannerd.commands.watch import TableWatch
from scannerd.contract.events import EventData
from scannerd.contract.topics import Topics
from scannerd.core.house import HouseRules
from scannerd.core.inputs import CardDrawn, Command
from scannerd.core.validator import Validator
from scannerd.link.mqtt_settings import MqttSettings
from tests.link.test_publisher_acl import USERS, shipped_conf
from tests.link.test_tls import passwords
from tests.support.broker import Broker, free_port, make_tls, wait_until
from tests.support.command import scannerd
from tests.support.process import LiveTable, live_table

PREFIX = "casino/tables"


def settings(broker: Broker) -> MqttSettings:
    """The broker as the watch's options name it."""
    return MqttSettings(host=broker.host, port=broker.port, prefix=PREFIX)


def screen(watch: TableWatch) -> str:
    console = Console(file=io.StringIO(), width=120, color_system=None, force_terminal=False)
    console.print(watch.screen())
    return console.file.getvalue()  # type: ignore[attr-defined]


class Table:
    """A validator whose events go to the broker on the table's topics, as the daemon sends them."""

    def __init__(self, broker: Broker, table_id: str = "T1", password: str | None = None) -> None:
        self.validator = Validator(table_id, HouseRules(burn="none"))
        self.topics = Topics(PREFIX, table_id)
        self.ts = 1_700_000_000.0
        self.client = mqtt.Client(CallbackAPIVersion.VERSION2)
        if password is not None:  # a broker that wants a login: the table's user is its id
            self.client.username_pw_set(table_id, password)
        self.client.connect(broker.host, broker.port)
        self.client.loop_start()

    def publish(self, events: list[EventData]) -> None:
        for m in self.topics.messages(events):
            self.client.publish(m.topic, m.payload, qos=m.qos, retain=m.retain).wait_for_publish(5)

    def command(self, name: str, **args: object) -> None:
        self.ts += 1
        self.publish(self.validator.handle(Command(self.ts, name, args)))  # type: ignore[arg-type]

    def card(self, *cards: str) -> None:
        for card in cards:
            self.ts += 1
            self.publish(self.validator.handle(CardDrawn(self.ts, card)))

    def round(self, round_id: str, *cards: str) -> None:
        self.command("betting_open", round_id=round_id)
        self.command("betting_close")
        self.card(*cards)

    def close(self) -> None:
        self.client.disconnect()
        self.client.loop_stop()


class Link:
    """The network between one client and the broker: a TCP relay that can be cut and mended."""

    def __init__(self, broker: Broker) -> None:
        self.broker = broker
        self.up = True
        self._open: list[socket.socket] = []
        self._lock = threading.Lock()
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.port = self._listener.getsockname()[1]
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                near, _ = self._listener.accept()
            except OSError:
                return  # closed
            if not self.up:
                near.close()  # no route: the client's connection fails at once
                continue
            far = socket.create_connection((self.broker.host, self.broker.port))
            with self._lock:
                self._open += [near, far]
            for a, b in ((near, far), (far, near)):
                threading.Thread(target=self._pump, args=(a, b), daemon=True).start()

    @staticmethod
    def _pump(src: socket.socket, dst: socket.socket) -> None:
        try:
            while data := src.recv(65536):
                dst.sendall(data)
        except OSError:
            pass
        for s in (src, dst):
            s.close()

    def cut(self) -> None:
        self.up = False
        with self._lock:
            open_, self._open = self._open, []
        for s in open_:
            with contextlib.suppress(OSError):  # its pump may have closed it already
                s.shutdown(socket.SHUT_RDWR)

    def mend(self) -> None:
        self.up = True

    def close(self) -> None:
        self.cut()
        self._listener.close()


def framed_table(
    tmp_path: Path, broker: Broker, start: bool = True
) -> contextlib.AbstractContextManager[LiveTable]:
    """Table T1 in the test's process on a framed shoe, the game server (the test) opening and closing
    betting."""
    return live_table(tmp_path, broker, in_process=True, start=start, rules={"burn": "none"})


@pytest.fixture
def watch(mosquitto: Broker) -> Iterator[TableWatch]:
    w = TableWatch(settings(mosquitto), "T1", get_state=False)
    w.start()
    yield w
    w.stop()


def test_the_round_shoe_and_alerts_published_by_a_table_are_drawn(mosquitto, watch):
    table = Table(mosquitto)
    other = Table(mosquitto, "T2")
    try:
        table.command("new_shoe", shoe_id="S1")  # retained: the watch gets it however late it subscribed
        wait_until(lambda: watch.view.shoe is not None, 10, "the retained shoe")
        table.command("betting_open", round_id="R1")
        table.command("betting_close")
        table.card("2H", "KS", "3C", "4D")
        other.command("new_shoe", shoe_id="ELSEWHERE")
        wait_until(lambda: "NEXT: PLAYER THIRD CARD" in screen(watch), 10, "the round")
        text = screen(watch)
        assert "TABLE T1" in text and "broker" in text and "CONNECTED" in text
        assert "Round R1" in text and "2\u2665" in text and "K\u2660" in text and "4\u2666" in text
        assert "Shoe S1 dealing" in text and "dealt 4" in text and "ELSEWHERE" not in text

        table.card("2C", "5S")  # player third, banker third: banker 9 beats player 7
        table.card("7H")  # one too many
        wait_until(lambda: "EXTRA CARD" in screen(watch), 10, "the misdeal")
        text = screen(watch)
        assert "MISDEAL" in text and "Extra card 7\u2665" in text and "AFTER HAND 1" in text
        assert "ROUND COMPLETE - DO NOT DRAW" in text and "WINS" in text
        assert "PLAYER (P) 0  BANKER (B) 1  TIE (T) 0" in text  # the game's order and marks
        assert f"#{table.validator.state()['alerts'][0]['alert_id']}" not in text  # names, not numbers

        (alert,) = table.validator.state()["alerts"]
        table.command("ack_alert", alert_id=alert["alert_id"])
        wait_until(lambda: "EXTRA_CARD" not in screen(watch), 10, "the acknowledgement")
    finally:
        table.close()
        other.close()


def test_a_watch_started_mid_round_asks_the_table_for_its_state(mosquitto, tmp_path: Path):
    with framed_table(tmp_path, mosquitto) as table:
        daemon, shoe = table.daemon, table.shoe
        assert daemon is not None and shoe is not None
        watch = TableWatch(settings(mosquitto))  # no table id: follows the first one heard
        try:
            wait_until(lambda: daemon.reader.link_up, 10, "the shoe")
            daemon.request("betting_open", {"round_id": "R7"})
            daemon.request("betting_close", {})
            shoe.send(DeviceCard("9H"))
            wait_until(lambda: daemon.validator.state()["round"]["player"]["cards"], 10, "the first card")
            watch.start()
            wait_until(
                lambda: "NEXT: BANKER FIRST CARD" in screen(watch), 10, "the state of the round under way"
            )
            text = screen(watch)
            assert "TABLE T1" in text and "Round R7" in text and "9\u2665" in text and "daemon ONLINE" in text
        finally:
            watch.stop()


def test_messages_that_are_not_the_contract_are_ignored_and_the_watch_goes_on(mosquitto, watch):
    """Any client may publish under a table's topics; a wrong payload must not stop the view."""
    table = Table(mosquitto)
    try:
        junk = [b'{"seq": "x"}', b'{"seq": 5, "kind": "card"}', b'{"seq": 6, "kind": "round", "player": 1}']
        junk += [b'{"state": ["online"]}', b'{"link": {}}', b'{"seq": 7, "kind": "shoe"}', b'{"kind": []}']
        for name in ("card", "round", "alert", "shoe", "status", "device", "response/get_state"):
            for payload in junk:
                table.client.publish(f"{PREFIX}/T1/{name}", payload, qos=1).wait_for_publish(5)
        table.command("new_shoe", shoe_id="S1")
        table.command("betting_open", round_id="R1")
        wait_until(lambda: "Round R1" in screen(watch), 10, "the round after the junk")
        assert watch.view.shoe is not None and watch.view.shoe["shoe_id"] == "S1"
    finally:
        table.close()


@pytest.mark.parametrize(
    ("option", "value"),
    [("--port", "-1"), ("--port", "70000"), ("--host", ""), ("--prefix", "casino/#"), ("--table-id", "T/1")],
)
def test_bad_option_values_are_refused_in_one_line(capsys, option: str, value: str) -> None:
    with pytest.raises(SystemExit) as exit_:
        main(["watch", option, value])
    assert exit_.value.code == 2
    assert capsys.readouterr().err.splitlines()[-1].startswith(f"scannerd watch: error: argument {option}")


def test_nothing_is_shown_as_connected_or_waiting_before_the_table_says_so(mosquitto, watch):
    wait_until(lambda: watch.connected, 10, "the broker")
    text = screen(watch)
    assert "shoe UNKNOWN" in text and "WAITING FOR THE TABLE" in text
    assert "shoe CONNECTED" not in text and "WAITING FOR BETS" not in text


def test_a_table_whose_daemon_stops_is_shown_offline(mosquitto, tmp_path: Path):
    with framed_table(tmp_path, mosquitto) as table:
        watch = TableWatch(settings(mosquitto), "T1")
        watch.start()
        try:
            wait_until(lambda: "WAITING FOR BETS" in screen(watch), 10, "the table's state")
            assert "daemon ONLINE" in screen(watch) and "shoe CONNECTED" in screen(watch)
            table.kill(signal.SIGTERM)
            wait_until(lambda: "daemon OFFLINE" in screen(watch), 10, "the table's offline status")
            text = screen(watch)
            assert "TABLE OFFLINE" in text and "shoe UNKNOWN" in text
            assert "shoe CONNECTED" not in text and "WAITING FOR BETS" not in text
        finally:
            watch.stop()


def watch_process(
    broker: Broker, *argv: str | Path, port: int | None = None
) -> tuple[subprocess.Popen[str], list[str]]:
    """``scannerd watch`` into a pipe (on ``port``, a listener of the broker's other than its own), and
    the lines it has written so far."""
    where = ["--host", broker.host, "--port", str(port or broker.port), "--table-id", "T1"]
    proc = subprocess.Popen(
        [sys.executable, "-m", "scannerd", "watch", *where, *map(str, argv)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        encoding="utf-8",
    )
    lines: list[str] = []
    reader = threading.Thread(target=lambda: lines.extend(iter(proc.stdout.readline, "")), daemon=True)  # type: ignore[union-attr]
    reader.start()
    return proc, lines


def test_into_a_pipe_it_writes_a_line_per_event(mosquitto):
    watch, lines = watch_process(mosquitto, "--no-get-state")
    table = Table(mosquitto)
    try:
        wait_until(lambda: any("connected" in line for line in lines), 10, "the watch on the broker")
        table.command("new_shoe", shoe_id="S1")
        table.command("dealer_sign_in", dealer_id="D-117")
        table.round("R1", "9H", "2S", "9C", "TD")
        table.card("AC")
        wait_until(lambda: any("EXTRA_CARD" in line for line in lines), 10, "the misdeal's line")
    finally:
        table.close()
        watch.send_signal(signal.SIGINT)
        watch.wait(10)
    body = [line.rstrip("\n") for line in lines if not line.startswith("- ")]
    assert "\x1b" not in "".join(lines)  # no screen drawing into a pipe
    assert body[0] == "1 shoe S1 dealing dealt=0"
    assert "2 dealer D-117 signed in" in body
    assert "5 card player1 9\u2665 round=R1" in body
    assert "3 round R1 hand=1 betting dealer=D-117" in body
    assert any(line.endswith("R1 hand=1 complete winner=player dealer=D-117") for line in body)
    assert body[-1].endswith("EXTRA_CARD misdeal: Extra card A\u2663: no card is due - set it aside")


def test_into_a_pipe_with_no_broker_it_says_at_once_that_it_waits_then_that_it_connected(tmp_path: Path):
    broker = Broker(tmp_path / "broker")  # not running yet: nothing listens on its port
    watch, lines = watch_process(broker)
    try:
        wait_until(lambda: bool(lines), 10, "the watch's first line")  # Python's start, not a retry
        assert lines == [f"- broker {broker.host}:{broker.port} waiting for it\n"]
        broker.start()
        wait_until(lambda: len(lines) > 1, 20, "the broker, once it is there")
        assert lines[1] == f"- broker {broker.host}:{broker.port} connected\n"
    finally:
        watch.send_signal(signal.SIGINT)
        watch.wait(10)
        broker.stop()


def test_on_the_shipped_broker_the_right_login_sees_the_table_and_a_wrong_one_is_one_line(
    make_broker, tmp_path: Path
):
    broker = make_broker(extra=shipped_conf(passwords(tmp_path / "broker0", USERS)))
    (tmp_path / "right").write_text(USERS["gameserver"] + "\n")
    (tmp_path / "wrong").write_text("not-the-password\n")
    login = ["--username", "gameserver", "--password-file"]
    watch, lines = watch_process(broker, *login, tmp_path / "right")
    table = Table(broker, "T1", password=USERS["T1"])
    try:
        table.command("new_shoe", shoe_id="S1")
        wait_until(lambda: any("shoe S1 dealing" in line for line in lines), 20, "the table's shoe")
    finally:
        table.close()
        watch.send_signal(signal.SIGINT)
        assert watch.wait(10) == 0

    refused, _ = watch_process(broker, *login, tmp_path / "wrong")
    try:
        code = refused.wait(20)  # by itself, not retrying for ever
    finally:
        refused.kill()
    assert code == 1
    assert refused.stderr.read() == (  # type: ignore[union-attr]
        f"watch: broker {broker.host}:{broker.port} refused user 'gameserver': Not authorized\n"
    )


def test_over_tls_with_the_brokers_ca_and_a_login_the_watch_sees_the_table(make_broker, tmp_path: Path):
    tls = make_tls(tmp_path / "tls")
    secure = free_port()  # the shipped setup's optional TLS listener, beside the plain one the table uses
    listener = f"listener {secure} {Broker.host}\ncertfile {tls.server_cert}\nkeyfile {tls.server_key}\n"
    broker = make_broker(extra=shipped_conf(passwords(tmp_path / "broker0", USERS)) + listener)
    (tmp_path / "right").write_text(USERS["gameserver"] + "\n")
    login = ["--username", "gameserver", "--password-file", tmp_path / "right", "--tls-ca", tls.ca]
    watch, lines = watch_process(broker, *login, port=secure)
    table = Table(broker, "T1", password=USERS["T1"])
    try:
        table.command("new_shoe", shoe_id="S1")
        wait_until(lambda: any("shoe S1 dealing" in line for line in lines), 20, "the table's shoe")
    finally:
        table.close()
        watch.send_signal(signal.SIGINT)
        assert watch.wait(10) == 0
    assert f"New connection from {Broker.host}:" in broker.log and "on port " + str(secure) in broker.log


def test_a_password_changed_on_the_broker_while_watching_ends_the_watch_in_one_line(
    make_broker, tmp_path: Path
):
    broker = make_broker(extra=shipped_conf(passwords(tmp_path / "broker0", USERS)))
    (tmp_path / "right").write_text(USERS["gameserver"] + "\n")
    watch, lines = watch_process(broker, "--username", "gameserver", "--password-file", tmp_path / "right")
    try:
        connected = f"- broker {broker.host}:{broker.port} connected\n"
        wait_until(lambda: connected in lines, 20, "the watch on the broker")
        passwords(tmp_path / "broker0", {**USERS, "gameserver": "rotated"})  # the casino rotates it
        broker.restart()  # the watch reconnects with the password it has
        assert watch.wait(30) == 1
    finally:
        watch.kill()
    assert watch.stderr.read() == (  # type: ignore[union-attr]
        f"watch: broker {broker.host}:{broker.port} refused user 'gameserver': Not authorized\n"
    )


def test_a_ca_file_that_is_no_certificate_is_one_line_naming_it(capsys, tmp_path: Path):
    key = tmp_path / "server.key"  # a likely slip: the key handed over for the CA
    key.write_text("-----BEGIN EC PRIVATE KEY-----\nMHcCAQEEIB\n-----END EC PRIVATE KEY-----\n")
    for command in ("watch", "pit"):
        assert scannerd(command, "--tls-ca", str(key)) == 2
        assert capsys.readouterr().err == (
            f"{command}: the CA certificate {key} holds no certificate in PEM form\n"
        )


def test_a_broker_that_refuses_the_version_is_one_line_naming_it_and_the_option(embedded_broker, capsys):
    where = ["--host", embedded_broker.host, "--port", str(embedded_broker.port)]
    assert scannerd("watch", *where, "--protocol", "5") == 1  # by itself, not retrying for ever
    assert capsys.readouterr().err == (
        f"watch: broker {embedded_broker.host}:{embedded_broker.port} refused MQTT 5: "
        "Unsupported protocol version (try --protocol 3.1.1)\n"
    )


def test_on_a_terminal_a_refused_login_leaves_the_screen_in_one_line_too(make_broker, tmp_path: Path):
    broker = make_broker(extra=shipped_conf(passwords(tmp_path / "broker0", USERS)))
    (tmp_path / "wrong").write_text("not-the-password\n")
    screen_side, terminal = pty.openpty()
    where = ["--host", broker.host, "--port", str(broker.port), "--username", "gameserver"]
    refused = subprocess.Popen(
        [sys.executable, "-m", "scannerd", "watch", *where, "--password-file", str(tmp_path / "wrong")],
        stdout=terminal,
        stderr=subprocess.PIPE,
        text=True,
    )
    os.close(terminal)
    try:
        assert refused.wait(20) == 1
        assert refused.stderr.read() == (  # type: ignore[union-attr]
            f"watch: broker {broker.host}:{broker.port} refused user 'gameserver': Not authorized\n"
        )
    finally:
        refused.kill()
        os.close(screen_side)


@pytest.mark.parametrize(
    ("option", "what"), [("--password-file", "the password file"), ("--tls-ca", "the CA certificate")]
)
def test_a_login_file_that_cannot_be_read_is_one_line_naming_it(capsys, tmp_path: Path, option, what):
    missing = tmp_path / "no-such-file"
    assert scannerd("watch", "--username", "gameserver", option, str(missing)) == 2
    assert capsys.readouterr().err == f"watch: cannot read {what} {missing}: No such file or directory\n"


@pytest.mark.parametrize("command", ["watch", "pit"])
def test_a_password_file_an_editor_saved_as_utf16_is_one_line_naming_it(capsys, tmp_path: Path, command):
    """Read as the client reads it: a file that opens is not yet a password it can send."""
    utf16 = tmp_path / "password"
    utf16.write_text("pw-gs", encoding="utf-16")
    assert scannerd(command, "--username", "gameserver", "--password-file", str(utf16)) == 2
    assert capsys.readouterr().err == f"{command}: cannot read the password file {utf16}: is not UTF-8 text\n"


def test_a_watch_started_before_its_broker_says_disconnected_until_the_broker_is_there(tmp_path: Path):
    broker = Broker(tmp_path / "broker")  # not running yet: a broker restarting, a laptop off the network
    watch = TableWatch(settings(broker), "T1", get_state=False)
    watch.start()
    live = f"broker {broker.host}:{broker.port} CONNECTED"
    try:
        assert "DISCONNECTED" in screen(watch) and live not in screen(watch)
        broker.start()
        wait_until(lambda: live in screen(watch), 20, "the broker, once it is there")
        broker.stop()
        wait_until(lambda: "DISCONNECTED" in screen(watch), 20, "the broker gone")
    finally:
        watch.stop()
        broker.stop()


def test_a_watch_started_before_the_daemon_asks_its_state_once_it_is_online(mosquitto, tmp_path: Path):
    with framed_table(tmp_path, mosquitto, start=False) as table:
        watch = TableWatch(settings(mosquitto), "T1")
        watch.start()
        try:
            wait_until(lambda: watch.connected, 10, "the broker")
            assert "WAITING FOR THE TABLE" in screen(watch)
            table.start()  # its status says online: now the table can say where it is
            wait_until(lambda: "WAITING FOR BETS" in screen(watch), 10, "the table's state")
            assert "daemon ONLINE" in screen(watch)
        finally:
            watch.stop()


@pytest.mark.parametrize("get_state", [True, False], ids=["get-state", "no-get-state"])
def test_a_watch_whose_link_was_cut_shows_the_table_as_it_is_and_goes_on_at_once(
    mosquitto, tmp_path: Path, get_state: bool
):
    """The table deals on while the watch's network is down; back, it shows what it can at once."""
    with framed_table(tmp_path, mosquitto) as table:
        daemon, shoe = table.daemon, table.shoe
        assert daemon is not None and shoe is not None
        link = Link(mosquitto)
        through = MqttSettings(host="127.0.0.1", port=link.port, prefix=PREFIX)
        watch = TableWatch(through, "T1", get_state=get_state, lines=True)
        watch.start()
        try:
            wait_until(lambda: "daemon ONLINE" in screen(watch), 10, "the table's status")
            if get_state:
                wait_until(lambda: "WAITING FOR BETS" in screen(watch), 10, "the table's state")
            daemon.request("betting_open", {"round_id": "R1"})  # the watch's first event
            wait_until(lambda: "Round R1 \u00b7 hand 1 \u00b7 betting" in screen(watch), 10, "the round")
            link.cut()
            wait_until(lambda: not watch.connected, 10, "the link cut")
            daemon.request("betting_close", {})  # missed by the watch
            link.mend()
            wait_until(lambda: watch.connected, 15, "the link mended")
            if get_state:
                wait_until(lambda: "hand 1 \u00b7 dealing" in screen(watch), 10, "the round as it went on")
            shoe.send(DeviceCard("9H"))
            began = time.monotonic()
            wait_until(lambda: "9\u2665" in screen(watch), 10, "the card dealt after it came back")
            assert time.monotonic() - began < 2.0  # not held back as if the events missed were still to come
            assert any(line.endswith("card player1 9\u2665 round=R1") for line in watch.take_lines())
        finally:
            watch.stop()
            link.close()


def test_with_no_get_state_under_an_acl_that_forbids_requests_the_watch_never_waits(
    make_broker, tmp_path: Path
):
    """A viewer may read the tables and send nothing: its watch shows the first table it hears at
    once and goes on past events lost on the way, never waiting on an answer that cannot come."""
    acl = tmp_path / "viewer.acl"
    acl.write_text("user T1\ntopic write casino/tables/T1/#\nuser viewer\ntopic read casino/tables/#\n")
    logins = {"T1": "pw-t1", "viewer": "pw-viewer"}
    conf = f"password_file {passwords(tmp_path / 'broker0', logins)}\nacl_file {acl}\nallow_anonymous false\n"
    broker = make_broker(extra=conf)
    (tmp_path / "viewer").write_text(logins["viewer"])
    viewer = settings(broker).model_copy(update={"username": "viewer", "password_file": tmp_path / "viewer"})
    watch = TableWatch(viewer, None, get_state=False, lines=True)
    table = Table(broker, "T1", password=logins["T1"])
    watch.start()
    try:
        wait_until(lambda: watch.connected, 10, "the watch on the broker")
        table.command("new_shoe", shoe_id="S1")
        wait_until(lambda: "S1" in screen(watch), 10, "the first table heard, unasked")
        table.validator.handle(Command(table.ts + 1, "dealer_sign_in", {"dealer_id": "D-1"}))  # lost
        table.ts += 1
        table.round("R1", "9H", "2S", "9C", "TD")
        lines: list[str] = []
        done = lambda: lines.extend(watch.take_lines()) or "winner=player" in "".join(lines)  # noqa: E731
        wait_until(done, 15, "the round after the lost event")
    finally:
        table.close()
        watch.stop()
    assert "3 round R1 hand=1 betting dealer=D-1" in lines  # event 2, the sign-in, never came
    assert not [line for line in lines if "get_state" in line]  # no state was asked, nor made up
