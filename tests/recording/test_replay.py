"""Replay: the live table's own parts fed from a file, and ``scannerd replay`` around them."""

from __future__ import annotations

import json
import logging
import subprocess
import sys
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from scannerd.commands.replay import paced
from scannerd.core.house import HouseRules
from scannerd.core.inputs import CardDrawn, Command
from scannerd.core.validator import Validator
from scannerd.recording.format import Header, RecordingWriter
from scannerd.recording.replay import Published, replay
from tests.sessions import DIR, render
from tests.sessions.cases import NATURAL
from tests.sessions.script import START_TS, STARTED_AT, FramedShoe, Script
from tests.support.broker import GameServer, wait_until
from tests.support.command import scannerd
from tests.support.frames import beetek

SESSION = DIR / "beetek-clean.jsonl"


def payloads(messages: list[Published], kind: str) -> list[dict]:
    return [json.loads(m.payload) for m in messages if m.topic.endswith("/" + kind)]


def test_the_same_file_gives_the_same_bytes_every_time() -> None:
    assert render(SESSION) == render(SESSION)


def test_house_settings_from_the_header_or_overridden_key_by_key() -> None:
    as_recorded = list(replay(SESSION))
    assert payloads(as_recorded, "shoe")[0]["burn_required"] is None  # burn by the first card's value
    no_burn = list(replay(SESSION, rules={"burn": "none"}))
    shoe = payloads(no_burn, "shoe")[0]
    assert (shoe["burn_required"], shoe["decks"]) == (0, 8)
    assert [c["position"] for c in payloads(no_burn, "card")][:2] == ["burn", "burn"]  # tagged by the device


def test_a_replay_can_go_out_as_another_table() -> None:
    messages = list(replay(SESSION, table_id="T1-replay", prefix="lab/tables"))
    assert {m.topic.rsplit("/", 1)[0] for m in messages} == {
        "lab/tables/T1-replay",
        "lab/tables/T1-replay/response",
    }
    assert {json.loads(m.payload).get("table_id", "T1-replay") for m in messages} == {"T1-replay"}


def begun_mid_round(*inputs: Command | CardDrawn) -> tuple[Validator, Header]:
    """A table that judged ``inputs``, and the header a file begun then carries: its state."""
    v = Validator("T1", HouseRules(burn="none"))
    for inp in inputs:
        v.handle(inp)
    header = Header(
        table_id="T1",
        driver="beetek",
        started_at=STARTED_AT,
        rules=HouseRules(burn="none"),
        state={"validator": v.snapshot()},
    )
    return v, header


def test_a_file_begun_mid_shoe_resumes_from_the_state_in_its_header(tmp_path: Path) -> None:
    """What the recorder writes at rotation or daemon start: the replay continues where the table was."""
    v, header = begun_mid_round(
        Command(START_TS - 60, "new_shoe", {"shoe_id": "S9"}),
        Command(START_TS - 50, "betting_open", {"round_id": "R1"}),
        Command(START_TS - 40, "betting_close", {}),
        CardDrawn(START_TS - 5, "3H"),
        CardDrawn(START_TS - 4, "4D"),
    )
    with RecordingWriter.create(tmp_path / "resumed.jsonl", header) as w:
        w.rx(START_TS + 1, beetek("3S", "3C"))
    messages = list(replay(tmp_path / "resumed.jsonl"))
    cards = payloads(messages, "card")
    assert [(c["position"], c["shoe_card_no"], c["shoe_id"]) for c in cards] == [
        ("player2", 3, "S9"),
        ("banker2", 4, "S9"),
    ]
    assert cards[0]["seq"] == v.next_seq
    assert payloads(messages, "round")[-1]["winner"] == "banker"


def test_a_restart_line_voids_the_round_the_header_left_open(tmp_path: Path) -> None:
    """The daemon's start on saved state is an input: the file replays the void it published."""
    v, header = begun_mid_round(
        Command(START_TS - 50, "betting_open", {"round_id": "R1"}),
        Command(START_TS - 40, "betting_close", {}),
        CardDrawn(START_TS - 5, "9H"),
    )
    with RecordingWriter.create(tmp_path / "restarted.jsonl", header) as w:
        w.restart(START_TS + 0.5, "scannerd was not reading the shoe")
    messages = list(replay(tmp_path / "restarted.jsonl"))
    (alert,) = payloads(messages, "alert")
    (round_,) = payloads(messages, "round")
    assert (alert["code"], alert["severity"], alert["seq"]) == ("DAEMON_RESTARTED", "misdeal", v.next_seq)
    assert (round_["round_id"], round_["phase"], round_["reason"]) == ("R1", "void", "DAEMON_RESTARTED")
    assert round_["ts"] == START_TS + 0.5


