"""A table for the dealer-display tests and screenshots: a real validator feeding a real Display.

Wired as the daemon wires them (one lock, each batch of events to the display), without the
device, the outbox or MQTT, so a page test sets a table up in milliseconds. The states the
layout tests judge and ``python -m tests.support.display_screens`` photographs are built here, once.
"""

from __future__ import annotations

import functools
import json
import random
import string
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from scannerd.contract.alert_catalogue import ALERTS, message
from scannerd.contract.events import EventData
from scannerd.contract.requests import Response, parse_request
from scannerd.core.cards import ALL_CARDS, CARD_POINTS
from scannerd.core.games import played
from scannerd.core.house import HouseRules
from scannerd.core.inputs import Actor, CardDrawn, CutCardSeen, Fault, ValidatorInput
from scannerd.core.table import execute
from scannerd.core.validator import Validator
from scannerd.display.server import Display
from scannerd.display.settings import DisplaySettings, OverlaySettings
from scannerd.staff.roster import Member, Roster, StaffFile, hash_pin, write

# Player 2+3=5 draws; Banker K+4=4 draws on a player third of 2.
SIX_CARD_ROUND = ("2H", "KS", "3C", "4D", "2C", "5S")
# The same, but the banker's third makes 7 as well: a tie with three cards on each side.
SIX_CARD_TIE = ("2H", "KS", "3C", "4D", "2C", "3S")
NATURAL_ROUND = ("9H", "2S", "9C", "3D")
# Cards for extra-card misdeals, ten of them: every one a different rank, so no hand's pair changes.
EXTRA_CARDS = ("AC", "TS", "QH", "7D", "JC", "KH", "8S", "6C", "5D", "4S")


class Table:
    """A validator and the display, wired as the daemon wires them: one lock, events to the display."""

    def __init__(
        self,
        rules: HouseRules | None = None,
        table_id: str = "BAC-07",
        settings: DisplaySettings | None = None,
        staff: Roster | None = None,
        overlay: OverlaySettings | None = None,
    ) -> None:
        # Suspension has a state of its own (``suspended``); every other state is a table that never stops.
        self.validator = Validator(table_id, rules or HouseRules(burn="none", suspend_on=()))
        self.lock = threading.Lock()
        self.ts = 1_700_000_000.0
        self.events: list[EventData] = []  # every event the display was given, in order
        self.display = Display(
            settings or DisplaySettings(listen="127.0.0.1:0"),
            table_id,
            self.state,
            self.request,
            staff=staff,
            overlay=overlay,
            ack_needs_pin=self.validator.rules.ack_needs_pin,
            round_control=self.validator.rules.round_control,
        )

    def state(self) -> dict[str, Any]:
        with self.lock:
            return self.validator.state()

    def feed(self, inp: ValidatorInput) -> None:
        with self.lock:
            events = self.validator.handle(inp)
            self.events += events
            self.display.on_events(events)

    def command(self, name: str, **args: Any) -> Response:
        return self.request(name, args)

    def request(self, command: str, args: dict[str, Any], actor: Actor | None = None) -> Response:
        with self.lock:
            self.ts += 1
            parsed = parse_request(command, json.dumps(args).encode())
            response, events = execute(parsed, self.validator, self.ts, actor)
            self.events += events
            self.display.on_events(events)
            return response

    def card(self, *cards: str) -> None:
        for card in cards:
            self.ts += 1
            self.feed(CardDrawn(self.ts, card))

    def round(self, round_id: str, *cards: str) -> None:
        self.command("betting_open", round_id=round_id)
        self.command("betting_close")
        self.card(*cards)

    def shoe_under_way(self, hands: int = 30, seed: int = 7) -> None:
        """Deal ``hands`` whole hands from a shuffled shoe, so the roads have something to show."""
        cards = [c for _ in range(8) for c in ALL_CARDS]
        random.Random(seed).shuffle(cards)
        for n in range(hands):
            self.command("betting_open", round_id=f"R{n + 1}")
            self.command("betting_close")
            while self.state()["round"]["phase"] == "dealing":
                self.card(cards.pop())
            self.declare()

    def declare(self) -> None:
        """The dealer's word on a hand awaiting it, the cards' winner (``[rules] confirm_result``)."""
        rnd = self.state()["round"]
        if rnd["phase"] == "confirming":
            game = played(self.validator.rules.game)
            totals = [rnd[side]["total"] for side in game.sides]
            self.command("confirm_result", winner=game.winner(*totals))

    def extra_cards(self, count: int) -> None:
        """``count`` cards drawn with none due, the most common misdeal: one open alert each."""
        for n in range(count):
            self.card(EXTRA_CARDS[n % len(EXTRA_CARDS)])


# ------------------------------------------------------------------ the states the screen is judged in


def dealing(table: Table) -> None:
    """A shoe under way and a hand half dealt: the player's third card is due."""
    table.shoe_under_way()
    table.round("R31", *SIX_CARD_ROUND[:4])


