"""``scannerd watch``: a live terminal view of one table, from its MQTT topics on any broker.

For developers and the pit: it needs only the table's topics, not the table
PC. It keeps the same :class:`~scannerd.display.view.TableView` as the dealer
display, so the terminal and the dealer's screen can never disagree about
what the table is doing. It hears the table through the game server's own
client library (:mod:`scannerd.client`), so the project's consumer is used
every day. Whenever it hears the table is online (its retained status on
connecting, or the daemon starting again) it asks the table for its state
(``get_state``) so a round already under way shows at once; where the
broker's ACL forbids that, the retained shoe, status and device still show,
and everything else from the next event on.
"""

from __future__ import annotations

import argparse
import sqlite3
import sys
import threading
import uuid
from collections.abc import Callable
from typing import Any, assert_never

from rich.console import Console, Group, RenderableType
from rich.live import Live
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

from scannerd.client import Availability, BrokerRefused, Gap, RequestTimeout, TableClient
from scannerd.commands import arguments
from scannerd.contract.events import Event, kind_of
from scannerd.core.cards import card_name
from scannerd.core.games import GAMES
from scannerd.core.judges.deck_check import deck_check_text
from scannerd.display.view import BACK, TableView, dealer_text
from scannerd.link.mqtt_settings import MqttSettings
from scannerd.runtime import logs
from scannerd.runtime.log_settings import LogSettings

STATE_TIMEOUT_S = 5.0
"""How long a ``get_state`` may take; events wait behind it, so the state comes before them."""
_TONE_STYLE = {"go": "bold green", "wait": "bold white", "burn": "bold yellow", "stop": "bold white on red"}
# Each result as its game colours it on every screen (``Game.colours``).
_COLOURS = {result: colour for game in GAMES.values() for result, colour in game.colours.items()}
_WINNER_STYLE = {result: f"bold white on {colour}" for result, colour in _COLOURS.items()}
_SIDE_STYLE = {result: f"bold {colour}" for result, colour in _COLOURS.items()}
_BEAD_COLUMNS = 16  # the last columns of each road that are shown
_BIG_COLUMNS = 24
_DERIVED_COLUMNS = 12
# A derived road's mark: filled red, hollow blue, so the shape says it where a terminal has no colour.
_MARK = {"red": Text("\u25cf", style="bold red"), "blue": Text("\u25cb", style="bold blue")}
_DERIVED_NAMES = {"big_eye_boy": "Big Eye Boy", "small_road": "Small Road", "cockroach_pig": "Cockroach Pig"}


