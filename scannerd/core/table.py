"""One table's judgement as a pure object: every input in, what to do about it out.

The daemon, the replay of a recording and the simulator's loopback all judge
the same inputs the same way, and they do it through this object: a device
event becomes a validator input (``scannerd.core.ingest``), a request runs
against the validator (``execute`` below: parsing it is the contract's,
running it the table's), a replay's ticks fall on a fixed grid, and what a
restart brings back has one shape (``SavedState``).
``Table`` reads no clock, does no I/O and starts no thread: each call returns
an ``Outcome``, the events to store, the framed acknowledgements that wait for
them, the device payload to show, the answer to send, and the caller does it,
in the style of ``drivers.framed_host.FramedSession``. Where and when that
happens (the outbox, the lock, the threads) is the caller's business, so a
recording replays to exactly what the table published.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any, Final

from drivers.events import DeviceButton, DeviceEvent, DeviceHello, DeviceStatus
from scannerd.contract.command_catalogue import READS_ONLY
from scannerd.contract.events import EventData
from scannerd.contract.payloads import DevicePayload
from scannerd.contract.requests import Request, RequestError, Response, parse_request_data
from scannerd.core.house import HouseRules
from scannerd.core.ingest import DeviceView, to_input
from scannerd.core.inputs import (
    TICK_S,
    Actor,
    ButtonPressed,
    Command,
    DeviceNamed,
    ShoeSensed,
    Tick,
    ValidatorInput,
)
from scannerd.core.validator import CommandRejected, Validator


@dataclass(frozen=True, slots=True)
class SavedState:
    """What a restart restores and a recording's file begins from, as the outbox and headers keep it.

    ``validator`` is the validator's snapshot; ``device`` is what the driver
    keeps across restarts (``Driver.saved_state``: a framed shoe's boot and
    last acknowledged sequence), None for a device that keeps nothing.
    """

    validator: dict[str, Any]
    device: dict[str, Any] | None = None

    def to_dict(self) -> dict[str, Any]:
        """The JSON form: ``{"validator": ..., "device": ...}``, ``device`` only when there is one."""
        if self.device is None:
            return {"validator": self.validator}
        return {"validator": self.validator, "device": self.device}

    @classmethod
    def from_dict(cls, data: dict[str, Any] | None) -> SavedState | None:
        """None when ``data`` holds no validator state (a new table, a file begun on a fresh one)."""
        if not data or not data.get("validator"):
            return None
        return cls(data["validator"], data.get("device"))

    @property
    def next_seq(self) -> int:
        return int(self.validator["next_seq"])

    @property
    def shoe(self) -> dict[str, Any]:
        """The shoe under way when the state was taken ({} before any)."""
        return self.validator.get("shoe") or {}

    def skip_seq(self, count: int) -> SavedState:
        """The same state with ``seq`` moved on by ``count``: numbers that may have been used already."""
        return replace(self, validator={**self.validator, "next_seq": self.next_seq + count})


class Outcome:
    """What one input makes the table do; the caller does it.

    ``events`` go to the outbox with the state that follows them, and only
    then is ``ack`` acknowledged to the shoe (the framed sequence of the card
    that made them). ``ack_now`` is a message that gives nothing to store (a
    button), acknowledged at once. ``judged`` is the input as the validator
    took it, for whoever records inputs; None when the device event concerned
    only the device. ``device`` is the new retained device payload, when it changed.

    Made once by the table and never changed: its attributes are ``Final``, which mypy holds every
    caller to and the compiled build enforces, as frozen did. A plain class, not the frozen
    dataclass it was: every input makes one, and a dataclass keeps the ``__init__`` the dataclasses
    module writes, interpreted even in the compiled build, with a generic ``object.__setattr__``
    for each field when frozen: many times the cost of this one (docs/performance.md).
    """

    __slots__ = ("ack", "ack_now", "device", "events", "judged", "response")

    def __init__(
        self,
        events: list[EventData] | None = None,
        judged: ValidatorInput | None = None,
        *,
        ack: int | None = None,
        ack_now: int | None = None,
        device: DevicePayload | None = None,
        response: Response | None = None,
    ) -> None:
        self.events: Final[list[EventData]] = [] if events is None else events
        self.judged: Final = judged
        self.ack: Final = ack
        self.ack_now: Final = ack_now
        self.device: Final = device
        self.response: Final = response

    @property
    def acks(self) -> list[int]:
        """Both acknowledgements, for a caller with nothing to store first (a replay, the loopback)."""
        return [ack for ack in (self.ack, self.ack_now) if ack is not None]


class Table:
    """The validator and everything between an input and its judgement; pure, not thread-safe.

    ``saved`` restores a table from its state; ``ticks_from`` starts the tick
    grid a replay steps (``ticks``) at that time; ``running`` is what every
    round's identity names as judging it (``HouseRules.identity``).
    """

    def __init__(
        self,
        table_id: str,
        rules: HouseRules,
        *,
        driver: str,
        channel: str | None = None,
        saved: SavedState | None = None,
        ticks_from: float = 0.0,
        running: Mapping[str, Any] | None = None,
    ) -> None:
        if saved is None:
            self.validator = Validator(table_id, rules)
        else:
            self.validator = Validator.restore(table_id, rules, saved.validator)
        if running:
            self.validator.run_under(running)
        self.device_view = DeviceView(driver, channel)
        self._next_tick = ticks_from + TICK_S

    def judge(self, inp: ValidatorInput) -> Outcome:
        """An input that needs no translating (a tick, a fault, a restart, a step of the clock)."""
        return Outcome(self.validator.handle(inp), inp)

    def device_event(self, ts: float, event: DeviceEvent) -> Outcome:
        """What the device said at ``ts``: the input it makes, if any, and what the device view shows."""
        device = self.device_view.apply(ts, event)
        ack = getattr(event, "ack", None)
        inp = to_input(ts, event)
        if isinstance(event, DeviceStatus) and self.validator.sensed_anew(event.lid_open, event.jam):
            inp = ShoeSensed(ts, event.lid_open, event.jam)  # only a change: heartbeats come every second
        if isinstance(event, DeviceHello) and self.validator.named_anew(event.model, event.serial):
            # Only another device: a shoe says hello on every link.
            inp = DeviceNamed(ts, event.model, event.serial)
        if isinstance(event, DeviceButton) and self.validator.confirms_results:
            inp = ButtonPressed(ts, event.name)  # elsewhere a button is the device's alone
        if inp is None:
            return Outcome(ack_now=ack, device=device)
        return Outcome(self.validator.handle(inp), inp, ack=ack, device=device)

    def request(self, request: Request, ts: float, actor: Actor | None = None) -> Outcome:
        """A game server's (or the dealer display's, or the pit's) request by ``actor``, run at ``ts``.

        Every command but ``get_state`` is an input, refused or not: a replay
        must answer it the same way, so it is recorded either way.
        """
        judged = _input_of(request, ts, actor)
        response, events = _answer(request, self.validator, judged)
        return Outcome(events, judged, response=response)

    def command(self, name: str, args: dict[str, Any], ts: float, actor: Actor | None = None) -> Outcome:
        """A command given as a dict (the dealer display's button, a recording's ``cmd`` line), run at ``ts``.

        Parsed as if its JSON had come over MQTT, so a button and a replay are held to exactly the
        checks a game server's request is; a refused one is answered and judges nothing.
        """
        try:
            request = parse_request_data(name, args)
        except RequestError as exc:
            return Outcome(response=exc.response())
        return self.request(request, ts, actor)

    def ticks(self, until: float) -> list[Outcome]:
        """The ticks on the grid up to ``until`` that do something, judged as the daemon's ticker would.

        A day's recording spans tens of thousands of ticks; only one that
        stalls a round or ends a betting time does anything, so the others are
        stepped over (the grid is still stepped exactly as live), and before
        the validator's ``acts_from`` none is even asked.
        """
        outcomes: list[Outcome] = []
        if self._next_tick > until:  # most of a replay's lines: no tick of the grid is passed
            return outcomes
        due = self.validator.acts_from()
        while self._next_tick <= until:
            if due is not None and self._next_tick >= due and self.validator.acts_at(self._next_tick):
                outcomes.append(self.judge(Tick(self._next_tick)))
                due = self.validator.acts_from()
            self._next_tick += TICK_S
        return outcomes

    def saved_state(self, device: dict[str, Any] | None = None) -> SavedState:
        """The state to store with the events judged so far; ``device`` is the driver's part."""
        return SavedState(self.validator.snapshot(), device)


