"""What a driver keeps across restarts, and its decoding without a transport, asked of the driver itself."""

from __future__ import annotations

import signal
from pathlib import Path
from typing import Any

import pytest

from drivers.base import Decoder
from drivers.beetek import BeetekDriver
from drivers.codecs.framed import encode_event
from drivers.events import DeviceCard, DeviceEvent, DeviceHello
from drivers.registry import BUILTIN_DRIVERS, get_driver_class
from scannerd.store.journal import decode
from scannerd.store.outbox import Outbox
from tests.support.broker import Broker, wait_until
from tests.support.frames import beetek
from tests.support.process import live_table

REPO = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("name", list(BUILTIN_DRIVERS))
def test_every_driver_decodes_with_no_transport_and_no_channel(name: str) -> None:
    decoder = get_driver_class(name).detached_decoder()
    assert isinstance(decoder, Decoder)
    assert decoder.start() is not None and decoder.decode(b"") == ([], b"")
    keeps = decoder.saved_state()
    assert (keeps is not None) == get_driver_class(name).repeats_unacknowledged  # only the framed shoes


def test_a_detached_framed_decoder_answers_in_bytes_and_keeps_its_state() -> None:
    decoder = get_driver_class("framed").detached_decoder()
    decoder.restore_state({"boot_id": 4, "acked": 6})
    decoder.resume()  # mid-connection: the hello came before the file began
    card = encode_event(DeviceCard("KH"), 7)
    events, reply = decoder.decode(card)
    assert events == [DeviceCard("KH", ack=7)] and reply == b""
    assert decoder.decode(card) == ([], b"")  # a repeat while it is stored: dropped, nothing said
    assert decoder.acknowledge(7) != b""  # the ack, for a driver to write and a replay to drop
    assert decoder.saved_state() == {"boot_id": 4, "acked": 7}
    hello = decoder.decode(encode_event(DeviceHello("SHOE", "S1", "1", 5), 1))  # the shoe rebooted
    assert hello[0] == [DeviceHello("SHOE", "S1", "1", 5)] and decoder.saved_state() == {
        "boot_id": 5,
        "acked": 1,
    }


class CountingDecoder(Decoder):
    """A Bee-Tek codec that keeps, across restarts, how many cards it has ever read: a plugin's state."""

    def __init__(self, codec: Any) -> None:
        super().__init__(codec)
        self.cards = 0

    def decode(self, data: bytes) -> tuple[list[DeviceEvent], bytes]:
        events, reply = super().decode(data)
        self.cards += sum(isinstance(e, DeviceCard) for e in events)
        return events, reply

    def saved_state(self, ack: int | None = None) -> dict[str, Any]:
        return {"cards": self.cards}

    def restore_state(self, state: dict[str, Any]) -> None:
        self.cards = state["cards"]


class CountingDriver(BeetekDriver):
    name = "counting"

    def make_decoder(self) -> CountingDecoder:
        return CountingDecoder(self.make_codec())


def stored_device(outbox: Outbox) -> Any:
    """The driver's part of the state in the newest store: a journal row's, or the snapshot's."""
    rows = outbox.journal()
    return decode(rows[-1].entry)[1] if rows else (outbox.state() or {}).get("device")


def test_a_plugin_driver_gets_back_after_a_restart_what_it_keeps(
    tmp_path: Path, mosquitto: Broker, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Any driver, not only the framed shoe's, may keep state: the daemon stores and restores it unasked."""
    monkeypatch.setitem(BUILTIN_DRIVERS, "counting", f"{__name__}:CountingDriver")
    with live_table(tmp_path, mosquitto, "counting", in_process=True, rules={"burn": "none"}) as table:
        first = table.daemon
        assert first is not None
        wait_until(lambda: first.reader.link_up, 10, "link up")
        first.request("new_shoe", {})
        first.request("betting_open", {})
        first.request("betting_close", {})
        table.port.write(beetek("9H", "2C"))
        wait_until(lambda: len(first.validator.state()["round"]["player"]["cards"]) == 1, 10, "the cards")
        wait_until(lambda: stored_device(first.outbox) == {"cards": 2}, 10, "the state stored")
        table.kill(signal.SIGTERM)
        again = table.build()
        assert isinstance(again.driver.decoder, CountingDecoder) and again.driver.decoder.cards == 2
