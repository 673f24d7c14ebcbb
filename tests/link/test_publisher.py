"""The publisher against a real Mosquitto: order, completeness, status, device and health topics."""

import json
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from scannerd import __version__
from scannerd.contract.payloads import DevicePayload
from scannerd.link.mqtt_settings import MqttSettings
from scannerd.link.publisher import Publisher, _New
from scannerd.store.outbox import Outbox
from tests.support.broker import (
    Broker,
    GameServer,
    assert_complete_in_order,
    event_seqs,
    sample_events,
    store,
    wait_until,
)

REPO = Path(__file__).resolve().parents[2]
BASE = "casino/tables/T1"


def settings_for(broker: Broker, **kw: object) -> MqttSettings:
    return MqttSettings(host=broker.host, port=broker.port, reconnect_min_s=1, reconnect_max_s=1, **kw)


@pytest.mark.parametrize("protocol", ["3.1.1", "5"])
def test_every_event_arrives_in_order_on_its_topic(
    mosquitto: Broker, make_publisher: Callable[..., Publisher], protocol: str
) -> None:
    gs = GameServer(mosquitto, [f"{BASE}/#"])
    pub = make_publisher(settings_for(mosquitto, protocol=protocol))
    events = sample_events(1, 120)
    for i in range(0, 120, 4):
        store(pub, events[i : i + 4], {"next_seq": i + 5})
    assert pub.flush(30)
    gs.wait_for(lambda got: len(event_seqs(got)) >= 120)

    arrived = [m for m in gs.messages() if m.topic.rsplit("/", 1)[1] in ("card", "round", "alert", "shoe")]
    assert [m.topic for m in arrived] == [f"{BASE}/{e.kind}" for e in events]
    assert [json.loads(m.payload) for m in arrived] == [e.model_dump(mode="json") for e in events]
    assert gs.payloads("/status")[0] == {"state": "online", "version": __version__, "table_id": "T1"}
    assert pub.health()["published"] == 120
    assert pub.outbox.health().pending == 0
    gs.close()

    # A consumer that comes later finds the retained state topics, with the latest shoe.
    late = GameServer(mosquitto, [f"{BASE}/shoe", f"{BASE}/status"])
    late.wait_for(lambda got: len(got) >= 2)
    assert all(m.retain for m in late.messages())
    assert late.payloads("/shoe") == [events[-1].model_dump(mode="json")]
    late.close()


def test_events_stored_while_the_broker_was_never_reached_go_out_once_it_is(
    make_broker: Callable[..., Broker], make_publisher: Callable[..., Publisher]
) -> None:
    broker = make_broker(persistence=True)
    GameServer(broker, [f"{BASE}/#"], client_id="game-server").close()  # its session outlives it
    broker.stop()
    pub = make_publisher(settings_for(broker))
    store(pub, sample_events(1, 30))
    broker.start()
    gs = GameServer(broker, [f"{BASE}/#"], client_id="game-server")
    store(pub, sample_events(31, 10))
    assert pub.flush(30)
    gs.wait_for(lambda got: 40 in event_seqs(got))
    assert_complete_in_order(event_seqs(gs.messages()), 40)
    assert pub.health()["published"] == 40
    gs.close()


def test_broker_down_for_seconds_mid_stream_loses_nothing(
    make_broker: Callable[..., Broker], make_publisher: Callable[..., Publisher]
) -> None:
    broker = make_broker(persistence=True)
    gs = GameServer(broker, [f"{BASE}/#"], client_id="game-server")  # persistent session
    pub = make_publisher(settings_for(broker))
    total = 450
    produced = threading.Event()

    def deal() -> None:
        for first in range(1, total + 1, 3):
            store(pub, sample_events(first, 3), {"next_seq": first + 3})
            time.sleep(0.01)
        produced.set()

    dealer = threading.Thread(target=deal)
    dealer.start()
    gs.wait_for(lambda got: len(event_seqs(got)) >= 60)
    broker.stop()
    time.sleep(3)  # the table keeps dealing while the broker is away
    assert pub.outbox.health().pending > 0
    broker.start()
    dealer.join(60)
    assert produced.is_set()
    assert pub.flush(60)
    gs.wait_for(lambda got: total in event_seqs(got), timeout=60)
    assert_complete_in_order(event_seqs(gs.messages()), total)
    assert pub.health()["reconnects"] >= 1
    gs.close()


