"""``scannerd watch``: a live terminal view of one table, from its MQTT topics on any broker.

For developers and the pit: it needs only the table's topics, not the table
PC. It keeps the same :class:`~scannerd.display.view.TableView` as the dealer
display, so the terminal and the dealer's screen can never disagree about
what the table is doing. On connecting it asks the table for its state
(``get_state``) so a round already under way shows at once; where the
broker's ACL forbids that, the retained shoe, status and device still show,
and everything else from the next event on.
"""

from __future__ import annotations

import argparse
import json
import sys
import threading
import uuid
from typing import Any, TypeVar

import paho.mqtt.client as mqtt
from paho.mqtt.enums import CallbackAPIVersion
from pydantic import BaseModel, ValidationError
from rich.console import Console, Group, RenderableType
from rich.live import Live
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

from scannerd.cards import card_name
from scannerd.commands import arguments
from scannerd.display.view import TableView, dealer_text
from scannerd.events import AlertEvent, CardEvent, DealerEvent, RoundEvent, ShoeEvent
from scannerd.payloads import DevicePayload, StatusPayload
from scannerd.topics import EVENT_KINDS

DEFAULT_PREFIX = "casino/tables"
_TONE_STYLE = {"go": "bold green", "wait": "bold white", "burn": "bold yellow", "stop": "bold white on red"}
_WINNER_STYLE = {"banker": "white on red", "player": "white on blue", "tie": "white on green"}
_BEAD_COLUMNS = 16  # the last columns of each road that are shown
_BIG_COLUMNS = 24


class TableWatch:
    """An MQTT subscriber folding one table's topics into a :class:`TableView`.

    With no ``table_id`` it follows the first table it hears from under ``prefix``.
    Messages arrive on paho's thread; ``lock`` guards the view, and ``changed``
    is set after every message that altered it.
    """

    def __init__(
        self,
        host: str,
        port: int,
        prefix: str = DEFAULT_PREFIX,
        table_id: str | None = None,
        get_state: bool = True,
        lines: bool = False,
    ) -> None:
        self.host, self.port, self.prefix = host, port, prefix.rstrip("/")
        self.table_id = table_id
        self.get_state = get_state
        self.view = TableView(table_id or "?")
        self.status: str | None = None  # the daemon's availability: online / offline
        self.connected = False
        self.lock = threading.Lock()
        self.changed = threading.Event()
        # With ``lines``: one line per message folded in, for a log or a pipe rather than a screen.
        self.lines: list[str] | None = [] if lines else None
        self._transaction = f"watch-{uuid.uuid4().hex[:12]}"
        self._client = mqtt.Client(CallbackAPIVersion.VERSION2, protocol=mqtt.MQTTv311)
        self._client.on_connect = self._on_connect
        self._client.on_disconnect = self._on_disconnect
        self._client.on_message = self._on_message
        self._client.reconnect_delay_set(1, 5)

    def start(self) -> None:
        self._client.connect_async(self.host, self.port, keepalive=30)
        self._client.loop_start()

    def stop(self) -> None:
        self._client.disconnect()
        self._client.loop_stop()

    def _base(self) -> str:
        return f"{self.prefix}/{self.table_id or '+'}"

    def _on_connect(self, client: mqtt.Client, _ud: Any, _flags: Any, rc: Any, _props: Any) -> None:
        if rc.is_failure:
            return
        with self.lock:
            self.connected = True
            self._line(f"- broker {self.host}:{self.port} connected")
        client.subscribe([(f"{self._base()}/+", 1), (f"{self._base()}/response/get_state", 1)])
        self._ask_state()
        self.changed.set()

    def _on_disconnect(self, _client: mqtt.Client, _ud: Any, _flags: Any, _rc: Any, _props: Any) -> None:
        with self.lock:
            self.connected = False
            self._line(f"- broker {self.host}:{self.port} disconnected")
        self.changed.set()

    def _ask_state(self) -> None:
        if self.get_state and self.table_id:
            topic = f"{self.prefix}/{self.table_id}/request/get_state"
            self._client.publish(topic, json.dumps({"transaction": self._transaction}), qos=1)

    def _on_message(self, _client: mqtt.Client, _ud: Any, msg: mqtt.MQTTMessage) -> None:
        levels = msg.topic[len(self.prefix) + 1 :].split("/")
        if self.table_id is None:
            self.table_id = self.view.table_id = levels[0]
            self._ask_state()
        if levels[0] != self.table_id:
            return  # another table under the same prefix
        try:
            payload = json.loads(msg.payload)
        except ValueError:
            return  # the table never publishes such a thing; someone else's message
        if not isinstance(payload, dict):
            return
        name = "/".join(levels[1:])
        with self.lock:
            changed = self._apply(name, payload)
            if changed:
                self._line(describe(name, payload))
        if changed:
            self.changed.set()

    def _apply(self, name: str, payload: dict[str, Any]) -> bool:
        """Fold one message in; anything that is not the contract is ignored, never fatal.

        Any client the broker lets in may publish under a table's topics, and an
        exception here would end paho's network thread: the screen would freeze
        while still saying CONNECTED.
        """
        if name in EVENT_KINDS:
            kind = payload.get("kind")
            event = _contract(_EVENT_MODELS.get(kind) if isinstance(kind, str) else None, payload)
            return event is not None and event.kind == name and self.view.apply(event.model_dump(mode="json"))
        if name == "status":
            status = _contract(StatusPayload, payload)
            if status is not None:
                self.status = status.state
            return status is not None
        if name == "device":
            device = _contract(DevicePayload, payload)
            if device is not None:
                self.view.set_device(device.model_dump(mode="json"))
            return device is not None
        ours = name == "response/get_state" and payload.get("transaction") == self._transaction
        if ours and payload.get("status") == "ok" and payload.get("data"):
            try:
                self.view.load_state(payload["data"])
            except (KeyError, TypeError, ValueError, AttributeError):
                return False  # not the table's answer after all
            return True
        return False

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
            return render(self.view.snapshot(), self.status, self.connected, f"{self.host}:{self.port}")


