"""Fault: the outbox keeps the table's inputs between snapshots, and a start judges them again.

A store journals the inputs the table judged with their events; the whole
state is written only now and then (scannerd/store/journal.py). These tests break
that the way a table does: ``scannerd run`` killed between journal rows and
the next snapshot (a real process, a real pty shoe, a real Mosquitto), a
start with a long journal to judge, and a journal row changed or cut short
on disk. The state after the replay must be the one the table had, exactly,
and a row that does not make its events again must neither be believed nor
stop the table.
"""

from __future__ import annotations

import json
import random
import signal
import sqlite3
import time
from pathlib import Path

import pytest

from drivers.cards import ALL_CARDS
from drivers.events import DeviceCard
from scannerd.contract.topics import Topics
from scannerd.core.table import SavedState, Table
from scannerd.runtime.config import load_config
from scannerd.store.journal import SNAPSHOT_EVERY, Restored, restore
from scannerd.store.outbox import Outbox
from tests.support.broker import Broker, GameServer, wait_until
from tests.support.fault import deduplicated
from tests.support.frames import beetek
from tests.support.process import live_table, log_lines, shoe_opened, wait_shoe_open

BASE = "casino/tables/T1"
SHOE = random.Random(3).sample([c for c in ALL_CARDS for _ in range(8)], 8 * len(ALL_CARDS))


def copy_of(outbox: Path, to: Path) -> Path:
    """What a process killed now would leave on disk: every committed transaction, through SQLite."""
    with sqlite3.connect(outbox) as src, sqlite3.connect(to) as dst:
        src.backup(dst)
    return to


def restored(outbox: Path, config_path: Path) -> Restored:
    config = load_config(config_path)

    def make(saved: SavedState | None) -> Table:
        return Table("T1", config.rules, driver=config.device.driver, channel=config.device.port, saved=saved)

    box = Outbox(outbox)
    try:
        return restore(box, make, Topics(config.mqtt.prefix, "T1"))
    finally:
        box.close()


def journal_rows(outbox: Path) -> int:
    with sqlite3.connect(outbox) as db:
        return db.execute("SELECT count(*) FROM journal").fetchone()[0]


def kept(server: GameServer) -> list[dict]:
    return deduplicated(
        [m.payload for m in server.messages() if m.topic.endswith(("/card", "/round", "/alert", "/shoe"))]
    )


@pytest.mark.timeout(120)
def test_the_state_judged_again_from_the_journal_equals_the_live_one(tmp_path, mosquitto: Broker) -> None:
    """A real daemon deals rounds; its outbox as a kill would leave it restores to its live state (==)."""
    with live_table(tmp_path, mosquitto, "beetek", in_process=True) as table:
        daemon, server = table.daemon, table.server
        assert daemon is not None
        wait_until(lambda: daemon.reader.link_up, 10, "link up")
        daemon.request("dealer_sign_in", {"dealer_id": "D-7"})
        for card in SHOE[:40]:
            table.port.write(beetek(card, crlf=False))
            time.sleep(0.005)  # a read a card, as a dealer's pace gives
        server.wait_for(lambda got: len([m for m in got if m.topic.endswith("/card")]) == 40)
        wait_until(lambda: daemon.outbox.health().pending == 0, 10, "all published")
        with daemon._lock:  # no input between the copy and the state it is compared with
            copy = copy_of(daemon.outbox.path, tmp_path / "killed.sqlite3")
            live = daemon.saved_state()
    assert journal_rows(copy) > 10  # the cards went to the journal, not each into a snapshot
    got = restored(copy, table.config)
    assert got.broken is None and got.replayed == journal_rows(copy)
    assert got.saved == live


@pytest.mark.timeout(180)
def test_a_framed_round_carries_on_across_a_kill_between_snapshots(tmp_path, mosquitto: Broker) -> None:
    """SIGKILL with the round's cards only in journal rows: the framed dedup and the round come back."""
    with live_table(tmp_path, mosquitto) as table:
        server, shoe = table.server, table.shoe
        assert shoe is not None
        server.wait_online(BASE)
        for card in ("9H", "2S", "KS", "5C", "9C"):  # a natural, then the next round's first card
            shoe.send(DeviceCard(card))
        server.wait_for(lambda got: len([m for m in got if m.topic.endswith("/card")]) == 5)
        assert shoe.wait_idle(10)
        assert journal_rows(tmp_path / "outbox.sqlite3") >= 3
        table.kill()
        shoe.send(DeviceCard("2D"))  # kept by the shoe until a host acknowledges it
        table.start()
        for card in ("KD", "5S"):
            shoe.send(DeviceCard(card))
        server.wait_for(
            lambda _: len([e for e in kept(server) if e["kind"] == "round" and e["phase"] == "complete"]) == 2
        )

    events = kept(server)
    cards = [e["card"] for e in events if e["kind"] == "card"]
    assert cards == ["9H", "2S", "KS", "5C", "9C", "2D", "KD", "5S"]  # none lost, none twice
    seqs = [e["seq"] for e in events]
    assert seqs == sorted(set(seqs))
    ends = [e for e in events if e["kind"] == "round" and e["phase"] == "complete"]
    assert (ends[1]["player"]["cards"], ends[1]["banker"]["cards"]) == (["9C", "KD"], ["2D", "5S"])
    assert not [e for e in events if e["kind"] == "alert" and e["code"] in ("DAEMON_RESTARTED", "STATE_LOST")]
    (start,) = [line for line in log_lines(table.log) if line.get("event") == "state restored"][-1:]
    assert start["journal_rows"] >= 3


