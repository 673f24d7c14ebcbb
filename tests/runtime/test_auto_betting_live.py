"""A table with no game server runs its own betting, and its recording replays to exactly that.

``scannerd run`` in a subprocess with ``round_control = "auto"`` and a house betting time, a
framed shoe on a real pty, a dealer who draws once too early: the daemon opens betting when the
shoe reports in and again when each hand is over, closes it itself when the time runs out, and
what it recorded replays to the very events it published (same seq, same ts, same bytes),
though the replay's ticks fall elsewhere in the second than the live ones did.
"""

from __future__ import annotations

import json
import signal
from pathlib import Path

import pytest

from drivers.events import DeviceCard
from scannerd.contract.topics import EVENT_KINDS
from scannerd.recording.replay import replay
from tests.support.broker import Broker, GameServer
from tests.support.process import live_table

BETTING_S = 1.5
NATURAL = ("9H", "2S", "9C", "3D")


def phases(server: GameServer) -> list[str]:
    return [p["phase"] for p in server.payloads("/round")]


def events(messages: list[tuple[str, bytes]]) -> list[tuple[int, str, bytes]]:
    by_seq = {json.loads(p)["seq"]: (t, p) for t, p in messages if t.rsplit("/", 1)[1] in EVENT_KINDS}
    return [(seq, *by_seq[seq]) for seq in sorted(by_seq)]


@pytest.mark.timeout(120)
def test_the_table_closes_betting_itself_and_the_recording_replays_exactly(
    tmp_path: Path, mosquitto: Broker
) -> None:
    rules = {"burn": "none", "round_control": "auto", "betting_time_s": BETTING_S}
    record = {"dir": str(tmp_path / "recordings")}
    with live_table(tmp_path, mosquitto, rules=rules, record=record) as table:
        server, shoe = table.server, table.shoe
        assert shoe is not None
        server.wait_online("casino/tables/T1")
        server.wait_for(lambda ms: "betting" in phases(server), 20)  # the shoe reported in
        shoe.send(DeviceCard("5C"))  # the dealer draws while bets are still being placed
        server.wait_for(lambda ms: any(b"CARD_BEFORE_BETS_CLOSED" in m.payload for m in ms), 20)
        server.wait_for(lambda ms: "dealing" in phases(server), 20)  # the time ran out
        for card in NATURAL:
            shoe.send(DeviceCard(card))
        server.wait_for(lambda ms: phases(server).count("betting") == 2, 20)  # the next hand's betting
        server.wait_for(lambda ms: phases(server).count("dealing") == 2, 20)
        for card in ("2H", "KS", "3C", "4D", "2C", "5S"):
            shoe.send(DeviceCard(card))
        server.wait_for(lambda ms: phases(server).count("complete") == 2, 20)
        assert table.kill(signal.SIGTERM) == 0, table.log.read_text()[-3000:]

    rounds = server.payloads("/round")
    first_betting, first_dealing = rounds[0], next(r for r in rounds if r["phase"] == "dealing")
    assert first_betting["betting_time_s"] == BETTING_S
    assert first_dealing["ts"] == first_betting["betting_ends_ts"] == first_betting["ts"] + BETTING_S
    assert [r["phase"] for r in rounds] == [
        "betting",
        "dealing",
        "complete",
        "betting",
        "dealing",
        "complete",
        "betting",
    ]

    live = events([(m.topic, m.payload) for m in server.messages()])
    files = sorted((tmp_path / "recordings").glob("*.jsonl.gz"))
    replayed = events([(m.topic, m.payload) for path in files for m in replay(path)])
    # All of it: the last file's anchor waits for the table's next start, which records it.
    assert replayed == live