_EVENT_MODELS: dict[str, type[BaseModel]] = {
    model.model_fields["kind"].default: model
    for model in (CardEvent, RoundEvent, AlertEvent, ShoeEvent, DealerEvent)
}
_Model = TypeVar("_Model", bound=BaseModel)


def _contract(model: type[_Model] | None, payload: dict[str, Any]) -> _Model | None:
    """``payload`` as ``model``, or None when it is not one; fields a newer table adds are left out."""
    if model is None:
        return None
    try:
        return model.model_validate({k: v for k, v in payload.items() if k in model.model_fields})
    except ValidationError:
        return None


# ------------------------------------------------------------------ drawing


def _card(code: str | None) -> Text:
    if code is None:
        return Text(" ?? ", style="black on yellow")
    style = "bold red on white" if code[1] in "HD" else "bold black on white"
    return Text(f" {card_name(code)} ", style=style)


def _hand(name: str, hand: dict[str, Any], winner: bool, style: str) -> Text:
    line = Text(f"{name:<7}", style=style)
    for code in hand["cards"]:
        line.append(" ")
        line.append_text(_card(code))
    line.append(" " * (5 * (3 - len(hand["cards"]))))
    line.append(f"  {hand['total'] if hand['cards'] else '-'}", style="bold")
    if hand["natural"]:
        line.append("  NATURAL", style="bold")
    if hand["pair"]:
        line.append("  PAIR", style="bold")
    if winner:
        line.append("  WINS", style="bold green")
    return line


def describe(name: str, payload: dict[str, Any]) -> str:
    """One message as one line of text, for a log: what ``watch`` prints when not on a terminal."""
    kind = payload.get("kind")
    head = f"{payload.get('seq', '-')} {name}"
    if kind == "card":
        card = payload.get("card")
        shown = card_name(card) if card else "unread"
        return f"{head} {payload['position']} {shown} round={payload.get('round_id')}"
    if kind == "round":
        line = f"{head} {payload['round_id']} hand={payload['hand_no']} {payload['phase']}"
        for key in ("winner", "betting_time_s", "dealer_id"):
            if payload.get(key):
                line += f" {key.removesuffix('_id')}={payload[key]}"
        return line
    if kind == "alert":
        state = "acknowledged" if payload.get("acknowledged") else payload["severity"]
        text = dealer_text(payload["message"], payload.get("card"))
        return f"{head} #{payload['alert_id']} {payload['code']} {state}: {text}"
    if kind == "shoe":
        return f"{head} {payload['shoe_id']} {payload['status']} dealt={payload['cards_dealt']}"
    if kind == "dealer":
        dealer = payload["dealer_id"]
        return f"{head} {dealer} signed in" if dealer else f"{head} signed out"
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


def _bead_mark(cell: dict[str, Any]) -> Text:
    return Text(f" {cell['winner'][0].upper()}", style=_WINNER_STYLE[cell["winner"]])


def _big_mark(cell: dict[str, Any]) -> Text:
    """Three characters: the winner's letter, then the tie count (``+`` past nine)."""
    winner, ties = cell["winner"], cell["ties"]
    style = {"banker": "bold red", "player": "bold blue"}.get(winner or "", "")
    tie_mark = " " if not ties else str(ties) if ties < 10 else "+"
    return Text(f" {winner[0].upper() if winner else ' '}", style=style) + Text(tie_mark, style="bold green")


