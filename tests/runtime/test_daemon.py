"""The daemon end to end: a beetek shoe on a real pty, the real driver, validator, outbox, Mosquitto."""

from __future__ import annotations

import json
import signal
import sqlite3
import threading
import time

from drivers.events import DeviceCard
from scannerd.core.listeners import TableListener
from scannerd.store.opening import SEQ_SKIP_AFTER_POWER_LOSS
from tests.support.broker import GameServer, assert_complete_in_order, event_seqs, wait_until
from tests.support.frames import beetek
from tests.support.process import live_table

SERVER_ROUNDS = {"burn": "none", "round_control": "server"}
"""The game server opens and closes betting."""


def wait_online(server: GameServer) -> None:
    """The daemon subscribes to requests before it says online, so requests sent after this arrive."""
    server.wait_for(lambda ms: any(m.topic.endswith("/status") and b"online" in m.payload for m in ms))


def test_cards_and_commands_flow_to_the_game_server_in_order(tmp_path, mosquitto):
    with live_table(tmp_path, mosquitto, "beetek", in_process=True, rules=SERVER_ROUNDS) as table:
        daemon, server = table.daemon, table.server
        assert daemon is not None
        wait_until(lambda: daemon.reader.link_up, 10, "link up")
        wait_online(server)
        server.request("casino/tables/T1/request/betting_open", {"round_id": "R1", "transaction": 7})
        server.wait_for(lambda ms: any(m.topic.endswith("response/betting_open") for m in ms))
        server.request("casino/tables/T1/request/betting_close", {})
        server.wait_for(lambda ms: any(m.topic.endswith("response/betting_close") for m in ms))
        # A natural, split across writes at an awkward place.
        data = beetek("9H", "2S", "9C", "3D")
        table.port.write(data[:13])
        table.port.write(data[13:])
        server.wait_for(lambda ms: any(b'"complete"' in m.payload for m in ms if m.topic.endswith("/round")))
        cards = server.payloads("/card")
        assert [c["position"] for c in cards] == ["player1", "banker1", "player2", "banker2"]
        result = server.payloads("/round")[-1]
        assert (result["round_id"], result["winner"], result["natural"]) == ("R1", "player", True)
        response = server.payloads("response/betting_open")[0]
        assert (response["status"], response["transaction"]) == ("ok", 7)
        assert server.payloads("/status")[-1]["state"] == "online"
        assert_complete_in_order(event_seqs(server.received), max(event_seqs(server.received)))
    assert server.payloads("/status")[-1]["state"] == "offline"


def test_state_survives_a_restart(tmp_path, mosquitto):
    """The shoe, the hand count and seq carry on; the round left open is void, as nobody read meanwhile."""
    with live_table(tmp_path, mosquitto, "beetek", in_process=True, rules=SERVER_ROUNDS) as table:
        daemon, server = table.daemon, table.server
        assert daemon is not None
        wait_until(lambda: daemon.reader.link_up, 10, "link up")
        daemon.request("new_shoe", {"shoe_id": "S1"})
        daemon.request("betting_open", {"round_id": "R1"})
        daemon.request("betting_close", {})
        table.port.write(beetek("9H", "2S"))
        wait_until(lambda: daemon.validator.state()["round"]["player"]["cards"] == ["9H"], 10, "cards")
        next_seq = daemon.validator.next_seq
        table.kill(signal.SIGTERM)

        again = table.build()
        assert again.validator.state()["round"]["round_id"] == "R1"
        assert again.validator.next_seq == next_seq
        table.start()
        wait_until(lambda: again.reader.link_up, 10, "link up")
        server.wait_for(lambda ms: any(b'"void"' in m.payload for m in ms if m.topic.endswith("/round")))
        void = server.payloads("/round")[-1]
        assert (void["round_id"], void["reason"], void["seq"]) == ("R1", "DAEMON_RESTARTED", next_seq + 1)
        again.request("betting_open", {"round_id": "R2"})
        again.request("betting_close", {})
        table.port.write(beetek("9H", "2S", "9C", "3D"))
        server.wait_for(lambda ms: any(b'"complete"' in m.payload for m in ms if m.topic.endswith("/round")))
        done = server.payloads("/round")[-1]
        assert (done["round_id"], done["hand_no"], done["shoe_id"]) == ("R2", 2, "S1")


