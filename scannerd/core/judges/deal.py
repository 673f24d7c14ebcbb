"""The deal: where each card goes, the rounds it makes and their results.

The deal places a card in the open round where the table's game says the
next one goes (``scannerd.core.games``: punto banco's third-card rule, Dragon
Tiger's one card a side), ends the round complete or void, and sets aside the
cards no round may take, each with its alert. Its slice of the state: the
round on the table (``TableTop.round``: its cards, phase and times), the
counters behind made-up round ids, the shoe's results, and the clearing (a
void round's cards the dealer may still draw).
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from scannerd.contract.alert_catalogue import message
from scannerd.core.games import Game, position_words
from scannerd.core.house import HouseRules
from scannerd.core.inputs import Actor, Restarted
from scannerd.core.judges.authority import Authority
from scannerd.core.judges.builder import Acted, EventBuilder
from scannerd.core.judges.deck_check import DeckCheck
from scannerd.core.judges.judge import CommandRejected, Handler, optional_id
from scannerd.core.judges.reveal import Reveal
from scannerd.core.judges.shoe import ShoeJudge
from scannerd.core.judges.table_top import RoundState, TableTop, plain
from scannerd.core.roads import Result, Roads, code, decoded

RESULTS_KEPT_WITHOUT_SHOE = 104
"""Hands of results kept while no shoe is known: as many as an 8-deck shoe can deal."""

_STALL_EARLY_S = 0.001


class Deal:
    def __init__(
        self,
        table_id: str,
        rules: HouseRules,
        game: Game,
        events: EventBuilder,
        top: TableTop,
        shoe_judge: ShoeJudge,
        reveal: Reveal,
        authority: Authority,
        deck_check: DeckCheck,
    ) -> None:
        self.table_id = table_id
        self.rules = rules
        self.stall_timeout_s = rules.stall_timeout_s  # read once: asked at every card (``stalls_at``)
        self.game = game
        self.events = events
        self.top = top
        self.shoe_judge = shoe_judge
        self.reveal = reveal
        self.authority = authority
        self.deck_check = deck_check
        self.initials = {winner: initial for initial, winner in game.initials.items()}
        self.clearing = False  # a round was voided: the dealer may still draw its cards
        # In auto mode, after a restart or a lost state: the alert whose acknowledgement ends the
        # clearing (the dealer confirms the layout is clear; no betting_open will come to say so).
        self.clearing_alert: int | None = None
        self.rounds_started = 0  # hand numbers while the shoe is unknown
        # After a lost state the counters behind generated round ids start again (or from an old copy):
        # the ids carry the loss's seq until the next shoe, so none is one the table has used before.
        self.round_id_suffix = ""
        # One code per hand completed in this shoe, for the scoreboard roads after a restart:
        # the winner's initial (``Game.initials``), then n for a natural, p / b for a player / banker pair.
        self.results: list[str] = []

    def commands(self) -> dict[str, Handler]:
        return {"new_shoe": self.new_shoe, "void_round": self.void_round}

    # ------------------------------------------------------------------ cards

    def card(self, ts: float, card: str | None, device_burn: bool) -> None:
        """A card drawn: its event and its own alert first; the cut card it reaches, the round it ends
        and the shoe follow, in the documented order (card, alert, round, shoe)."""
        judge, top = self.shoe_judge, self.top
        if self.deck_check.counting:  # counted, not dealt: the shoe's own count is the dealing's
            self.deck_check.card(ts, card)
            return
        card_no, foreign = judge.draw(card)
        if top.shoe is not None and top.shoe.closed:
            judge.drawn_after_end(ts, card, card_no, foreign)
            return
        rnd = top.round
        ends: str | None = None  # "complete" or the void reason, when this card ends the round
        burnt = False
        if self.authority.suspended is not None:  # no card is dealt until a supervisor resumes the table
            self._set_aside(ts, card, card_no, foreign)
        elif rnd is not None and rnd.phase == "dealing":
            ends = self._into_round(ts, rnd, card, card_no, foreign is not None)
        elif top.shoe is not None and top.shoe.burning:
            burnt = judge.burn(ts, card, card_no, foreign)
        else:
            ends = self._between_rounds(ts, card, card_no, foreign, device_burn)
        judge.checked(ts, card)
        # A round this card ended is already over here: the cut card lies behind its last card.
        shoe_changed = judge.virtual_cut_card(ts) or burnt
        if ends is not None:
            rnd = top.round
            assert rnd is not None
            if ends == "complete" and self.rules.confirm_result:
                self._await_word(ts, rnd)
            else:
                self._end_round(ts, rnd, ends)
            shoe_changed = top.shoe is not None  # the shoe is published after every round
        if shoe_changed:
            judge.publish(ts)

    def _set_aside(self, ts: float, card: str | None, card_no: int | None, foreign: str | None) -> None:
        """A card while the table is suspended, whatever else it would have been."""
        self.events.card(ts, "discard", card, None, card_no)
        if foreign is not None:
            self.shoe_judge.foreign_alert(ts, foreign, None)
        else:
            self.events.alert(ts, "CARD_WHILE_SUSPENDED", message("CARD_WHILE_SUSPENDED", card=card), card)

    def _between_rounds(
        self, ts: float, card: str | None, card_no: int | None, foreign: str | None, device_burn: bool
    ) -> str | None:
        """A card with no round dealing and no burn due: how it ends the round it opens, if it opens one."""
        events, rnd = self.events, self.top.round
        betting = rnd is not None and rnd.phase == "betting"
        if foreign is not None:
            # It keeps its place: a burn when the shoe marked it one (a burn belongs to no round),
            # else a discard naming the round being bet on, if any, as any other card would.
            round_id = rnd.round_id if betting and not device_burn and rnd is not None else None
            events.card(ts, "burn" if device_burn else "discard", card, round_id, card_no)
            self.shoe_judge.foreign_alert(ts, foreign, round_id)
        elif device_burn:
            events.card(ts, "burn", card, None, card_no)
        elif rnd is not None and rnd.phase == "confirming":
            events.card(ts, "discard", card, None, card_no)
            said = message("EXTRA_CARD", "confirming", card=card, hand_no=rnd.hand_no)
            events.alert(ts, "EXTRA_CARD", said, card, rnd.round_id)
        elif betting and rnd is not None:
            events.card(ts, "discard", card, rnd.round_id, card_no)
            said = message("CARD_BEFORE_BETS_CLOSED", card=card)
            events.alert(ts, "CARD_BEFORE_BETS_CLOSED", said, card, rnd.round_id)
        elif self.clearing:
            events.card(ts, "discard", card, None, card_no)
        elif self.rules.round_control == "auto":
            rnd = self.open_round(ts, None, "dealing")
            return self._into_round(ts, rnd, card, card_no, False)
        else:
            events.card(ts, "discard", card, None, card_no)
            events.alert(ts, "EXTRA_CARD", message("EXTRA_CARD", card=card), card)
        return None

    def _into_round(
        self, ts: float, rnd: RoundState, card: str | None, card_no: int | None, foreign: bool
    ) -> str | None:
        """A card drawn into a dealing round: how it ends the round ("complete", a void reason) or None.

        The round's phase is changed here and its event left to the caller, so that a cut card this
        card reaches finds the round over and its alert still goes before the round's event.
        """
        if card is None:
            self.events.card(ts, "discard", None, rnd.round_id, card_no)
            self.events.alert(ts, "UNREADABLE_CARD", message("UNREADABLE_CARD"), None, rnd.round_id)
            rnd.phase = "void"
            return "UNREADABLE_CARD"
        if foreign:
            self.events.card(ts, "discard", card, rnd.round_id, card_no)
            self.shoe_judge.foreign_alert(ts, card, rnd.round_id)
            rnd.phase = "void"
            return "FOREIGN_CARD"
        next_position = self.game.next_position
        position = next_position(rnd.player, rnd.banker)
        assert position is not None  # a dealing round always has a card due
        (rnd.banker if self.game.side_of(position) else rnd.player).append(card)
        rnd.last_activity = ts
        self.events.card(ts, position, card, rnd.round_id, card_no)
        self.reveal.hold(rnd, position, ts)
        if next_position(rnd.player, rnd.banker) is not None:
            return None
        rnd.phase = "complete"
        return "complete"

    # ------------------------------------------------------------------ rounds

    def open_round(
        self, ts: float, round_id: str | None, phase: str, betting_time: float | None = None
    ) -> RoundState:
        """Put the next round on the table in ``phase``, its id made up when none is given.

        What the last round left on the layout is off it now: its held cards show, its clearing ends.
        """
        self.reveal.layout_cleared(ts)
        shoe = self.top.shoe
        if shoe is not None:
            hand_no = self.shoe_judge.hand_started(shoe)
            round_id = round_id or f"{shoe.shoe_id}-{hand_no:03d}{self.round_id_suffix}"
        else:
            self.rounds_started += 1
            hand_no = self.rounds_started
            round_id = round_id or f"{self.table_id}-R{hand_no}{self.round_id_suffix}"
        last = shoe is not None and shoe.last_hand_no == hand_no
        self.top.round = rnd = RoundState(
            round_id,
            hand_no,
            phase,
            ts,
            last_hand=last,
            dealer_id=self.authority.dealer_id,
            opened=ts,
            dealing_from=ts if phase == "dealing" else None,
        )
        if betting_time is not None:
            rnd.betting_time, rnd.betting_ends = betting_time, ts + betting_time
        self.clearing = False
        self.clearing_alert = None
        self.events.round(ts, rnd)
        return rnd

    def start_dealing(self, ts: float) -> None:
        """Betting closed on the round in betting: its cards may be dealt from now."""
        rnd = self.top.round
        assert rnd is not None
        rnd.phase = "dealing"
        rnd.last_activity = rnd.dealing_from = ts
        self.events.round(ts, rnd)

    def _await_word(self, ts: float, rnd: RoundState) -> None:
        """The hand's cards are all in, at a table that confirms results: its result waits for the dealer
        (``confirmation.py``); its cards and totals are published, its winner not yet."""
        rnd.phase = "confirming"
        rnd.confirm_due = ts + self.rules.confirm_within_s
        self.events.round(ts, rnd)

    def settle(self, ts: float, rnd: RoundState) -> None:
        """The dealer's word agreed with the cards: the round completes now, then the shoe is published."""
        rnd.phase = "complete"
        self._end_round(ts, rnd, "complete")
        if self.top.shoe is not None:
            self.shoe_judge.publish(ts)

    def _end_round(
        self, ts: float, rnd: RoundState, how: str, detail: str | None = None, acted: Acted | None = None
    ) -> None:
        """Publish the end of a round whose phase is already ``complete`` or ``void``.

        ``how`` is "complete" or the void reason. The shoe's event is the caller's: it goes last.
        """
        if how != "complete":
            self.events.round(ts, rnd, how, detail, acted)
            # In auto mode no betting_open ends the clearing, so cards go straight to the next round.
            self.clearing = self.rules.round_control == "server"
        else:
            event = self.events.round(ts, rnd)
            result = Result(
                event["winner"],
                bool(event["player_pair"]),
                bool(event["banker_pair"]),
                bool(event["natural"]),
            )
            roads = self.top.roads
            self.results.append(roads.add(result) if roads is not None else code(result, self.initials))
            if self.top.shoe is None:
                # No new_shoe ever resets them (auto mode without a game server), and the state is
                # written with every card: keep the latest hands only.
                del self.results[:-RESULTS_KEPT_WITHOUT_SHOE]
        if rnd.last_hand and self.top.shoe is not None:
            self.shoe_judge.close(ts)

    def void(self, ts: float, reason: str, detail: str | None = None, acted: Acted | None = None) -> None:
        """Void the open round now: its event, then the shoe's."""
        rnd = self.top.round
        assert rnd is not None
        rnd.phase = "void"
        self._end_round(ts, rnd, reason, detail, acted)
        if self.top.shoe is not None:
            self.shoe_judge.publish(ts)

    def void_open(self, ts: float, reason: str) -> None:
        """Void the round if one is still in betting or dealing (the table stops on ``reason``)."""
        rnd = self.top.round
        if rnd is not None and rnd.phase in ("betting", "dealing"):
            self.void(ts, reason)

    # ------------------------------------------------------------------ stalls

    def _stall_watched(self) -> RoundState | None:
        """The round a stall can still be raised on: dealing, and not stalled yet."""
        rnd = self.top.round
        return rnd if rnd is not None and rnd.phase == "dealing" and not rnd.stalled else None

    def stalls_at(self, ts: float) -> bool:
        """Whether an input at ``ts`` finds the round stalled."""
        rnd = self._stall_watched()
        return rnd is not None and ts - rnd.last_activity >= self.stall_timeout_s

    def stall_from(self) -> float | None:
        """The earliest time a stall could be found, or None while none can.

        A bound from below, never late: a millisecond early, so rounding in ``ts - last_activity``
        can only make one more tick be asked.
        """
        rnd = self._stall_watched()
        return None if rnd is None else rnd.last_activity + self.stall_timeout_s - _STALL_EARLY_S

    def check_stall(self, ts: float) -> None:
        if self.stalls_at(ts):
            rnd = self.top.round
            assert rnd is not None
            rnd.stalled = True
            due = position_words(self.game.next_position(rnd.player, rnd.banker) or self.game.positions[0])
            self.events.alert(ts, "ROUND_STALLED", message("ROUND_STALLED", due=due), None, rnd.round_id)

    # ------------------------------------------------------------------ what else ends a round

    def link(self, ts: float, up: bool) -> None:
        """The shoe's link went down or came back: down with cards due, the round cannot be judged whole."""
        if not self.shoe_judge.relink(up):
            return
        if up:
            self.events.alert(ts, "DEVICE_RECONNECTED", message("DEVICE_RECONNECTED"), None)
            return
        rnd = self.top.round
        if rnd is not None and rnd.phase == "dealing":
            said = message("DEVICE_DISCONNECTED")
            self.events.alert(ts, "DEVICE_DISCONNECTED", said, None, rnd.round_id)
            self.void(ts, "DEVICE_DISCONNECTED")
        else:
            self.events.case_alert(ts, "DEVICE_DISCONNECTED", "between_hands")

    def restarted(self, inp: Restarted) -> None:
        """A round open across a restart was not watched whole: it is void.

        Dealing, cards may have gone unread, unless the shoe repeats every card
        it was not told arrived; betting, a ``betting_close`` queued for the
        daemon meanwhile would be judged after the cards dealt behind it, whatever
        the shoe. A burn in progress only may have lost cards: flagged, not ended.
        The dealer may deal the void round on: its cards are set aside until a
        new round opens or, in auto mode, until the alert is acknowledged.
        """
        rnd, shoe = self.top.round, self.top.shoe
        lost = rnd is not None and (
            rnd.phase == "betting" or (rnd.phase == "dealing" and not inp.cards_repeat)
        )
        if lost:
            assert rnd is not None
            alert_id = self.events.next_seq
            self.events.alert(inp.ts, "DAEMON_RESTARTED", message("DAEMON_RESTARTED"), None, rnd.round_id)
            self.void(inp.ts, "DAEMON_RESTARTED", inp.detail or None)
            self._clear_until_acknowledged(alert_id)
        elif shoe is not None and shoe.burning and not inp.cards_repeat:
            self.events.case_alert(inp.ts, "DAEMON_RESTARTED", "during_the_burn")

    def state_lost(self, alert_id: int) -> None:
        """Whatever round was on the table is unknown: its cards must not open a new one, and the
        round ids made up from now on carry the loss's alert until the next shoe."""
        self._clear_until_acknowledged(alert_id)
        self.round_id_suffix = f"-L{alert_id}"

    def _clear_until_acknowledged(self, alert_id: int) -> None:
        if self.rules.round_control == "auto":
            self.clearing = True
            self.clearing_alert = alert_id

    def acknowledged(self, alert_id: int) -> None:
        """An alert was acknowledged: if the clearing waited for it, the dealer says the layout is clear."""
        if alert_id == self.clearing_alert:
            self.clearing = False  # the next card opens a round
            self.clearing_alert = None

    # ------------------------------------------------------------------ commands

    def new_shoe(self, ts: float, args: dict[str, Any], actor: Actor | None) -> None:
        rnd = self.top.round
        if rnd is not None and rnd.open:
            raise CommandRejected(f"round {rnd.round_id} is still open: void it or finish it first")
        shoe_id = optional_id(args, "shoe_id") or f"S{_stamp(ts)}"
        acted = self.authority.acted(ts, actor)
        if self.deck_check.counting:  # the count ends with the shoe it counted, its receipt given
            self.deck_check.end(ts, acted)
        self.reveal.layout_cleared(ts)
        self.round_id_suffix = ""  # a new shoe's id is new: its hands' ids are too
        self.results = []
        self.top.roads = Roads(self.initials)
        self.top.round = None
        self.clearing = False
        self.shoe_judge.start(ts, shoe_id, acted)

    def void_round(self, ts: float, args: dict[str, Any], actor: Actor | None) -> None:
        rnd = self.top.round
        if rnd is None or not rnd.open:
            raise CommandRejected("no open round to void")
        reason = args.get("reason")
        if reason is not None and not isinstance(reason, str):
            raise CommandRejected("reason must be a string")
        self.void(ts, "OPERATOR_VOID", reason, self.authority.acted(ts, actor))

    # ------------------------------------------------------------------ what it shows

    def round_view(self) -> dict[str, Any] | None:
        """The round as ``get_state`` shows it: as its events say, with the position due next."""
        rnd = self.top.round
        if rnd is None:
            return None
        game = self.game
        due = game.next_position(rnd.player, rnd.banker) if rnd.phase == "dealing" else None
        view: dict[str, Any] = {
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
            view["betting_time_s"] = float(rnd.betting_time)  # type: ignore[arg-type]
            view["betting_ends_ts"] = float(rnd.betting_ends)
        if rnd.dealer_id is not None:
            view["dealer_id"] = rnd.dealer_id
        if self.events.squeeze:
            view["hidden"] = [position for position, _ in rnd.hidden]
        if rnd.phase == "complete" and self.events.identity is not None:  # as its complete event says
            view["facts"] = game.facts(rnd.player, rnd.banker)
        return view

    def results_view(self) -> list[dict[str, Any]]:
        """The shoe's results as ``get_state`` shows them, for the scoreboard roads."""
        return [
            {
                "winner": r.winner,
                "natural": r.natural,
                "player_pair": r.player_pair,
                "banker_pair": r.banker_pair,
            }
            for r in decoded(self.results, self.game.initials)
        ]

    def roads_view(self) -> dict[str, Any]:
        """The shoe's roads as ``get_state`` and every shoe event carry them (``ShoeRoads``)."""
        roads = self.top.roads
        if roads is None:  # no shoe: the hands kept since the start, drawn once for this answer
            roads = Roads(self.initials)
            for result in decoded(self.results, self.game.initials):
                roads.add(result)
        return roads.columns(self.game.sides)

    # ------------------------------------------------------------------ snapshot

    def saved(self) -> dict[str, Any]:
        rnd = self.top.round
        return {
            "round": plain(rnd, "player", "banker", "hidden") if rnd else None,
            "clearing": self.clearing,
            "clearing_alert": self.clearing_alert,
            "rounds_started": self.rounds_started,
            "round_id_suffix": self.round_id_suffix,
            "results": list(self.results),
        }

    def restore(self, snap: dict[str, Any]) -> None:
        self.top.round = RoundState(**snap["round"]) if snap["round"] else None
        self.clearing = bool(snap["clearing"])
        self.clearing_alert = snap.get("clearing_alert")
        self.rounds_started = int(snap["rounds_started"])
        self.round_id_suffix = str(snap.get("round_id_suffix", ""))
        self.results = list(snap.get("results", []))
        if self.top.shoe is not None:  # the shoe judge restores first: the roads are its shoe's
            self.top.roads = roads = Roads(self.initials)
            for result in decoded(self.results, self.game.initials):
                roads.add(result)


def _stamp(ts: float) -> str:
    return datetime.fromtimestamp(ts, UTC).strftime("%Y%m%d-%H%M%S")
