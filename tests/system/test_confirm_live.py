"""The dealer's word from the shoe's own button, through a running daemon (docs/mqtt.md, The dealer's word).

A real ``scannerd run`` reads a framed shoe on a pty at a table with
``[rules] confirm_result``: a hand dealt waits; the shoe's PLAYER button on a
banker hand raises RESULT_MISMATCH and the hand waits on; its BANKER button
completes it, naming the dealer signed in and the shoe. The recording replays
to exactly what the table published.
"""

from __future__ import annotations

import json
import signal
from pathlib import Path
from typing import Any

from drivers.events import DeviceButton, DeviceCard
from scannerd.recording.replay import replay
from tests.support.broker import Broker, GameServer
from tests.support.process import live_table

BASE = "casino/tables/T1"
BANKER_NATURAL = ("2H", "9S", "3C", "KD")  # player 5, banker 9
RULES = {"burn": "none", "round_control": "auto", "confirm_result": True, "suspend_on": []}


def rounds(server: GameServer) -> list[dict[str, Any]]:
    return server.payloads("/round")


def test_the_shoes_button_declares_the_winner_and_a_wrong_one_is_a_mismatch(
    tmp_path: Path, mosquitto: Broker
) -> None:
    record = {"dir": str(tmp_path / "rec")}
    with live_table(tmp_path, mosquitto, rules=RULES, record=record) as table:
        server, shoe = table.server, table.shoe
        assert shoe is not None
        server.wait_online(BASE)
        server.request(f"{BASE}/request/dealer_sign_in", {"dealer_id": "D-7"})
        server.wait_for(lambda got: any(m.topic.endswith("/dealer") for m in got), 30)
        for card in BANKER_NATURAL:
            shoe.send(DeviceCard(card))
        server.wait_for(lambda got: any(r["phase"] == "confirming" for r in rounds(server)), 30)
        shoe.send(DeviceButton("player"))
        server.wait_for(
            lambda got: any(a["code"] == "RESULT_MISMATCH" for a in server.payloads("/alert")), 30
        )
        assert not any(r["phase"] == "complete" for r in rounds(server))
        shoe.send(DeviceButton("banker"))
        server.wait_for(lambda got: any(r["phase"] == "complete" for r in rounds(server)), 30)
        assert table.kill(signal.SIGTERM) == 0
    (complete,) = [r for r in rounds(server) if r["phase"] == "complete"]
    assert (complete["winner"], complete["confirmed_by"], complete["confirmed_via"]) == (
        "banker",
        "D-7",
        "shoe",
    )
    (mismatch,) = [a for a in server.payloads("/alert") if a["code"] == "RESULT_MISMATCH"]
    assert mismatch["message"] == "Hand 1: player declared, the cards say banker - call a supervisor"
    # A replay decodes the same button bytes into the same word, at the same seq.
    kinds = ("/round", "/alert", "/card")
    live = sorted(
        (json.loads(m.payload)["seq"], m.topic, m.payload)
        for m in server.messages()
        if m.topic.endswith(kinds)
    )
    replayed = sorted(
        (json.loads(p.payload)["seq"], p.topic, p.payload)
        for path in sorted((tmp_path / "rec").glob("*.jsonl*"))
        for p in replay(path)
        if p.topic.endswith(kinds)
    )
    assert replayed == live