def render(view: dict[str, Any], status: str | None, connected: bool, broker: str) -> RenderableType:
    """The whole screen for one view snapshot (``TableView.snapshot()``)."""
    head = Text()
    head.append(f"TABLE {view['table_id']}", style="bold")
    if view["dealer_id"]:
        head.append(f"   dealer {view['dealer_id']}", style="bold")
    head.append(f"   broker {broker} ")
    head.append("CONNECTED" if connected else "DISCONNECTED", style="green" if connected else "bold red")
    head.append("   daemon ")
    head.append((status or "unknown").upper(), style="green" if status == "online" else "yellow")
    head.append("   shoe ")
    # A table whose daemon is offline says nothing about its shoe or round: what was last heard
    # is history, not the table as it is now.
    offline = status == "offline"
    link = "unknown" if offline else view["link"]
    link_text = {"up": ("CONNECTED", "green"), "down": ("OFFLINE", "bold red")}.get(
        link, ("UNKNOWN", "yellow")
    )
    head.append(*link_text)

    action = view["next_action"]
    if offline:
        action = {"text": "TABLE OFFLINE - DAEMON NOT RUNNING", "tone": "stop"}
    parts: list[RenderableType] = [head, Text(f" {action['text']} ", style=_TONE_STYLE[action["tone"]])]
    for alert in view["alerts"]:
        style = "bold white on red" if alert["severity"] == "misdeal" else "black on yellow"
        where = f" {alert['hand']}" if alert["hand"] else ""
        line = f" {alert['severity'].upper()} #{alert['alert_id']}{where} {alert['code']}: {alert['text']} "
        parts.append(Text(line, style=style))

    rnd = view["round"]
    if rnd:
        title = f"Round {rnd['round_id']} \u00b7 hand {rnd['hand_no']} \u00b7 {rnd['phase']}"
        if rnd["last_hand"]:
            title += " \u00b7 LAST HAND"
        lines: list[RenderableType] = [
            _hand("PLAYER", rnd["player"], rnd["winner"] == "player", "bold blue"),
            _hand("BANKER", rnd["banker"], rnd["winner"] == "banker", "bold red"),
        ]
        if rnd["winner"] == "tie":
            lines.append(Text("TIE", style="bold white on green"))
        hands = Group(*lines)
        parts.append(Panel(hands, title=title, title_align="left"))

    shoe = view["shoe"]
    if shoe:
        burn = (
            "none" if shoe["burn_required"] == 0 else f"{shoe['burn_done']} of {shoe['burn_required'] or '?'}"
        )
        cut = f"out, last hand {shoe['last_hand_no']}" if shoe["cut_card_seen"] else "not yet"
        parts.append(
            Text(
                f"Shoe {shoe['shoe_id']} {shoe['status']} \u00b7 dealt {shoe['cards_dealt']} \u00b7 "
                f"left {shoe['cards_remaining']} \u00b7 burn {burn} \u00b7 cut card {cut}"
            )
        )
    else:
        parts.append(Text("No shoe started", style="dim"))
    if view["notice"]:
        parts.append(Text(view["notice"], style="yellow"))

    history = view["history"]
    counts = history["counts"]
    roads = Table.grid(padding=(0, 3))
    roads.add_row(Text("Bead road", style="dim"), Text("Big road", style="dim"))
    roads.add_row(
        _road(history, "bead", _BEAD_COLUMNS, _bead_mark, " \u00b7"),
        _road(history, "big", _BIG_COLUMNS, _big_mark, " \u00b7 "),
    )
    title = f"B {counts['banker']}  P {counts['player']}  T {counts['tie']}  \u00b7  {counts['hands']} hands"
    parts.append(Panel(roads, title=title, title_align="left"))
    return Group(*parts)


# ------------------------------------------------------------------ the command


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--host", type=arguments.host_name, default="localhost", help="broker host (default localhost)"
    )
    parser.add_argument("--port", type=arguments.port_number, default=1883, help="broker port (default 1883)")
    parser.add_argument(
        "--prefix",
        type=arguments.topic_prefix,
        default=DEFAULT_PREFIX,
        help=f"topic prefix (default {DEFAULT_PREFIX})",
    )
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
    # Redrawing a screen into a file or a pipe leaves a mess: there, one line per message instead.
    on_terminal = sys.stdout.isatty()
    watch = TableWatch(
        args.host, args.port, args.prefix, args.table_id, args.get_state, lines=not on_terminal
    )
    watch.start()
    try:
        if not on_terminal:
            while True:
                if watch.changed.wait(1.0):
                    watch.changed.clear()
                    for line in watch.take_lines():
                        print(line, flush=True)
        with Live(watch.screen(), console=Console(), auto_refresh=False) as live:
            while True:
                if watch.changed.wait(1.0):
                    watch.changed.clear()
                    live.update(watch.screen(), refresh=True)
    except KeyboardInterrupt:
        return 0
    finally:
        watch.stop()