def execute(
    request: Request, validator: Validator, ts: float, actor: Actor | None = None
) -> tuple[Response, list[EventData]]:
    """Run a request by ``actor`` at ``ts``; the events it caused must go to the outbox like any others.

    A refused command changes nothing but what its refusal must remember (a wrong PIN counts
    towards a lockout): the events of that, if any, go out with the refusal.
    """
    return _answer(request, validator, _input_of(request, ts, actor))


def _input_of(request: Request, ts: float, actor: Actor | None) -> Command | None:
    """The input a request is for the validator, None for one that only reads."""
    return None if request.command in READS_ONLY else Command(ts, request.command, request.args, actor)


def _answer(
    request: Request, validator: Validator, command: Command | None
) -> tuple[Response, list[EventData]]:
    """``execute`` with the request's input already made (None for one that only reads): a table
    records the input it judged, the same object, made once."""
    events: list[EventData] = []
    if command is not None:
        try:
            events = validator.handle(command)
        except CommandRejected as exc:
            return Response(
                command=request.command, status="error", transaction=request.transaction, error=str(exc)
            ), exc.events
    # Only get_state carries the shoe's results: they grow with every hand, and a command's
    # answer needs the round and shoe it changed, not the scoreboard (docs/mqtt.md).
    state = validator.state(results=request.command == "get_state")
    return Response(command=request.command, status="ok", transaction=request.transaction, data=state), events
