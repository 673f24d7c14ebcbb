"""The one event builder: every event's ``seq``, the alerts held open, and each event's plain data.

Events are built as plain data, every field of the model in the model's order
and of its type (``ts`` a float even when an input's was an int), because
``scannerd.contract.topics`` encodes them as they are: a pydantic model per
event, validated and encoded, cost several times as much
(``bench/validator_throughput.py``), and tests/contract/test_event_data.py
holds the bytes to the model's. Judges say what happened; the builder alone
numbers it, so ``seq`` and ``alert_id`` follow the order the judges speak in.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from scannerd.contract.alert_catalogue import ALERTS
from scannerd.contract.events import (
    AlertData,
    AlertEvent,
    AnchorData,
    CardData,
    ConfigData,
    Data,
    DealerData,
    DeckCheckData,
    EventData,
    RevealData,
    RoundData,
    ShoeData,
    SuspensionData,
)
from scannerd.core.games import Game
from scannerd.core.house import HouseRules
from scannerd.core.inputs import Anchored, ConfigChanged
from scannerd.core.judges.table_top import RoundState, TableTop

Acted = dict[str, str]
"""An operator action's ``by`` and ``via``, as its events carry them (empty: no one's action)."""


class EventBuilder:
    """Numbers and builds the events of one input (``begin``), and keeps the alerts still open.

    ``suspending`` is the first alert of the input that the house suspends on
    (``[rules] suspend_on``): the authority judges it once the input is judged.
    """

    def __init__(self, table_id: str, rules: HouseRules, game: Game, top: TableTop) -> None:
        self.table_id = table_id
        self.rules = rules
        self.game = game
        self.top = top
        self.next_seq = 1
        self.open_alerts: dict[int, AlertData] = {}
        self.out: list[EventData] = []
        self.suspending: dict[str, Any] | None = None
        self.identity = rules.identity()  # stated on each complete round
        # Read once, here for every judge that asks (each read of the rules, a pydantic model, is a
        # generic lookup compiled): a squeezing table holds cards face down.
        self.squeeze = rules.squeeze
        self.running: dict[str, Any] | None = None  # what judges, as a start said it (``run_under``)

    def begin(self) -> list[EventData]:
        """A new input: the list its events go to, in publish order."""
        out: list[EventData] = []
        self.out = out
        return out

    def _emit(self, event: EventData) -> None:
        self.next_seq += 1
        self.out.append(event)

    def _shoe_id(self) -> str | None:
        shoe = self.top.shoe
        return shoe.shoe_id if shoe else None

    def card(
        self, ts: float, position: str, card: str | None, round_id: str | None, card_no: int | None
    ) -> None:
        self._emit(
            CardData(
                seq=self.next_seq,
                ts=float(ts),
                table_id=self.table_id,
                shoe_id=self._shoe_id(),
                kind="card",
                round_id=round_id,
                position=position,
                card=card,
                shoe_card_no=card_no,
            )
        )

    def alert(
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
        """Raise an alert; one that is not info is held open until acknowledged."""
        alert = AlertData(
            seq=self.next_seq,
            ts=float(ts),
            table_id=self.table_id,
            shoe_id=self._shoe_id(),
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
            if suspends and code in self.rules.suspend_on and not self.suspending:
                self.suspending = {"cause": code, "alert_id": alert["alert_id"], "message": message}
        self._emit(alert)

    def case_alert(self, ts: float, code: str, case: str, round_id: str | None = None) -> None:
        """An alert in one of its code's other cases, which may differ in severity as well as words."""
        said = ALERTS[code].case(case)
        self.alert(ts, code, said.say(), None, round_id, said.severity, suspends=said.suspends)

    def restate(self, ts: float, alert_id: int, message: str, shuffle: dict[str, Any]) -> bool:
        """Publish an alert still open again with new words and figures, under its ``alert_id``.

        False when it is no longer open (acknowledged): the caller raises a new one.
        """
        alert = self.open_alerts.get(alert_id)
        if alert is None:
            return False
        alert = AlertData(alert, seq=self.next_seq, ts=float(ts), message=message, shuffle=Data(shuffle))
        self.open_alerts[alert_id] = alert
        self._emit(alert)
        return True

    def acknowledge(self, ts: float, alert_id: int, acted: Acted, cleared: bool = False) -> None:
        """The open alert ``alert_id`` again, acknowledged (``cleared`` when the table did it itself)."""
        alert = AlertData(
            self.open_alerts.pop(alert_id), seq=self.next_seq, ts=float(ts), acknowledged=True, **acted
        )
        if cleared:
            alert["cleared"] = True
        self._emit(alert)

    def take_suspending(self) -> dict[str, Any] | None:
        """The alert of this input that may suspend the table, if any; the next input starts clean."""
        suspending, self.suspending = self.suspending, None
        return suspending

    def round(
        self,
        ts: float,
        rnd: RoundState,
        reason: str | None = None,
        detail: str | None = None,
        acted: Acted | None = None,
    ) -> RoundData:
        game = self.game
        p, b = rnd.player, rnd.banker  # the first side's cards and the second's
        p_total, b_total = game.total(p), game.total(b)
        complete = rnd.phase == "complete"
        baccarat = complete and game.calls_naturals
        natural = len(p) == 2 and len(b) == 2 and (p_total >= 8 or b_total >= 8)
        # Made from a dict display, not keywords: the sides' keys are the game's, and a call with
        # ``**`` is a generic one in the compiled build (docs/performance.md). Three a hand.
        event = RoundData(
            {
                "seq": self.next_seq,
                "ts": float(ts),
                "table_id": self.table_id,
                "shoe_id": self._shoe_id(),
                "kind": "round",
                "round_id": rnd.round_id,
                "phase": rnd.phase,
                "hand_no": rnd.hand_no,
                "last_hand": rnd.last_hand,
                # copies: the round's hands grow after this event
                game.sides[0]: Data({"cards": p.copy(), "total": p_total}),
                game.sides[1]: Data({"cards": b.copy(), "total": b_total}),
                "winner": game.winner(p_total, b_total) if complete else None,
                "natural": natural if baccarat else None,
                "player_pair": p[0][0] == p[1][0] if baccarat else None,
                "banker_pair": b[0][0] == b[1][0] if baccarat else None,
                "reason": reason,
                "detail": detail,
            }
        )
        if rnd.betting_time is not None:
            event["betting_time_s"] = float(rnd.betting_time)
            event["betting_ends_ts"] = float(rnd.betting_ends)  # type: ignore[arg-type]
        if rnd.dealer_id is not None:
            event["dealer_id"] = rnd.dealer_id
        if self.squeeze:
            event["squeeze"] = True
        if self.identity is not None and rnd.phase in ("complete", "void"):  # a table that chose its game
            event["times"] = Data(rnd.times(ts))
        if complete and self.identity is not None:
            event["facts"] = Data(game.facts(p, b))
            event["identity"] = Data(self.identity)
        if complete and rnd.confirmed_via is not None:  # the dealer's word it waited for
            if rnd.confirmed_by is not None:
                event["confirmed_by"] = rnd.confirmed_by
            event["confirmed_via"] = rnd.confirmed_via
        if acted:
            event.update(acted)
        self._emit(event)
        return event

    def shoe(self, ts: float, figures: dict[str, Any], acted: Acted | None = None) -> None:
        """The shoe's event: its figures as ``get_state`` shows them (``ShoeJudge.view``)."""
        event = ShoeData(
            {
                "seq": self.next_seq,
                "ts": float(ts),
                "table_id": self.table_id,
                "shoe_id": self._shoe_id(),
                "kind": "shoe",
                **figures,
            }
        )
        if "identity" in figures:
            event["identity"] = Data(figures["identity"])
        roads = self.top.roads
        if roads is not None:  # the columns of the last hand, never changed once carried
            event["roads"] = Data(roads.columns(self.game.sides))
        if acted:
            event.update(acted)
        self._emit(event)

    def reveal(
        self, ts: float, round_id: str, positions: list[str], reason: str, acted: Acted | None = None
    ) -> None:
        self._emit(
            RevealData(
                seq=self.next_seq,
                ts=float(ts),
                table_id=self.table_id,
                shoe_id=self._shoe_id(),
                kind="reveal",
                round_id=round_id,
                positions=positions,
                reason=reason,
                **(acted or {}),
            )
        )

    def suspension(
        self,
        ts: float,
        suspended: dict[str, Any],
        now: bool,
        reason: str | None = None,
        acted: Acted | None = None,
    ) -> None:
        self._emit(
            SuspensionData(
                seq=self.next_seq,
                ts=float(ts),
                table_id=self.table_id,
                shoe_id=self._shoe_id(),
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

    def deck_check(self, ts: float, figures: dict[str, Any], acted: Acted) -> None:
        """A deck check's start or receipt: its figures as ``DeckCheck`` counts them."""
        event = DeckCheckData(
            seq=self.next_seq,
            ts=float(ts),
            table_id=self.table_id,
            shoe_id=self._shoe_id(),
            kind="deck_check",
            **figures,
        )
        if event["device"] is not None:
            event["device"] = Data(event["device"])
        event.update(acted)
        self._emit(event)

    def dealer(self, ts: float, dealer_id: str | None, acted: Acted) -> None:
        self._emit(
            DealerData(
                seq=self.next_seq,
                ts=float(ts),
                table_id=self.table_id,
                shoe_id=self._shoe_id(),
                kind="dealer",
                dealer_id=dealer_id,
                **acted,
            )
        )

    def anchor(self, inp: Anchored) -> None:
        """About a file, not the deal: it names no shoe."""
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

    def config(self, inp: ConfigChanged) -> None:
        """About the table PC, not the deal: it names no shoe."""
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

    def run_under(self, running: Mapping[str, Any]) -> None:
        """What judges from now on, stated in every identity (``HouseRules.identity``)."""
        self.running = dict(running)
        self.identity = self.rules.identity(running)

    def saved(self) -> dict[str, Any]:
        """The builder's part of the snapshot; what judges only once a start has said it."""
        saved = {"next_seq": self.next_seq, "open_alerts": [dict(a) for a in self.open_alerts.values()]}
        if self.running is not None:
            saved["running"] = self.running
        return saved

    def restore(self, snap: dict[str, Any]) -> None:
        if snap.get("running") is not None:
            self.run_under(snap["running"])
        self.next_seq = int(snap["next_seq"])
        for raw in snap["open_alerts"]:
            alert = AlertData.of(AlertEvent.model_validate(raw))
            self.open_alerts[alert.alert_id] = alert