def test_a_clean_stop_says_offline(mosquitto: Broker, make_publisher: Callable[..., Publisher]) -> None:
    gs = GameServer(mosquitto, [f"{BASE}/status"])
    pub = make_publisher(settings_for(mosquitto))
    gs.wait_for(lambda got: len(got) >= 1)
    pub.stop()
    gs.wait_for(lambda got: len(got) >= 2)
    assert [p["state"] for p in gs.payloads("/status")] == ["online", "offline"]
    gs.close()


def test_a_retained_status_the_broker_lost_comes_back_within_a_health_interval(
    mosquitto: Broker, make_publisher: Callable[..., Publisher]
) -> None:
    """A cluster can drop a retained message while the table stays connected; clearing it is that loss."""
    pub = make_publisher(settings_for(mosquitto, health_interval_s=0.5))
    pub.set_device(DevicePayload(driver="beetek", channel="/dev/ttyUSB0", link="up"))
    wait_until(lambda: pub.connected, 10, "connected")
    other = GameServer(mosquitto, [f"{BASE}/response/+"])
    for topic in (f"{BASE}/status", f"{BASE}/device"):
        other.request(topic, b"", retain=True)  # an empty retained message removes it
    other.close()
    topics = [f"{BASE}/status", f"{BASE}/device"]
    newcomer = GameServer(mosquitto, topics)
    newcomer.wait_for(lambda got: {m.topic for m in got if m.payload} == set(topics), 5)
    newcomer.close()
    time.sleep(0.2)
    late = GameServer(mosquitto, topics)
    late.wait_for(lambda got: len(got) >= 2, 5)
    assert all(m.retain for m in late.messages())
    assert late.payloads("/status")[0]["state"] == "online"
    assert late.payloads("/device")[0]["link"] == "up"
    late.close()


def test_no_restatement_says_online_after_a_clean_stop(
    mosquitto: Broker, make_publisher: Callable[..., Publisher]
) -> None:
    gs = GameServer(mosquitto, [f"{BASE}/status"])
    pub = make_publisher(settings_for(mosquitto, health_interval_s=0.1))
    gs.wait_for(lambda got: len(got) >= 3)  # said on connecting, then restated
    pub.stop()
    time.sleep(0.5)
    states = [p["state"] for p in gs.payloads("/status")]
    assert states[-1] == "offline" and states.count("offline") == 1, states
    gs.close()


PUBLISHER_PROCESS = """
import sys, time
from scannerd.link.mqtt_settings import MqttSettings
from scannerd.store.outbox import Outbox
from scannerd.link.publisher import Publisher
from tests.support.broker import sample_events, store

outbox, port, count = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
settings = MqttSettings(host="127.0.0.1", port=port, reconnect_min_s=1, reconnect_max_s=1)
pub = Publisher(settings, "T1", Outbox(outbox))
pub.start()
while not pub.connected:
    time.sleep(0.01)
seq = pub.outbox.last_seq
while seq < count:
    store(pub, sample_events(seq + 1, 3), {"next_seq": seq + 4})
    seq += 3
    print("stored", seq, flush=True)
time.sleep(3600)
"""


