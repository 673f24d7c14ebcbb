"""Faults on the table's own files: the outbox lost, and a second daemon on the same config.

``scannerd run`` as real processes on a real pty and a real Mosquitto. An
operator deletes a corrupt outbox, or it is cut to nothing: ``seq`` must not
start again below what the game server has seen, or a consumer following
``docs/mqtt.md`` would drop every event until it passed the old mark, and the
loss must be loud. A second daemon started by hand while the service runs
must refuse, not split the shoe's bytes with the first.
"""

from __future__ import annotations

import json
import os
import signal
import time
from pathlib import Path

import pytest

from scannerd.recording.replay import replay
from simulators.serial_pty import PtyPort
from tests.support.broker import Broker, GameServer, wait_until
from tests.support.config import write_config
from tests.support.frames import beetek
from tests.support.process import live_table, shoe_opened, wait_shoe_open

BASE = "casino/tables/T1"
RULES = {"round_control": "auto", "burn": "none"}


def event_seqs(server: GameServer) -> list[int]:
    return [
        json.loads(m.payload)["seq"]
        for m in server.messages()
        if m.topic.endswith(("/card", "/round", "/alert"))
    ]


def deal_round(port: PtyPort, server: GameServer) -> None:
    """Two naturals: a complete round in four cards."""
    done = len([p for p in server.payloads("/round") if p["phase"] == "complete"])
    port.write(beetek("8D", "3C", "KH", "5H", crlf=False))
    server.wait_for(lambda _: len([p for p in server.payloads("/round") if p["phase"] == "complete"]) > done)


def acknowledge_state_lost(server: GameServer) -> None:
    """Wait for the table's STATE_LOST alert and acknowledge it, as the dealer does before dealing on."""
    server.wait_for(lambda _: any(a["code"] == "STATE_LOST" for a in server.payloads("/alert")))
    (lost,) = [a for a in server.payloads("/alert") if a["code"] == "STATE_LOST"]
    server.request(f"{BASE}/request/ack_alert", {"alert_id": lost["alert_id"]})
    server.wait_for(lambda _: any(a.get("acknowledged") for a in server.payloads("/alert")))


def assert_new_round_ids(server: GameServer, before: int) -> None:
    """The rounds opened after a loss have ids no round published before it had."""
    rounds = server.payloads("/round")
    earlier = {r["round_id"] for r in rounds if r["seq"] <= before}
    later = {r["round_id"] for r in rounds if r["seq"] > before}
    assert earlier and later and not earlier & later, (earlier, later)


def lose(outbox: Path, how: str) -> None:
    if how == "deleted":
        for suffix in ("", "-wal", "-shm"):
            Path(f"{outbox}{suffix}").unlink(missing_ok=True)
    else:
        outbox.write_bytes(b"")
        for suffix in ("-wal", "-shm"):
            Path(f"{outbox}{suffix}").unlink(missing_ok=True)


@pytest.mark.timeout(120)
@pytest.mark.parametrize("how", ["deleted", "truncated"])
def test_seq_never_goes_back_when_the_outbox_is_lost_and_the_loss_is_loud(
    tmp_path, mosquitto: Broker, how
) -> None:
    with live_table(tmp_path, mosquitto, "beetek", log={"format": "json"}) as table:
        server, port, log = table.server, table.port, table.log
        wait_shoe_open(server)
        deal_round(port, server)
        table.kill(signal.SIGTERM)
        before = max(event_seqs(server))
        lose(tmp_path / "outbox.sqlite3", how)
        opened = shoe_opened(server.messages())
        table.start()
        wait_shoe_open(server, times=opened + 1)
        acknowledge_state_lost(server)  # the dealer clears the table and acknowledges; then the next round
        deal_round(port, server)

    seqs = event_seqs(server)
    after = seqs[seqs.index(before) + 1 :]
    assert after and min(after) > before, (before, after)
    assert after == sorted(after)
    assert_new_round_ids(server, before)
    lost = [json.loads(line) for line in log.read_text().splitlines() if "saved state lost" in line]
    assert len(lost) == 1 and lost[0]["level"] == "error", log.read_text()[-2000:]
    assert str(tmp_path / "outbox.sqlite3") in lost[0]["outbox"]


