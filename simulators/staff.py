"""The people at a simulated table: dealers with habits of their own, and a supervisor who resumes it.

A week without them (simulators/week.py) deals as tables did before
actions carried who took them: dealers signed in with a bare command, no
alert ever acknowledged. With a ``Crew``, each dealer signs in at the
display with their PIN, makes the mistakes their habits name, and
acknowledges every alert the table raises on their watch after their own
delay, through their own channel; one voids every other round they leave
short before opening the next; the supervisor acknowledges what suspended
the table and resumes it. What the audit credits each of them with can then
be checked against the replayed events.

The crew must see what the table published (an alert's id is its ``seq``),
so the table's recording is written through a ``WatchedWriter``: every line
is replayed as it is written, as the live table judged it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import IO, Any, Literal

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from pydantic import TypeAdapter

from scannerd.core.inputs import Actor
from scannerd.core.validator import Validator
from scannerd.recording.chain import Chain
from scannerd.recording.format import Header, Line, RecordingWriter
from scannerd.recording.replay import Replayer
from simulators.actions import ServerCommand, Step

_LINE: TypeAdapter[Any] = TypeAdapter(Line)

PIT_ONLY = frozenset({"SHUFFLE_SUSPECT", "CLOCK_UNSYNCED", "PIN_LOCKOUT"})
"""Alerts left off the dealer's display: no dealer acknowledges them."""


@dataclass(frozen=True, slots=True)
class Habits:
    """How one dealer works: the mistakes they make, how fast and through what they acknowledge.

    ``via`` ``display`` with ``pin``: their id and PIN typed; without: the display's button, which the
    table credits to the dealer signed in. ``gameserver``: the game server acknowledges, naming them.
    ``voids_short``: they void every other round they leave short before opening the next.
    """

    mistakes: tuple[str, ...]
    ack_after_s: float = 5.0
    via: Literal["display", "gameserver"] = "display"
    pin: bool = True
    voids_short: bool = False


@dataclass(frozen=True)
class Crew:
    """The dealers (id: habits, taking turns in this order), the supervisor and what stops the table.

    ``unplugged_at_end_s``: after each table's last shoe its cable is out this long; with
    ``DEVICE_DISCONNECTED`` in ``suspend_on`` the week ends with each table suspended, never resumed.
    """

    dealers: dict[str, Habits]
    supervisor: str = "S-1"
    resume_after_s: float = 90.0
    suspend_on: tuple[str, ...] = ()
    error_rate: float = 0.1
    unplugged_at_end_s: float | None = None
    _shorts: dict[str, int] = field(default_factory=dict, compare=False)

    def signs_in(self, dealer_id: str) -> Actor:
        """A dealer signs in at the display with their id and PIN."""
        return Actor("display", dealer_id, "dealer", "right")

    def before(self, w: WatchedWriter, now: float, step: Step, dealer_id: str) -> float:
        """Before ``step``: a dealer who voids short rounds does so ahead of opening the next betting."""
        habits = self.dealers[dealer_id]
        action = step.action
        opens = isinstance(action, ServerCommand) and action.name == "betting_open"
        rnd = w.validator.round
        if not (opens and habits.voids_short and rnd is not None and rnd.phase == "dealing"):
            return now
        self._shorts[dealer_id] = self._shorts.get(dealer_id, 0) + 1
        if self._shorts[dealer_id] % 2:
            w.cmd(now, "void_round", {"reason": "cards missing"}, self._acting(dealer_id))
        return now

    def after(self, w: WatchedWriter, now: float, dealer_id: str) -> float:
        """After a step: the supervisor answers a suspension, then the dealer acknowledges what is open."""
        v = w.validator
        if v.suspended is not None:
            cause = v.suspended["alert_id"]
            now += self.resume_after_s
            supervisor = Actor("display", self.supervisor, "supervisor", "right")
            if cause in v.open_alerts:
                w.cmd(now, "ack_alert", {"alert_id": cause}, supervisor)
            w.cmd(now, "resume", {"reason": "checked the shoe and the layout"}, supervisor)
        habits = self.dealers[dealer_id]
        for alert_id, alert in sorted(v.open_alerts.items()):
            if alert["code"] in PIT_ONLY:
                continue
            now += habits.ack_after_s
            w.cmd(now, "ack_alert", {"alert_id": alert_id}, self._acting(dealer_id))
        return now

    def _acting(self, dealer_id: str) -> Actor:
        habits = self.dealers[dealer_id]
        if habits.via == "gameserver":
            return Actor("gameserver", dealer_id)
        return Actor("display", dealer_id, "dealer", "right") if habits.pin else Actor("display")


class WatchedWriter(RecordingWriter):
    """A recording writer that replays every line it writes: the table as the staff see it."""

    def __init__(
        self,
        stream: IO[str],
        header: Header,
        chain: Chain | None = None,
        key: Ed25519PrivateKey | None = None,
    ) -> None:
        super().__init__(stream, header, chain, key)
        self.replayer = Replayer(header)

    @property
    def validator(self) -> Validator:
        return self.replayer.table.validator

    def _write(self, ts: float, fields: dict[str, Any]) -> None:
        super()._write(ts, fields)
        self.replayer.feed(_LINE.validate_python({"t": self._last_t, **fields}))