class TableWatch:
    """One table's topics folded into a :class:`TableView`, through the game server's client library.

    With no ``table_id`` it follows the first table it hears from under the settings' prefix.
    It keeps nothing after it stops: its marks are in memory and its session ends
    with its connection. The client's callbacks run on its delivery thread, one at
    a time and in the order the broker sent them; ``lock`` guards the view for the
    screen, and ``changed`` is set after every message that altered it.
    """

    def __init__(
        self,
        settings: MqttSettings,
        table_id: str | None = None,
        get_state: bool = True,
        lines: bool = False,
    ) -> None:
        self.broker = f"{settings.host}:{settings.port}"
        self.table_id = table_id
        self.get_state = get_state
        self.view = TableView(table_id or "?")
        self.status: str | None = None  # the daemon's availability: online / offline
        self.connected = False
        self.lock = threading.Lock()
        self.changed = threading.Event()
        # With ``lines``: one line per message folded in, for a log or a pipe rather than a screen.
        self.lines: list[str] | None = [] if lines else None
        self._availability = Availability()
        self._state_asked = False  # since this connection, or since the table was last offline
        self._client = TableClient.from_settings(
            settings,
            client_id=f"scannerd-watch-{uuid.uuid4().hex[:12]}",
            marks=":memory:",
            on_event=self._on_event,
            on_gap=self._on_gap,
            on_availability=self._on_availability,
            on_connection=self._on_connection,
            on_retained=self._on_retained,
            tables=[table_id] if table_id else None,
            session_expiry_s=0,
            attended=True,
            ask_state=get_state,  # --no-get-state: under an ACL that forbids requests, never wait on one
        )

    def start(self) -> None:
        """Connect in the background: until a broker answers, the screen says DISCONNECTED.

        Into a pipe that is a line now: connecting may take a while, and silence looks like a hang.
        """
        with self.lock:
            self._line(f"- broker {self.broker} waiting for it")
        self.changed.set()
        self._client.start(timeout=None)

    @property
    def refusal(self) -> BrokerRefused | None:
        """Why the broker will not have the watch (its login, its version), once said: nothing retries."""
        return self._client.refusal

    def stop(self) -> None:
        self._client.stop()

    # ------------------------------------------------------------------ the client's delivery thread

    def _on_connection(self, connected: bool) -> None:
        with self.lock:
            self.connected = connected
            self._state_asked = False  # a new connection: what was missed meanwhile is in the state
            self._line(f"- broker {self.broker} {'connected' if connected else 'disconnected'}")
        self.changed.set()
        if connected and not self.get_state and self.table_id is not None:
            # What was missed meanwhile is gone for good and there is no state to ask for: show the
            # next event as it comes rather than wait for the missed ones as a gap.
            self._client.forget(self.table_id)

    def _on_event(self, event: Event, _db: sqlite3.Connection) -> None:
        self._fold(event)

    def _on_retained(self, event: Event) -> None:
        # The table's last shoe, as the broker kept it: what --no-get-state has of the shoe at first.
        self._fold(event)

    def _fold(self, event: Event) -> None:
        if not self._ours(event.table_id):
            return
        payload = event.model_dump(mode="json")
        with self.lock:
            changed = self.view.apply(payload)
            if changed:
                self._line(describe(event.kind, payload, squeeze=self.view.squeeze))
        if changed:
            self.changed.set()

    def _on_availability(self, table_id: str, availability: Availability) -> None:
        if not self._ours(table_id):
            return
        old, self._availability = self._availability, availability
        with self.lock:
            if availability.status is not None and availability.status != old.status:
                self.status = availability.status.state
                self._line(describe("status", availability.status.model_dump(mode="json")))
            if availability.device is not None and availability.device != old.device:
                self.view.set_device(availability.device.model_dump(mode="json"))
                self._line(describe("device", availability.device.model_dump(mode="json")))
        self.changed.set()
        if not availability.online:
            self._state_asked = False  # when it is back, it has a new state to tell
        elif self.get_state and not self._state_asked:
            self._state_asked = True
            self._ask_state()

    def _ask_state(self) -> None:
        """The table's state as the view's truth, before any event behind it is folded in.

        Asked on the delivery thread, so the events that come meanwhile wait: those the state
        includes are then old news to the view, the rest come after it in order.
        """
        assert self.table_id is not None  # set by _ours before any table is heard
        try:
            response = self._client.request(self.table_id, "get_state", timeout=STATE_TIMEOUT_S)
        except RequestTimeout:
            return  # the events still show, from the next one on
        if response.status == "ok" and response.data and self._load_state(response.data):
            # Whatever was missed before (a reconnection) is in the state: the next event is due now.
            self._client.skip_to(self.table_id, self.view.seq)

    def _on_gap(self, gap: Gap) -> None:
        # Events were lost on the way; the client asked the table where it is now (unless it may not).
        if self._ours(gap.table_id) and gap.state:
            self._load_state(gap.state)

    def _load_state(self, state: dict[str, Any]) -> bool:
        with self.lock:
            try:
                self.view.load_state(state)
            except (KeyError, TypeError, ValueError, AttributeError):
                return False  # not the table's answer after all
            self._line(describe("response/get_state", {"status": "ok"}))
        self.changed.set()
        return True

    def _ours(self, table_id: str) -> bool:
        """Whether the table is the one watched; without ``table_id``, the first one heard is."""
        if self.table_id is None:
            with self.lock:
                self.table_id = self.view.table_id = table_id
        return table_id == self.table_id

    # ------------------------------------------------------------------ the screen's thread

    def _line(self, line: str) -> None:
        if self.lines is not None:
            self.lines.append(line)

    def take_lines(self) -> list[str]:
        """The lines of the messages folded in since the last call (with ``lines`` set)."""
        with self.lock:
            taken, self.lines = self.lines or [], [] if self.lines is not None else None
        return taken

    def screen(self) -> RenderableType:
        """The terminal screen for the view as it is now."""
        with self.lock:
            return render(self.view.snapshot(), self.status, self.connected, self.broker)


# ------------------------------------------------------------------ drawing


def _card(code: str | None) -> Text:
    if code is None:
        return Text(" ?? ", style="black on yellow")
    if code == BACK:  # squeezed: face down until revealed
        return Text(" \u2592\u2592 ", style="white on dark_red")
    style = "bold red on white" if code[1] in "HD" else "bold black on white"
    return Text(f" {card_name(code)} ", style=style)


