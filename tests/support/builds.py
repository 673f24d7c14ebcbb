"""What one build of scannerd makes of the same inputs, to hold the compiled build to the pure one.

A process runs one build or the other (``scannerd.runtime.build``), so the
comparison takes two: ``tests/runtime/test_compiled_build.py`` judges the
cases in its own process, on the compiled build, and in a pure copy of the
sources, where this module runs as

    python -m tests.support.builds CASES OUT

reading the pickled cases and writing which build ran and what each case made.
The cases are the golden sessions and the inputs of the fuzz and property tests,
drawn from those tests' own strategies (``cases``); what a case makes is every
byte the table would publish (``made``).
"""

from __future__ import annotations

import json
import pickle
import random
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from drivers.codecs.beetek import BeetekCodec
from drivers.codecs.framed import FramedCodec, encode_event
from drivers.codecs.hid import HidScannerCodec
from drivers.codecs.linecode import LinecodeCodec
from drivers.events import DeviceCard
from scannerd.contract.topics import encode, encode_data
from scannerd.core.house import HouseRules
from scannerd.core.inputs import CardDrawn
from scannerd.core.validator import CommandRejected, Validator
from scannerd.runtime import build
from simulators.dealer import Dealer
from tests.contract import test_event_data as event_data
from tests.contract import test_fuzz_requests as fuzz_requests
from tests.core import test_validator_properties as properties
from tests.core.test_shuffle_check import feed_validator
from tests.drivers import test_fuzz_codecs as fuzz_codecs
from tests.sessions import recordings, render

T = TypeVar("T")


@dataclass(frozen=True)
class Session:
    """A golden session: everything its replay publishes, events and answers."""

    path: Path


@dataclass(frozen=True)
class Stream:
    """A table's inputs as the property tests draw them: every event, and the state after each input."""

    rules: HouseRules
    start: float
    steps: list[tuple[float, tuple[Any, ...]]]


@dataclass(frozen=True)
class Requests:
    """Cards among requests as the request fuzz test draws them: every answer and every event."""

    rules: HouseRules
    steps: list[tuple[str, Any]]


@dataclass(frozen=True)
class Shoes:
    """Two shoes a dealer deals, the second a repeat of the first: the shuffle check's alerts and figures."""

    seed: int
    error_rate: float


@dataclass(frozen=True)
class Reads:
    """A codec's bytes as the codec fuzz test draws them, cut into reads: what it decodes and counts."""

    codec: str
    data: bytes
    cuts: list[int]


Case = Session | Stream | Requests | Shoes | Reads

CODECS = {
    "beetek": BeetekCodec,
    "linecode": LinecodeCodec,
    "framed": FramedCodec,
    "usb-hid": HidScannerCodec,
}


def drawn(strategy: st.SearchStrategy[T], count: int) -> list[T]:
    """``count`` values of ``strategy`` (fewer if it has no more), the same ones on every run."""
    found: list[T] = []

    @settings(
        max_examples=count,
        derandomize=True,
        database=None,
        deadline=None,
        phases=[Phase.generate],
        suppress_health_check=list(HealthCheck),
    )
    @given(strategy)
    def collect(value: T) -> None:
        found.append(value)

    collect()
    return found


def _joined(frames: st.SearchStrategy[tuple[bytes, tuple[bytes, Any]]]) -> st.SearchStrategy[bytes]:
    """Good scans with junk before each, as the codec fuzz tests put them on the wire."""
    return st.lists(frames).map(lambda got: b"".join(junk + wire for junk, (wire, _) in got))


_framed_wire = st.lists(st.tuples(st.binary(max_size=300), fuzz_codecs.cards, st.booleans())).map(
    lambda got: b"".join(
        junk + encode_event(DeviceCard(card, burn), seq) for seq, (junk, card, burn) in enumerate(got, 1)
    )
)
WIRES: dict[str, st.SearchStrategy[bytes]] = {
    "beetek": _joined(st.tuples(fuzz_codecs.beetek_junk, fuzz_codecs.beetek_scans())),
    "linecode": _joined(st.tuples(fuzz_codecs.line_junk, fuzz_codecs.line_scans())),
    "framed": _framed_wire,
    "usb-hid": _joined(st.tuples(fuzz_codecs.hid_junk, fuzz_codecs.hid_scans())),
}


