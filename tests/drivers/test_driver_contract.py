"""What every registered driver promises, checked for each one the registry lists.

Like python-can's one test class per log format: adding a driver adds its
row to every check here, and a driver registered without what the checks
need (a simulated device, a golden session) fails with a message naming
what is missing. The checks:

- its facts are declared (docs/devices.md's table is written from them);
- its codec, fuzzed: no bytes make it raise, and no good frame is lost
  between the line noise its device's wire can carry, wherever reads cut
  the stream; the cut card comes through exactly when the driver says its
  device reports it;
- its simulated device, for real: a pty or the virtual USB bus, the driver
  opened on it, cards dealt and read back, the alert outputs as declared;
- a golden session in tests/sessions/ replays through it.

The full fuzz count: ``pytest tests/drivers/test_driver_contract.py --hypothesis-profile=fuzz``.
"""

from __future__ import annotations

import functools
import itertools
import random
import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from drivers.base import TRANSPORTS, Codec, Driver, DriverInitError
from drivers.cards import ALL_CARDS
from drivers.events import DeviceCard, DeviceCutCard, DeviceEvent
from drivers.registry import create_driver, driver_names, get_driver_class
from scannerd.recording.format import RecordingReader
from simulators.actions import CutCard, Draw, Unreadable
from simulators.registry import SIMULATED, Simulated, make_device
from simulators.usb_backend import VirtualUsbBus
from simulators.wires import CardAction
from tests import sessions
from tests.support import driver_table
from tests.support.plugins import install_plugin

