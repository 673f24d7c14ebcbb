"""The deal validator: cards and game-server commands in, placements, results and alerts out.

It is a state machine and nothing else: no clock (every input carries its
timestamp), no I/O, no globals. The same inputs always give the same events,
which is what makes a recorded session replay exactly and lets the daemon
restore it from a snapshot after a crash.

The rules it enforces are written down in ``docs/validator.md``.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field, fields
from datetime import UTC, datetime
from typing import Any

from scannerd.contract.alert_catalogue import ALERTS, FAULT_CODES, message
from scannerd.contract.command_catalogue import JUDGED
from scannerd.contract.events import (
    AlertData,
    AlertEvent,
    AnchorData,
    CardData,
    ConfigData,
    Data,
    DealerData,
    EventData,
    RevealData,
    RoundData,
    ShoeData,
    SuspensionData,
)
from scannerd.contract.idents import check_ident
from scannerd.core.actors import Lockouts, Need, Refused, vouch
from scannerd.core.cards import BURN_COUNT
from scannerd.core.games import played, position_words
from scannerd.core.house import HouseRules
from scannerd.core.inputs import (
    Actor,
    Anchored,
    CardDrawn,
    ClockStepped,
    Command,
    ConfigChanged,
    CutCardSeen,
    Fault,
    FaultCleared,
    LinkChanged,
    Restarted,
    Tick,
    ValidatorInput,
)
from scannerd.core.shuffle_check import Comparison, ShuffleCheck

_STALL_EARLY_S = 0.001

RESULTS_KEPT_WITHOUT_SHOE = 104
"""Hands of results kept while no shoe is known: as many as an 8-deck shoe can deal."""


Acted = dict[str, str]
"""An operator action's ``by`` and ``via``, as its events carry them (empty: no one's action)."""

UNREADABLE_RUN = (3, 20)
"""UNREADABLE_REPEATED: this many unreadable cards among the last so many drawn. One is a bent card;
three in a short run is the reader."""


class CommandRejected(Exception):
    """A command that makes no sense in the current state; the state is left untouched.

    Save what a refusal must remember: a wrong PIN counts, and the lockout it
    may bring is an alert (``events``, published with the refusal).
    """

    def __init__(self, text: str) -> None:
        super().__init__(text)
        self.events: list[EventData] = []


@dataclass(slots=True)
class ShoeState:
    shoe_id: str
    counts: dict[str, int]
    burn_required: int | None  # burn cards in all, the turned card included; None until known
    burning: bool
    cards_dealt: int = 0
    burn_done: int = 0
    cut_card_seen: bool = False
    hands_started: int = 0
    last_hand_no: int | None = None
    closed: bool = False


def _plain(state: ShoeState | RoundState, *containers: str) -> dict[str, Any]:
    """``asdict`` without its deep copy of every value, which was most of the cost of storing a card.

    ``python -m bench.latency_stages`` measures what storing costs a card (docs/performance.md).
    The state's fields are numbers, strings and the named containers of them, which are copied.
    """
    out = {f.name: getattr(state, f.name) for f in fields(state)}
    for name in containers:
        out[name] = out[name].copy()
    return out


@dataclass(slots=True)
class RoundState:
    round_id: str
    hand_no: int
    phase: str  # betting | dealing | complete | void
    last_activity: float
    last_hand: bool = False
    stalled: bool = False
    player: list[str] = field(default_factory=list)
    banker: list[str] = field(default_factory=list)
    betting_time: float | None = None  # seconds betting stays open, when a time was given
    betting_ends: float | None = None  # when that time runs out (event time)
    dealer_id: str | None = None  # the dealer signed in when the round opened
    opened: float | None = None  # when the round opened (event time); None in a snapshot from before
    dealing_from: float | None = None  # when its dealing began: betting closed, or its first card
    # Squeeze: the cards the screens still hold face down, each [position, when it was drawn].
    hidden: list[list[Any]] = field(default_factory=list)


def _stamp(ts: float) -> str:
    return datetime.fromtimestamp(ts, UTC).strftime("%Y%m%d-%H%M%S")


class Validator:
    """Judges one table's deal as it happens."""

    def __init__(self, table_id: str, rules: HouseRules | None = None) -> None:
        self.table_id = table_id
        self.rules = rules or HouseRules()
        self.game = played(self.rules.game)
        self._initials = {winner: initial for initial, winner in self.game.initials.items()}
        self.next_seq = 1
        self.shoe: ShoeState | None = None
        self.round: RoundState | None = None
        self.clearing = False  # a round was voided: the dealer may still draw its cards
        # In auto mode, after a restart or a lost state: the alert whose acknowledgement ends the
        # clearing (the dealer confirms the layout is clear; no betting_open will come to say so).
        self.clearing_alert: int | None = None
        self.link_up = True
        self.rounds_started = 0  # hand numbers while the shoe is unknown
        # After a lost state the counters behind generated round ids start again (or from an old copy):
        # the ids carry the loss's seq until the next shoe, so none is one the table has used before.
        self.round_id_suffix = ""
        self.open_alerts: dict[int, AlertData] = {}
        self.dealer_id: str | None = None  # who is dealing, once signed in
        # One code per hand completed in this shoe, for the scoreboard roads after a restart:
        # the winner's initial (``Game.initials``), then n for a natural, p / b for a player / banker pair.
        self.results: list[str] = []
        self.shuffle = ShuffleCheck()  # this shoe's order against the last shoes'
        self.lockouts = Lockouts(self.rules.pin_attempts, self.rules.pin_lockout_s)
        # While suspended: what stopped the table (a SuspensionEvent's cause, alert_id, since, message).
        self.suspended: dict[str, Any] | None = None
        self.draws = 0  # cards drawn since the table started, for the unreadable cards' run
        self.unread: list[int] = []  # which of those draws were unreadable, the last run's only
        self._out: list[EventData] = []
        self._suspending: dict[str, Any] | None = None  # an alert that suspends, once the input is judged

    # ------------------------------------------------------------------ input

    def handle(self, inp: ValidatorInput) -> list[EventData]:
        """Apply one input; returns the events it caused, in publish order."""
        self._out = out = list[EventData]()
        if isinstance(inp, Command):
            # No stall check here: a rejected command must leave the state untouched,
            # and no command leaves a round overdue (the next card or tick judges that).
            try:
                self._command(inp)
            except CommandRejected as exc:
                self._suspend(inp.ts)
                exc.events = out
                raise
            self._suspend(inp.ts)
            self._open_betting_by_itself(inp.ts)
            return out
        if isinstance(inp, ClockStepped):
            # Before any stall check: the time since the round's last card is what it was,
            # and so is the betting time left.
            rnd = self.round
            if rnd is not None:
                rnd.last_activity += inp.step
                if rnd.betting_ends is not None:
                    rnd.betting_ends += inp.step
                # So are its phase times: a step is not time spent betting or dealing.
                if rnd.opened is not None:
                    rnd.opened += inp.step
                if rnd.dealing_from is not None:
                    rnd.dealing_from += inp.step
                # A squeezed card waits its time, whatever the clock did. New entries, not changed
                # ones: a snapshot taken before shares the old (``_plain`` copies the list only).
                rnd.hidden = [[position, drawn + inp.step] for position, drawn in rnd.hidden]
            return out
        if isinstance(inp, Anchored):
            # About a file, not the deal: it judges no stall and opens no betting, live or replayed.
            self._anchor(inp)
            return out
        if isinstance(inp, ConfigChanged | FaultCleared):
            # About the table PC, not the deal: the same.
            self._table_pc(inp)
            return out
        betting_ended = self._betting_ended(inp.ts)
        if betting_ended is not None:
            self._close_betting(betting_ended)
        self._reveal_overdue(inp.ts)
        self._check_stall(inp.ts)
        if isinstance(inp, CardDrawn):
            self._card(inp.ts, inp.card, inp.device_burn)
        elif isinstance(inp, CutCardSeen):
            if self._cut_card(inp.ts):
                self._shoe_event(inp.ts)
        elif isinstance(inp, LinkChanged):
            self._link(inp)
        elif isinstance(inp, Restarted):
            self._restarted(inp)
        elif isinstance(inp, Fault):
            if inp.code not in FAULT_CODES:
                raise ValueError(f"not a fault code: {inp.code!r}")
            rnd = self.round
            alert_id = self.next_seq
            self._alert(inp.ts, inp.code, inp.message, None, rnd.round_id if rnd else None)
            if inp.code == "STATE_LOST":
                # Whatever round was on the table is unknown: its cards must not open a new one.
                self._clear_until_acknowledged(alert_id)
                self.round_id_suffix = f"-L{alert_id}"
        elif not isinstance(inp, Tick):
            raise TypeError(f"not a validator input: {inp!r}")
        self._suspend(inp.ts)
        if not isinstance(inp, Tick):
            self._open_betting_by_itself(inp.ts)
        return out

    def _command(self, cmd: Command) -> None:
        handler = _COMMANDS.get(cmd.name)
        if handler is None:
            raise CommandRejected(f"unknown command {cmd.name!r}")
        handler(self, cmd.ts, cmd.args, cmd.actor)

    def _acted(self, ts: float, actor: Actor | None, need: Need = None) -> Acted:
        """An event's ``by`` and ``via`` for an action by ``actor``; CommandRejected when it may not take it.

        At the display without a PIN, the dealer signed in took it.
        """
        if actor is None:
            return {}
        try:
            by = vouch(actor, need, self.lockouts, ts)
        except Refused as exc:
            if exc.locked is not None:
                minutes = self.rules.pin_lockout_s / 60
                attempts = self.rules.pin_attempts
                text = message("PIN_LOCKOUT", attempts=attempts, staff_id=exc.locked, minutes=minutes)
                self._alert(ts, "PIN_LOCKOUT", text, None)
            raise CommandRejected(str(exc)) from None
        if by is None and actor.via == "display":
            by = self.dealer_id
        return {"by": by, "via": actor.via} if by is not None else {"via": actor.via}

    # ------------------------------------------------------------------ cards

    def _card(self, ts: float, card: str | None, device_burn: bool) -> None:
        shoe, rnd = self.shoe, self.round
        card_no = None
        foreign: str | None = None  # the card, when the shoe holds fewer copies of it
        if shoe is not None:
            shoe.cards_dealt += 1
            card_no = shoe.cards_dealt
            if card is not None:
                seen = shoe.counts.get(card, 0) + 1
                shoe.counts[card] = seen
                foreign = card if seen > self.rules.decks else None
            if shoe.closed:
                self._card_event(ts, "discard", card, None, card_no)
                if foreign is not None:  # one alert per card; a foreign card outranks every code
                    self._foreign(ts, foreign, None)
                else:
                    self._alert(ts, "CARD_AFTER_SHOE_END", message("CARD_AFTER_SHOE_END"), card)
                self._unreadable_run(ts, card)
                return

        # The card and its own alert come first; the cut card it reaches, the round it ends and
        # the shoe follow below, in the documented order (card, alert, round, shoe).
        ends: str | None = None  # "complete" or the void reason, when this card ends the round
        shoe_changed = False
        if self.suspended is not None:  # no card is dealt until a supervisor resumes the table
            self._card_event(ts, "discard", card, None, card_no)
            if foreign is not None:
                self._foreign(ts, foreign, None)
            else:
                self._alert(ts, "CARD_WHILE_SUSPENDED", message("CARD_WHILE_SUSPENDED", card=card), card)
        elif rnd is not None and rnd.phase == "dealing":
            ends = self._into_round(ts, rnd, card, card_no, foreign is not None)
        elif shoe is not None and shoe.burning:
            shoe_changed = self._burn(ts, shoe, card, card_no)
            if foreign is not None:
                self._foreign(ts, foreign, None)
        elif foreign is not None:
            # It keeps its place: a burn when the shoe marked it one (a burn belongs to no round),
            # else a discard naming the round being bet on, if any, as any other card would.
            round_id = None
            if not device_burn and rnd is not None and rnd.phase == "betting":
                round_id = rnd.round_id
            self._card_event(ts, "burn" if device_burn else "discard", card, round_id, card_no)
            self._foreign(ts, foreign, round_id)
        elif device_burn:
            self._card_event(ts, "burn", card, None, card_no)
        elif rnd is not None and rnd.phase == "betting":
            self._card_event(ts, "discard", card, rnd.round_id, card_no)
            self._alert(
                ts,
                "CARD_BEFORE_BETS_CLOSED",
                message("CARD_BEFORE_BETS_CLOSED", card=card),
                card,
                rnd.round_id,
            )
        elif self.clearing:
            self._card_event(ts, "discard", card, None, card_no)
        elif self.rules.round_control == "auto":
            rnd = self._open_round(ts, None, "dealing")
            ends = self._into_round(ts, rnd, card, card_no, foreign is not None)
        else:
            self._card_event(ts, "discard", card, None, card_no)
            self._alert(ts, "EXTRA_CARD", message("EXTRA_CARD", card=card), card)
        self._unreadable_run(ts, card)
        if shoe is not None:
            for comparison in self.shuffle.card(card, shoe.counts, self.rules.decks):
                self._shuffle_alert(ts, comparison)

        if (
            shoe is not None
            and not shoe.cut_card_seen
            and self.rules.cut_card_remaining is not None
            and self._remaining(shoe) <= self.rules.cut_card_remaining
        ):
            # A round this card ended is already over here: the cut card lies behind its last card.
            shoe_changed = self._cut_card(ts) or shoe_changed
        if ends is not None:
            assert rnd is not None
            self._end_round(ts, rnd, ends)
            shoe_changed = shoe is not None  # the shoe is published after every round
        if shoe_changed:
            self._shoe_event(ts)

    def _unreadable_run(self, ts: float, card: str | None) -> None:
        """Too many unreadable cards in a short run: the reader, not a card, is at fault."""
        self.draws += 1
        if card is not None:
            return
        count, window = UNREADABLE_RUN
        self.unread = [n for n in self.unread if n > self.draws - window] + [self.draws]
        if len(self.unread) >= count:
            self.unread = []  # the next run is counted afresh
            text = message("UNREADABLE_REPEATED", count=count, window=window)
            self._alert(ts, "UNREADABLE_REPEATED", text, None, self.round.round_id if self.round else None)

    def _into_round(
        self, ts: float, rnd: RoundState, card: str | None, card_no: int | None, foreign: bool
    ) -> str | None:
        """A card drawn into a dealing round: how it ends the round ("complete", a void reason) or None.

        The round's phase is changed here and its event left to the caller, so that a cut card this
        card reaches finds the round over and its alert still goes before the round's event.
        """
        if card is None:
            self._card_event(ts, "discard", None, rnd.round_id, card_no)
            self._alert(ts, "UNREADABLE_CARD", message("UNREADABLE_CARD"), None, rnd.round_id)
            rnd.phase = "void"
            return "UNREADABLE_CARD"
        if foreign:
            self._card_event(ts, "discard", card, rnd.round_id, card_no)
            self._foreign(ts, card, rnd.round_id)
            rnd.phase = "void"
            return "FOREIGN_CARD"
        next_position = self.game.next_position
        position = next_position(rnd.player, rnd.banker)
        assert position is not None  # a dealing round always has a card due
        (rnd.banker if self.game.side_of(position) else rnd.player).append(card)
        rnd.last_activity = ts
        self._card_event(ts, position, card, rnd.round_id, card_no)
        if self.rules.squeeze:
            rnd.hidden.append([position, ts])
        if next_position(rnd.player, rnd.banker) is not None:
            return None
        rnd.phase = "complete"
        return "complete"

    def _burn(self, ts: float, shoe: ShoeState, card: str | None, card_no: int | None) -> bool:
        """A burn card; True when it finished the burn (the caller publishes the shoe, last)."""
        self._card_event(ts, "burn", card, None, card_no)
        if shoe.burn_done == 0 and shoe.burn_required is None and card is not None:
            shoe.burn_required = 1 + BURN_COUNT[card[0]]
        shoe.burn_done += 1
        # An unreadable turned card leaves the count unknown: the burn then runs until betting closes.
        if shoe.burn_required is not None and shoe.burn_done >= shoe.burn_required:
            shoe.burning = False
            return True
        return False

    def _foreign(self, ts: float, card: str, round_id: str | None) -> None:
        self._alert(
            ts,
            "FOREIGN_CARD",
            message("FOREIGN_CARD", card=card, decks=self.rules.decks),
            card,
            round_id,
        )

    # ------------------------------------------------------------------ rounds

    def _open_round(
        self, ts: float, round_id: str | None, phase: str, betting_time: float | None = None
    ) -> RoundState:
        self._layout_cleared(ts)
        shoe = self.shoe
        if shoe is not None:
            shoe.hands_started += 1
            hand_no = shoe.hands_started
            round_id = round_id or f"{shoe.shoe_id}-{hand_no:03d}{self.round_id_suffix}"
        else:
            self.rounds_started += 1
            hand_no = self.rounds_started
            round_id = round_id or f"{self.table_id}-R{hand_no}{self.round_id_suffix}"
        last = shoe is not None and shoe.last_hand_no == hand_no
        self.round = rnd = RoundState(
            round_id,
            hand_no,
            phase,
            ts,
            last_hand=last,
            dealer_id=self.dealer_id,
            opened=ts,
            dealing_from=ts if phase == "dealing" else None,
        )
        if betting_time is not None:
            rnd.betting_time, rnd.betting_ends = betting_time, ts + betting_time
        self.clearing = False
        self.clearing_alert = None
        self._round_event(ts, rnd)
        return rnd

    def _end_round(
        self, ts: float, rnd: RoundState, how: str, detail: str | None = None, acted: Acted | None = None
    ) -> None:
        """Publish the end of a round whose phase is already ``complete`` or ``void``.

        ``how`` is "complete" or the void reason. The shoe's event is the caller's: it goes last.
        """
        if how != "complete":
            self._round_event(ts, rnd, how, detail, acted)
            # In auto mode no betting_open ends the clearing, so cards go straight to the next round.
            self.clearing = self.rules.round_control == "server"
        else:
            result = self._round_event(ts, rnd)
            self.results.append(
                self._initials[result["winner"]]
                + "n" * bool(result["natural"])
                + "p" * bool(result["player_pair"])
                + "b" * bool(result["banker_pair"])
            )
            if self.shoe is None:
                # No new_shoe ever resets them (auto mode without a game server), and the state is
                # written with every card: keep the latest hands only.
                del self.results[:-RESULTS_KEPT_WITHOUT_SHOE]
        if rnd.last_hand and self.shoe is not None:
            self.shoe.closed = True
            self._finish_shuffle(ts)

    def _void(
        self, ts: float, reason: str, detail: str | None = None, acted: Acted | None = None
    ) -> None:
        """Void the open round now: its event, then the shoe's."""
        rnd = self.round
        assert rnd is not None
        rnd.phase = "void"
        self._end_round(ts, rnd, reason, detail, acted)
        if self.shoe is not None:
            self._shoe_event(ts)

    # ------------------------------------------------------------------ betting time (auto rounds)

    def _open_betting_by_itself(self, ts: float) -> None:
        """With no game server and a house betting time, the table runs its own betting.

        Betting opens once the input that ended a hand (or the shoe's first link report) is
        judged, and closes when the time runs out, as the table's timer would. Only inputs
        a recording keeps open it, never a tick, so a replay opens it at the same time.
        """
        rnd, shoe = self.round, self.shoe
        if (
            self.rules.round_control == "auto"
            and self.rules.betting_time_s is not None
            and self.link_up
            and self.suspended is None
            and self.clearing_alert is None
            and (rnd is None or rnd.phase in ("complete", "void"))
            and not (shoe is not None and shoe.closed)
        ):
            self._open_round(ts, None, "betting", self.rules.betting_time_s)

    def _timed_betting(self) -> RoundState | None:
        """The round whose betting the table closes itself when its time runs out, if one is open."""
        rnd = self.round
        if self.rules.round_control != "auto" or rnd is None or rnd.phase != "betting":
            return None
        return rnd

    def _betting_ended(self, ts: float) -> float | None:
        """When the betting time ran out, if it has by ``ts`` and the table closes betting itself."""
        rnd = self._timed_betting()
        ends = None if rnd is None else rnd.betting_ends
        return ends if ends is not None and ts >= ends else None

    def acts_at(self, ts: float) -> bool:
        """Whether a ``Tick`` at ``ts`` would change anything: a stall, or the betting time over.

        A replay asks it to skip the ticks of a quiet table without judging them itself. Betting
        closes at the moment its time ran out, whichever input finds it over, so a live tick
        and a replayed one, a fraction of a second apart, close it with the same event.
        """
        reveal = self._next_reveal()
        return (
            self.stalls_at(ts) or self._betting_ended(ts) is not None or (reveal is not None and ts >= reveal)
        )

    def acts_from(self) -> float | None:
        """The earliest time a ``Tick`` could act (see ``acts_at``), or None while none can.

        A replay steps the tick grid through a quiet table's hours and nights; before this time
        it need not ask. A bound from below, never late: the stall's is a millisecond early, so
        rounding in ``ts - last_activity`` can only make one more tick be asked.
        """
        dealing, betting = self._stall_watched(), self._timed_betting()
        times = (
            None if dealing is None else dealing.last_activity + self.rules.stall_timeout_s - _STALL_EARLY_S,
            None if betting is None else betting.betting_ends,
            self._next_reveal(),
        )
        return min((t for t in times if t is not None), default=None)

    def _stall_watched(self) -> RoundState | None:
        """The round a stall can still be raised on: dealing, and not stalled yet."""
        rnd = self.round
        return rnd if rnd is not None and rnd.phase == "dealing" and not rnd.stalled else None

    def stalls_at(self, ts: float) -> bool:
        """Whether an input at ``ts`` finds the round stalled: what a ``Tick`` can change, with ``acts_at``.

        A replay asks it to skip the ticks of a quiet table without judging the stall itself.
        """
        rnd = self._stall_watched()
        return rnd is not None and ts - rnd.last_activity >= self.rules.stall_timeout_s

    def _check_stall(self, ts: float) -> None:
        if self.stalls_at(ts):
            rnd = self.round
            assert rnd is not None
            rnd.stalled = True
            due = position_words(self.game.next_position(rnd.player, rnd.banker) or self.game.positions[0])
            self._alert(ts, "ROUND_STALLED", message("ROUND_STALLED", due=due), None, rnd.round_id)

    # ------------------------------------------------------------------ squeeze

    def _next_reveal(self) -> float | None:
        """When the earliest held-back card shows by itself (``reveal_timeout_s`` after it was drawn)."""
        rnd = self.round
        if rnd is None or not rnd.hidden:
            return None
        return min(drawn for _, drawn in rnd.hidden) + self.rules.reveal_timeout_s

    def _reveal_overdue(self, ts: float) -> None:
        """Show every held-back card whose time is up, each at the moment it was, whatever input finds it."""
        rnd = self.round
        while rnd is not None and rnd.hidden:
            drawn = min(at for _, at in rnd.hidden)  # compared as stored: never recomputed from ``due``
            due = drawn + self.rules.reveal_timeout_s
            if ts < due:
                return
            self._show(due, rnd, [position for position, at in rnd.hidden if at == drawn], "timeout")

    def _layout_cleared(self, ts: float) -> None:
        """The next round or shoe begins: the last round's cards are off the layout, none held back."""
        rnd = self.round
        if rnd is not None and rnd.hidden:
            self._show(ts, rnd, [position for position, _ in rnd.hidden], "next_round")

    def _show(
        self, ts: float, rnd: RoundState, positions: list[str], reason: str, acted: Acted | None = None
    ) -> None:
        rnd.hidden = [held for held in rnd.hidden if held[0] not in positions]
        shoe = self.shoe
        self._emit(
            RevealData(
                seq=self.next_seq,
                ts=float(ts),
                table_id=self.table_id,
                shoe_id=shoe.shoe_id if shoe else None,
                kind="reveal",
                round_id=rnd.round_id,
                positions=positions,
                reason=reason,
                **(acted or {}),
            )
        )

    # ------------------------------------------------------------------ shoe and device

    def _cut_card(self, ts: float) -> bool:
        """The cut card came out; True when that changed the shoe (the caller publishes it)."""
        shoe, rnd = self.shoe, self.round
        if shoe is None:
            self._alert(ts, "CUT_CARD", message("CUT_CARD"), None)
            return False
        if shoe.cut_card_seen or shoe.closed:
            return False
        shoe.cut_card_seen = True
        in_hand = rnd is not None and rnd.phase in ("betting", "dealing")
        this_hand = rnd.hand_no if in_hand and rnd is not None else shoe.hands_started + 1
        last = this_hand + (1 if self.rules.last_hand == "one-more" else 0)
        shoe.last_hand_no = last
        if in_hand and rnd is not None and rnd.hand_no == last:
            rnd.last_hand = True
        if in_hand and last == this_hand:
            case = "this_hand"
        elif last == shoe.hands_started + 1:
            case = "next_hand"
        else:
            case = "two_more"
        self._case_alert(ts, "CUT_CARD", case, rnd.round_id if in_hand and rnd else None)
        return True

    def _link(self, inp: LinkChanged) -> None:
        if inp.up == self.link_up:
            return
        self.link_up = inp.up
        if inp.up:
            self._alert(inp.ts, "DEVICE_RECONNECTED", message("DEVICE_RECONNECTED"), None)
            return
        rnd = self.round
        if rnd is not None and rnd.phase == "dealing":
            self._alert(inp.ts, "DEVICE_DISCONNECTED", message("DEVICE_DISCONNECTED"), None, rnd.round_id)
            self._void(inp.ts, "DEVICE_DISCONNECTED")
        else:
            self._case_alert(inp.ts, "DEVICE_DISCONNECTED", "between_hands")

    def _restarted(self, inp: Restarted) -> None:
        """A round open across a restart was not watched whole: it is void.

        Dealing, cards may have gone unread, unless the shoe repeats every card
        it was not told arrived; betting, a ``betting_close`` queued for the
        daemon meanwhile would be judged after the cards dealt behind it, whatever
        the shoe. A burn in progress only may have lost cards: flagged, not ended.
        The dealer may deal the void round on: its cards are set aside until a
        new round opens or, in auto mode, until the alert is acknowledged.
        """
        rnd, shoe = self.round, self.shoe
        lost = rnd is not None and (
            rnd.phase == "betting" or (rnd.phase == "dealing" and not inp.cards_repeat)
        )
        if lost:
            assert rnd is not None
            alert_id = self.next_seq
            self._alert(inp.ts, "DAEMON_RESTARTED", message("DAEMON_RESTARTED"), None, rnd.round_id)
            self._void(inp.ts, "DAEMON_RESTARTED", inp.detail or None)
            self._clear_until_acknowledged(alert_id)
        elif shoe is not None and shoe.burning and not inp.cards_repeat:
            self._case_alert(inp.ts, "DAEMON_RESTARTED", "during_the_burn")

    def _suspend(self, ts: float) -> None:
        """After the input is judged: an alert the house names in ``suspend_on`` stops the table.

        A round still open is void, with the alert's code as its reason: the next game must not
        be dealt on the fault that ended this one, and neither must the rest of this one.
        """
        suspending, self._suspending = self._suspending, None
        if suspending is None:
            return
        rnd = self.round
        if rnd is not None and rnd.phase in ("betting", "dealing"):
            self._void(ts, suspending["cause"])
        self.suspended = suspending | {"since": float(ts)}
        self._suspension_event(ts, self.suspended, True)

    def _suspension_event(
        self,
        ts: float,
        suspended: dict[str, Any],
        now: bool,
        reason: str | None = None,
        acted: Acted | None = None,
    ) -> None:
        shoe = self.shoe
        self._emit(
            SuspensionData(
                seq=self.next_seq,
                ts=float(ts),
                table_id=self.table_id,
                shoe_id=shoe.shoe_id if shoe else None,
                kind="suspension",
                suspended=now,
                cause=suspended["cause"],
                alert_id=suspended["alert_id"],
                since=suspended["since"],
                message=suspended["message"],
                reason=reason,
                **(acted or {}),
            )
        )

    def _clear_until_acknowledged(self, alert_id: int) -> None:
        if self.rules.round_control == "auto":
            self.clearing = True
            self.clearing_alert = alert_id

    # ------------------------------------------------------------------ commands

    def _new_shoe(self, ts: float, args: dict[str, Any], actor: Actor | None) -> None:
        rnd = self.round
        if rnd is not None and rnd.phase in ("betting", "dealing"):
            raise CommandRejected(f"round {rnd.round_id} is still open: void it or finish it first")
        shoe_id = _optional_id(args, "shoe_id") or f"S{_stamp(ts)}"
        acted = self._acted(ts, actor)
        self._layout_cleared(ts)
        if self.shoe is not None:
            self._finish_shuffle(ts)  # a shoe ended early, before its last hand
        self.shuffle.new_shoe(shoe_id)
        burn = self.rules.burn_fixed()
        self.shoe = ShoeState(shoe_id, {}, burn, burning=burn != 0)
        self.round_id_suffix = ""  # a new shoe's id is new: its hands' ids are too
        self.results = []
        self.round = None
        self.clearing = False
        self._shoe_event(ts, acted)

    def _finish_shuffle(self, ts: float) -> None:
        """The shoe is over: restate each shuffle alert it raised with the whole shoe's figures.

        Under the same ``alert_id`` while the pit has not acknowledged it, as a new alert once it has.
        """
        for comparison in self.shuffle.finish():
            self._shuffle_alert(ts, comparison)

    def _shuffle_alert(self, ts: float, comparison: Comparison) -> None:
        """Raise (or restate) the alert on a shoe that keeps an earlier shoe's order."""
        shoe = self.shoe
        assert shoe is not None
        figures = comparison.figures()
        text = message("SHUFFLE_SUSPECT", shoe_id=shoe.shoe_id, **figures)
        alert = self.open_alerts.get(comparison.alert_id) if comparison.alert_id is not None else None
        if alert is None:
            comparison.alert_id = self.next_seq
            self._alert(ts, "SHUFFLE_SUSPECT", text, None, shuffle=figures)
            return
        alert = AlertData(alert, seq=self.next_seq, ts=float(ts), message=text, shuffle=Data(figures))
        self.open_alerts[alert["alert_id"]] = alert
        self._emit(alert)

    def _betting_open(self, ts: float, args: dict[str, Any], actor: Actor | None) -> None:
        round_id = _optional_id(args, "round_id")
        shoe, rnd = self.shoe, self.round
        if self.suspended is not None:
            raise CommandRejected(
                f"the table is suspended ({self.suspended['message']}): a supervisor must resume it"
            )
        if shoe is not None and shoe.closed:
            raise CommandRejected(f"shoe {shoe.shoe_id} is finished: start a new shoe")
        if rnd is not None and rnd.phase == "betting":
            raise CommandRejected(f"betting is already open for round {rnd.round_id}")
        if rnd is not None and rnd.phase == "dealing" and rnd.last_hand:
            raise CommandRejected(
                f"round {rnd.round_id} is the last hand of the shoe and still has cards due: "
                "void it, then start a new shoe"
            )
        betting_time = args.get("betting_time_s", self.rules.betting_time_s)
        if betting_time is not None and (
            not isinstance(betting_time, int | float) or isinstance(betting_time, bool) or betting_time <= 0
        ):
            raise CommandRejected("betting_time_s must be a positive number of seconds")
        if rnd is not None and rnd.phase == "dealing":
            self._alert(
                ts,
                "SHORT_DEAL",
                message("SHORT_DEAL", round_id=rnd.round_id),
                None,
                rnd.round_id,
            )
            self._void(ts, "SHORT_DEAL")
        self._open_round(ts, round_id, "betting", betting_time)

    def _betting_close(self, ts: float, args: dict[str, Any], actor: Actor | None) -> None:
        rnd = self.round
        if rnd is None or rnd.phase != "betting":
            raise CommandRejected("betting is not open")
        self._close_betting(ts)

    def _close_betting(self, ts: float) -> None:
        rnd, shoe = self.round, self.shoe
        assert rnd is not None
        abandon_burn = shoe is not None and shoe.burning
        if abandon_burn:
            assert shoe is not None
            if shoe.burn_required is None:
                said = message("BURN_MISMATCH", "unturned")
            else:
                said = message("BURN_MISMATCH", done=shoe.burn_done, required=shoe.burn_required)
            self._alert(
                ts,
                "BURN_MISMATCH",
                said,
                None,
                rnd.round_id,
            )
            shoe.burning = False
        rnd.phase = "dealing"
        rnd.last_activity = rnd.dealing_from = ts
        self._round_event(ts, rnd)
        if abandon_burn:
            self._shoe_event(ts)

    def _void_round(self, ts: float, args: dict[str, Any], actor: Actor | None) -> None:
        rnd = self.round
        if rnd is None or rnd.phase not in ("betting", "dealing"):
            raise CommandRejected("no open round to void")
        reason = args.get("reason")
        if reason is not None and not isinstance(reason, str):
            raise CommandRejected("reason must be a string")
        self._void(ts, "OPERATOR_VOID", reason, self._acted(ts, actor))

    def _ack_alert(self, ts: float, args: dict[str, Any], actor: Actor | None) -> None:
        alert_id = args.get("alert_id")
        if not isinstance(alert_id, int) or isinstance(alert_id, bool):
            raise CommandRejected("alert_id must be an integer")
        if alert_id not in self.open_alerts:
            raise CommandRejected(f"no open alert {alert_id}")
        acted = self._acted(ts, actor, "pin" if self.rules.ack_needs_pin else None)
        alert = self.open_alerts.pop(alert_id)
        if alert_id == self.clearing_alert:
            self.clearing = False  # the dealer says the layout is clear: the next card opens a round
            self.clearing_alert = None
        self._emit(AlertData(alert, seq=self.next_seq, ts=float(ts), acknowledged=True, **acted))

    def _reveal(self, ts: float, args: dict[str, Any], actor: Actor | None) -> None:
        rnd = self.round
        if not self.rules.squeeze:
            raise CommandRejected("this table does not squeeze: every card shows as it is drawn")
        if rnd is None or not rnd.hidden:
            raise CommandRejected("no card is held back")
        round_id = _optional_id(args, "round_id")
        if round_id is not None and round_id != rnd.round_id:  # a late or repeated request
            raise CommandRejected(f"round {round_id} is not the round on the table ({rnd.round_id})")
        side, position = args.get("side"), args.get("position")
        if side is not None and position is not None:
            raise CommandRejected("give a side or a position, not both")
        if side is not None and side not in self.game.sides:
            raise CommandRejected(f"{side} is not a side at {self.game.name}")
        chosen = [
            held
            for held, _ in rnd.hidden
            if (position is None or held == position) and (side is None or held.startswith(side))
        ]
        if not chosen:
            raise CommandRejected(f"{position or side} has no card held back")
        self._show(ts, rnd, chosen, "request", self._acted(ts, actor))

    def _dealer_sign_in(self, ts: float, args: dict[str, Any], actor: Actor | None) -> None:
        dealer_id = _optional_id(args, "dealer_id")
        if dealer_id is None:
            raise CommandRejected("dealer_id is required")
        self._dealer(ts, dealer_id, self._acted(ts, actor, "pin"))

    def _dealer_sign_out(self, ts: float, args: dict[str, Any], actor: Actor | None) -> None:
        if self.dealer_id is None:
            raise CommandRejected("no dealer is signed in")
        self._dealer(ts, None, self._acted(ts, actor))

    def _resume(self, ts: float, args: dict[str, Any], actor: Actor | None) -> None:
        """A supervisor clears the suspension: the table may open betting and deal again."""
        suspended = self.suspended
        if suspended is None:
            raise CommandRejected("the table is not suspended")
        reason = args.get("reason")
        if not isinstance(reason, str) or not reason:
            raise CommandRejected("reason is required: say why the table may deal again")
        if actor is not None and actor.via == "gameserver" and args.get("supervisor_id") is None:
            raise CommandRejected("supervisor_id is required: name the supervisor who resumes the table")
        acted = self._acted(ts, actor, "supervisor")
        self.suspended = None
        self._suspension_event(ts, suspended, False, reason, acted)

    def _dealer(self, ts: float, dealer_id: str | None, acted: Acted) -> None:
        """A round keeps the dealer it opened with: a change of dealer mid-round is the next round's."""
        self.dealer_id = dealer_id
        shoe = self.shoe
        self._emit(
            DealerData(
                seq=self.next_seq,
                ts=float(ts),
                table_id=self.table_id,
                shoe_id=shoe.shoe_id if shoe else None,
                kind="dealer",
                dealer_id=dealer_id,
                **acted,
            )
        )

    def _anchor(self, inp: Anchored) -> None:
        self._emit(
            AnchorData(
                seq=self.next_seq,
                ts=float(inp.ts),
                table_id=self.table_id,
                shoe_id=None,
                kind="anchor",
                file=inp.file,
                lines=inp.lines,
                digest=inp.digest,
            )
        )

    def _table_pc(self, inp: ConfigChanged | FaultCleared) -> None:
        if isinstance(inp, FaultCleared):
            # Its cause is gone: each of the fault's open alerts is acknowledged by the table itself.
            for alert_id in [i for i, a in self.open_alerts.items() if a["code"] == inp.code]:
                self._ack_alert(inp.ts, {"alert_id": alert_id}, None)
                self._out[-1]["cleared"] = True
            return
        self._emit(
            ConfigData(
                seq=self.next_seq,
                ts=float(inp.ts),
                table_id=self.table_id,
                shoe_id=None,
                kind="config",
                digest=inp.digest,
                previous_digest=inp.previous,
                changed=list(inp.changed),
            )
        )

    # ------------------------------------------------------------------ events

    def _emit(self, event: EventData) -> None:
        self.next_seq += 1
        self._out.append(event)

    # Events are built as plain data, every field of the model in the model's order and of its type
    # (``ts`` a float even when an input's was an int), because ``scannerd.contract.topics`` encodes them as
    # they are: a pydantic model per event, validated and encoded, cost several times as much
    # (``bench/validator_throughput.py``), and tests/contract/test_event_data.py holds the bytes
    # to the model's.

    def _card_event(
        self, ts: float, position: str, card: str | None, round_id: str | None, card_no: int | None
    ) -> None:
        shoe = self.shoe
        self._emit(
            CardData(
                seq=self.next_seq,
                ts=float(ts),
                table_id=self.table_id,
                shoe_id=shoe.shoe_id if shoe else None,
                kind="card",
                round_id=round_id,
                position=position,
                card=card,
                shoe_card_no=card_no,
            )
        )

    def _alert(
        self,
        ts: float,
        code: str,
        message: str,
        card: str | None,
        round_id: str | None = None,
        severity: str | None = None,
        shuffle: dict[str, Any] | None = None,
        suspends: bool = True,
    ) -> None:
        shoe = self.shoe
        alert = AlertData(
            seq=self.next_seq,
            ts=float(ts),
            table_id=self.table_id,
            shoe_id=shoe.shoe_id if shoe else None,
            kind="alert",
            alert_id=self.next_seq,
            round_id=round_id,
            code=code,
            severity=severity or ALERTS[code].usual.severity,
            message=message,
            card=card,
            acknowledged=False,
        )
        if shuffle is not None:
            alert["shuffle"] = Data(shuffle)
        if alert["severity"] != "info":
            self.open_alerts[alert["alert_id"]] = alert
            if suspends and code in self.rules.suspend_on and self.suspended is None and not self._suspending:
                self._suspending = {"cause": code, "alert_id": alert["alert_id"], "message": message}
        self._emit(alert)

    def _case_alert(self, ts: float, code: str, case: str, round_id: str | None = None) -> None:
        """An alert in one of its code's other cases, which may differ in severity as well as words."""
        said = ALERTS[code].case(case)
        self._alert(ts, code, said.say(), None, round_id, said.severity, suspends=said.suspends)

    def _round_event(
        self,
        ts: float,
        rnd: RoundState,
        reason: str | None = None,
        detail: str | None = None,
        acted: Acted | None = None,
    ) -> RoundData:
        shoe, game = self.shoe, self.game
        p, b = rnd.player, rnd.banker  # the first side's cards and the second's
        p_total, b_total = game.total(p), game.total(b)
        complete = rnd.phase == "complete"
        baccarat = complete and game.calls_naturals
        event = RoundData(
            seq=self.next_seq,
            ts=float(ts),
            table_id=self.table_id,
            shoe_id=shoe.shoe_id if shoe else None,
            kind="round",
            round_id=rnd.round_id,
            phase=rnd.phase,
            hand_no=rnd.hand_no,
            last_hand=rnd.last_hand,
            **{  # copies: the round's hands grow after this event
                game.sides[0]: Data(cards=p.copy(), total=p_total),
                game.sides[1]: Data(cards=b.copy(), total=b_total),
            },
            winner=game.winner(p_total, b_total) if complete else None,
            natural=len(p) == 2 and len(b) == 2 and (p_total >= 8 or b_total >= 8) if baccarat else None,
            player_pair=p[0][0] == p[1][0] if baccarat else None,
            banker_pair=b[0][0] == b[1][0] if baccarat else None,
            reason=reason,
            detail=detail,
        )
        if rnd.betting_time is not None:
            event["betting_time_s"] = float(rnd.betting_time)
            event["betting_ends_ts"] = float(rnd.betting_ends)  # type: ignore[arg-type]
        if rnd.dealer_id is not None:
            event["dealer_id"] = rnd.dealer_id
        if self.rules.squeeze:
            event["squeeze"] = True
        if self.rules.game is not None and rnd.phase in ("complete", "void"):
            event["times"] = Data(_times(rnd, ts))
        if complete and self.rules.game is not None:
            event["facts"] = Data(game.facts(p, b))
        if acted:
            event.update(acted)
        self._emit(event)
        return event

    def _remaining(self, shoe: ShoeState) -> int:
        return self.rules.decks * 52 - shoe.cards_dealt

    def _shoe_view(self) -> dict[str, Any] | None:
        shoe = self.shoe
        if shoe is None:
            return None
        if shoe.closed:
            status = "closed"
        elif shoe.burning:
            status = "burning"
        elif shoe.last_hand_no is not None:
            status = "last_hand"
        else:
            status = "dealing"
        return {
            "table_id": self.table_id,
            "shoe_id": shoe.shoe_id,
            "status": status,
            "decks": self.rules.decks,
            "cards_dealt": shoe.cards_dealt,
            "cards_remaining": max(self._remaining(shoe), 0),
            "burn_required": shoe.burn_required,
            "burn_done": shoe.burn_done,
            "cut_card_seen": shoe.cut_card_seen,
            "hands_dealt": shoe.hands_started,
            "last_hand_no": shoe.last_hand_no,
        }

    def _shoe_event(self, ts: float, acted: Acted | None = None) -> None:
        view = self._shoe_view()
        assert view is not None
        table_id, shoe_id = view.pop("table_id"), view.pop("shoe_id")
        event = ShoeData(
            seq=self.next_seq, ts=float(ts), table_id=table_id, shoe_id=shoe_id, kind="shoe", **view
        )
        if acted:
            event.update(acted)
        self._emit(event)

    # ------------------------------------------------------------------ state

    def _result(self, code: str) -> dict[str, Any]:
        """A result code of ``ShoeState.results`` as ``get_state`` shows it."""
        return {
            "winner": self.game.initials[code[0]],
            "natural": "n" in code,
            "player_pair": "p" in code,
            "banker_pair": "b" in code,
        }

    def state(self, *, results: bool = True) -> dict[str, Any]:
        """What the game server's ``get_state`` sees: shoe, current round, open alerts and results.

        ``results=False`` leaves out the shoe's results, which grow with every hand: what a
        command's answer carries (docs/mqtt.md), so a shoe's answers do not grow with it.
        """
        rnd = self.round
        round_view = None
        if rnd is not None:
            game = self.game
            due = game.next_position(rnd.player, rnd.banker) if rnd.phase == "dealing" else None
            round_view = {
                "round_id": rnd.round_id,
                "phase": rnd.phase,
                "hand_no": rnd.hand_no,
                "last_hand": rnd.last_hand,
                game.sides[0]: {"cards": list(rnd.player), "total": game.total(rnd.player)},
                game.sides[1]: {"cards": list(rnd.banker), "total": game.total(rnd.banker)},
                "next_position": due,
            }
            if rnd.betting_ends is not None:  # as in the round's events: only when a time was given,
                # and floats as there, whatever number the command gave (``20`` seconds is ``20.0``)
                round_view["betting_time_s"] = float(rnd.betting_time)  # type: ignore[arg-type]
                round_view["betting_ends_ts"] = float(rnd.betting_ends)
            if rnd.dealer_id is not None:
                round_view["dealer_id"] = rnd.dealer_id
            if self.rules.squeeze:
                round_view["hidden"] = [position for position, _ in rnd.hidden]
            if rnd.phase == "complete" and self.rules.game is not None:  # as its complete event says
                round_view["facts"] = self.game.facts(rnd.player, rnd.banker)
        state: dict[str, Any] = {"table_id": self.table_id}
        if self.rules.game is not None:  # a table from before games were chosen answers as it did
            state["game"] = self.rules.game
        if self.rules.game is not None and self.rules.commission != "standard":
            state["commission"] = self.rules.commission
        if self.rules.squeeze:
            state["squeeze"] = True
        state |= {
            "seq": self.next_seq - 1,
            "link_up": self.link_up,
            "shoe": self._shoe_view(),
            "round": round_view,
            "alerts": [dict(a) for a in self.open_alerts.values()],
        }
        if self.suspended is not None:  # present only while suspended
            state["suspended"] = dict(self.suspended)
        if self.dealer_id is not None:  # present only while a dealer is signed in
            state["dealer_id"] = self.dealer_id
        if results:
            state["results"] = [self._result(code) for code in self.results]
        return state

    def snapshot(self) -> dict[str, Any]:
        """The whole state as JSON-ready data; ``restore`` rebuilds an identical validator."""
        snap = {
            "version": 1,
            "next_seq": self.next_seq,
            "shoe": _plain(self.shoe, "counts") if self.shoe else None,
            "round": _plain(self.round, "player", "banker", "hidden") if self.round else None,
            "clearing": self.clearing,
            "clearing_alert": self.clearing_alert,
            "link_up": self.link_up,
            "rounds_started": self.rounds_started,
            "round_id_suffix": self.round_id_suffix,
            "results": list(self.results),
            "open_alerts": [dict(a) for a in self.open_alerts.values()],
            "dealer_id": self.dealer_id,
            "shuffle": self.shuffle.snapshot(),
        }
        # Kept only when there is something to keep, so a table that never used them saves as before.
        extra = {
            "suspended": self.suspended,
            "lockouts": self.lockouts.snapshot(),
            "unread": [self.draws, list(self.unread)] if self.unread else None,
        }
        return snap | {k: v for k, v in extra.items() if v is not None}

    @classmethod
    def restore(cls, table_id: str, rules: HouseRules | None, snap: dict[str, Any]) -> Validator:
        if snap.get("version") != 1:
            raise ValueError(f"unsupported validator snapshot version {snap.get('version')!r}")
        # A copy: the shoe's counts and the round's hands would be shared with ``snap`` and change as
        # the validator plays on, and a second restore from the same snapshot would start elsewhere.
        snap = copy.deepcopy(snap)
        v = cls(table_id, rules)
        v.next_seq = int(snap["next_seq"])
        v.shoe = ShoeState(**snap["shoe"]) if snap["shoe"] else None
        v.round = RoundState(**snap["round"]) if snap["round"] else None
        v.clearing = bool(snap["clearing"])
        v.clearing_alert = snap.get("clearing_alert")
        v.link_up = bool(snap["link_up"])
        v.rounds_started = int(snap["rounds_started"])
        v.round_id_suffix = str(snap.get("round_id_suffix", ""))
        v.results = list(snap.get("results", []))
        v.dealer_id = snap.get("dealer_id")
        v.suspended = snap.get("suspended")
        v.lockouts.restore(snap.get("lockouts"))
        if snap.get("unread"):
            v.draws, v.unread = snap["unread"][0], list(snap["unread"][1])
        if snap.get("shuffle") is not None:  # saved before the shuffle check: nothing to compare yet
            v.shuffle = ShuffleCheck.restore(snap["shuffle"])
        for raw in snap["open_alerts"]:
            alert = AlertData.of(AlertEvent.model_validate(raw))
            v.open_alerts[alert.alert_id] = alert
        return v


def _times(rnd: RoundState, ended: float) -> dict[str, float | None]:
    """How long the round spent betting and dealing, for the house's pace (``PhaseTimes``)."""
    betting = dealing = None
    if rnd.opened is not None:  # until betting closed, or until a void that came first
        betting = float((ended if rnd.dealing_from is None else rnd.dealing_from) - rnd.opened)
    if rnd.dealing_from is not None:
        dealing = float(ended - rnd.dealing_from)
    return {"betting_s": betting, "dealing_s": dealing}


def _optional_id(args: dict[str, Any], key: str) -> str | None:
    value = args.get(key)
    if value is None:
        return None
    try:
        return check_ident(value)
    except ValueError as exc:
        raise CommandRejected(f"{key} {exc}") from None


# A command's handler is named after it: the catalogue's list is the one list of commands.
_COMMANDS = {name: getattr(Validator, f"_{name}") for name in JUDGED}
