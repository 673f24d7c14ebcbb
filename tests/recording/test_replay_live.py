"""What ``scannerd run`` recorded replays to exactly what it published.

The whole production path: ``scannerd run`` in a subprocess, its config
turning recording on, a simulated shoe behind a real pty, a dealer making
mistakes (an unreadable card, a pulled cable, a new shoe), the game server
stand-in running the betting over Mosquitto. Every event the broker got
must come out of the replay of the recorded files, byte for byte: same
seq, same ts, same payload. The table signs with a key it takes as a
systemd credential, and ``scannerd verify`` finds every file whole and
signed with it.
"""

from __future__ import annotations

import json
import random
import signal
import subprocess
import sys
from contextlib import closing
from pathlib import Path

import pytest

from scannerd.recording.replay import Published, replay
from scannerd.recording.signing import write_key_pair
from simulators.actions import Step, Unplug
from simulators.feeder import Feeder
from simulators.game_server import GameServer as BettingServer
from simulators.registry import make_device
from simulators.scenario import parse
from tests.support.broker import Broker, GameServer
from tests.support.process import live_table

EVENT_KINDS = ("card", "round", "alert", "shoe")
SCENARIO = """
seed 11
unplug-seconds 0.3
rounds 3
round unreadable
unplug 0.3
rounds 2
shoe
rounds 2
"""


def live_events(server: GameServer) -> list[tuple[int, str, bytes]]:
    by_seq = {}
    for m in server.messages():
        if m.topic.rsplit("/", 1)[1] in EVENT_KINDS:
            by_seq[json.loads(m.payload)["seq"]] = (m.topic, m.payload)
    return [(seq, *by_seq[seq]) for seq in sorted(by_seq)]


def rounds_over(server: GameServer) -> int:
    return sum(json.loads(m.payload)["phase"] in ("complete", "void") for m in server.messages("/round"))


def replayed_events(files: list[Path]) -> list[tuple[int, str, bytes]]:
    out: list[Published] = []
    for path in files:
        out += [m for m in replay(path) if m.topic.rsplit("/", 1)[1] in EVENT_KINDS]
    return sorted((json.loads(m.payload)["seq"], m.topic, m.payload) for m in out)


@pytest.mark.timeout(180)
@pytest.mark.parametrize("driver", ["framed", "beetek"])
def test_a_recording_of_a_live_run_replays_to_exactly_what_it_published(
    tmp_path: Path, mosquitto: Broker, driver: str
) -> None:
    scenario = parse(SCENARIO)
    record = {"dir": str(tmp_path / "recordings"), "rotate": "shoe"}
    (tmp_path / "credentials").mkdir()
    write_key_pair(tmp_path / "credentials" / "recording-key", tmp_path / "recording-key.pub")
    env = {"CREDENTIALS_DIRECTORY": str(tmp_path / "credentials")}
    betting = BettingServer(mosquitto.host, mosquitto.port, "T1", betting_time=0.0, round_wait=3.0)
    with (
        closing(make_device(driver, random.Random(scenario.seed), link=tmp_path / "shoe-1")) as device,
        live_table(
            tmp_path,
            mosquitto,
            driver,
            channel=device.channel,
            env=env,
            rules=scenario.rules_for(device.reports_cut).model_dump(),
            record=record,
        ) as table,
    ):
        server = table.server
        try:
            server.wait_online("casino/tables/T1")
            betting.start()

            ends = [0]

            def after(step: Step) -> None:
                """Like a dealer watching the table's display: on only once it shows the last step done."""
                if isinstance(step.action, Unplug):
                    server.wait_for(lambda ms: any(b"DEVICE_RECONNECTED" in m.payload for m in ms), 30)
                if step.expect.round_end:
                    ends[0] += 1
                    server.wait_for(lambda ms: rounds_over(server) >= ends[0], 30)

            dealer = scenario.dealer(device_reports_cut=device.reports_cut, pace=0.0)
            Feeder(device, on_command=betting.perform, after=after).run(scenario.steps(dealer))
            betting.request("get_state")  # every card is in once the table has answered a later request
            assert table.kill(signal.SIGTERM) == 0, table.log.read_text()[-3000:]
            server.wait_for(
                lambda ms: any(m.topic.endswith("/status") and b"offline" in m.payload for m in ms)
            )
        finally:
            betting.stop()

    files = sorted((tmp_path / "recordings").glob("*.jsonl.gz"))
    assert len(files) >= 3  # from the start, shoe S1, shoe S2: one file per shoe
    live = live_events(server)
    codes = {json.loads(p)["code"] for _, t, p in live if t.endswith("/alert")}
    assert {"UNREADABLE_CARD", "DEVICE_DISCONNECTED", "DEVICE_RECONNECTED"} <= codes
    assert len(live) > 60
    assert replayed_events(files) == live
    verify = [sys.executable, "-m", "scannerd", "verify", str(tmp_path / "recordings")]
    checked = subprocess.run(
        [*verify, "--key", str(tmp_path / "recording-key.pub")], capture_output=True, text=True
    )
    assert checked.returncode == 0 and checked.stdout.startswith(f"intact: {len(files)} file(s)"), checked
