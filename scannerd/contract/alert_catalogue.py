"""Every alert code a table raises, and what each means: the one place a code's facts are written.

An alert is read by people who cannot ask what it meant: the dealer on the
banner, the pit boss, the game server's operators months later. So each
code's severity, its words, whether it ends the round and who is to see it
are fixed here once, and everything that raises or shows an alert (the
validator, the daemon's faults, the device mapping, the dealer display)
reads them from here. ``docs/validator.md`` lists the codes for people; a
test holds that table to this one.

A code is raised in one or more *cases*: most in one, a few (a shoe lost in
the middle of a hand or between hands) in several that differ in severity
and words. The first case is the code's usual one.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Literal

Severity = Literal["misdeal", "warning", "info"]
"""``misdeal``: the deal went wrong, the shoe's alarm sounds; ``warning``: the table needs someone;
both stay open until acknowledged. ``info``: a notice, never open."""

UNREAD = "(unread)"
"""How a text names a card the shoe could not read."""


@dataclass(frozen=True, slots=True)
class Case:
    """One situation a code is raised in: how grave, what it says, whether the round ends with it."""

    severity: Severity
    text: str
    """The message, a ``str.format`` template over the facts the raiser gives (a card, a count)."""
    voids: bool = False
    """The round being dealt, if one is, ends ``void`` with this alert as its reason."""
    suspends: bool = True
    """Suspends the table when the house lists its code in ``[rules] suspend_on``."""

    def say(self, **facts: object) -> str:
        """The message with its facts filled in; a card that was not read is named ``(unread)``."""
        if "card" in facts and facts["card"] is None:
            facts["card"] = UNREAD
        return self.text.format(**facts) if facts else self.text


@dataclass(frozen=True, slots=True)
class AlertKind:
    """An alert code: its usual case, the others by name, and where it comes from and goes."""

    usual: Case
    others: Mapping[str, Case] = field(default_factory=dict)
    fault: bool = False
    """Raised from outside the deal (a ``Fault`` input: the shoe's alarm, the outbox, lost state):
    it decides nothing about the round."""
    pit_only: bool = False
    """For the pit alone: the dealer display leaves it out (the pit page and the game server have it)."""

    def case(self, name: str | None = None) -> Case:
        return self.usual if name is None else self.others[name]

    @property
    def cases(self) -> tuple[Case, ...]:
        return (self.usual, *self.others.values())


ALERTS: dict[str, AlertKind] = {
    "CARD_BEFORE_BETS_CLOSED": AlertKind(
        Case("misdeal", "Card {card} drawn before bets closed - set it aside, wait for NO MORE BETS")
    ),
    "EXTRA_CARD": AlertKind(
        Case("misdeal", "Extra card {card}: no card is due - set it aside"),
        {
            "confirming": Case(
                "misdeal",
                "Extra card {card}: declare hand {hand_no}'s winner first - set it aside",
            )
        },
    ),
    "RESULT_MISMATCH": AlertKind(
        Case(
            "misdeal",
            "Hand {hand_no}: {declared} declared, the cards say {judged} - call a supervisor",
        )
    ),
    "RESULT_UNCONFIRMED": AlertKind(
        Case("warning", "Hand {hand_no}: declare the winner on the screen", suspends=False)
    ),
    "SHORT_DEAL": AlertKind(
        Case("misdeal", "Round {round_id} short-dealt: cards were still due - round void", voids=True)
    ),
    "UNREADABLE_CARD": AlertKind(Case("misdeal", "Card not read - round void", voids=True)),
    "UNREADABLE_REPEATED": AlertKind(
        Case("warning", "{count} of the last {window} cards not read - check the shoe's reader")
    ),
    "FOREIGN_CARD": AlertKind(
        Case(
            "misdeal",
            "Foreign card {card}: more than {decks} in this shoe - call the supervisor",
            voids=True,  # outside a dealing round the card keeps its place (a burn, a discard)
        ),
    ),
    "DEVICE_DISCONNECTED": AlertKind(
        Case("misdeal", "Shoe disconnected - round void", voids=True),
        {"between_hands": Case("warning", "Shoe disconnected - do not deal")},
    ),
    "DEVICE_RECONNECTED": AlertKind(Case("info", "Shoe reconnected")),
    "DAEMON_RESTARTED": AlertKind(
        Case(
            "misdeal",
            "Table PC restarted during the hand - round void: clear the cards, then acknowledge",
            voids=True,
        ),
        {
            "during_the_burn": Case(
                "warning", "Table PC restarted during the burn - check the burn cards", suspends=False
            )
        },
    ),
    "DECK_SHORT": AlertKind(
        Case("misdeal", "Deck check of shoe {shoe_id}: {n} card(s) missing ({cards}) - call a supervisor")
    ),
    "DECK_SURPLUS": AlertKind(
        Case("misdeal", "Deck check of shoe {shoe_id}: {n} card(s) too many ({cards}) - call a supervisor")
    ),
    "DECK_CHECK_INCOMPLETE": AlertKind(
        Case("warning", "Deck check incomplete: {n} card(s) unread - count the shoe by hand")
    ),
    "CARD_AFTER_SHOE_END": AlertKind(Case("misdeal", "Shoe finished: no more cards - start a new shoe")),
    "BURN_MISMATCH": AlertKind(
        Case("warning", "Burn incomplete: {done} of {required} cards burned"),
        # The first card, whose rank says how many to burn, was never turned: there is no count to give.
        {"unturned": Case("warning", "Burn not done: the first card was not turned before bets closed")},
    ),
    "ROUND_STALLED": AlertKind(Case("warning", "Round stalled: {due} card is due")),
    "CUT_CARD": AlertKind(
        Case("info", "Cut card out"),  # no shoe known: nobody can say which hand is the last
        {
            "this_hand": Case("info", "Cut card out: this hand is the last of the shoe"),
            "next_hand": Case("info", "Cut card out: the next hand is the last of the shoe"),
            "two_more": Case("info", "Cut card out: two more hands, then the shoe ends"),
        },
    ),
    "SHOE_LID_OPEN": AlertKind(
        Case("warning", "Shoe lid open - close it before the next hand", suspends=False),
        {
            "dealing": Case(
                "misdeal",
                "Shoe lid opened during the hand - round void: clear the cards, call a supervisor",
                voids=True,
            ),
        },
    ),
    "SHOE_JAM": AlertKind(
        Case("warning", "Card jammed in the shoe - clear it before the next hand", suspends=False),
        {
            "dealing": Case(
                "misdeal",
                "Card jammed in the shoe during the hand - round void: clear the cards, call a supervisor",
                voids=True,
            ),
        },
    ),
    "DEVICE_FAULT": AlertKind(
        Case("warning", "Shoe alarm {alarm}: {text}"),
        {"unexplained": Case("warning", "Shoe alarm {alarm}: see the shoe")},
        fault=True,
    ),
    "OUTBOX_NEARLY_FULL": AlertKind(
        Case(
            "warning",
            "Game server unreachable: {pending} events waiting on disk ({percent}% of the budget)",
        ),
        fault=True,
    ),
    "OUTBOX_FULL": AlertKind(
        Case("warning", "Outbox full: {held} events held in memory only - call technical support"),
        fault=True,
    ),
    "STATE_LOST": AlertKind(
        Case(
            "warning",
            "Table state lost - what was dealt before is unknown; "
            "clear the cards on the table, acknowledge, call technical support",
        ),
        fault=True,
    ),
    "CARD_WHILE_SUSPENDED": AlertKind(
        Case(
            "misdeal",
            "Card {card} drawn while the table is suspended - set it aside; "
            "a supervisor must resume the table",
        )
    ),
    "PIN_LOCKOUT": AlertKind(
        Case("warning", "{attempts} wrong PINs in a row for {staff_id}: locked for {minutes:g} min"),
        pit_only=True,
    ),
    "SHUFFLE_SUSPECT": AlertKind(
        Case(
            "warning",
            "Shoe {shoe_id} keeps the order of shoe {earlier_shoe_id}: evidence 10^{log10_evidence:g} "
            "against a proper shuffle after {pairs} pairs of cards - check the shuffle",
        ),
        {
            "new_decks": Case(
                "warning",
                "Shoe {shoe_id} keeps the order of new decks: evidence 10^{log10_evidence:g} against a "
                "proper shuffle after {pairs} pairs of cards - check the shuffle",
            ),
            "own": Case(
                "warning",
                "Shoe {shoe_id} deals runs of cards it dealt before: evidence 10^{log10_evidence:g} "
                "against a proper shuffle after {pairs} pairs of cards - check for a stacked shoe",
            ),
        },
        pit_only=True,
    ),
    "CLOCK_UNSYNCED": AlertKind(
        Case(
            "warning",
            "Table clock {clock} (house limit {limit:g} s): event times may be wrong - "
            "call technical support",
        ),
        fault=True,
        pit_only=True,
    ),
}

ALERT_CODES = tuple(ALERTS)
"""In the contract's order (the ``code`` enum of ``alert.json``)."""

FAULT_CODES = frozenset(code for code, kind in ALERTS.items() if kind.fault)

PIT_ONLY_CODES = frozenset(code for code, kind in ALERTS.items() if kind.pit_only)
"""Alerts for the pit and not the dealer: the dealer display leaves them out (docs/shuffle.md)."""


def message(code: str, case: str | None = None, **facts: object) -> str:
    """What an alert of ``code`` says in ``case`` (its usual one by default), facts filled in."""
    return ALERTS[code].case(case).say(**facts)