def tie(table: Table) -> None:
    """A tie with three cards on each side, the widest hands there are."""
    table.shoe_under_way()
    table.round("R31", *SIX_CARD_TIE)


def tie_with_alerts(count: int):
    """The tie, then ``count`` extra cards drawn: as many open misdeals."""

    def build(table: Table) -> None:
        tie(table)
        table.extra_cards(count)

    build.__doc__ = f"The tie with {count} open alerts."
    return build


def betting(table: Table, seconds: float = 60.0, started_ago: float = 0.0) -> None:
    """Bets being placed, with the table's timer counting ``seconds`` down (wall-clock time)."""
    table.shoe_under_way()
    table.ts = time.time() - started_ago - 1  # the countdown is to a moment on the page's clock
    table.command("betting_open", round_id="R31", betting_time_s=seconds)


def no_more_bets(table: Table) -> None:
    """The betting time ran out and the game server has not closed betting yet."""
    betting(table, seconds=10.0, started_ago=12.0)


def last_hand(table: Table) -> None:
    """The cut card came out: the hand now dealt is the last before the shuffle."""
    table.shoe_under_way()
    table.ts += 1
    table.feed(CutCardSeen(table.ts))
    table.round("R31", *SIX_CARD_ROUND[:4])


def cut_card(table: Table) -> None:
    """The cut card came out between hands: the shoe's notice says the next hand is the last."""
    table.shoe_under_way()
    table.ts += 1
    table.feed(CutCardSeen(table.ts))


def dealer_signed_in(table: Table) -> None:
    """A dealer signed in, dealing a hand."""
    table.command("dealer_sign_in", dealer_id="D-117")
    dealing(table)


def last_hand_with_dealer(table: Table) -> None:
    """The last hand, dealt by a dealer signed in."""
    table.command("dealer_sign_in", dealer_id="D-117")
    last_hand(table)


def dragon_tiger_dealing(table: Table) -> None:
    """A Dragon Tiger shoe under way and Dragon's card drawn: Tiger's is due."""
    table.shoe_under_way()
    table.round("R31", "9D")


def dragon_tiger_tie(table: Table) -> None:
    """A suited tie at Dragon Tiger, then three extra cards: three open misdeals."""
    table.shoe_under_way()
    table.round("R31", "7H", "7H")
    table.extra_cards(3)


def ez_dragon_7(table: Table) -> None:
    """EZ Baccarat: Banker wins with a three-card 7 over Player's 6, a Dragon 7, with a pair."""
    table.shoe_under_way()
    table.round("R31", "2S", "2H", "4S", "2D", "3C")


def super_6(table: Table) -> None:
    """No-commission baccarat: Banker wins standing on a two-card 6 over Player's three-card 5."""
    table.shoe_under_way()
    table.round("R31", "2H", "4S", "3C", "2D", "KD")


def shoe_finished(table: Table) -> None:
    """The cut card out between hands, and the last hand dealt: the shoe is finished, to be counted."""
    table.shoe_under_way()
    table.ts += 1
    table.feed(CutCardSeen(table.ts))
    table.round("R31", *NATURAL_ROUND)


def suspended(table: Table) -> None:
    """The shoe's alarm in the middle of a hand: the hand void, the table stopped for a supervisor."""
    dealing(table)
    table.ts += 1
    table.feed(Fault(table.ts, "DEVICE_FAULT", message("DEVICE_FAULT", alarm=3, text="card jam")))


def _longest_instruction() -> str:
    """The longest words any alert on the dealer's screen says, its facts as long as they come."""
    texts = []
    for kind in ALERTS.values():
        if kind.pit_only:
            continue
        for case in (kind.usual, *kind.others.values()):
            fields = {name for _, name, _, _ in string.Formatter().parse(case.text) if name}
            texts.append(
                case.text.format(**{name: "10\u2666" if name == "card" else "999" for name in fields})
            )
    return max(texts, key=len)


LONGEST_INSTRUCTION = _longest_instruction()


def longest_alerts(table: Table) -> None:
    """A misdeal with the longest instruction any alert gives, over a warning, mid-hand."""
    dealing(table)
    table.ts += 1
    table.feed(Fault(table.ts, "OUTBOX_FULL", message("OUTBOX_FULL", held=123456)))
    table.ts += 1
    table.feed(Fault(table.ts, "DEVICE_FAULT", LONGEST_INSTRUCTION))


LONG_SHOE = "B" * 9 + "P" * 8 + "BPTB" * 5 + "PPPBBB" * 3 + "TT" + "P" * 7 + "BPBPPBBP"
"""Every road full: dragon tails on both sides, ties, and more columns than a board shows."""


