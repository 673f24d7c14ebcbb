"""What a dealer's screen shows about one table, folded from the table's events.

Both the dealer display (fed by the daemon) and ``scannerd watch`` (fed over
MQTT) keep a :class:`TableView`: seeded from a ``get_state`` answer, then
advanced by each published event (as its JSON dict). It is pure: no clock, no
I/O. The fold is checked against the validator's own ``state()`` after every
step of simulated shoes, so the screen can never tell the dealer something
the validator does not believe.

The shoe's results (for the scoreboard roads) come with ``get_state`` and
then from each ``complete`` round event, so a display or a watcher started
mid-shoe (or after a daemon restart) draws the whole shoe's roads.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping
from typing import Any, assert_never

from scannerd.contract.alert_catalogue import PIT_ONLY_CODES
from scannerd.contract.events import kind_of
from scannerd.core.cards import BURN_COUNT, CARD_POINTS, card_name
from scannerd.core.games import GAMES, PUNTO_BANCO, Game, position_words
from scannerd.core.judges.deal import RESULTS_KEPT_WITHOUT_SHOE
from scannerd.core.judges.deck_check import deck_check_text
from scannerd.core.recall import Recall
from scannerd.core.roads import Result, results_of, scoreboard

_HANDS_KEPT = 256  # round ids remembered for naming an alert's hand: a long shoe, and then some


@functools.lru_cache(maxsize=1024)
def dealer_text(message: str, card: str | None) -> str:
    """An alert's message with its card named as the dealer reads it (``10\u2660``, not ``TS``).

    The validator's message carries the card code, as the MQTT payload must; only the screens
    translate it, and only the code of the alert's own card, so no other word can be touched.
    Kept: every snapshot names every open alert again, and a table nobody acknowledges has hundreds.
    """
    if not card:
        return message
    return re.sub(rf"\b{re.escape(card)}\b", card_name(card), message)


def game_of(rnd: Mapping[str, Any]) -> Game | None:
    """The game a round event (or a ``get_state`` round) is of, known by the names of its sides."""
    return next((game for game in GAMES.values() if game.sides[0] in rnd), None)


BACK = "back"
"""A card the table holds face down (squeeze): what the screens draw in its place."""


def _round_of(rnd: Mapping[str, Any], game: Game, hidden: list[str]) -> dict[str, Any]:
    """The round as kept here, from a round event or the round of a ``get_state`` answer (same keys).

    ``hidden``: the positions held face down (a squeeze table's), which only the state and the
    card and reveal events say; a round event keeps what was known of its round.
    """
    return {
        "round_id": rnd["round_id"],
        "phase": rnd["phase"],
        "hand_no": rnd["hand_no"],
        "last_hand": rnd.get("last_hand", False),
        "hands": [list((rnd.get(side) or {}).get("cards", [])) for side in game.sides],
        "betting_ends_ts": rnd.get("betting_ends_ts"),
        "hidden": list(hidden),
        "facts": dict(rnd["facts"]) if rnd.get("facts") else None,
    }


def _hand_view(cards: list[str], total: int, baccarat: bool) -> dict[str, Any]:
    """A hand with its total and the marks a baccarat dealer calls out: a natural (8 or 9 on two
    cards) and a pair.

    None of them while a card of it is held face down: the total of the cards shown would be a
    partial count, read as the hand's (``total`` is then None).
    """
    held = BACK in cards
    marks = baccarat and BACK not in cards[:2]
    return {
        "cards": list(cards),
        "total": None if held else total,
        "natural": marks and len(cards) == 2 and total >= 8,
        "pair": marks and len(cards) >= 2 and cards[0][0] == cards[1][0],
    }


def staff_pins(staff_list: bool, ack_needs_pin: bool) -> dict[str, bool]:
    """Which of the display's actions ask for a staff id and PIN: all but acknowledging need a list."""
    return {"sign_in": staff_list, "ack": staff_list and ack_needs_pin, "resume": staff_list}


class TableView:
    """One table as a dealer sees it. ``round_control`` is the house setting (``server`` or ``auto``);
    ``pins`` says which actions ask for a PIN at this screen (``staff_pins``)."""

    def __init__(
        self,
        table_id: str,
        round_control: str = "server",
        game: Game = PUNTO_BANCO,
        pins: dict[str, bool] | None = None,
    ) -> None:
        self.table_id = table_id
        self.round_control = round_control
        self.pins = pins or staff_pins(False, False)
        self.suspended: dict[str, Any] | None = None  # what stopped the table, until it is resumed
        self.game = game  # as the table says it (its state, its rounds) when not given
        self.squeeze = False  # whether the table holds cards face down until revealed (its state says)
        self._revealed: list[str] = []  # the current round's positions revealed so far
        self.variant: str | None = (
            None  # punto banco's commission variant, when not standard (its state says)
        )
        self.seq = 0  # highest event seq applied; older or repeated events are ignored
        self.link_up = True
        # Until the table has said so, neither the shoe's link nor the round is known: a watcher
        # that has heard nothing yet must not show CONNECTED or WAITING FOR BETS.
        self.heard_link = False
        self.heard_round = False
        self.device: dict[str, Any] | None = None
        self.shoe: dict[str, Any] | None = None
        self.round: dict[str, Any] | None = None
        self.alerts: dict[int, dict[str, Any]] = {}
        self.last_card: dict[str, Any] | None = None
        self.notice: str | None = None  # the latest info alert, until the next hand begins
        self._hands: dict[str, int] = {}  # round_id -> hand_no, for naming an alert's hand
        self._alert_hands: dict[int, str] = {}  # alert_id -> the hand it belongs to, as shown
        self.results: list[tuple[str, Result]] = []  # (round_id, result) of this shoe, in order
        self._history: tuple[tuple[Any, ...], dict[str, Any]] | None = None  # the last board, and of what
        self.dealer_id: str | None = None  # the dealer signed in at the table
        self.counting: dict[str, Any] | None = None  # a deck check under way: the cards counted so far
        self.counted: str | None = None  # the shoe whose receipt the table gave, not to be offered again
        self.recall = Recall()  # the last hands, as the table's state and events give them
        self._results_shoe: str | None = None

    # ------------------------------------------------------------------ input

    def load_state(self, state: Mapping[str, Any]) -> None:
        """Take a ``get_state`` answer (the validator's ``state()``) as the current truth."""
        self.link_up = bool(state.get("link_up", True))
        self.dealer_id = state.get("dealer_id")
        self.suspended = state.get("suspended")
        self.counting = dict(state["deck_check"]) if state.get("deck_check") else None
        if "recall" in state:  # get_state's answer; a command's answer does not carry it
            self.recall = Recall(list(state["recall"]))
        self.heard_link = self.heard_round = True
        self._set_shoe(state.get("shoe"))
        self.game = GAMES.get(state.get("game") or "", self.game)
        self.squeeze = bool(state.get("squeeze"))
        self.variant = state.get("commission")
        rnd = state.get("round")
        self.game = (game_of(rnd) if rnd else None) or self.game
        self.round = _round_of(rnd, self.game, rnd.get("hidden") or []) if rnd else None
        held = self.round["hidden"] if self.round else []
        self._revealed = [p for p in self._dealt(self.round) if p not in held] if self.round else []
        if self.round is not None:
            self._remember_hand(self.round)
        self.alerts = {a["alert_id"]: dict(a) for a in state.get("alerts", [])}
        known = self._alert_hands  # what was judged on arrival beats what the state can tell now
        self._alert_hands = {
            i: known.get(i) or self._hand_of(a.get("round_id")) for i, a in self.alerts.items()
        }
        # Events up to the state's seq are already in it: applying them again would count twice.
        self.seq = max(self.seq, state.get("seq", 0))
        self.results = [("", result) for result in results_of(state.get("results", []))]
        if self._result_held_back() and self.results:  # judged, and shown once revealed
            assert self.round is not None
            self.round["result"] = self.results.pop()[1]

    def set_device(self, payload: Mapping[str, Any]) -> None:
        """The device payload (``DevicePayload`` as a dict): link, model, firmware."""
        self.device = dict(payload)
        self.heard_link = True

    def apply(self, event: dict[str, Any]) -> bool:
        """Advance by one published event (its JSON dict); False when it was old news."""
        seq = event.get("seq", 0)
        if seq <= self.seq:
            return False
        self.seq = seq
        self.recall.observe((event,))
        kind = kind_of(event)
        match kind:
            case "card":
                self._card(event)
            case "round":
                self._round(event)
            case "alert":
                self._alert(event)
            case "shoe":  # its roads are the screens' to draw from the results, held back at a squeeze
                self._set_shoe({k: v for k, v in event.items() if k not in ("seq", "ts", "kind", "roads")})
            case "dealer":
                self.dealer_id = event.get("dealer_id")
            case "reveal":
                self._reveal(event)
            case "suspension":
                fields = ("cause", "alert_id", "message", "since")
                self.suspended = {k: event[k] for k in fields} if event.get("suspended") else None
            case "deck_check":
                self._deck_check(event)
            case "anchor" | "config" | None:
                return False  # nothing a screen shows; None: no event's kind
            case _:
                assert_never(kind)
        return True

    def _set_shoe(self, shoe: Mapping[str, Any] | None) -> None:
        new_id = shoe["shoe_id"] if shoe else None
        if shoe is not None and (self.shoe is None or self.shoe["shoe_id"] != new_id):
            self.round = None  # a new shoe clears the layout
            self.notice = None
        if new_id != self._results_shoe:
            self.results = []
            self._results_shoe = new_id
        self.shoe = dict(shoe) if shoe else None

    def _card(self, event: Mapping[str, Any]) -> None:
        position, card = event["position"], event["card"]
        if position == "count":  # counted, not dealt: the shoe's figures are the dealing's
            if self.counting is not None:
                self.counting["counted"] += 1
            self.last_card = {"position": position, "card": card, "round_id": None}
            return
        # A squeezed card's face stays off the screens here too: only its place is shown as the latest.
        face = BACK if self.squeeze and position in self.game.positions else card
        self.last_card = {"position": position, "card": face, "round_id": event.get("round_id")}
        shoe = self.shoe
        if (
            shoe is not None
            and event.get("shoe_card_no") is not None
            and event.get("shoe_id") == shoe["shoe_id"]
        ):
            shoe["cards_dealt"] = event["shoe_card_no"]
            shoe["cards_remaining"] = max(shoe["decks"] * 52 - shoe["cards_dealt"], 0)
            if position == "burn" and shoe["status"] == "burning":
                shoe["burn_done"] += 1
                if shoe["burn_done"] == 1 and shoe["burn_required"] is None and card is not None:
                    shoe["burn_required"] = 1 + BURN_COUNT[card[0]]  # the turned card says how many
        rnd = self.round
        if rnd is not None and rnd["round_id"] == event.get("round_id") and position in self.game.positions:
            side = self.game.side_of(position)
            hand, index = rnd["hands"][side], self.game.slot(position)
            if index == len(hand):
                hand.append(card)
                if self.squeeze:
                    rnd["hidden"].append(position)

    def recalled(self) -> list[dict[str, Any]]:
        """The last hands, newest first, as the screens show them: at a squeeze table a card of the
        hand on the layout still held face down is a back, and its result waits for the reveal."""
        rnd, hands = self.round, self.recall.hands[::-1]
        if rnd is None or not rnd["hidden"]:
            return hands  # drawn with every event: the hands are shared, never changed once made
        return [self._held_back(hand, rnd) if hand["round_id"] == rnd["round_id"] else hand for hand in hands]

    @staticmethod
    def _held_back(hand: dict[str, Any], rnd: dict[str, Any]) -> dict[str, Any]:
        """A hand still face down in part: its held cards as backs, its result not yet known."""
        hidden = set(rnd["hidden"])
        cards = [{**c, "card": BACK} if c["position"] in hidden else c for c in hand["cards"]]
        totals = {side: None for side in hand["totals"]}
        return {**hand, "cards": cards, "winner": None, "facts": None, "totals": totals}

    def _count_offered(self) -> bool:
        """The count button: while counting, and once the shoe is finished until its receipt."""
        shoe = self.shoe
        finished = shoe is not None and shoe["status"] == "closed" and shoe["shoe_id"] != self.counted
        return self.counting is not None or finished

    def _deck_check(self, event: Mapping[str, Any]) -> None:
        """A count begins, or its receipt: what it found is the screen's notice until the next hand."""
        if event["status"] == "counting":
            self.counting = {
                "started": event["started"],
                "dealt": event["dealt"],
                "counted": event["counted"],
            }
        else:
            self.counting = None
            self.counted = event.get("shoe_id")
            self.notice = deck_check_text(event, cards=False)

    def _round(self, event: Mapping[str, Any]) -> None:
        if event.get("shoe_id") != self._results_shoe:
            self.results = []
            self._results_shoe = event.get("shoe_id")
        self.heard_round = True
        before = self.round
        is_new = before is None or before["round_id"] != event["round_id"]
        self.game = game_of(event) or self.game
        self.squeeze = self.squeeze or bool(event.get("squeeze"))  # said by every round event of such a table
        hidden = before["hidden"] if before is not None and not is_new else []
        self.round = _round_of(event, self.game, hidden)
        if is_new:
            self._revealed = []
        if self.squeeze:
            # A card the view missed the event of is still held back: no face shows that was not revealed.
            known = set(self.round["hidden"]) | set(self._revealed)
            self.round["hidden"] += [p for p in self._dealt(self.round) if p not in known]
        self._remember_hand(self.round)
        if is_new:
            self.notice = None  # a passing notice is about the hand before: it goes when this one begins
        shoe = self.shoe
        if is_new and shoe is not None and shoe["shoe_id"] == event.get("shoe_id"):
            shoe["hands_dealt"] = max(shoe["hands_dealt"], event["hand_no"])
        if event["phase"] == "complete" and event.get("winner"):
            self.round["result"] = Result(
                event["winner"],
                bool(event.get("player_pair")),
                bool(event.get("banker_pair")),
                bool(event.get("natural")),
            )
            self._count_result()

    def _count_result(self) -> None:
        """The complete round's result onto the roads, once, and once nothing of it is held back."""
        rnd = self.round
        if rnd is None or "result" not in rnd:
            return
        keep = RESULTS_KEPT_WITHOUT_SHOE
        if self._result_held_back():
            keep -= 1  # the table keeps it among its latest already
        elif not any(rid == rnd["round_id"] for rid, _ in self.results):
            self.results.append((rnd["round_id"], rnd["result"]))
        if self._results_shoe is None:  # as the validator keeps them while no shoe is known
            del self.results[:-keep]

    def _dealt(self, rnd: Mapping[str, Any]) -> list[str]:
        """The positions of the round's cards on the layout."""
        game = self.game
        return [
            position
            for side, hand in enumerate(rnd["hands"])
            for position in game.positions_of(side)[: len(hand)]
        ]

    def _result_held_back(self) -> bool:
        rnd = self.round
        return rnd is not None and rnd["phase"] == "complete" and bool(rnd["hidden"])

    def _reveal(self, event: Mapping[str, Any]) -> None:
        rnd = self.round
        if rnd is None or rnd["round_id"] != event.get("round_id"):
            return  # a round no longer on the layout: nothing of it is drawn
        shown = set(event.get("positions") or ())
        rnd["hidden"] = [position for position in rnd["hidden"] if position not in shown]
        self._revealed += sorted(shown)
        self._count_result()

    def _alert(self, event: Mapping[str, Any]) -> None:
        alert_id = event["alert_id"]
        if event["code"] == "DEVICE_DISCONNECTED":
            self.link_up, self.heard_link = False, True
        elif event["code"] == "DEVICE_RECONNECTED":
            self.link_up, self.heard_link = True, True
        if event.get("acknowledged"):
            self.alerts.pop(alert_id, None)
            self._alert_hands.pop(alert_id, None)
        elif event["severity"] == "info":
            self.notice = dealer_text(event["message"], event.get("card"))
        else:
            self.alerts[alert_id] = dict(event)
            self._alert_hands[alert_id] = self._hand_of(event.get("round_id"))

    def _remember_hand(self, rnd: Mapping[str, Any]) -> None:
        self._hands[rnd["round_id"]] = rnd["hand_no"]
        if len(self._hands) > _HANDS_KEPT:
            del self._hands[next(iter(self._hands))]

    def _hand_of(self, round_id: str | None) -> str:
        """The hand an alert belongs to, as the dealer counts them; judged when the alert arrives.

        An alert with no round (an extra card, a fault) happened after the current hand, or
        during it while it is still open.
        """
        if round_id is not None:
            hand_no = self._hands.get(round_id)
            return f"HAND {hand_no}" if hand_no is not None else f"ROUND {round_id}"
        rnd = self.round
        if rnd is None:
            return ""
        if rnd["phase"] in ("complete", "void"):
            return f"AFTER HAND {rnd['hand_no']}"
        return f"HAND {rnd['hand_no']}"

    def _cause_over(self, alert: Mapping[str, Any]) -> bool:
        """A warning whose cause has ended: off the dealer's screen, though still open for the pit.

        The shoe back after a disconnection between hands, or a stalled round that is no longer
        being dealt. Misdeals always stay until someone acknowledges them.
        """
        if alert["severity"] != "warning":
            return False
        if alert["code"] == "DEVICE_DISCONNECTED":
            return self.link == "up"
        if alert["code"] == "ROUND_STALLED":
            rnd = self.round
            return rnd is None or rnd["round_id"] != alert.get("round_id") or rnd["phase"] != "dealing"
        return False

    # ------------------------------------------------------------------ output

    @property
    def link(self) -> str:
        """``up``/``down``: the device's own report when there is one, else the validator's belief.

        ``unknown`` while nothing from the table has said either.
        """
        if self.device and self.device.get("link") in ("up", "down"):
            return str(self.device["link"])
        if not self.heard_link:
            return "unknown"
        return "up" if self.link_up else "down"

    def round_view(self) -> dict[str, Any] | None:
        rnd, shoe = self.round, self.shoe
        if rnd is None:
            return None
        game = self.game
        first, second = rnd["hands"]
        shown = [self._face_up(n, hand) for n, hand in enumerate(rnd["hands"])]
        totals = [game.total([c for c in hand if c in CARD_POINTS]) for hand in shown]  # forged, held: none
        held = bool(rnd["hidden"])
        winner = game.winner(*totals) if rnd["phase"] == "complete" and not held else None
        baccarat = game.calls_naturals
        # What the round's facts call out (a Dragon 7, a suited tie), once its result is shown.
        calls = game.called(rnd["facts"], self.variant) if winner is not None and rnd["facts"] else []
        # The cut card can make the open round the last one without a round event.
        last_hand = rnd["last_hand"] or (
            shoe is not None and shoe["last_hand_no"] is not None and shoe["last_hand_no"] == rnd["hand_no"]
        )
        # A round whose cards are held is "dealing" until they are shown: that the table judged it
        # complete (or awaiting the dealer's word on it) would tell that no third card is due, which
        # only the held faces may tell.
        phase = "dealing" if held and rnd["phase"] in ("complete", "confirming") else rnd["phase"]
        return {
            "round_id": rnd["round_id"],
            "phase": phase,
            "hand_no": rnd["hand_no"],
            "last_hand": last_hand,
            "sides": list(game.sides),
            **{
                side: _hand_view(shown[n], totals[n], baccarat)
                | {"calls": [label for on, label in calls if on in (n, None)]}
                for n, side in enumerate(game.sides)
            },
            # While a card is held back, where the next card goes would tell what the held cards are.
            "next_position": game.next_position(first, second)
            if rnd["phase"] == "dealing" and not held
            else None,
            "winner": winner,
            "betting_ends_ts": rnd["betting_ends_ts"] if rnd["phase"] == "betting" else None,
        }

    def _face_up(self, side: int, hand: list[str]) -> list[str]:
        """A side's cards as the screens may show them: a held-back card as ``BACK``."""
        hidden = self.round["hidden"] if self.round else []
        positions = self.game.positions_of(side)
        return [BACK if position in hidden else card for card, position in zip(hand, positions, strict=False)]

    def open_alerts(self) -> list[dict[str, Any]]:
        """The alerts the dealer must act on, newest first: the one on top is about the hand in play.

        Alerts for the pit (a suspect shuffle) are not the dealer's to act on, nor to see.
        Each carries ``text`` (the message with its card named as the dealer reads it) and
        ``hand`` (``HAND 7``, ``AFTER HAND 7``, or empty when no hand is known).
        """
        mine = (a for a in self.alerts.values() if a["code"] not in PIT_ONLY_CODES)
        shown = [a for a in mine if not self._cause_over(a)]
        hands = self._alert_hands
        return [
            {**a, "text": dealer_text(a["message"], a.get("card")), "hand": hands.get(a["alert_id"], "")}
            for a in sorted(shown, key=lambda a: a["alert_id"], reverse=True)
        ]

    def next_action(self) -> tuple[str, str]:
        """The dealer's next move as (text, tone); tone is ``go``, ``wait``, ``burn`` or ``stop``."""
        shoe, rnd = self.shoe, self.round_view()
        auto = self.round_control == "auto"
        if self.counting is not None:  # counted, not dealt: what the dealer does now, suspended or not
            return f"DECK CHECK: {self.counting['counted']} COUNTED - DRAW THE REST", "burn"
        if self.suspended is not None:
            return "TABLE SUSPENDED - DO NOT DEAL", "stop"
        if self.link == "down":
            return "SHOE OFFLINE - DO NOT DEAL", "stop"
        if shoe is not None and shoe["status"] == "closed":
            return "SHOE FINISHED - DO NOT DRAW", "stop"
        if rnd is not None and rnd["next_position"]:
            return f"NEXT: {position_words(rnd['next_position'])} CARD", "go"
        if rnd is not None and rnd["phase"] == "confirming":
            return "DECLARE THE WINNER", "go"
        if self.round is not None and self.round["hidden"] and rnd is not None and rnd["phase"] != "void":
            return "SQUEEZE - WAIT FOR THE REVEAL", "wait"
        if shoe is not None and shoe["status"] == "burning":
            if shoe["burn_required"] is None:
                if shoe["burn_done"] == 0:
                    return "BURN: TURN THE FIRST CARD", "burn"
                return f"BURN: {shoe['burn_done']} of ?", "burn"
            return f"BURN: {shoe['burn_done']} of {shoe['burn_required']}", "burn"
        if not self.heard_round:  # no round is known until the table says so (a shoe says only that)
            return "WAITING FOR THE TABLE", "wait"
        if rnd is not None and rnd["phase"] == "betting":
            return "BETS OPEN - DO NOT DRAW", "wait"
        if auto:
            return f"NEXT: {position_words(self.game.positions[0])} CARD", "go"
        if rnd is not None and rnd["phase"] == "complete":
            return "ROUND COMPLETE - DO NOT DRAW", "wait"
        if rnd is not None and rnd["phase"] == "void":
            return "ROUND VOID - CLEAR THE LAYOUT", "stop"
        return "WAITING FOR BETS - DO NOT DRAW", "wait"

    def history(self) -> dict[str, Any]:
        """The shoe's scoreboard as every board draws it (``scannerd/core/roads.py``), with its counts."""
        results = tuple(r for _, r in self.results)
        drawn = (self.game.sides, *results)
        if self._history is not None and self._history[0] == drawn:
            return self._history[1]  # a snapshot at every event, a hand's result every few of them
        counts = {side: sum(r.winner == side for r in results) for side in reversed(self.game.sides)}
        board: dict[str, Any] = {
            **scoreboard(list(results), self.game.sides),
            "counts": {**counts, "tie": sum(r.winner == "tie" for r in results), "hands": len(results)},
        }
        self._history = (drawn, board)
        return board

    def game_view(self) -> dict[str, Any]:
        """The game as the pages lay it out: its name, its two sides and its positions in deal order."""
        game = self.game
        return {
            "name": game.name,
            "sides": list(game.sides),
            "positions": list(game.positions),
            "marks": dict(game.marks),
        }

    def snapshot(self) -> dict[str, Any]:
        """Everything the page and the terminal view draw, JSON-ready."""
        text, tone = self.next_action()
        rnd = self.round_view()
        return {
            "table_id": self.table_id,
            "suspended": self.suspended,
            "pins": self.pins,
            "game": self.game_view(),
            "dealer_id": self.dealer_id,
            "deck_check": dict(self.counting) if self.counting else None,
            "count_offered": self._count_offered(),
            "link": self.link,
            "device": self.device,
            "shoe": dict(self.shoe) if self.shoe else None,
            "round": rnd,
            # The winner's buttons, while a hand awaits the dealer's word ([rules] confirm_result).
            "declare": [*self.game.sides, "tie"]
            if rnd is not None and rnd["phase"] == "confirming"
            else None,
            "last_card": self.last_card,
            "alerts": self.open_alerts(),
            "notice": self.notice,
            "next_action": {"text": text, "tone": tone},
            "history": self.history(),
            "recall": self.recalled(),
        }