def _hand(name: str, hand: dict[str, Any], winner: bool, style: str) -> Text:
    line = Text(f"{name:<7}", style=style)
    for code in hand["cards"]:
        line.append(" ")
        line.append_text(_card(code))
    line.append(" " * (5 * (3 - len(hand["cards"]))))
    known = hand["cards"] and hand["total"] is not None  # no partial count while a card is held
    line.append(f"  {hand['total'] if known else '-'}", style="bold")
    if hand["natural"]:
        line.append("  NATURAL", style="bold")
    if hand["pair"]:
        line.append("  PAIR", style="bold")
    if winner:
        line.append("  WINS", style="bold green")
    for label in hand.get("calls", ()):
        line.append(f"  {label}", style="bold black on yellow")
    return line


def describe(name: str, payload: dict[str, Any], *, squeeze: bool = False) -> str:
    """One message as one line of text, for a log: what ``watch`` prints when not on a terminal.

    At a squeeze table a card of a hand is "face down": its face is the screens' only once revealed.
    """
    kind = kind_of(payload)
    head = f"{payload.get('seq', '-')} {name}"
    match kind:
        case "card":
            card = payload.get("card")
            dealt = payload["position"] not in ("burn", "discard", "count")
            shown = "face down" if squeeze and dealt else card_name(card) if card else "unread"
            return f"{head} {payload['position']} {shown} round={payload.get('round_id')}"
        case "round":
            return _round_line(head, payload, squeeze)
        case "alert":
            state = "acknowledged" if payload.get("acknowledged") else payload["severity"]
            text = dealer_text(payload["message"], payload.get("card"))
            return f"{head} {payload['code']} {state}: {text}"  # the head's seq is the machine's name for it
        case "shoe":
            return f"{head} {payload['shoe_id']} {payload['status']} dealt={payload['cards_dealt']}"
        case "reveal":
            return f"{head} {payload['round_id']} {' '.join(payload['positions'])} ({payload['reason']})"
        case "dealer":
            dealer = payload["dealer_id"]
            return f"{head} {dealer} signed in" if dealer else f"{head} signed out"
        case "suspension":
            return f"{head} {'SUSPENDED ' + str(payload['cause']) if payload['suspended'] else 'resumed'}"
        case "deck_check":
            return f"{head} {deck_check_text(payload)}"
        case "anchor" | "config":
            return f"{head} {payload.get('file') or payload.get('digest', '')}".rstrip()
        case None:
            return _state_line(name, payload)  # a state topic (status, device) or an answer
        case _:
            assert_never(kind)


def _round_line(head: str, payload: dict[str, Any], squeeze: bool) -> str:
    line = f"{head} {payload['round_id']} hand={payload['hand_no']} {payload['phase']}"
    # At a squeeze table the winner waits for the reveal, as on the screens.
    for key in ("betting_time_s", "dealer_id") if squeeze else ("winner", "betting_time_s", "dealer_id"):
        if payload.get(key):
            line += f" {key.removesuffix('_id')}={payload[key]}"
    return line


def _state_line(name: str, payload: dict[str, Any]) -> str:
    if name == "status":
        return f"- status {payload['state']}"
    if name == "device":
        return f"- device link={payload.get('link')}"
    return f"- {name} {payload.get('status', '')}".rstrip()


def _road(history: dict[str, Any], name: str, shown: int, mark: Any, empty: str) -> Text:
    """Road ``name`` of the history as a character grid (``empty`` marks a free cell), last columns only."""
    columns, rows = history[f"{name}_columns"], history["rows"]
    first = max(0, columns - shown)
    grid = {(c["col"], c["row"]): mark(c) for c in history[name] if c["col"] >= first}
    out = Text()
    for row in range(rows):
        for col in range(first, max(columns, first + 1)):
            out.append_text(grid.get((col, row), Text(empty, style="dim")))
        if row < rows - 1:
            out.append("\n")
    return out


def _bead_mark(cell: dict[str, Any], marks: dict[str, str]) -> Text:
    return Text(f" {marks[cell['winner']]}", style=_WINNER_STYLE[cell["winner"]])


def _big_mark(cell: dict[str, Any], marks: dict[str, str]) -> Text:
    """Three characters: the winner's mark (``Game.marks``), then the tie count (``+`` past nine)."""
    winner, ties = cell["winner"], cell["ties"]
    style = _SIDE_STYLE.get(winner or "", "")
    tie_mark = " " if not ties else str(ties) if ties < 10 else "+"
    return Text(f" {marks[winner] if winner else ' '}", style=style) + Text(tie_mark, style="bold green")


