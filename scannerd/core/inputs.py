"""What the validator judges: every input carries its own time.

Inputs carry their own timestamp (``ts``, Unix seconds, UTC) so that the
validator never reads a clock: a live table and a replay of its recording
produce identical events. They are plain dataclasses, never changed once
made; what the validator makes of them is the contract's
(``scannerd/contract/events.py``).

The two made for every card and every command (``CardDrawn``, ``Command``)
hold to that through ``Final`` fields, which mypy holds every caller to,
rather than ``frozen=True``: a frozen dataclass's generated ``__init__`` sets
each field through ``object.__setattr__``, three times the cost of the
plain one (docs/performance.md, "Around the judging"). ``unsafe_hash``
keeps them hashable as frozen did.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any, Final, Literal


@dataclass(slots=True, unsafe_hash=True)
class CardDrawn:
    """A physical card left the shoe. ``card`` is None when it could not be read."""

    ts: Final[float]
    card: Final[str | None]
    device_burn: Final[bool] = False  # the device itself marked the card as a burn


@dataclass(frozen=True, slots=True)
class CutCardSeen:
    """The shoe reported the cut card."""

    ts: float


@dataclass(frozen=True, slots=True)
class LinkChanged:
    """The device link went down or came back."""

    ts: float
    up: bool
    detail: str = ""


@dataclass(frozen=True, slots=True)
class Tick:
    """Time passed with nothing else happening; lets stalls be judged on event time."""

    ts: float


TICK_S = 1.0
"""How often the daemon feeds a Tick; a replay feeds them on the same grid to give the same events."""


@dataclass(frozen=True, slots=True)
class Fault:
    """Something outside the deal that the dealer or the pit must see: a device alarm, a full disk."""

    ts: float
    code: str  # a code the alert catalogue marks as a fault
    message: str


@dataclass(frozen=True, slots=True)
class Restarted:
    """The daemon starts again on a table whose state it saved: it was not reading for a while.

    Cards the shoe dealt meanwhile are gone for shoes that cannot repeat them,
    so a round left open cannot be judged any more.
    """

    ts: float
    detail: str = ""
    cards_repeat: bool = False  # the shoe repeats every card not acknowledged (and the machine kept power)


@dataclass(frozen=True, slots=True)
class ClockStepped:
    """The wall clock jumped by ``step`` seconds (NTP correcting it, an operator setting it).

    Event times follow the wall clock, so they jump too; durations must not,
    or a step forward would stall a round and a step back hide a stall.
    """

    ts: float
    step: float


Via = Literal["display", "pit", "gameserver"]
"""Through what an operator action came: the dealer display, the pit's page, the game server."""


@dataclass(frozen=True, slots=True)
class Actor:
    """Who took an operator action, through what, and what the staff list said of them.

    Settled where the action came in, not in the validator: the display checks
    a PIN against the staff list (``scannerd.staff``), the pit's request topic
    names the broker user the broker let publish on it, the game server names
    the staff it vouches for. The validator judges the verdict as it is given,
    so it needs neither the list nor the PIN, and a recording (which keeps
    the actor, never a PIN) replays to the same answers.

    ``by`` is a staff id, a pit's broker user or ``gameserver``; None at the
    display with no PIN asked (the dealer signed in, if any, took it).
    ``role`` is the staff list's role for ``by``: ``unknown`` when the list
    does not name them, None when the table keeps no list. ``pin`` is the
    verdict on a PIN typed at the display; None when none was asked.
    """

    via: Via
    by: str | None = None
    role: Literal["dealer", "supervisor", "unknown"] | None = None
    pin: Literal["right", "wrong"] | None = None

    def to_dict(self) -> dict[str, str]:
        """The JSON form a recording keeps: unset fields left out."""
        return {k: v for k, v in asdict(self).items() if v is not None}


@dataclass(slots=True, unsafe_hash=True)
class Command:
    """A game-server (or dealer-display, or pit) command; ``actor`` is None in recordings made before
    actions carried who took them."""

    ts: Final[float]
    name: Final[str]  # one of the commands the validator judges (``command_catalogue.JUDGED``)
    args: Final[dict[str, Any]] = field(default_factory=dict)
    actor: Final[Actor | None] = None


@dataclass(frozen=True, slots=True)
class Anchored:
    """The recorder sealed a file: its name, line count and last digest go out on the table's stream.

    No file can prove its own absence, so the game server keeps these and
    ``scannerd verify --anchors`` checks the archive against them. It is an
    input, judged under the daemon's lock like any other, so that it takes its
    ``seq`` in order, is journalled and recorded, and a replay makes it again.
    """

    ts: float
    file: str  # the file's final name in the recording directory (after gzip)
    lines: int  # its lines, the header and the seal included
    digest: str  # hex SHA-256: the chain's digest of its last line


@dataclass(frozen=True, slots=True)
class FaultCleared:
    """What raised a fault's alert is well again (the clock synchronised): its open alerts clear."""

    ts: float
    code: str  # a fault code of the alert catalogue


@dataclass(frozen=True, slots=True)
class ConfigChanged:
    """The table starts under another configuration than at its last start: which keys changed.

    Judged like ``Anchored``, so that it takes its ``seq`` in order, is
    journalled and recorded, and a replay makes it again. Keys are dotted
    (``mqtt.host``); a secret is named, never given.
    """

    ts: float
    digest: str  # hex SHA-256 of the effective configuration now
    previous: str  # ... and at the last start
    changed: list[str]


@dataclass(frozen=True, slots=True)
class ShoeSensed:
    """The shoe's lid and jam sensors said something new (``ShoeSensors.differs``)."""

    ts: float
    lid_open: bool
    jam: bool


@dataclass(frozen=True, slots=True)
class ButtonPressed:
    """A button on the shoe was pressed: at a table that confirms results, the dealer's word on a hand."""

    ts: float
    name: str  # as the device names it: a winner's name declares it, any other is not the table's


@dataclass(frozen=True, slots=True)
class DeviceNamed:
    """The shoe device introduced itself as another device than the table knew (``DeckCheck.named_anew``):
    the model and serial a deck check's receipt names."""

    ts: float
    model: str
    serial: str


ValidatorInput = (
    CardDrawn
    | CutCardSeen
    | LinkChanged
    | Tick
    | Command
    | Fault
    | Restarted
    | ClockStepped
    | Anchored
    | FaultCleared
    | ConfigChanged
    | ShoeSensed
    | DeviceNamed
    | ButtonPressed
)