def test_framed_replay_keeps_the_shoe_protocol_and_sends_nothing(tmp_path: Path, caplog) -> None:
    """Acks the driver would send go nowhere (no warnings about a missing port); repeats are dropped;
    after a link-up, cards wait for the shoe's hello as they did live."""
    shoe = FramedShoe()
    s = Script("framed-protocol", "framed", rules={"burn": "none", "round_control": "auto"})
    s.link(True).device(shoe.boot()).device(shoe.cards(NATURAL[0]))
    s.device(shoe.repeat_last(NATURAL[0]), after=0.25)
    s.link(False).link(True)
    s.device(shoe.cards(NATURAL[1]))  # before the hello: held back
    s.device(shoe.hello_reply() + shoe.repeat_last(NATURAL[1]), after=0.25)
    s.write(tmp_path / "f.jsonl")
    with caplog.at_level(logging.DEBUG):
        messages = list(replay(tmp_path / "f.jsonl"))
    assert [c["card"] for c in payloads(messages, "card")] == ["9H", "2S"]
    assert "framed write failed" not in caplog.text


def test_a_partial_frame_is_forgotten_on_link_up(tmp_path: Path) -> None:
    s = Script("partial", "beetek", rules={"burn": "none", "round_control": "auto"})
    s.link(True).device(b" [Game]<Card:", pieces=1)
    s.link(False).link(True)
    s.device(b"9H> " + beetek("2S"), pieces=1)
    s.write(tmp_path / "p.jsonl")
    assert [c["card"] for c in payloads(list(replay(tmp_path / "p.jsonl")), "card")] == ["2S"]


def test_the_daemons_tick_is_replayed_on_the_recordings_clock(tmp_path: Path) -> None:
    """A stall is raised while the table waits, not when the next card finally comes."""
    s = Script("stall", "beetek", rules={"burn": "none", "stall_timeout_s": 10})
    s.link(True).cmd("new_shoe").cmd("betting_open").cmd("betting_close", after=1.0)
    s.cmd("void_round", after=25.0)
    s.write(tmp_path / "s.jsonl")
    messages = list(replay(tmp_path / "s.jsonl"))
    alert = payloads(messages, "alert")[0]
    assert alert["code"] == "ROUND_STALLED"
    assert alert["ts"] == START_TS + 14.0  # the first whole tick at or past 3.5 s + 10 s
    assert [m.topic.rsplit("/", 1)[1] for m in messages][-3:] == ["round", "shoe", "void_round"]


# ---------------------------------------------------------------------- the command


def test_replay_command_says_what_the_session_came_to_unless_asked_for_the_messages(capsys) -> None:
    sample = Path(__file__).resolve().parents[2] / "samples" / "shoe-with-misdeals.jsonl.gz"
    assert scannerd("replay", str(sample)) == 0  # no --fast: a summary does not wait for the table's pace
    out = capsys.readouterr().out.splitlines()
    payloads = [json.loads(m.payload) for m in replay(sample)]
    rounds = [p for p in payloads if p.get("kind") == "round"]
    winners = Counter(p["winner"] for p in rounds if p["phase"] == "complete")
    voids = Counter(p["reason"] for p in rounds if p["phase"] == "void")
    alerts = Counter(p["code"] for p in payloads if p.get("kind") == "alert" and not p["acknowledged"])
    assert out[0].startswith(f"{sample}: table T1, framed shoe, recorded from 2024-05-01")
    hands = f"hands     {winners.total()} (banker {winners['banker']}, player {winners['player']}, "
    assert out[1].strip().startswith(hands + f"tie {winners['tie']};")
    assert out[2].strip().startswith(f"voids     {voids.total()}: ") and voids["SHORT_DEAL"] > 0
    assert all(f"{code} {n}" in out[2] for code, n in voids.items())
    assert out[3].strip().startswith(f"alerts    {alerts.total()}: ")
    assert all(f"{code} {n}" in out[3] for code, n in alerts.items())
    assert out[4].strip() == f"cards     {sum(p.get('kind') == 'card' for p in payloads)}"


