"""The game-server stand-in over a real Mosquitto, alone and driving the real daemon."""

import random
import threading
import time
from contextlib import closing

import pytest

from scannerd.contract.events import RoundEvent
from scannerd.link.mqtt_settings import MqttSettings
from simulators.actions import Draw, ServerCommand, Unreadable
from simulators.feeder import Feeder
from simulators.game_server import GameServer
from simulators.registry import make_device
from simulators.scenario import parse
from tests.support.broker import GameServer as Observer
from tests.support.broker import answer_get_state, wait_until
from tests.support.process import live_table

BASE = "casino/tables/T1"


def test_betting_opens_only_after_the_daemon_reports_the_round_over(mosquitto, make_publisher):
    seq = int(time.time() * 1000)
    # The table's word: the game server takes a table's first event only on its get_state.
    make_publisher(MqttSettings(host=mosquitto.host, port=mosquitto.port), on_request=answer_get_state(seq))
    observer = Observer(mosquitto, [f"{BASE}/request/#", f"{BASE}/status"])
    observer.wait_online(BASE)
    gs = GameServer(mosquitto.host, mosquitto.port, "T1", betting_time=0, response_timeout=0.2)
    gs.start()
    try:
        gs.perform(ServerCommand("betting_open", {"round_id": "R1"}))
        second = threading.Thread(
            target=gs.perform, args=(ServerCommand("betting_open", {"round_id": "R2"}),)
        )
        second.start()
        second.join(0.5)
        assert second.is_alive()  # still waiting: R1 is not over
        over = RoundEvent(
            seq=seq,
            ts=time.time(),
            table_id="T1",
            round_id="R1",
            phase="complete",
            hand_no=1,
            winner="banker",
        )
        observer.request(f"{BASE}/round", over.model_dump(mode="json"))
        second.join(10)
        assert not second.is_alive()
        opened = [p["round_id"] for p in observer.payloads("request/betting_open")]
        assert opened == ["R1", "R2"]
        assert all("transaction" in p for p in observer.payloads("request/betting_open"))
    finally:
        gs.stop()
        observer.close()


def test_without_a_broker_start_fails_clearly():
    gs = GameServer("127.0.0.1", 1, "T1")
    with pytest.raises(ConnectionError, match="no MQTT broker"):
        gs.start(timeout=1.0)


@pytest.mark.timeout(120)
def test_simulated_table_drives_the_daemon_over_mqtt(tmp_path, mosquitto):
    """Dealer + Bee-Tek shoe on a pty + game-server stand-in -> the real daemon -> MQTT."""
    sc = parse("seed 5\nrounds 3\nround extra-card\nround early-card\nround unreadable\nrounds 2")
    dealer = sc.dealer(device_reports_cut=False, pace=0)
    with (
        closing(make_device("beetek", random.Random(5), link=tmp_path / "shoe")) as device,
        live_table(
            tmp_path,
            mosquitto,
            "beetek",
            channel=device.channel,
            in_process=True,
            rules=sc.rules_for(device.reports_cut).model_dump(),
        ) as table,
    ):
        daemon, observer = table.daemon, table.server
        assert daemon is not None
        cards = 0
        expected_alerts: list[str] = []
        winners: list[str] = []

        def after(step):
            # Let the daemon publish each card before the next command overtakes it.
            nonlocal cards
            expected_alerts.extend(step.expect.alerts)
            if step.expect.round_end == "complete":
                winners.append(step.expect.winner)
            if isinstance(step.action, Draw | Unreadable):
                cards += 1
                observer.wait_for(lambda ms: len([m for m in ms if m.topic == f"{BASE}/card"]) >= cards)

        gs = GameServer(mosquitto.host, mosquitto.port, "T1", betting_time=0.1, round_wait=10)
        try:
            wait_until(lambda: daemon.reader.link_up, 10, "link up")
            observer.wait_for(
                lambda ms: any(m.topic == f"{BASE}/status" and b"online" in m.payload for m in ms)
            )
            gs.start()
            Feeder(device, on_command=gs.perform, after=after).run(sc.steps(dealer))
            observer.wait_for(
                lambda ms: len([m for m in ms if m.topic == f"{BASE}/alert"]) >= len(expected_alerts)
            )
            assert [a["code"] for a in observer.payloads(f"{BASE}/alert")] == expected_alerts
            assert expected_alerts == ["EXTRA_CARD", "CARD_BEFORE_BETS_CLOSED", "UNREADABLE_CARD"]

            def completed():
                return [r["winner"] for r in observer.payloads(f"{BASE}/round") if r["phase"] == "complete"]

            observer.wait_for(lambda ms: len(completed()) >= len(winners))
            assert completed() == winners
            assert all(r["status"] == "ok" for r in observer.payloads("/response/betting_open"))
        finally:
            gs.stop()
