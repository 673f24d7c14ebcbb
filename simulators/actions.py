"""What the simulated dealer does, and what the daemon should make of it.

The dealer yields :class:`Step` objects: an action, how long to wait before
it, and the outcome a correct validator gives for it. Actions name things
that happen at the table, never bytes: the feeder turns them into whatever a
given device would send, so one dealer serves every driver.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True, slots=True)
class Draw:
    """A card leaves the shoe and is read. ``burn``: the dealer is burning (devices may tag it)."""

    card: str
    burn: bool = False


@dataclass(frozen=True, slots=True)
class Unreadable:
    """A card leaves the shoe but the sensor cannot read it; ``card`` is what it really was."""

    card: str


@dataclass(frozen=True, slots=True)
class CutCard:
    """The plastic cut card comes out of the shoe."""


@dataclass(frozen=True, slots=True)
class ServerCommand:
    """A game-server command (``new_shoe``, ``betting_open``, ``betting_close``) with its args."""

    name: str
    args: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Unplug:
    """The device's cable is pulled for ``seconds``, then plugged back in."""

    seconds: float


@dataclass(frozen=True, slots=True)
class Pause:
    """Nothing happens for a while (a slow dealer, a scripted gap)."""

    seconds: float


Action = Draw | Unreadable | CutCard | ServerCommand | Unplug | Pause


@dataclass(frozen=True, slots=True)
class Expect:
    """What a correct validator makes of one action.

    ``alerts`` are alert codes in the order they come out; ``position`` is where
    a card goes; ``round_end`` is ``complete`` or ``void`` when the action ends
    a round, with ``winner`` for a complete one; ``rejected`` marks a command a
    correct validator refuses.
    """

    alerts: tuple[str, ...] = ()
    position: str | None = None
    round_end: str | None = None
    winner: str | None = None
    rejected: bool = False


@dataclass(frozen=True, slots=True)
class Step:
    """Wait ``delay`` seconds, then do ``action``; ``expect`` is the correct outcome."""

    delay: float
    action: Action
    expect: Expect = Expect()