def test_the_cards_of_one_read_are_stored_together(tmp_path, mosquitto):
    """A burst costs one commit and one fsync, not one per card."""
    with live_table(tmp_path, mosquitto, "beetek", in_process=True, start=False) as table:
        daemon = table.build()
        writes: list[int] = []
        write = daemon.outbox.write

        def counting_write(messages, state=None):
            messages = list(messages)
            writes.append(sum(1 for m in messages if m.topic.endswith("/card")))
            return write(messages, state)

        daemon.outbox.write = counting_write  # type: ignore[method-assign]
        table.start()
        wait_until(lambda: daemon.reader.link_up, 10, "link up")
        writes.clear()
        table.port.write(beetek("9H", "2S", "9C", "3D"))  # one write to the pty, so one read
        wait_until(lambda: sum(writes) == 4, 10, "four cards stored")
        assert writes == [4]


def test_after_a_power_cut_seq_skips_what_may_have_been_published(tmp_path, mosquitto):
    """Events are sent before the fsync; a power cut may lose the last ones, and their seqs stay used."""
    with live_table(
        tmp_path, mosquitto, "beetek", in_process=True, start=False, rules=SERVER_ROUNDS
    ) as table:
        daemon = table.build()
        daemon.request("betting_open", {"round_id": "R1"})
        daemon.request("betting_close", {})  # cards are due: the power cut comes mid-deal
        next_seq = daemon.validator.next_seq
        table.kill(signal.SIGTERM)
        assert table.build().validator.next_seq == next_seq  # a clean stop, then a start: no gap
        table.kill(signal.SIGTERM)
        # As the machine dying leaves it: the outbox still marked open, by an earlier boot.
        db = sqlite3.connect(tmp_path / "outbox.sqlite3")
        db.execute("UPDATE meta SET value = '1' WHERE key = 'open'")
        db.execute("UPDATE meta SET value = 'an-earlier-boot' WHERE key = 'boot_id'")
        db.commit()
        db.close()
        again = table.build()
        assert again.validator.next_seq == next_seq + SEQ_SKIP_AFTER_POWER_LOSS
        again.start(device_wait_s=0)
        state = again.validator.state()  # the round that was being dealt is void, the dealer told why
        assert (state["round"]["round_id"], state["round"]["phase"]) == ("R1", "void")
        assert "DAEMON_RESTARTED" in [a["code"] for a in state["alerts"]]


def test_a_bad_request_gets_an_error_and_the_table_keeps_working(tmp_path, mosquitto):
    with live_table(tmp_path, mosquitto, "beetek", in_process=True, rules=SERVER_ROUNDS) as table:
        server = table.server
        wait_online(server)
        server.request("casino/tables/T1/request/betting_close", b"{not json")
        server.request("casino/tables/T1/request/betting_close", {"transaction": "t2"})
        server.request("casino/tables/T1/request/get_state", {"transaction": "t3"})
        server.wait_for(lambda ms: len([m for m in ms if "/response/" in m.topic]) >= 3)
        first, second, third = [json.loads(m.payload) for m in server.messages() if "/response/" in m.topic]
        assert first["status"] == "error" and "JSON" in first["error"]
        assert second["status"] == "error" and "not open" in second["error"]
        assert third["status"] == "ok" and third["data"]["table_id"] == "T1"


def test_a_shoe_alarm_reaches_the_game_server_as_an_alert(tmp_path, mosquitto):
    with live_table(tmp_path, mosquitto, "beetek", in_process=True, rules=SERVER_ROUNDS) as table:
        wait_until(lambda: table.daemon is not None and table.daemon.reader.link_up, 10, "link up")
        table.port.write(b" [GameAlarm]<Alarm:E3 Card Not Read> \r\n")
        table.server.wait_for(lambda ms: any(m.topic.endswith("/alert") for m in ms))
        (alert,) = table.server.payloads("/alert")
        assert (alert["code"], alert["severity"]) == ("DEVICE_FAULT", "warning")
        assert "E3" in alert["message"]


