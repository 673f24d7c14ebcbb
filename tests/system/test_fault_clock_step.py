"""Fault: the wall clock steps forward in the middle of a round (NTP correcting a PC that booted wrong).

``scannerd run`` is a real process whose wall clock really jumps: libfaketime
(preloaded, reading its offset from a file the test rewrites) moves
``CLOCK_REALTIME`` for that process alone and leaves the monotonic clock as it
is, which is what a step does to a machine. Silence and stalls are judged on
elapsed time, so neither a framed shoe's heartbeats nor a Bee-Tek round may
look overdue; the published times follow the wall clock; and the recording
replays to exactly what was published.
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from drivers.events import DeviceCard
from scannerd.recording.replay import replay
from tests.support.broker import Broker, GameServer
from tests.support.frames import beetek
from tests.support.process import live_table

BASE = "casino/tables/T1"
LIBFAKETIME = Path("/usr/lib/x86_64-linux-gnu/faketime/libfaketimeMT.so.1")

pytestmark = pytest.mark.skipif(not LIBFAKETIME.exists(), reason="libfaketime is not installed")


def faked_clock(offset: Path) -> dict[str, str]:
    """The environment of a ``scannerd run`` whose wall clock is ``offset``'s: libfaketime reads it at
    every call; the monotonic clock is left alone."""
    return {
        "LD_PRELOAD": str(LIBFAKETIME),
        "FAKETIME_TIMESTAMP_FILE": str(offset),
        "FAKETIME_NO_CACHE": "1",
        "FAKETIME_DONT_FAKE_MONOTONIC": "1",
    }


def step(offset: Path, seconds: int) -> None:
    tmp = offset.with_suffix(".tmp")
    tmp.write_text(f"{seconds:+d}\n")
    tmp.replace(offset)  # whole: the process never reads half a line


def wait_open(server: GameServer) -> None:
    server.wait_for(lambda got: any(m.topic.endswith("/device") and b'"link":"up"' in m.payload for m in got))


def alerts(server: GameServer) -> list[str]:
    return [a["code"] for a in server.payloads("/alert")]


@pytest.mark.timeout(90)
def test_a_clock_step_mid_round_neither_stalls_a_beetek_round_nor_breaks_its_replay(
    tmp_path, mosquitto: Broker
) -> None:
    offset = tmp_path / "faketime"
    step(offset, 0)
    record = tmp_path / "rec"
    with live_table(
        tmp_path,
        mosquitto,
        "beetek",
        env=faked_clock(offset),
        rules={"round_control": "auto", "burn": "none", "stall_timeout_s": 30},
        record={"dir": str(record), "compress": False},
    ) as table:
        server, port = table.server, table.port
        wait_open(server)
        port.write(beetek("9H", "2S", crlf=False))
        server.wait_for(lambda got: len([m for m in got if m.topic.endswith("/card")]) == 2)
        before = time.time()
        step(offset, 120)
        time.sleep(3)  # ticks pass with the clock two minutes on
        port.write(beetek("9C", "3D", crlf=False))
        server.wait_for(lambda _: any(r["phase"] == "complete" for r in server.payloads("/round")))
    log = (tmp_path / "scannerd.log").read_text()
    assert "ROUND_STALLED" not in alerts(server), log[-3000:]
    assert "the wall clock stepped" in log
    cards = server.payloads("/card")
    assert [c["card"] for c in cards] == ["9H", "2S", "9C", "3D"]
    assert cards[2]["ts"] - before > 110  # the contract's times are the wall clock's

    # Each file replays to what the table published while it was written: the step began a new one.
    files = sorted(record.glob("*.jsonl"))
    assert len(files) >= 2
    # The deal's events: each file's anchor is published once the file is sealed, after its last line.
    deal = ("/card", "/round", "/alert", "/shoe")
    replayed = [p.payload for f in files for p in replay(f) if p.topic.endswith(deal)]
    published = [
        m.payload for m in server.messages() if m.topic.endswith(("/card", "/round", "/alert", "/shoe"))
    ]
    assert replayed == published


@pytest.mark.timeout(90)
def test_a_clock_step_does_not_make_a_framed_shoe_look_silent(tmp_path, mosquitto: Broker) -> None:
    offset = tmp_path / "faketime"
    step(offset, 0)
    with live_table(tmp_path, mosquitto, env=faked_clock(offset)) as table:
        server, shoe = table.server, table.shoe
        assert shoe is not None
        wait_open(server)
        shoe.heartbeat()
        for card in ("9H", "2S"):
            shoe.send(DeviceCard(card))
        server.wait_for(lambda got: len([m for m in got if m.topic.endswith("/card")]) == 2)
        step(offset, 60)
        for _ in range(6):  # heartbeats go on as ever, a second apart
            time.sleep(0.5)
            shoe.heartbeat()
        for card in ("9C", "3D"):
            shoe.send(DeviceCard(card))
        server.wait_for(lambda _: any(r["phase"] in ("complete", "void") for r in server.payloads("/round")))
    log = (tmp_path / "scannerd.log").read_text()
    assert "DEVICE_DISCONNECTED" not in alerts(server), log[-3000:]
    (end,) = [r for r in server.payloads("/round") if r["phase"] in ("complete", "void")]
    assert end["phase"] == "complete"


@pytest.mark.timeout(90)
def test_repeated_small_steps_neither_raise_a_stall_nor_hide_one(tmp_path, mosquitto: Broker) -> None:
    """A clock that keeps jumping a second at a time (a bad time source) is still judged step by step."""
    offset = tmp_path / "faketime"
    step(offset, 0)
    rules = {"round_control": "auto", "burn": "none", "stall_timeout_s": 6}
    with live_table(tmp_path, mosquitto, "beetek", env=faked_clock(offset), rules=rules) as table:
        server, port = table.server, table.port
        wait_open(server)
        dealt = time.monotonic()  # before the cards: the table's own time for them can only be later
        port.write(beetek("9H", "2S", crlf=False))
        server.wait_for(lambda got: len([m for m in got if m.topic.endswith("/card")]) == 2)
        for k in range(1, 9):  # eight seconds on the wall clock in four real ones
            step(offset, k)
            time.sleep(0.5)
        assert "ROUND_STALLED" not in alerts(server)
        server.wait_for(lambda _: "ROUND_STALLED" in alerts(server), 20)
        assert time.monotonic() - dealt >= 6  # raised when six real seconds had passed, not before
