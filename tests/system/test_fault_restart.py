"""Fault: ``scannerd run`` is stopped in the middle of a round and cards are dealt while it is down.

A real process on a real pty, stopped the way systemd stops it (SIGTERM, as
``systemctl restart`` and the daemon's own exit on a dead component do) or
killed outright. Opening the port again discards what waited in the tty, so
a Bee-Tek shoe's card dealt meanwhile is gone for good, and the round it
belonged to can no longer be judged: the start that finds it open voids it,
with its own reason and a misdeal alert. A framed shoe repeats what was not
acknowledged, so its round carries on exactly.
"""

from __future__ import annotations

import signal
import time

import pytest

from drivers.events import DeviceCard
from tests.support.broker import Broker, GameServer
from tests.support.fault import deduplicated
from tests.support.frames import beetek
from tests.support.process import live_table, shoe_opened, wait_shoe_open

BASE = "casino/tables/T1"


def kept(server: GameServer, kind: str) -> list[dict]:
    """What a game server keeps of one kind of event: a kill may leave some to be sent again."""
    events = deduplicated(
        [m.payload for m in server.messages() if m.topic.endswith(("/card", "/round", "/alert", "/shoe"))]
    )
    return [e for e in events if e["kind"] == kind]


def round_ends(server: GameServer) -> list[dict]:
    return [r for r in kept(server, "round") if r["phase"] in ("complete", "void")]


@pytest.mark.timeout(120)
@pytest.mark.parametrize("stop", [signal.SIGTERM, signal.SIGKILL], ids=["sigterm", "sigkill"])
def test_a_beetek_round_open_across_a_restart_is_void_not_misjudged(
    tmp_path, mosquitto: Broker, stop
) -> None:
    with live_table(tmp_path, mosquitto, "beetek") as table:
        server, port = table.server, table.port
        wait_shoe_open(server)
        for card in ("9H", "2S"):
            port.write(beetek(card, crlf=False))
        server.wait_for(lambda got: len([m for m in got if m.topic.endswith("/card")]) == 2)
        table.kill(stop)
        # Dealt while nobody reads: it waits in the tty, which the next open discards.
        port.write(beetek("9C", crlf=False))
        time.sleep(0.2)
        opened = shoe_opened(server.messages())
        table.start()
        server.wait_for(lambda got: any(m.topic.endswith("/round") and b'"void"' in m.payload for m in got))
        wait_shoe_open(server, times=opened + 1)
        # The dealer, unaware, deals the void round on: its last card must not open a new round.
        port.write(beetek("3D", crlf=False))
        server.wait_for(lambda _: len(kept(server, "card")) == 3)
        # The dealer clears the layout and acknowledges on the screen; then the next round.
        (restart,) = [a for a in kept(server, "alert") if a["code"] == "DAEMON_RESTARTED"]
        server.request(f"{BASE}/request/ack_alert", {"alert_id": restart["alert_id"]})
        server.wait_for(lambda _: any(a.get("acknowledged") for a in kept(server, "alert")))
        for card in ("8D", "3C", "KH", "5H"):
            port.write(beetek(card, crlf=False))
        server.wait_for(lambda got: len(round_ends(server)) == 2)

    first, second = round_ends(server)
    assert (first["phase"], first["reason"]) == ("void", "DAEMON_RESTARTED"), first
    assert first["player"]["cards"] == ["9H"] and first["banker"]["cards"] == ["2S"]
    alerts = [a for a in kept(server, "alert") if a["code"] == "DAEMON_RESTARTED" and not a["acknowledged"]]
    assert len(alerts) == 1 and alerts[0]["severity"] == "misdeal"
    assert alerts[0]["round_id"] == first["round_id"]
    # The round after it is judged from its own first card: two naturals, 8 each.
    assert second["phase"] == "complete"
    assert (second["player"]["cards"], second["banker"]["cards"]) == (["8D", "KH"], ["3C", "5H"])
    cards = kept(server, "card")
    assert [c["card"] for c in cards] == ["9H", "2S", "3D", "8D", "3C", "KH", "5H"]
    assert (cards[2]["position"], cards[2]["round_id"]) == ("discard", None)  # set aside, in no round


@pytest.mark.timeout(120)
def test_a_framed_round_carries_on_across_a_restart(tmp_path, mosquitto: Broker) -> None:
    with live_table(tmp_path, mosquitto) as table:
        server, shoe = table.server, table.shoe
        assert shoe is not None
        server.wait_online(BASE)
        for card in ("9H", "2S"):
            shoe.send(DeviceCard(card))
        server.wait_for(lambda got: len([m for m in got if m.topic.endswith("/card")]) == 2)
        assert shoe.wait_idle(10)
        table.kill(signal.SIGTERM)
        shoe.send(DeviceCard("9C"))  # kept by the shoe until a host acknowledges it
        table.start()
        shoe.send(DeviceCard("3D"))
        server.wait_for(lambda got: len(round_ends(server)) == 1)

    (end,) = round_ends(server)
    assert end["phase"] == "complete", end
    assert (end["player"]["cards"], end["banker"]["cards"]) == (["9H", "9C"], ["2S", "3D"])
    assert not [a for a in kept(server, "alert") if a["code"] == "DAEMON_RESTARTED"]
    assert end["winner"] == "player"
