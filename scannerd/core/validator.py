"""The deal validator: cards and game-server commands in, placements, results and alerts out.

It is a state machine and nothing else: no clock (every input carries its
timestamp), no I/O, no globals. The same inputs always give the same events,
which is what makes a recorded session replay exactly and lets the daemon
restore it from a snapshot after a crash.

The validator only dispatches: each input and command goes to the judge
whose part of the deal it is (``scannerd.core.judges``), in the order that
makes one input's events come out as documented. The rules it enforces are
written down in ``docs/validator.md``.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from itertools import islice
from typing import Any

from scannerd.contract.events import AlertData, EventData
from scannerd.contract.table_state import ALERTS_ANSWERED
from scannerd.core.actors import Lockouts
from scannerd.core.games import played
from scannerd.core.house import HouseRules
from scannerd.core.inputs import (
    Anchored,
    ButtonPressed,
    CardDrawn,
    ClockStepped,
    Command,
    ConfigChanged,
    CutCardSeen,
    DeviceNamed,
    Fault,
    FaultCleared,
    LinkChanged,
    Restarted,
    ShoeSensed,
    Tick,
    ValidatorInput,
)
from scannerd.core.judges.alerts import Alerts
from scannerd.core.judges.authority import Authority
from scannerd.core.judges.betting import Betting
from scannerd.core.judges.builder import EventBuilder
from scannerd.core.judges.confirmation import Confirmation
from scannerd.core.judges.deal import Deal
from scannerd.core.judges.deck_check import DeckCheck
from scannerd.core.judges.judge import CommandRejected, Judge
from scannerd.core.judges.reveal import Reveal
from scannerd.core.judges.sensors import ShoeSensors
from scannerd.core.judges.shoe import ShoeJudge
from scannerd.core.judges.table_top import RoundState, ShoeState, TableTop
from scannerd.core.recall import Recall
from scannerd.core.shuffle_check import ShuffleCheck

SNAPSHOT_VERSION = 1

SAVED = (
    "version",
    "next_seq",
    "shoe",
    "round",
    "clearing",
    "clearing_alert",
    "link_up",
    "rounds_started",
    "round_id_suffix",
    "results",
    "open_alerts",
    "dealer_id",
    "shuffle",
    "suspended",
    "lockouts",
    "unread",
    "deck_check",
    "shoe_device",
    "recall",
    "recall_open",
    "running",
)
"""A snapshot's keys in the order it has always kept them, whichever judge keeps each: the outbox and
every recording's header hold it, and a state saved again keeps its bytes."""


def _state_head(table_id: str, rules: HouseRules) -> dict[str, Any]:
    """What every state the table answers with begins with: fixed by the rules, so made once."""
    head: dict[str, Any] = {"table_id": table_id}
    if rules.game is not None:  # a table from before games were chosen answers as it did
        head["game"] = rules.game
    if rules.game is not None and rules.commission != "standard":
        head["commission"] = rules.commission
    if rules.squeeze:
        head["squeeze"] = True
    return head