def test_replay_command_prints_every_message_as_json_lines(capsys) -> None:
    assert scannerd("replay", "--fast", "--emit", "jsonl", str(SESSION)) == 0
    out = capsys.readouterr().out
    assert out == render(SESSION)
    first = json.loads(out.splitlines()[0])
    assert set(first) == {"topic", "payload"} and first["topic"] == "casino/tables/T1/shoe"


def test_replay_command_takes_house_settings_and_prefix_from_a_config(tmp_path: Path, capsys) -> None:
    config = tmp_path / "scannerd.toml"
    config.write_text(
        'table_id = "T9"\n[device]\ndriver = "beetek"\nport = "/dev/shoe-1"\n'
        '[rules]\nburn = "none"\n[mqtt]\nprefix = "lab"\n'
    )
    assert scannerd("replay", "--fast", "--emit", "jsonl", "--config", str(config), str(SESSION)) == 0
    lines = [json.loads(x) for x in capsys.readouterr().out.splitlines()]
    assert lines[0]["topic"] == "lab/T1/shoe"  # the recording's table; the config's prefix
    assert lines[0]["payload"]["burn_required"] == 0  # [rules] burn overrides the header
    assert lines[0]["payload"]["decks"] == 8  # keys the config does not set stay as recorded


def test_replay_command_refuses_a_newer_recording_clearly(tmp_path: Path, capsys) -> None:
    path = tmp_path / "future.jsonl"
    path.write_text(json.dumps(json.loads(SESSION.read_text().splitlines()[0]) | {"version": 3}) + "\n")
    assert scannerd("replay", str(path)) == 2
    err = capsys.readouterr().err
    assert "version 3" in err and "newer scannerd" in err


def test_paced_replay_keeps_the_recorded_gaps_scaled_by_speed() -> None:
    now = [100.0]
    slept: list[float] = []

    def sleep(seconds: float) -> None:
        slept.append(round(seconds, 6))
        now[0] += seconds

    batches = [[Published(ts, "t", b"{}", None)] for ts in (10.0, 10.0, 12.0, 18.0)]  # type: ignore[arg-type]
    assert list(paced(batches, speed=2.0, clock=lambda: now[0], sleep=sleep)) == batches
    assert slept == [1.0, 3.0]


def events_of(messages: list[tuple[str, bytes]]) -> list[tuple[str, bytes]]:
    return [m for m in messages if m[0].rsplit("/", 1)[1] in ("card", "round", "alert", "shoe")]


def events(server: GameServer) -> list[tuple[str, bytes]]:
    return events_of([(m.topic, m.payload) for m in server.messages()])


def test_replay_to_a_broker_publishes_what_jsonl_prints(mosquitto, tmp_path: Path) -> None:
    config = tmp_path / "scannerd.toml"
    config.write_text(
        f'table_id = "T1"\n[device]\ndriver = "beetek"\nport = "/dev/shoe-1"\n'
        f'[mqtt]\nhost = "{mosquitto.host}"\nport = {mosquitto.port}\nprefix = "lab"\n'
    )
    server = GameServer(mosquitto, ["lab/#"])
    try:
        assert scannerd("replay", "--fast", "--emit", "mqtt", "--config", str(config), str(SESSION)) == 0
        expected = [
            m for m in replay(SESSION, prefix="lab", table_id="T1-replay") if "/response/" not in m.topic
        ]
        wait_until(lambda: len(server.messages("")) >= len(expected), 20, "replayed events")
        got = [
            (m.topic, m.payload)
            for m in server.messages()
            if m.topic.rsplit("/", 1)[1] in ("card", "round", "alert", "shoe")
        ]
        assert got == [(m.topic, m.payload) for m in expected]
        assert server.payloads("T1-replay/status")[-1]["state"] == "offline"  # as another table, never as T1
        assert not [m for m in server.messages() if m.topic.startswith("lab/T1/")]
    finally:
        server.close()


@pytest.mark.parametrize(("option", "value"), [("--table-id", "T/#"), ("--speed", "nan")])
def test_replay_command_refuses_bad_option_values_in_one_line(capsys, option: str, value: str) -> None:
    with pytest.raises(SystemExit) as exit_:
        scannerd("replay", str(SESSION), option, value)
    assert exit_.value.code == 2
    assert capsys.readouterr().err.splitlines()[-1].startswith(f"scannerd replay: error: argument {option}")


