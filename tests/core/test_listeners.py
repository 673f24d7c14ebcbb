"""The daemon's listeners: one protocol, told in the order the table judged, and no import circle."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from scannerd.contract.events import Event
from scannerd.contract.payloads import DevicePayload
from scannerd.core.inputs import CardDrawn, LinkChanged, ValidatorInput
from scannerd.core.listeners import TableListener
from tests.support.broker import Broker, wait_until
from tests.support.process import live_table

REPO = Path(__file__).resolve().parents[2]


def test_a_listener_overrides_only_what_it_wants() -> None:
    class Quiet(TableListener):
        pass

    quiet = Quiet()
    quiet.on_input(LinkChanged(1.0, True))
    quiet.on_rx(1.0, b"x")
    quiet.on_events([])
    quiet.on_device(DevicePayload(driver="beetek", channel=None))


class Heard(TableListener):
    def __init__(self) -> None:
        self.heard: list[str] = []

    def on_input(self, inp: ValidatorInput) -> None:
        self.heard.append(f"input {type(inp).__name__}")

    def on_rx(self, ts: float, data: bytes) -> None:
        self.heard.append(f"rx {data!r}")

    def on_events(self, events: Sequence[Event]) -> None:
        self.heard.append(f"events {[e.kind for e in events]}")

    def on_device(self, payload: DevicePayload) -> None:
        self.heard.append(f"device {payload.link}")


def test_a_listener_hears_a_card_judged_stored_then_its_bytes(tmp_path: Path, mosquitto: Broker) -> None:
    with live_table(
        tmp_path, mosquitto, "beetek", in_process=True, start=False, rules={"burn": "none"}
    ) as table:
        daemon = table.build()
        listener = Heard()
        daemon.listeners.append(listener)
        table.start()
        # The reader's link is up a moment before the listeners are told, on the table's thread.
        wait_until(lambda: len(listener.heard) >= 2, 10, "the shoe opened, as the listener hears it")
        assert listener.heard[:2] == ["device up", f"input {LinkChanged.__name__}"]  # the shoe opened
        for command in ("new_shoe", "betting_open", "betting_close"):
            daemon.request(command, {})
        with daemon._lock:
            listener.heard.clear()
        table.port.write(b" [Game]<Card:9H> \r\n")
        wait_until(lambda: any(h.startswith("rx") for h in listener.heard), 10, "the card's bytes")
        assert listener.heard == [
            f"input {CardDrawn.__name__}",
            "events ['card']",
            "rx b' [Game]<Card:9H> \\r\\n'",
        ]