@pytest.mark.timeout(60)
def test_a_new_table_starts_seq_from_its_clock(tmp_path, mosquitto: Broker) -> None:
    """No file at all (a replaced disk): seq still starts above what the old table published."""
    began = time.time()
    with live_table(tmp_path, mosquitto, "beetek") as table:
        server = table.server
        wait_shoe_open(server)
        deal_round(table.port, server)
    seqs = event_seqs(server)
    assert seqs[0] >= int(began * 1000) and seqs == list(range(seqs[0], seqs[0] + len(seqs)))
    assert not [a for a in server.payloads("/alert") if a["code"] == "STATE_LOST"]


@pytest.mark.timeout(60)
def test_a_second_daemon_on_the_same_config_refuses_to_start(tmp_path, mosquitto: Broker) -> None:
    with live_table(tmp_path, mosquitto, "beetek") as table:
        server, first = table.server, table.proc
        assert first is not None
        wait_shoe_open(server)
        said = table.refused()
        # The table id's lock is the first a second daemon meets: the line operations.md quotes.
        line = (
            f"another scannerd (pid {first.pid}) is already running for table T1 on this machine; "
            "stop it first"
        )
        assert line in said, said
        assert str(os.getpid()) not in said  # it names the running daemon, not itself
        deal_round(table.port, server)  # the first still has the whole shoe
    assert [c["card"] for c in server.payloads("/card")] == ["8D", "3C", "KH", "5H"]


@pytest.mark.timeout(60)
def test_a_second_daemon_with_its_own_outbox_cannot_take_the_shoe(tmp_path, mosquitto: Broker) -> None:
    """Two configs naming one port: the port is opened exclusively, so no card goes to the wrong one."""
    one, two = tmp_path / "one", tmp_path / "two"
    one.mkdir()
    two.mkdir()
    # The game server hears both tables, so a card of the first's shoe published as the second's shows.
    with live_table(one, mosquitto, "beetek", topics=["casino/tables/#"]) as first:
        server, port = first.server, first.port
        wait_shoe_open(server)
        with live_table(two, mosquitto, "beetek", channel=port.path, table_id="T2") as second:
            wait_until(
                lambda: "cannot open" in second.log.read_text(), 20, "the second daemon refused the port"
            )
            deal_round(port, server)
    assert [c["card"] for c in server.payloads("/card")] == ["8D", "3C", "KH", "5H"]
    assert all(m.topic.startswith("casino/tables/T1/") for m in server.messages("/card"))


@pytest.mark.timeout(60)
def test_a_second_table_on_the_same_outbox_refuses_to_start(tmp_path, mosquitto: Broker) -> None:
    """Another table id, its own shoe, the first's [outbox] path (a config copied and half edited)."""
    one, two = tmp_path / "one", tmp_path / "two"
    one.mkdir()
    two.mkdir()
    shoe2 = PtyPort(two / "shoe")
    outbox = {"path": str(one / "outbox.sqlite3")}
    config2 = write_config(two, mosquitto, "beetek", shoe2.path, table_id="T2", rules=RULES, outbox=outbox)
    with live_table(one, mosquitto, "beetek") as table:
        server, first = table.server, table.proc
        assert first is not None
        wait_shoe_open(server)
        said = table.refused(config2)
        line = (
            f"another scannerd (pid {first.pid}) is already running for this table: "
            f"{one / 'outbox.lock'} is locked; stop it first"
        )
        assert line in said, said
        deal_round(table.port, server)
    shoe2.close()
    assert [c["card"] for c in server.payloads("/card")] == ["8D", "3C", "KH", "5H"]