def cases(examples: int) -> list[Case]:
    """Every golden session, and ``examples`` draws of each kind of generated input."""
    out: list[Case] = [Session(path) for path in recordings()]
    streams = st.builds(Stream, event_data.any_rules, event_data.any_start, event_data.any_stream)
    out += drawn(streams, examples)
    for rules, stream in (
        (properties.wild_rules, properties.wild_stream),
        (properties.ordered_rules, properties.ordered_stream),
    ):
        out += drawn(st.builds(Stream, rules, st.just(1_700_000_000.0), stream), examples)
    tables = st.sampled_from(["server", "auto"]).map(
        lambda control: HouseRules(round_control=control, burn="none", decks=1)
    )
    out += drawn(st.builds(Requests, tables, fuzz_requests.request_steps), examples)
    out += [Shoes(seed, error_rate) for seed in range(3) for error_rate in (0.0, 0.2)]
    anything = st.binary(max_size=4096)  # as the fuzz test feeds every codec
    for codec, wire in WIRES.items():
        out += drawn(st.builds(Reads, st.just(codec), anything | wire, fuzz_codecs.cuts), examples)
    return out


def made(case: Case) -> bytes:
    """Every byte the case makes the table (or the codec) publish, in order, a line each."""
    match case:
        case Session(path):
            return render(path).encode()
        case Stream(rules, start, steps):
            return b"\n".join(_judged(rules, start, steps))
        case Requests(rules, steps):
            return b"\n".join(_answered(rules, steps))
        case Shoes(seed, error_rate):
            rules = HouseRules(suspend_on=())  # the whole of both shoes, however suspect
            dealer = Dealer(rules, random.Random(seed), pace=0, error_rate=error_rate, shuffle="preset")
            events = feed_validator(Validator("T1", rules), dealer.play(shoes=2))
            return b"\n".join(encode_data(event) for event in events)
        case Reads(codec, data, cuts):
            decoder = CODECS[codec]()
            events = fuzz_codecs.fed_in_pieces(decoder.feed, data, cuts)
            return repr((events, decoder.junk_bytes, decoder.bad_frames)).encode()
        case _:
            raise TypeError(f"not a case: {case!r}")


def _judged(rules: HouseRules, start: float, steps: list[tuple[float, tuple[Any, ...]]]) -> list[bytes]:
    v = Validator("T1", rules)
    out: list[bytes] = []
    ts = start
    for step, inp in steps:
        ts += step
        try:
            events = v.handle(event_data.to_input(ts, inp, v))
        except CommandRejected as exc:
            events = exc.events
            out.append(f"refused: {exc}".encode())
        out += [encode_data(event) for event in events]
        out.append(json.dumps(v.state()).encode())  # what get_state answers after it
    return out


def _answered(rules: HouseRules, steps: list[tuple[str, Any]]) -> list[bytes]:
    v = Validator("T1", rules)
    out: list[bytes] = []
    ts = 1_700_000_000.0
    for kind, arg in steps:
        ts += 1
        if kind == "card":
            out += [encode_data(event) for event in v.handle(CardDrawn(ts, arg))]
            continue
        response, events = fuzz_requests.answer(kind, arg, v, ts)
        out += [encode_data(event) for event in events]
        out.append(encode(response))
    return out


def main(argv: list[str]) -> int:
    given_cases, out = Path(argv[0]), Path(argv[1])
    judged = pickle.loads(given_cases.read_bytes())
    out.write_bytes(pickle.dumps((build.running(), [made(case) for case in judged])))
    return 0


if __name__ == "__main__":
    # Run as the module the cases were pickled with, not as __main__: its case classes are those.
    from tests.support import builds

    sys.exit(builds.main(sys.argv[1:]))