def test_a_framed_shoe_that_falls_silent_mid_round_counts_as_disconnected(tmp_path, mosquitto):
    """A cable pulled at the shoe end of an adapter: no read fails, only the heartbeats stop."""
    beating = threading.Event()
    beating.set()
    with live_table(
        tmp_path, mosquitto, in_process=True, rules=SERVER_ROUNDS, device={"stale_after_s": 1.5}
    ) as table:
        daemon, shoe = table.daemon, table.shoe
        assert daemon is not None and shoe is not None

        def beat() -> None:
            while beating.is_set():
                shoe.heartbeat()
                time.sleep(0.2)

        heart = threading.Thread(target=beat, daemon=True)
        heart.start()
        wait_until(lambda: daemon.reader.link_up, 10, "link up")
        daemon.request("betting_open", {"round_id": "R1"})
        daemon.request("betting_close", {})
        shoe.send(DeviceCard("9H"))
        wait_until(lambda: daemon.validator.state()["round"]["player"]["cards"] == ["9H"], 10, "a card")
        assert daemon.validator.state()["round"]["phase"] == "dealing"
        beating.clear()  # silence: no heartbeat, no card
        heart.join()
        wait_until(lambda: daemon.validator.state()["round"]["phase"] == "void", 10, "the round void")
        assert daemon.table.device_view.payload.link == "down"
        assert "DEVICE_DISCONNECTED" in [a["code"] for a in daemon.validator.state()["alerts"]]
        shoe.heartbeat()
        wait_until(lambda: daemon.validator.link_up, 10, "the shoe heard again")
        assert daemon.table.device_view.payload.link == "up"


def test_a_quiet_shoe_without_heartbeats_is_not_judged(tmp_path, mosquitto):
    with live_table(
        tmp_path, mosquitto, "beetek", in_process=True, rules=SERVER_ROUNDS, device={"stale_after_s": 0.5}
    ) as table:
        daemon = table.daemon
        assert daemon is not None
        wait_until(lambda: daemon.reader.link_up, 10, "link up")
        time.sleep(2.5)  # several ticks past stale_after_s: nothing is to happen, so nothing to wait for
        assert daemon.validator.link_up and daemon.validator.state()["alerts"] == []


def test_a_card_is_written_handed_over_synced_acknowledged_then_shown_in_that_order(tmp_path, mosquitto):
    """The durability order of ``Daemon._store``, watched on a framed shoe's card as it happens."""
    with live_table(tmp_path, mosquitto, in_process=True, start=False, rules=SERVER_ROUNDS) as table:
        daemon, shoe = table.build(), table.shoe
        assert shoe is not None
        steps: list[str] = []

        def watch(owner: object, name: str, step: str) -> None:
            real = getattr(owner, name)

            def watched(*args: object) -> object:
                steps.append(step)
                return real(*args)

            setattr(owner, name, watched)

        watch(daemon.outbox, "write", "write")
        watch(daemon.publisher, "send", "send")
        watch(daemon.outbox, "sync", "sync")
        watch(daemon.driver, "acknowledge", "acknowledge")

        class Shown(TableListener):
            def on_events(self, events: object) -> None:
                steps.append("listeners")

        daemon.listeners.append(Shown())
        table.start()
        wait_until(lambda: daemon.reader.link_up, 10, "link up")
        daemon.request("betting_open", {"round_id": "R1"})
        daemon.request("betting_close", {})
        with daemon._lock:  # no tick or request stores in between
            steps.clear()
        shoe.send(DeviceCard("9H"))
        wait_until(lambda: "listeners" in steps, 10, "the card stored")
        assert steps[:5] == ["write", "send", "sync", "acknowledge", "listeners"]
        assert shoe.wait_idle(10)  # and the shoe heard the ack


def test_a_dealer_button_pressed_once_the_recording_has_ended_is_not_run(tmp_path, mosquitto):
    """At stop the last file is sealed before the broker is let go: a request judged after that
    would be published but missing from the recording, and its replay would differ."""
    record = {"dir": str(tmp_path / "rec")}
    with live_table(
        tmp_path, mosquitto, "beetek", in_process=True, rules=SERVER_ROUNDS, record=record
    ) as table:
        daemon = table.daemon
        assert daemon is not None
        wait_until(lambda: daemon.reader.link_up, 10, "link up")
        table.kill(signal.SIGTERM)
        next_seq = daemon.validator.next_seq
        response = daemon.request("betting_open", {"round_id": "R9"})
        assert (response.status, response.error) == ("error", "the table is stopping: not run")
        assert daemon.validator.next_seq == next_seq and daemon.validator.round is None