def render(view: dict[str, Any], status: str | None, connected: bool, broker: str) -> RenderableType:
    """The whole screen for one view snapshot (``TableView.snapshot()``)."""
    # A table whose daemon is offline says nothing about its shoe or round: what was last heard
    # is history, not the table as it is now.
    offline = status == "offline"
    action = view["next_action"]
    if offline:
        action = {"text": "TABLE OFFLINE - DAEMON NOT RUNNING", "tone": "stop"}
    parts: list[RenderableType] = [
        _head(view, status, connected, broker),
        Text(f" {action['text']} ", style=_TONE_STYLE[action["tone"]]),
    ]
    for alert in view["alerts"]:
        style = "bold white on red" if alert["severity"] == "misdeal" else "black on yellow"
        where = f" {alert['hand']}" if alert["hand"] else ""
        line = f" {alert['severity'].upper()}{where} {alert['code'].replace('_', ' ')}: {alert['text']} "
        parts.append(Text(line, style=style))
    if view["round"]:
        parts.append(_round_panel(view["round"]))
    parts.append(_shoe_line(view["shoe"]))
    if view["notice"]:
        parts.append(Text(view["notice"], style="yellow"))
    parts.append(_roads_panel(view["history"], view["game"]["marks"]))
    if view["recall"]:
        parts.append(_recall_panel(view["recall"], view["game"]["sides"]))
    return Group(*parts)


def recall_line(hand: dict[str, Any], sides: list[str]) -> str:
    """One recalled hand on one line: number, result, each side's cards in order, who dealt, misdeals."""
    if hand["phase"] == "void":
        result = f"VOID {hand['reason'] or ''}".rstrip()
    elif hand["winner"] is None:
        result = "not yet revealed"
    else:
        totals = "-".join(str(hand["totals"][side]) for side in sides)
        result = f"{'TIE' if hand['winner'] == 'tie' else hand['winner'].upper() + ' WINS'} {totals}"
    cards = "  ".join(
        f"{side[0].upper()} "
        + " ".join(
            "face down" if c["card"] == BACK else card_name(c["card"])
            for c in hand["cards"]
            if c["position"].startswith(side)
        )
        for side in sides
    )
    misdeals = f"  misdeals {' '.join(hand['misdeals'])}" if hand["misdeals"] else ""
    return f"#{hand['hand_no']} {result}  {cards}  {hand['round_id']} {hand['dealer_id'] or '-'}{misdeals}"


def _recall_panel(hands: list[dict[str, Any]], sides: list[str]) -> Panel:
    lines = [Text(recall_line(hand, sides)) for hand in hands]
    return Panel(Group(*lines), title="Last hands, newest first", title_align="left")


def _head(view: dict[str, Any], status: str | None, connected: bool, broker: str) -> Text:
    head = Text()
    head.append(f"TABLE {view['table_id']}", style="bold")
    if view["dealer_id"]:
        head.append(f"   dealer {view['dealer_id']}", style="bold")
    head.append(f"   broker {broker} ")
    head.append("CONNECTED" if connected else "DISCONNECTED", style="green" if connected else "bold red")
    head.append("   daemon ")
    head.append((status or "unknown").upper(), style="green" if status == "online" else "yellow")
    head.append("   shoe ")
    link = "unknown" if status == "offline" else view["link"]
    link_text = {"up": ("CONNECTED", "green"), "down": ("OFFLINE", "bold red")}.get(
        link, ("UNKNOWN", "yellow")
    )
    head.append(*link_text)
    return head


def _round_panel(rnd: dict[str, Any]) -> Panel:
    title = f"Round {rnd['round_id']} \u00b7 hand {rnd['hand_no']} \u00b7 {rnd['phase']}"
    if rnd["last_hand"]:
        title += " \u00b7 LAST HAND"
    lines: list[RenderableType] = [
        _hand(side.upper(), rnd[side], rnd["winner"] == side, _SIDE_STYLE[side]) for side in rnd["sides"]
    ]
    if rnd["winner"] == "tie":
        lines.append(Text("TIE", style="bold white on green"))
    return Panel(Group(*lines), title=title, title_align="left")