FUZZ = settings(deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
pytestmark = pytest.mark.timeout(1800)  # the full fuzz count takes minutes; the bound only catches a hang

Token = str | None  # a card (None: unreadable) or "CUT"

actions = st.one_of(
    st.builds(Draw, st.sampled_from(ALL_CARDS), st.booleans()),
    st.builds(Unreadable, st.sampled_from(ALL_CARDS)),
    st.just(CutCard()),
)
cuts = st.lists(st.integers(0, 1 << 16), max_size=40)


@functools.cache
def session_drivers() -> dict[str, list[str]]:
    """Driver name -> the golden sessions recorded with it."""
    found: dict[str, list[str]] = {}
    for path in sessions.recordings():
        with RecordingReader(path) as reader:
            found.setdefault(reader.header.driver, []).append(path.name)
    return found


def missing(name: str) -> list[str]:
    """What driver ``name`` lacks for these checks; empty when it has everything."""
    try:
        get_driver_class(name)
    except DriverInitError as exc:
        return [str(exc)]
    gaps = []
    if name not in SIMULATED:
        gaps.append(f"a simulated device (an entry {name!r} in SIMULATED, simulators/registry.py)")
    if name not in session_drivers():
        gaps.append(
            f"a golden session (a recording with driver {name!r} in tests/sessions/: a case in "
            "tests/sessions/cases.py, then python -m tests.sessions build and rebuild)"
        )
    return gaps


def _simulated(name: str) -> Simulated:
    if name not in SIMULATED:
        pytest.fail(
            f"driver {name!r} has no simulated device: add an entry to SIMULATED in simulators/registry.py"
        )
    return SIMULATED[name]


def offline(cls: type[Driver]) -> Driver:
    """The driver, never opened: its codec as it decodes live."""
    usb_id = cls.usb_ids[0] if cls.usb_ids else "0000:0000"
    return cls(f"usb:{usb_id}" if cls.transport == "usb" else "loop://")


def tokens(events: list[DeviceEvent]) -> list[Token]:
    return [
        e.card if isinstance(e, DeviceCard) else "CUT"
        for e in events
        if isinstance(e, DeviceCard | DeviceCutCard)
    ]


def expected(cls: type[Driver], sent: list[CardAction]) -> list[Token]:
    """What a driver must deliver for the actions: every card, and the cut card if its device reports it."""
    out: list[Token] = []
    for action in sent:
        if isinstance(action, CutCard):
            out += ["CUT"] if cls.reports_cut_card else []
        else:
            out.append(action.card if isinstance(action, Draw) else None)
    return out


def fed_in_pieces(codec: Codec, data: bytes, at: list[int]) -> list[DeviceEvent]:
    """Feed ``data`` cut at the given offsets (modulo its length), as reads would deliver it."""
    points = sorted({a % (len(data) + 1) for a in at} | {0, len(data)})
    return [event for start, end in itertools.pairwise(points) for event in codec.feed(data[start:end])]


@pytest.mark.parametrize("name", driver_names())
class TestDriverContract:
    def test_it_has_what_the_checks_need(self, name: str) -> None:
        gaps = missing(name)
        assert not gaps, f"driver {name!r} is registered without " + "; ".join(gaps)

    def test_it_declares_its_facts(self, name: str) -> None:
        cls = get_driver_class(name)
        assert cls.name == name, f"{cls.__name__}.name is {cls.name!r}, registered as {name!r}"
        assert cls.family, f"{cls.__name__} says nothing of its devices: set family"
        assert cls.transport in TRANSPORTS
        facts = (cls.reports_cut_card, cls.repeats_unacknowledged, cls.alert_outputs)
        assert all(isinstance(fact, bool) for fact in facts)

    @FUZZ
    @given(data=st.binary(max_size=4096), at=cuts)
    def test_no_bytes_make_its_codec_raise(self, name: str, data: bytes, at: list[int]) -> None:
        for event in fed_in_pieces(offline(get_driver_class(name)).codec, data, at):
            assert isinstance(event, DeviceEvent)

    @FUZZ
    @given(sent=st.lists(actions, max_size=30), seed=st.integers(0, 2**32), at=cuts)
    def test_its_codec_loses_no_good_frame_amid_line_noise(
        self, name: str, sent: list[CardAction], seed: int, at: list[int]
    ) -> None:
        cls, sim = get_driver_class(name), _simulated(name)
        wire, noise = sim.wire(random.Random(seed)), random.Random(seed + 1)
        data = wire.connect() + b"".join(sim.junk(noise) + wire.emit(action) for action in sent)
        events = fed_in_pieces(offline(cls).codec, data + sim.junk(noise), at)
        assert tokens(events) == expected(cls, sent)
        # A device may not mark burn cards, but it never marks one the dealer did not burn.
        cards = [e for e in events if isinstance(e, DeviceCard)]
        dealt = [a for a in sent if not isinstance(a, CutCard)]
        assert all(not e.burn or (isinstance(a, Draw) and a.burn) for e, a in zip(cards, dealt, strict=True))

    def test_its_simulated_device_is_read_through_the_real_driver(self, name: str, tmp_path: Path) -> None:
        cls = get_driver_class(name)
        device = make_device(name, random.Random(1), link=tmp_path / "shoe", bus=VirtualUsbBus())
        sent: list[CardAction] = [Draw("AS"), Draw("TD", burn=True), Unreadable("2C"), CutCard(), Draw("9H")]
        want = expected(cls, sent)
        try:
            with create_driver(name, device.channel, **device.driver_options) as driver:
                for action in sent:
                    device.emit(action)
                got = _read(driver, len(want))
                assert tokens(got) == want
                assert driver.set_alert(True, False) is cls.alert_outputs
        finally:
            device.close()


def _read(driver: Driver, count: int, timeout: float = 10.0) -> list[DeviceEvent]:
    """Read, decode and acknowledge as the daemon does, until ``count`` cards (and cut cards) came."""
    events: list[DeviceEvent] = []
    deadline = time.monotonic() + timeout
    while len(tokens(events)) < count and time.monotonic() < deadline:
        for event in driver.decode(driver.read(0.05)):
            events.append(event)
            if getattr(event, "ack", None):
                driver.acknowledge(event.ack)  # type: ignore[attr-defined]
    return events


def test_the_capability_table_in_docs_agrees_with_the_driver_classes() -> None:
    page = driver_table.on_page(driver_table.PAGE.read_text())
    assert page == driver_table.render(), (
        "docs/devices.md's driver table is stale: python -m tests.support.driver_table"
    )


def test_a_driver_registered_without_a_simulated_device_or_a_session_is_told_what_is_missing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    install_plugin(
        tmp_path,
        monkeypatch,
        "from drivers.linecode import LinecodeDriver\n"
        "class AcmeDriver(LinecodeDriver):\n"
        "    name = 'acme'\n"
        "    family = 'Acme card shoe'\n",
        {"acme": "AcmeDriver"},
    )
    assert "acme" in driver_names()
    gaps = missing("acme")
    assert len(gaps) == 2
    assert gaps[0].startswith("a simulated device (an entry 'acme' in SIMULATED, simulators/registry.py)")
    assert gaps[1].startswith("a golden session (a recording with driver 'acme' in tests/sessions/")
    assert missing("beetek") == []
