"""Fault: the game server (or anyone allowed to send requests) floods the table while it deals.

A real ``scannerd run`` process reads a Bee-Tek shoe on a real pty and talks to a real Mosquitto.
While 10,000 requests arrive as fast as a client can send them, cards are dealt one by one: each
must reach the game server as it would without the flood, not behind the answers to the flood,
and the requests the table cannot take must be answered ``busy`` rather than pile up.
"""

from __future__ import annotations

import json
import queue
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

import paho.mqtt.client as mqtt

from simulators.serial_pty import PtyPort
from tests.support.broker import Broker
from tests.support.frames import beetek
from tests.support.process import live_table, wait_shoe_open

BASE = "casino/tables/T1"
FLOOD = 10_000
DECK = ("KD", "5S", "AH", "3C", "7D", "8S", "2H", "4C", "6D", "TS")
CARD_DELAY_BOUND_S = 1.0
"""Far above a card's latency on a quiet table (milliseconds) and far below a card held behind
thousands of answers (seconds, before the request path had its own thread and bounds)."""


_CLOCK = """
import sys, time
import paho.mqtt.client as mqtt

host, port, topic = sys.argv[1], int(sys.argv[2]), sys.argv[3]
client = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2, client_id="card-clock")
client.on_connect = lambda c, userdata, flags, reason, props: c.subscribe(topic, qos=1)
client.on_subscribe = lambda c, userdata, mid, reasons, props: print("ready", flush=True)
client.on_message = lambda c, userdata, message: print(time.monotonic(), flush=True)
client.connect(host, port)
client.loop_forever()
"""


class CardClock:
    """A consumer of the card topic alone, in a process of its own, as a game server's would be.

    So nothing queued for it at the broker stands ahead of a card, and the flood's ten thousand
    answers, taken by this process's other consumer, hold no card's arrival back behind the GIL:
    it notes each card's arrival on the machine's monotonic clock, which this process shares.
    """

    def __init__(self, broker: Broker) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-c", _CLOCK, broker.host, str(broker.port), f"{BASE}/card"],
            stdout=subprocess.PIPE,
            text=True,
        )
        self.arrivals: queue.Queue[str] = queue.Queue()
        threading.Thread(target=self._read, name="card-clock", daemon=True).start()
        assert self.arrivals.get(timeout=30) == "ready", "the card clock's subscription"

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.arrivals.put(line.strip())

    def deal(self, shoe: PtyPort, card: str) -> float:
        """Deal ``card``; seconds from the shoe sending it to its event reaching the consumer."""
        sent = time.monotonic()
        shoe.write(beetek(card))
        return float(self.arrivals.get(timeout=30)) - sent

    def close(self) -> None:
        self.proc.kill()
        self.proc.wait(10)


def flood(broker: Broker, count: int) -> threading.Thread:
    """A client sending ``count`` get_state requests as fast as paho goes.

    At QoS 0, as a careless client sends them: nothing then paces the flood, neither the broker's
    in-flight limit towards the table nor the table's acknowledgements.
    """
    client = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2, client_id="flood")
    client.connect(broker.host, broker.port)
    client.loop_start()

    def send() -> None:
        try:
            infos = [
                client.publish(f"{BASE}/request/get_state", json.dumps({"transaction": i}), qos=0)
                for i in range(count)
            ]
            for info in infos:
                info.wait_for_publish(60)
        finally:
            client.disconnect()
            client.loop_stop()

    thread = threading.Thread(target=send, name="flood", daemon=True)
    thread.start()
    return thread


def test_a_request_flood_never_holds_cards_back_and_what_cannot_wait_is_answered_busy(
    tmp_path: Path, make_broker: Callable[..., Broker]
) -> None:
    # The broker must not drop anything queued for a slow consumer: every answer is counted below.
    broker = make_broker(extra="allow_anonymous true\nmax_queued_messages 0\n")
    # The game server takes only answers, status and device, so every answer is counted under the flood;
    # the cards are timed by a consumer of their own.
    answering = [f"{BASE}/response/+", f"{BASE}/status", f"{BASE}/device"]
    cards = CardClock(broker)
    try:
        with live_table(tmp_path, broker, "beetek", topics=answering) as table:
            answers, shoe, log = table.server, table.port, table.log
            wait_shoe_open(answers)
            quiet = [cards.deal(shoe, card) for card in DECK * 8]  # 20 rounds: get_state has results
            sender = flood(broker, FLOOD)
            during = []
            while sender.is_alive() or len(during) < 10:  # a card every 50 ms until the flood is over
                during.append(cards.deal(shoe, DECK[len(during) % len(DECK)]))
                time.sleep(0.05)
            sender.join(120)
            answers.wait_for(lambda got: len([m for m in got if "/response/" in m.topic]) >= FLOOD, 120)
            print(f"card delays: quiet {quiet}, during the flood {during}")
            assert max(during) < CARD_DELAY_BOUND_S, f"card events waited behind answers: {during}"
            replies = answers.payloads("/response/get_state")
            statuses = [r["status"] for r in replies]
            assert set(statuses) <= {"ok", "busy"}
            assert statuses.count("busy") > 0, "a flood the table cannot keep up with is answered busy"
            assert sorted(r["transaction"] for r in replies) == list(range(FLOOD))  # each once
            table.running()
        lines = log.read_text().splitlines()
        assert "Traceback" not in log.read_text()
        # The overload is said when it starts and when it ends, not once per busy answer.
        assert 1 <= sum("answering busy" in line for line in lines) <= 20
        assert len(lines) < 200
    finally:
        cards.close()