class Validator:
    """Judges one table's deal as it happens."""

    def __init__(self, table_id: str, rules: HouseRules | None = None) -> None:
        self.table_id = table_id
        self._rules = rules = rules or HouseRules()
        game = played(rules.game)
        self._top = top = TableTop()
        self._events = events = EventBuilder(table_id, rules, game, top)
        self._authority = authority = Authority(rules, events)
        self._shoe_judge = shoe_judge = ShoeJudge(table_id, rules, events, top)
        self._reveal = reveal = Reveal(rules, game, events, authority, top)
        self._deck_check = deck_check = DeckCheck(rules, events, top, shoe_judge, authority)
        self._deal = deal = Deal(
            table_id, rules, game, events, top, shoe_judge, reveal, authority, deck_check
        )
        self._betting = betting = Betting(rules, events, top, shoe_judge, deal, authority)
        self._alerts = alerts = Alerts(rules, events, top, deal, authority)
        self._confirmation = confirmation = Confirmation(rules, game, events, top, deal, authority)
        self._sensors = ShoeSensors(events, top, deal, alerts)
        self._recall = Recall()  # the last hands, folded from the events as they are published
        self._state_head = _state_head(table_id, rules)
        # Each judge names the commands it judges, so a command enters one judge's file; together
        # they are the catalogue's commands, each once (tests/core/test_judges_shape.py).
        judges: tuple[Judge, ...] = (deal, betting, alerts, reveal, authority, deck_check, confirmation)
        self._commands = {name: handler for judge in judges for name, handler in judge.commands().items()}

    def run_under(self, running: Mapping[str, Any]) -> None:
        """State ``running`` (the software and configuration judging) in every identity from now on.

        Not in the constructor: a restore makes the validator under what ran when its snapshot was
        taken, so that the inputs journalled after it are judged again into the same events; the
        start then says what runs now.
        """
        self._events.run_under(running)

    # ------------------------------------------------------------------ input

    def handle(self, inp: ValidatorInput) -> list[EventData]:
        """Apply one input; returns the events it caused, in publish order."""
        out = self._events.begin()
        if isinstance(inp, CardDrawn):  # nearly every input: judged without asking what else it is
            self._table(inp)
        elif isinstance(inp, Command):
            # No stall check here: a rejected command must leave the state untouched,
            # and no command leaves a round overdue (the next card or tick judges that).
            try:
                self._command(inp)
            except CommandRejected as exc:
                self._suspend(inp.ts)
                exc.events = out
                self._recall.observe(out)
                raise
            self._suspend(inp.ts)
            self._betting.open_by_itself(inp.ts)
        elif isinstance(inp, ClockStepped):
            # Before any stall check: the time since the round's last card is what it was,
            # and so is the betting time left.
            if self._top.round is not None:
                self._top.round.shift(inp.step)
        elif isinstance(inp, Anchored):
            # About a file, not the deal: it judges no stall and opens no betting, live or replayed.
            self._events.anchor(inp)
        elif isinstance(inp, ConfigChanged):
            # About the table PC, not the deal: the same.
            self._events.config(inp)
        elif isinstance(inp, FaultCleared):
            # The same: a fault's cause is gone, and its alerts clear.
            self._alerts.fault_cleared(inp)
        elif isinstance(inp, DeviceNamed):
            # About the device, not the deal: the same.
            self._deck_check.named(inp)
        else:
            self._table(inp)
        self._recall.observe(out)
        return out

    @property
    def confirms_results(self) -> bool:
        """Whether the shoe's buttons are the dealer's word on a hand (``[rules] confirm_result``)."""
        return self._rules.confirm_result

    def sensed_anew(self, lid_open: bool, jam: bool) -> bool:
        """Whether the shoe's lid and jam report says something new: only then is it judged."""
        return self._sensors.differs(lid_open, jam)

    def named_anew(self, model: str, serial: str) -> bool:
        """Whether a device's hello names another device than the one known: only then is it judged."""
        return self._deck_check.named_anew(model, serial)

    def _command(self, cmd: Command) -> None:
        handler = self._commands.get(cmd.name)
        if handler is None:
            raise CommandRejected(f"unknown command {cmd.name!r}")
        handler(cmd.ts, cmd.args, cmd.actor)

    def _table(self, inp: ValidatorInput) -> None:
        """An input from the table (the shoe, the daemon, the ticker): what time alone decided comes first.

        Betting whose time ran out closes, held cards whose time is up show, and a round overdue
        raises its stall, each at its own time, before what the input itself gives.
        """
        ts = inp.ts
        self._betting.close_if_over(ts)
        self._reveal.overdue(ts)
        self._confirmation.overdue(ts)
        self._deal.check_stall(ts)
        if isinstance(inp, CardDrawn):
            self._deal.card(ts, inp.card, inp.device_burn)
        elif isinstance(inp, CutCardSeen):
            self._shoe_judge.cut_card_seen(ts)
        elif isinstance(inp, LinkChanged):
            self._deal.link(ts, inp.up)
        elif isinstance(inp, Restarted):
            self._deal.restarted(inp)
        elif isinstance(inp, Fault):
            self._alerts.fault(inp)
        elif isinstance(inp, ShoeSensed):
            self._sensors.sensed(inp)
        elif isinstance(inp, ButtonPressed):
            self._confirmation.button(ts, inp.name)
        elif not isinstance(inp, Tick):
            raise TypeError(f"not a validator input: {inp!r}")
        self._suspend(ts)
        if not isinstance(inp, Tick):
            self._betting.open_by_itself(ts)

    def _suspend(self, ts: float) -> None:
        """After the input is judged: an alert the house names in ``suspend_on`` stops the table.

        A round still open is void, with the alert's code as its reason: the next game must not
        be dealt on the fault that ended this one, and neither must the rest of this one.
        """
        cause = self._events.take_suspending()
        if cause is None or self._authority.suspended is not None:
            return
        self._deal.void_open(ts, cause["cause"])
        self._authority.suspend(ts, cause)

    # ------------------------------------------------------------------ time

    def stalls_at(self, ts: float) -> bool:
        """Whether an input at ``ts`` finds the round stalled: what a ``Tick`` can change, with ``acts_at``.

        A replay asks it to skip the ticks of a quiet table without judging the stall itself.
        """
        return self._deal.stalls_at(ts)

    def acts_at(self, ts: float) -> bool:
        """Whether a ``Tick`` at ``ts`` would change anything: a stall, the betting time over, a reveal due,
        the dealer's word overdue.

        A replay asks it to skip the ticks of a quiet table without judging them itself. Betting
        closes at the moment its time ran out, whichever input finds it over, so a live tick
        and a replayed one, a fraction of a second apart, close it with the same event.
        """
        due = (self._betting.ends(), self._reveal.next_due(), self._confirmation.next_due())
        return self.stalls_at(ts) or any(at is not None and ts >= at for at in due)

    def acts_from(self) -> float | None:
        """The earliest time a ``Tick`` could act (see ``acts_at``), or None while none can.

        A replay steps the tick grid through a quiet table's hours and nights; before this time
        it need not ask. A bound from below, never late.
        """
        earliest = self._deal.stall_from()
        # A loop, not ``min`` over a generator with a default: asked before every line a replay reads,
        # and the compiled build makes that a generic call (docs/performance.md).
        for at in (self._betting.ends(), self._reveal.next_due(), self._confirmation.next_due()):
            if at is not None and (earliest is None or at < earliest):
                earliest = at
        return earliest

    # ------------------------------------------------------------------ state

    def state(self, *, results: bool = True) -> dict[str, Any]:
        """What the game server's ``get_state`` sees: shoe, current round, open alerts, results and recall.

        ``results=False`` leaves out the shoe's results and the last hands recalled, and carries
        only the newest ``ALERTS_ANSWERED`` open alerts with the count of all: what a command's
        answer carries (docs/mqtt.md), so a shoe's answers do not grow with it, nor a table's
        with the alerts nobody acknowledges.
        """
        open_alerts = self.open_alerts  # oldest first
        if results or len(open_alerts) <= ALERTS_ANSWERED:
            shown = list(open_alerts.values())
        else:  # the newest, without copying every one a table where nobody acknowledges holds
            shown = list(islice(reversed(open_alerts.values()), ALERTS_ANSWERED))[::-1]
        state = self._state_head | {
            "seq": self.next_seq - 1,
            "link_up": self.link_up,
            "shoe": self._shoe_judge.view(),
            "round": self._deal.round_view(),
            "alerts": [dict(a) for a in shown],
        }
        if len(shown) < len(open_alerts):  # some left out: how many are open
            state["alerts_open"] = len(open_alerts)
        counting = self._deck_check.view()
        if counting is not None:  # present only while the shoe is counted
            state["deck_check"] = counting
        if self.suspended is not None:  # present only while suspended
            state["suspended"] = dict(self.suspended)
        if self.dealer_id is not None:  # present only while a dealer is signed in
            state["dealer_id"] = self.dealer_id
        if results:  # the scoreboard as data too, so a game server draws what the table shows
            state["results"] = self._deal.results_view()
            state["roads"] = self._deal.roads_view()
            state["recall"] = self._recall.view()
        return state

    def snapshot(self) -> dict[str, Any]:
        """The whole state as JSON-ready data; ``restore`` rebuilds an identical validator."""
        parts = (
            {"version": SNAPSHOT_VERSION}
            | self._events.saved()
            | self._shoe_judge.saved()
            | self._deal.saved()
            | self._authority.saved()
            | self._sensors.saved()
            | self._deck_check.saved()
            | self._recall.saved()
        )
        # In the order kept so far; a key ``SAVED`` does not name yet goes last, never lost.
        return {key: parts[key] for key in SAVED if key in parts} | parts

    @classmethod
    def restore(cls, table_id: str, rules: HouseRules | None, snap: dict[str, Any]) -> Validator:
        if snap.get("version") != SNAPSHOT_VERSION:
            raise ValueError(f"unsupported validator snapshot version {snap.get('version')!r}")
        # A copy: the shoe's counts and the round's hands would be shared with ``snap`` and change as
        # the validator plays on, and a second restore from the same snapshot would start elsewhere.
        snap = copy.deepcopy(snap)
        v = cls(table_id, rules)
        v._events.restore(snap)
        v._shoe_judge.restore(snap)
        v._deal.restore(snap)
        v._authority.restore(snap)
        v._sensors.restore(snap)
        v._deck_check.restore(snap)
        v._recall = Recall.restore(snap)
        return v

    # ------------------------------------------------------------------ what the table's callers read

    @property
    def rules(self) -> HouseRules:
        """The house rules the judges were made with: a validator under other rules is a new one."""
        return self._rules

    @property
    def next_seq(self) -> int:
        return self._events.next_seq

    @next_seq.setter
    def next_seq(self, seq: int) -> None:
        """The daemon starts a table's numbering above anything it may have published (docs/mqtt.md)."""
        self._events.next_seq = seq

    @property
    def open_alerts(self) -> dict[int, AlertData]:
        return self._events.open_alerts

    @property
    def shoe(self) -> ShoeState | None:
        return self._top.shoe

    @property
    def round(self) -> RoundState | None:
        return self._top.round

    @property
    def link_up(self) -> bool:
        return self._shoe_judge.link_up

    @property
    def suspended(self) -> dict[str, Any] | None:
        return self._authority.suspended

    @property
    def dealer_id(self) -> str | None:
        return self._authority.dealer_id

    @property
    def lockouts(self) -> Lockouts:
        return self._authority.lockouts

    @property
    def shuffle(self) -> ShuffleCheck:
        return self._shoe_judge.shuffle