@functools.cache
def _naturals(pattern: str) -> list[tuple[str, str, str, str]]:
    """Four-card hands (player, banker, player, banker) from one eight-deck shoe, each settled on
    the first four cards with the winner ``pattern`` names (B, P, T): a natural, or both standing."""
    from itertools import permutations

    pool = [c for _ in range(8) for c in ALL_CARDS]
    hands = []
    for winner in pattern:
        for p1, p2, b1, b2 in permutations(sorted(set(pool)), 4):
            player = (CARD_POINTS[p1] + CARD_POINTS[p2]) % 10
            banker = (CARD_POINTS[b1] + CARD_POINTS[b2]) % 10
            settled = max(player, banker) >= 8 or min(player, banker) >= 6  # a natural, or both stand
            if not settled or any(pool.count(c) < (p1, p2, b1, b2).count(c) for c in (p1, p2, b1, b2)):
                continue
            if {"P": player > banker, "B": banker > player, "T": player == banker}[winner]:
                for card in (p1, p2, b1, b2):
                    pool.remove(card)
                hands.append((p1, b1, p2, b2))
                break
    return hands


def long_shoe(table: Table) -> None:
    """A shoe dealt to near its end in results chosen for the roads: tails, ties, chops and runs."""
    for n, cards in enumerate(_naturals(LONG_SHOE)):
        table.round(f"R{n + 1}", *cards)


def card_before_bets_closed(table: Table) -> None:
    """A card drawn while bets are still being placed: the misdeal a dealer meets most after an
    extra card, its instruction long."""
    table.shoe_under_way()
    table.command("betting_open", round_id="R32")
    table.card("QD")


def squeezed(table: Table) -> None:
    """A squeeze table: a hand dealt and judged, its four cards still face down on the screens."""
    table.shoe_under_way()
    table.round("R31", *NATURAL_ROUND)


def confirming(table: Table) -> None:
    """A table that confirms results: the widest hands dealt, a tie, awaiting the dealer's word."""
    table.shoe_under_way()
    table.round("R31", *SIX_CARD_TIE)


STATES = {
    "confirming": confirming,
    "confirming-dragon-tiger": lambda table: table.round("R1", "KS", "2C"),
    "dealing": dealing,
    "tie": tie,
    "betting": betting,
    "no-more-bets": no_more_bets,
    "last-hand": last_hand,
    "cut-card": cut_card,
    "shoe-finished": shoe_finished,
    "dealer": dealer_signed_in,
    "last-hand-dealer": last_hand_with_dealer,
    **{f"alerts-{n}": tie_with_alerts(n) for n in (1, 3, 6, 10, 20)},
    "dragon-tiger-dealing": dragon_tiger_dealing,
    "dragon-tiger-tie": dragon_tiger_tie,
    "squeezed": squeezed,
    "ez-dragon-7": ez_dragon_7,
    "super-6": super_6,
    "suspended": suspended,
    "longest-alerts": longest_alerts,
    "long-shoe": long_shoe,
    "card-before-bets-closed": card_before_bets_closed,
    "alerts-3-pin": tie_with_alerts(3),
}
"""Each a function that brings a fresh table (with a new shoe) to that state."""

RULES = {
    "dragon-tiger-dealing": HouseRules(game="dragon_tiger", burn="none", suspend_on=()),
    "dragon-tiger-tie": HouseRules(game="dragon_tiger", burn="none", suspend_on=()),
    "squeezed": HouseRules(burn="none", squeeze=True, suspend_on=()),
    "confirming": HouseRules(burn="none", confirm_result=True, suspend_on=()),
    "confirming-dragon-tiger": HouseRules(
        game="dragon_tiger", burn="none", confirm_result=True, suspend_on=()
    ),
    "ez-dragon-7": HouseRules(burn="none", commission="ez", suspend_on=()),
    "super-6": HouseRules(burn="none", commission="no_commission", suspend_on=()),
    "suspended": HouseRules(burn="none"),  # the house's own suspend_on
    "alerts-3-pin": HouseRules(burn="none", suspend_on=(), ack_needs_pin=True),
}
"""The house of a state that is not punto banco's with no burn."""

SIZES = ((1920, 1080), (1280, 1024), (1024, 768), (768, 1024), (1080, 1920))
"""The table monitors the screen must work on: 16:9, 5:4, 4:3 and portrait (a small one and 1080p)."""


STAFFED = frozenset({"suspended", "alerts-3-pin"})
"""States shown at a table that keeps a staff list: the screen asks for PINs."""


def staff_roster(directory: Path) -> Roster:
    """A staff list of one dealer (D-117, PIN 1170) and one supervisor (S-02, PIN 2020)."""
    members = [
        Member(id="D-117", role="dealer", pin=hash_pin("1170")),
        Member(id="S-02", role="supervisor", pin=hash_pin("2020")),
    ]
    path = directory / "staff.json"
    write(path, StaffFile(staff=members))
    return Roster(path)


def table_in(state: str, overlay: OverlaySettings | None = None) -> Table:
    """A table brought to ``state`` with its display (and ``overlay``) running (stop it after): the
    display hears every event, as in a daemon, so what only events carry (the shoe's notice) is there too."""
    staff = staff_roster(Path(tempfile.mkdtemp())) if state in STAFFED else None
    table = Table(RULES.get(state), staff=staff, overlay=overlay)
    table.display.start()
    table.command("new_shoe", shoe_id="S-0412")
    STATES[state](table)
    return table