def run_publisher_process(
    outbox: Path, broker: Broker, count: int, until: int, before_kill: Callable[[], None] = lambda: None
) -> None:
    """Run a publisher in another process and SIGKILL it once it has stored ``until`` events (and
    ``before_kill`` has returned)."""
    args = [sys.executable, "-c", PUBLISHER_PROCESS, str(outbox), str(broker.port), str(count)]
    proc = subprocess.Popen(args, cwd=REPO, stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        for line in proc.stdout:
            if line.startswith("stored ") and int(line.split()[1]) >= until:
                break
        before_kill()
        proc.send_signal(signal.SIGKILL)
    finally:
        proc.kill()
        proc.wait(10)


def test_a_killed_process_leaves_a_last_will(mosquitto: Broker, tmp_path: Path) -> None:
    gs = GameServer(mosquitto, [f"{BASE}/status"])

    def states() -> list[str]:
        return [json.loads(m.payload)["state"] for m in gs.messages()]

    def online() -> None:  # stored is not yet connected: killed before it says so, it leaves only its will
        gs.wait_for(lambda _: states() == ["online"])

    run_publisher_process(tmp_path / "o.sqlite3", mosquitto, count=3, until=3, before_kill=online)
    gs.wait_for(lambda _: states()[-1:] == ["offline"])
    assert [p["state"] for p in gs.payloads("/status")] == ["online", "offline"]
    gs.close()


def test_sigkill_mid_stream_then_a_new_publisher_sends_the_rest(
    mosquitto: Broker, make_publisher: Callable[..., Publisher], tmp_path: Path
) -> None:
    gs = GameServer(mosquitto, [f"{BASE}/#"])
    path = tmp_path / "o.sqlite3"
    run_publisher_process(path, mosquitto, count=100_000, until=600)
    with Outbox(path) as box:
        last = box.state()["next_seq"] - 1
        left = box.health().pending
    assert last >= 600
    pub = make_publisher(settings_for(mosquitto), outbox=path)
    assert pub.flush(60)
    gs.wait_for(lambda got: last in event_seqs(got), timeout=60)
    assert pub.health()["published"] == left
    assert_complete_in_order(event_seqs(gs.messages()), last)
    gs.close()


def test_device_topic_is_retained_and_republished_only_on_change(
    mosquitto: Broker, make_publisher: Callable[..., Publisher]
) -> None:
    gs = GameServer(mosquitto, [f"{BASE}/device"])
    pub = make_publisher(settings_for(mosquitto))
    wait_until(lambda: pub.connected, 10, "connection")
    up = DevicePayload(driver="serial-framed", channel="/dev/ttyUSB0", link="up", firmware="1.2")
    pub.set_device(up)
    pub.set_device(up)
    pub.set_device(up.model_copy(update={"link": "down", "detail": "unplugged"}))
    gs.wait_for(lambda got: len(got) >= 2)
    assert [p["link"] for p in gs.payloads()] == ["up", "down"]
    gs.close()


def test_a_device_change_while_connecting_never_leaves_an_older_payload_retained(
    mosquitto: Broker, tmp_path: Path
) -> None:
    """The connection restates the device payload it had; a change made meanwhile must come after it."""
    gs = GameServer(mosquitto, [f"{BASE}/device"])
    up = DevicePayload(driver="serial-framed", channel="/dev/ttyUSB0", link="up")
    down = up.model_copy(update={"link": "down", "detail": "unplugged"})
    pub = Publisher(settings_for(mosquitto), "T1", Outbox(tmp_path / "o.sqlite3"))
    pub.set_device(up)  # known before the broker is: restated on connect
    restating, go_on = threading.Event(), threading.Event()
    publish_model = pub._publish_model

    def slow_restate(topic: str, *args: object, **kwargs: object) -> object:
        if topic == pub.topics.device and not restating.is_set():
            restating.set()  # the connection has read the payload it restates ...
            go_on.wait(5)  # ... and is held here while the shoe is unplugged
        return publish_model(topic, *args, **kwargs)

    pub._publish_model = slow_restate  # type: ignore[method-assign]
    try:
        pub.start()
        assert restating.wait(10)
        change = threading.Thread(target=pub.set_device, args=(down,))
        change.start()
        change.join(0.5)  # done at once, or waiting for the restatement to finish
        go_on.set()
        change.join(5)
        gs.wait_for(lambda got: any(json.loads(m.payload)["link"] == "down" for m in got))
        time.sleep(0.3)  # a late stale restatement would land now
        assert gs.payloads()[-1]["link"] == "down"
    finally:
        go_on.set()
        pub.stop()
        pub.outbox.close()
        gs.close()


def test_health_is_published_retained_with_counters(
    mosquitto: Broker, make_publisher: Callable[..., Publisher]
) -> None:
    pub = make_publisher(settings_for(mosquitto, health_interval_s=0.2))
    store(pub, sample_events(1, 5))
    assert pub.flush(30)
    gs = GameServer(mosquitto, [f"{BASE}/health"])
    gs.wait_for(lambda got: any(json.loads(m.payload)["published"] == 5 for m in got))
    assert gs.messages()[0].retain
    health = gs.payloads()[-1]
    assert health["connected"] is True
    assert health["outbox_level"] == "ok"
    assert health["pending"] == 0
    gs.close()


def test_a_submitted_event_goes_out_without_waiting_for_the_sending_thread(
    mosquitto: Broker, make_publisher: Callable[..., Publisher]
) -> None:
    """On a live table a card is sent by the thread that stored it, not read back later by another."""
    gs = GameServer(mosquitto, [f"{BASE}/#"])
    pub = make_publisher(settings_for(mosquitto))
    store(pub, sample_events(1, 1))  # the first rows after a connection go through the pump
    gs.wait_for(lambda got: len(event_seqs(got)) == 1)
    with pub._idle:  # the pump cannot finish a round of its loop while this is held
        pub._inbox.put(_New())  # ... and it is woken, so it is stuck there, not waiting for work
        time.sleep(0.2)
        store(pub, sample_events(2, 3))
        gs.wait_for(lambda got: len(event_seqs(got)) == 4, timeout=10)
    assert event_seqs(gs.messages()) == [1, 2, 3, 4]
    gs.close()
