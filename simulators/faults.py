"""Device faults on the wire: what a tired cable, a noisy adapter or a busy shoe do to frames.

A :class:`Faults` plan turns one frame into the writes that actually reach
the host: sent twice, sent again later, preceded by line noise, split into
pieces with gaps, trickled out slowly, or held back by a stall. The plan is
pure (the rng is the only input besides the frame), so a seed reproduces a
session's faults; :class:`FaultyPort` applies it to a real device port.
Pulling the cable is not here: it is an action (``Unplug``) the endpoints do.
"""

from __future__ import annotations

import itertools
import random
import time
from collections.abc import Callable
from dataclasses import dataclass, fields
from typing import Protocol


@dataclass(frozen=True, slots=True)
class FaultRates:
    """The chance of each fault per frame (0 to 1), and how long a stall lasts.

    ``duplicate`` and ``retransmit`` repeat a frame: transparent only for a
    protocol with sequence numbers (``framed``); for the others a repeated
    frame is, truthfully, a second read of the card.
    """

    duplicate: float = 0.0
    retransmit: float = 0.0
    junk: float = 0.0
    split: float = 0.0
    slow: float = 0.0
    stall: float = 0.0
    stall_seconds: float = 1.0

    def __post_init__(self) -> None:
        for f in fields(self):
            value = getattr(self, f.name)
            if f.name != "stall_seconds" and not 0.0 <= value <= 1.0:
                raise ValueError(f"fault rate {f.name}={value} is not between 0 and 1")
        if self.stall_seconds < 0:
            raise ValueError("stall_seconds must not be negative")

    @property
    def any(self) -> bool:
        return any(getattr(self, f.name) for f in fields(self) if f.name != "stall_seconds")


@dataclass(frozen=True, slots=True)
class Write:
    """Wait ``delay`` seconds, then write ``data``."""

    delay: float
    data: bytes


# Gaps that make the host see a frame arrive in pieces (one read per piece).
_SPLIT_GAP = 0.02
_SLOW_BYTE = 0.005  # about 2000 bytes/s: a slow or congested link
_RETRANSMIT_AFTER = 0.25


def random_junk(rng: random.Random) -> bytes:
    """Any bytes but NUL: noise for a protocol that checks every frame (framed's CRC)."""
    return bytes(rng.randrange(1, 256) for _ in range(rng.randint(1, 12)))


class Faults:
    """Plans the writes for each frame; ``junk`` makes noise the protocol at hand will not mistake
    for a frame (each simulated device supplies its own, ``simulators.registry``)."""

    def __init__(
        self, rates: FaultRates, rng: random.Random, junk: Callable[[random.Random], bytes] | None = None
    ) -> None:
        self.rates = rates
        self.rng = rng
        self.junk = junk or random_junk
        self.counts: dict[str, int] = {}

    def _hit(self, fault: str) -> bool:
        if self.rng.random() < getattr(self.rates, fault):
            self.counts[fault] = self.counts.get(fault, 0) + 1
            return True
        return False

    def plan(self, frame: bytes) -> list[Write]:
        """The writes that deliver ``frame`` under the configured faults."""
        writes: list[Write] = []
        lead = self.rates.stall_seconds if self._hit("stall") else 0.0
        if self._hit("junk"):
            writes.append(Write(lead, self.junk(self.rng)))
            lead = 0.0
        writes += self._pieces(frame, lead)
        if self._hit("duplicate"):
            writes.append(Write(0.0, frame))
        if self._hit("retransmit"):
            writes.append(Write(_RETRANSMIT_AFTER, frame))
        return writes

    def _pieces(self, frame: bytes, lead: float) -> list[Write]:
        if len(frame) > 1 and self._hit("slow"):
            return [Write(lead if i == 0 else _SLOW_BYTE, frame[i : i + 1]) for i in range(len(frame))]
        if len(frame) > 1 and self._hit("split"):
            cuts = sorted(
                self.rng.sample(range(1, len(frame)), k=min(len(frame) - 1, self.rng.randint(1, 3)))
            )
            bounds = [0, *cuts, len(frame)]
            return [
                Write(lead if i == 0 else _SPLIT_GAP, frame[a:b])
                for i, (a, b) in enumerate(itertools.pairwise(bounds))
            ]
        return [Write(lead, frame)]


class Port(Protocol):
    """The device end of a link (a pty master, say), as the faults need it."""

    def write(self, data: bytes) -> None: ...


class FaultyPort:
    """Wraps a device port so every write goes out as its fault plan says.

    Everything but ``write`` is passed through, so it stands in for the port
    wherever a device model expects one (the framed shoe over a pty, say).
    """

    def __init__(self, port: Port, faults: Faults, sleep: Callable[[float], None] = time.sleep) -> None:
        self._port = port
        self.faults = faults
        self._sleep = sleep

    def write(self, data: bytes) -> None:
        for w in self.faults.plan(data):
            if w.delay:
                self._sleep(w.delay)
            self._port.write(w.data)

    def __getattr__(self, name: str) -> object:
        return getattr(self._port, name)