@pytest.mark.timeout(60)
def test_a_second_config_for_the_same_table_refuses_to_start(tmp_path, mosquitto: Broker) -> None:
    """Its own state directory and shoe, the same table id: it would fight the first for the broker."""
    one, two = tmp_path / "one", tmp_path / "two"
    one.mkdir()
    two.mkdir()
    shoe2 = PtyPort(two / "shoe")
    config2 = write_config(two, mosquitto, "beetek", shoe2.path, rules=RULES)
    with live_table(one, mosquitto, "beetek") as table:
        server, first = table.server, table.proc
        assert first is not None
        wait_shoe_open(server)
        said = table.refused(config2)
        assert f"(pid {first.pid}) is already running for table T1" in said, said
        deal_round(table.port, server)
    shoe2.close()
    assert not [m for m in server.messages("/status") if b"offline" in m.payload][:-1]  # never kicked off


@pytest.mark.timeout(60)
@pytest.mark.parametrize("damage", [b"", b"\x00garbage\xff"], ids=["empty", "garbage"])
def test_a_lost_outbox_is_loud_when_the_ceiling_file_is_damaged_too(
    tmp_path, mosquitto: Broker, damage
) -> None:
    with live_table(tmp_path, mosquitto, "beetek", log={"format": "json"}) as table:
        server = table.server
        wait_shoe_open(server)
        table.kill(signal.SIGTERM)
        lose(tmp_path / "outbox.sqlite3", "deleted")
        (tmp_path / "outbox.seq").write_bytes(damage)
        table.start()
        server.wait_for(lambda _: any(a["code"] == "STATE_LOST" for a in server.payloads("/alert")))
    assert "saved state lost" in table.log.read_text()


@pytest.mark.timeout(90)
def test_the_recording_after_a_lost_outbox_replays_what_followed_the_loss(
    tmp_path, mosquitto: Broker
) -> None:
    """STATE_LOST has no input to record: the file after it begins with the state it left, seq and all."""
    record = tmp_path / "rec"
    with live_table(tmp_path, mosquitto, "beetek", record={"dir": str(record), "compress": False}) as table:
        server = table.server
        wait_shoe_open(server)
        table.kill(signal.SIGTERM)
        lose(tmp_path / "outbox.sqlite3", "deleted")
        opened = shoe_opened(server.messages())
        table.start()
        wait_shoe_open(server, times=opened + 1)
        acknowledge_state_lost(server)
        deal_round(table.port, server)
    (after,) = [f for f in record.glob("*.jsonl") if '"STATE_LOST"' in f.read_text()]
    # The deal's events: the file also holds the anchor of the file before, which a stop leaves to the start.
    deal = ("/card", "/round", "/alert", "/shoe")
    replayed = [p.payload for p in replay(after) if p.topic.endswith(deal)]
    live = [m.payload for m in server.messages() if m.topic.endswith(deal)]
    assert replayed == live[live.index(next(m for m in live if b'"STATE_LOST"' in m)) + 1 :]


@pytest.mark.timeout(90)
def test_an_outbox_put_back_from_a_copy_does_not_reuse_seq(tmp_path, mosquitto: Broker) -> None:
    """An operator restores yesterday's copy of the state directory's outbox: its seqs went out since."""
    outbox = tmp_path / "outbox.sqlite3"
    with live_table(tmp_path, mosquitto, "beetek", log={"format": "json"}) as table:
        server, port, log = table.server, table.port, table.log
        wait_shoe_open(server)
        deal_round(port, server)
        table.kill(signal.SIGTERM)
        copy = tmp_path / "copy.sqlite3"
        copy.write_bytes(outbox.read_bytes())  # a clean stop leaves the whole state in the main file
        opened = shoe_opened(server.messages())
        table.start()
        wait_shoe_open(server, times=opened + 1)
        deal_round(port, server)
        table.kill(signal.SIGTERM)
        before = max(event_seqs(server))
        outbox.write_bytes(copy.read_bytes())
        for suffix in ("-wal", "-shm"):
            Path(f"{outbox}{suffix}").unlink(missing_ok=True)
        opened = shoe_opened(server.messages())
        table.start()
        wait_shoe_open(server, times=opened + 1)
        acknowledge_state_lost(server)
        deal_round(port, server)  # the copy's round counter is behind: its next number went out since
    seqs = event_seqs(server)
    assert min(seqs[seqs.index(before) + 1 :]) > before
    assert_new_round_ids(server, before)
    assert "saved state older than what was published" in log.read_text()