@pytest.mark.parametrize("state", [{"validator": {"version": 1, "next_seq": "x"}}, {"validator": {"seq": 1}}])
def test_replay_command_refuses_a_header_state_that_is_not_one(tmp_path: Path, capsys, state: dict) -> None:
    header = json.loads(SESSION.read_text().splitlines()[0]) | {"state": state}
    path = tmp_path / "s.jsonl"
    path.write_text(json.dumps(header) + "\n")
    assert scannerd("replay", "--fast", str(path)) == 2
    assert f"{path}:1: bad header: state" in capsys.readouterr().err


def saved_with(change: Callable[[dict[str, Any]], None]) -> dict[str, Any]:
    """A table's real saved state a card into a shoe, then changed as a tampered or damaged file has it."""
    validator = Validator("T1", HouseRules())
    validator.handle(Command(START_TS, "new_shoe", {}))
    validator.handle(CardDrawn(START_TS + 1, "AS"))
    snap = validator.snapshot()
    change(snap)
    return {"validator": snap}


@pytest.mark.parametrize(
    "change",
    [
        lambda s: s.update(recall={"hands": 5}),
        lambda s: s.update(recall=[1, 2]),
        lambda s: s.update(recall_open={"R1": "MISDEAL"}),
        lambda s: s["shuffle"]["order"][0].__setitem__(0, "__class__"),
        lambda s: s["shuffle"]["order"][1].__setitem__(1, [0.0]),
    ],
    ids=["recall-not-a-list", "recall-not-hands", "open-misdeals-not-codes", "order-unknown", "order-short"],
)
def test_a_header_state_whose_parts_are_of_another_shape_is_refused_at_the_header(
    tmp_path: Path, capsys, change: Callable[[dict[str, Any]], None]
) -> None:
    """Not taken as it is and failed on at the first hand, with a traceback: named at line 1."""
    header = json.loads(SESSION.read_text().splitlines()[0]) | {"state": saved_with(change)}
    path = tmp_path / "s.jsonl"
    path.write_text(json.dumps(header) + "\n")
    assert scannerd("replay", "--fast", str(path)) == 2
    err = capsys.readouterr().err
    assert f"{path}:1: bad header: state" in err and "Traceback" not in err


def test_replay_command_names_a_driver_it_does_not_have(tmp_path: Path, capsys) -> None:
    header = Header(table_id="T1", driver="no-such-shoe", started_at=STARTED_AT)
    with RecordingWriter.create(tmp_path / "x.jsonl", header) as w:
        w.rx(START_TS + 1, b"?")
    assert scannerd("replay", "--fast", str(tmp_path / "x.jsonl")) == 2
    assert "unknown driver 'no-such-shoe'" in capsys.readouterr().err


def hid_typing(text: str) -> bytes:
    """Boot keyboard reports typing ``text`` (lower case, digits, Enter), each key pressed and released."""
    usage = {c: 0x04 + i for i, c in enumerate("abcdefghijklmnopqrstuvwxyz")}
    usage |= {c: 0x1E + i for i, c in enumerate("1234567890")} | {"\n": 0x28}
    return b"".join(bytes([0, 0, usage[c], 0, 0, 0, 0, 0]) + bytes(8) for c in text)


def test_usb_drivers_replay_through_their_codecs_too(tmp_path: Path) -> None:
    rules = {"burn": "none", "round_control": "auto"}
    hid = Script("hid", "usb-hid", rules=rules, options={"table": "letter-rank"})
    hid.link(True).device(hid_typing("h09\na02\n"), pieces=3)
    hid.write(tmp_path / "hid.jsonl")
    shoe = FramedShoe()
    framed = Script("usb-framed", "usb-framed", rules=rules)
    framed.link(True).device(shoe.boot() + shoe.cards("9H", "2S"), pieces=3)
    framed.write(tmp_path / "usb-framed.jsonl")
    for name in ("hid", "usb-framed"):
        cards = payloads(list(replay(tmp_path / f"{name}.jsonl")), "card")
        assert [c["card"] for c in cards] == ["9H", "2S"], name


def test_replay_does_not_load_the_daemon() -> None:
    """Replaying weeks of recordings starts often: the daemon's web server and threads are not needed."""
    code = (
        "import sys, scannerd.commands.replay\n"
        "print(sorted({'aiohttp', 'scannerd.runtime.daemon'} & set(sys.modules)))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