def _shoe_line(shoe: dict[str, Any] | None) -> Text:
    if not shoe:
        return Text("No shoe started", style="dim")
    burn = "none" if shoe["burn_required"] == 0 else f"{shoe['burn_done']} of {shoe['burn_required'] or '?'}"
    cut = f"out, last hand {shoe['last_hand_no']}" if shoe["cut_card_seen"] else "not yet"
    return Text(
        f"Shoe {shoe['shoe_id']} {shoe['status']} \u00b7 dealt {shoe['cards_dealt']} \u00b7 "
        f"left {shoe['cards_remaining']} \u00b7 burn {burn} \u00b7 cut card {cut}"
    )


def _roads_panel(history: dict[str, Any], marks: dict[str, str]) -> Panel:
    counts = history["counts"]
    roads = Table.grid(padding=(0, 3))
    roads.add_row(Text("Bead road", style="dim"), Text("Big road", style="dim"))
    roads.add_row(
        _road(history, "bead", _BEAD_COLUMNS, lambda c: _bead_mark(c, marks), " \u00b7"),
        _road(history, "big", _BIG_COLUMNS, lambda c: _big_mark(c, marks), " \u00b7 "),
    )
    derived = Table.grid(padding=(0, 3))
    derived.add_row(*(Text(name, style="dim") for name in _DERIVED_NAMES.values()), Text("Ask", style="dim"))
    derived.add_row(
        *(_road(history, road, _DERIVED_COLUMNS, _derived_mark, "\u00b7") for road in _DERIVED_NAMES),
        _ask(history["ask"], marks),
    )
    sides = "  ".join(f"{k.upper()} ({marks[k]}) {counts[k]}" for k in marks)  # the game's order and marks
    return Panel(Group(roads, derived), title=f"{sides}  \u00b7  {counts['hands']} hands", title_align="left")


def _derived_mark(cell: dict[str, Any]) -> Text:
    return _MARK[cell["mark"]]


def _ask(asked: dict[str, dict[str, str | None]], marks: dict[str, str]) -> Text:
    """For a next hand of each side, the mark each derived road would add, in the roads' order."""
    out = Text()
    for side, roads in asked.items():
        out.append(f"{marks[side]} ", style=_SIDE_STYLE.get(side, ""))
        for mark in roads.values():
            out.append_text(_MARK[mark] if mark else Text("-", style="dim"))
        out.append("\n")
    out.rstrip()
    return out


# ------------------------------------------------------------------ the command


def add_arguments(parser: argparse.ArgumentParser) -> None:
    # MQTT 3.1.1 unless told otherwise: every broker speaks it, the demo's embedded one too.
    arguments.add_broker_arguments(parser, protocol="3.1.1")
    parser.add_argument(
        "--table-id", type=arguments.table_id, help="the table to watch (default: the first one heard from)"
    )
    parser.add_argument(
        "--no-get-state",
        dest="get_state",
        action="store_false",
        help="do not ask the table for its state on connecting (for brokers that forbid requests)",
    )


def run(args: argparse.Namespace) -> int:
    try:
        settings = arguments.broker_settings(args)
    except ValueError as exc:
        print(f"watch: {exc}", file=sys.stderr)
        return 2
    # stdout is the view's; the client's log (messages that are not the contract, lost events)
    # goes to stderr, and only what is worth a look.
    logs.configure(LogSettings(level="warning"), args.table_id or "watch")
    watch = TableWatch(settings, args.table_id, args.get_state, lines=not sys.stdout.isatty())
    watch.start()
    try:
        follow(watch, lambda: watch.refusal is None)
    except KeyboardInterrupt:
        return 0
    finally:
        watch.stop()
    assert watch.refusal is not None  # what ends follow
    print(f"watch: {arguments.refusal_line(watch.refusal)}", file=sys.stderr)
    return 1


def follow(watch: TableWatch, going: Callable[[], bool]) -> None:
    """Show the table while ``going()``: a line per message for a watch that keeps lines, else a screen.

    Redrawing a screen into a file or a pipe leaves a mess, and rich draws it there only once it
    ends: there, lines, each as its message comes. ``going`` is asked at least twice a second,
    so a deadline or a refusal ends it with no message to wake it.
    """
    if watch.lines is not None:
        while going():
            if watch.changed.wait(0.5):
                watch.changed.clear()
                for line in watch.take_lines():
                    print(line, flush=True)
        return
    with Live(watch.screen(), console=Console(), auto_refresh=False) as live:
        while going():
            if watch.changed.wait(0.5):
                watch.changed.clear()
                live.update(watch.screen(), refresh=True)