@pytest.mark.timeout(240)
def test_a_start_judges_a_long_journal_again(tmp_path, mosquitto: Broker) -> None:
    """Almost SNAPSHOT_EVERY inputs since the snapshot, then a kill: the scoreboard and seq come back."""
    cards = SHOE[: SNAPSHOT_EVERY - 10]
    with live_table(tmp_path, mosquitto, "beetek") as table:
        server, port = table.server, table.port
        wait_shoe_open(server)
        for card in cards:
            port.write(beetek(card, crlf=False))
            time.sleep(0.005)
        server.wait_for(lambda _: len([e for e in kept(server) if e["kind"] == "card"]) == len(cards), 60)
        server.request(f"{BASE}/request/get_state", {})
        server.wait_for(lambda got: any(m.topic.endswith("/response/get_state") for m in got))
        before = json.loads(server.messages("/response/get_state")[-1].payload)["data"]
        rows = journal_rows(tmp_path / "outbox.sqlite3")
        table.kill()
        table.start()
        server.wait_for(
            lambda _: any(e["kind"] == "alert" and e["code"] == "DAEMON_RESTARTED" for e in kept(server))
        )
        server.request(f"{BASE}/request/get_state", {})
        server.wait_for(lambda got: len([m for m in got if m.topic.endswith("/response/get_state")]) == 2)
        after = json.loads(server.messages("/response/get_state")[-1].payload)["data"]

    assert rows > 100
    (start,) = [line for line in log_lines(table.log) if line.get("event") == "state restored"]
    assert start["journal_rows"] == rows
    assert after["results"] == before["results"]  # every hand of the shoe is on the scoreboard again
    seqs = [e["seq"] for e in kept(server)]
    assert seqs == sorted(set(seqs))
    assert not [e for e in kept(server) if e["kind"] == "alert" and e["code"] == "STATE_LOST"]


DAMAGE = {
    # A card in the row made other than it was: the inputs no longer make the events stored with it.
    "edited": "UPDATE journal SET entry = replace(entry, '\"2S\"', '\"3S\"') WHERE entry LIKE '%\"2S\"%'",
    # The row cut short, as a disk that lost its tail would leave it.
    "truncated": "UPDATE journal SET entry = substr(entry, 1, length(entry) / 2) WHERE entry LIKE '%\"2S\"%'",
}


@pytest.mark.timeout(120)
@pytest.mark.parametrize("damage", list(DAMAGE))
def test_a_damaged_journal_row_is_a_lost_state_not_a_wrong_one(tmp_path, mosquitto: Broker, damage) -> None:
    """The start keeps the state before the row, says STATE_LOST once, and numbers above all published."""
    outbox = tmp_path / "outbox.sqlite3"
    with live_table(tmp_path, mosquitto, "beetek") as table:
        server, port = table.server, table.port
        wait_shoe_open(server)
        for card in ("9H", "2S", "8D"):
            port.write(beetek(card, crlf=False))
            server.wait_for(lambda _, card=card: any(e.get("card") == card for e in kept(server)))
        table.kill()
        with sqlite3.connect(outbox) as db:
            assert db.execute(DAMAGE[damage]).rowcount == 1
        published = max(e["seq"] for e in kept(server))
        opened = shoe_opened(server.messages())
        table.start()
        server.wait_for(
            lambda _: any(e["kind"] == "alert" and e["code"] == "STATE_LOST" for e in kept(server))
        )
        wait_shoe_open(server, times=opened + 1)  # the card is dealt once the port is open again
        port.write(beetek("3C", crlf=False))
        server.wait_for(lambda _: any(e.get("card") == "3C" for e in kept(server)))
        assert table.kill(signal.SIGTERM) == 0
        table.start()  # the next start finds no journal left to disagree with
        server.wait_online(BASE)

    lines = log_lines(table.log)
    errors = [line for line in lines if line.get("level") == "error"]
    assert len(errors) == 1, errors
    assert "journal" in errors[0]["event"] and errors[0]["journal"].startswith("journal row ")
    assert errors[0]["rows_not_judged"] == 2  # the damaged row and the one after it
    (lost,) = [e for e in kept(server) if e["kind"] == "alert" and e["code"] == "STATE_LOST"]
    assert lost["seq"] > published
    card = next(e for e in kept(server) if e.get("card") == "3C")
    assert card["seq"] > lost["seq"]
    seqs = [e["seq"] for e in kept(server)]
    assert seqs == sorted(set(seqs))
    assert [line["journal_rows"] for line in lines if line.get("event") == "state restored"][-1] == 0
