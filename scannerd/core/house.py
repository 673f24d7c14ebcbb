"""House settings: the policies a casino chooses for its baccarat tables.

One model is shared by the config file, the recording header and the
validator, so a replay runs under exactly the rules the table ran under.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, Any, Literal, Self

from pydantic import Field, field_validator, model_validator

from scannerd.contract.alert_catalogue import ALERT_CODES
from scannerd.settings.config_section import Section
from scannerd.settings.durations import seconds

MAX_BETTING_TIME_S = 600.0
"""The longest betting time a table takes: ten minutes is already no table's procedure."""

REVEAL_TIMEOUT_S = 60.0
"""How long a squeezed card stays face down unless the house says otherwise: a long squeeze's length."""

CONFIRM_WITHIN_S = 30.0
"""How long a hand waits for the dealer's word before the table says so, unless the house says otherwise."""

MAX_DECKS = 12
"""The most decks a shoe holds here: eight is the rule, and no shoe made holds more than twelve."""

BurnPolicy = Literal["first-card-value", "none"] | Annotated[int, Field(ge=0, le=60)]

PaytableName = Annotated[str, Field(min_length=1, max_length=64, pattern=r"^[A-Za-z0-9._:-]+$")]
"""A paytable as the house names it: letters, digits and ``._:-``, as an id on a ticket would be."""

GameName = Literal["punto_banco", "dragon_tiger"]
"""The games a table plays (``scannerd.core.games.GAMES``)."""

AlertCodeName = Literal[ALERT_CODES]  # type: ignore[valid-type]  # the catalogue is the one list

SUSPEND_ON: tuple[str, ...] = (
    "DEVICE_FAULT",
    "DAEMON_RESTARTED",
    "STATE_LOST",
    "SHUFFLE_SUSPECT",
    "UNREADABLE_REPEATED",
    "FOREIGN_CARD",
    "SHOE_LID_OPEN",
    "SHOE_JAM",
    "DECK_SHORT",
    "DECK_SURPLUS",
    "RESULT_MISMATCH",
)
"""The alerts after which a table stops until a supervisor resumes it, unless the house says otherwise:
each says the next game could miscarry the way this one did (docs/validator.md, "Suspension")."""


class HouseRules(Section):
    """The house settings that change how a deal is judged."""

    # Left out of a recording's header when None (a file from before tables chose their game) or
    # standard (punto banco's default), so a replayed file of either kind keeps its bytes.
    game: GameName | None = Field(
        "punto_banco",
        exclude_if=lambda v: v is None,
        description="The game the table deals: 'punto_banco' (baccarat) or 'dragon_tiger'. A recording "
        "made before tables chose their game has none: punto banco, its rounds published without facts.",
    )
    commission: Literal["standard", "no_commission", "ez"] = Field(
        "standard",
        exclude_if=lambda v: v == "standard",
        description="Punto banco's variant: 'standard' (5% on Banker wins), 'no_commission' (Super 6) or "
        "'ez' (EZ Baccarat). They deal alike; the facts their bets read are in every round's event.",
    )
    paytable: PaytableName | None = Field(
        None,
        exclude_if=lambda v: v is None,
        description="The house's name for the paytable this table's bets are paid by, as its approved "
        "list has it: stated on every complete round and every shoe, with the game and its variant.",
    )

    decks: int = Field(8, ge=1, le=MAX_DECKS, description="Decks in a full shoe.")
    round_control: Literal["server", "auto"] = Field(
        "server",
        description="'server': the game server opens and closes betting; "
        "'auto': the first card drawn opens a round (no game server).",
    )
    burn: BurnPolicy = Field(
        "first-card-value",
        description="Cards burned at the start of a shoe: 'first-card-value' "
        "(turn the first card, burn that many more; A=1, 10/J/Q/K=10), a fixed "
        "number of cards, or 'none'.",
    )
    cut_card_remaining: int | None = Field(
        None,
        ge=0,
        le=MAX_DECKS * 52,
        description="Virtual cut card this many cards from the back, for shoes "
        "that cannot see the cut card; None to rely on the device.",
    )
    last_hand: Literal["finish", "one-more"] = Field(
        "finish",
        description="'finish': the hand in which the cut card appears is the last "
        "(if it appears between hands, the next hand is); 'one-more': deal one more.",
    )
    stall_timeout_s: float = seconds(
        30.0, 1, 3600, "Seconds without a card, while cards are due, before ROUND_STALLED."
    )
    # Left out of a recording's header while unset, so files of tables without it stay as they were.
    betting_time_s: float | None = Field(
        None,
        exclude_if=lambda v: v is None,
        gt=0,
        le=MAX_BETTING_TIME_S,
        allow_inf_nan=False,
        description="Seconds betting stays open, counted down on the dealer's screen. With 'auto' "
        "round control the daemon opens betting after each hand and closes it when the time runs "
        "out; with a game server, the time for a betting_open that gives none. None: no timer.",
    )

    # Left out of a recording's header while off and at their defaults, as every later setting.
    deck_check_required: bool = Field(
        False,
        exclude_if=lambda v: v is False,
        description="Every shoe is counted at its end (the deck_check request): the audit flags a shoe "
        "closed without its count.",
    )
    confirm_result: bool = Field(
        False,
        exclude_if=lambda v: v is False,
        description="The dealer declares each hand's winner (the display, or the shoe's button): the "
        "round completes only on a declaration that agrees with the cards; one that differs raises "
        "RESULT_MISMATCH.",
    )
    confirm_within_s: float = Field(
        CONFIRM_WITHIN_S,
        ge=1,
        le=MAX_BETTING_TIME_S,
        allow_inf_nan=False,
        exclude_if=lambda v: v == CONFIRM_WITHIN_S,
        description="With confirm_result: seconds after a hand's last card before RESULT_UNCONFIRMED.",
    )
    squeeze: bool = Field(
        False,
        exclude_if=lambda v: v is False,
        description="Squeeze: the dealer display, the pit and watch hold each card's face back until the "
        "game server reveals it (the 'reveal' request) or reveal_timeout_s passes. The validator judges "
        "on scan and the game server gets every card at once, as without it.",
    )
    reveal_timeout_s: float = Field(
        REVEAL_TIMEOUT_S,
        ge=1,
        le=MAX_BETTING_TIME_S,
        allow_inf_nan=False,
        exclude_if=lambda v: v == REVEAL_TIMEOUT_S,
        description="Seconds after it is drawn that a squeezed card shows by itself.",
    )

    # Left out of a recording's header when empty: a file without it suspends on nothing, as every
    # file from before tables stopped, so it must be written whenever it names a code (the default).
    suspend_on: tuple[AlertCodeName, ...] = Field(
        SUSPEND_ON,
        exclude_if=lambda v: v == (),
        description="Alert codes that suspend the table until a supervisor resumes it: no betting opens "
        "and every card drawn is set aside. [] for none.",
    )
    ack_needs_pin: bool = Field(
        False,
        exclude_if=lambda v: v is False,
        description="With a staff list: acknowledging an alert at the display takes a staff id and PIN.",
    )
    pin_attempts: int = Field(
        5,
        ge=1,
        le=100,
        exclude_if=lambda v: v == 5,
        description="Wrong PINs in a row that lock a staff id (and warn the pit).",
    )
    pin_lockout_s: float = Field(
        300.0,
        ge=1,
        le=86400,
        allow_inf_nan=False,
        exclude_if=lambda v: v == 300.0,
        description="Seconds a staff id stays locked after too many wrong PINs (a duration, as "
        "``seconds`` makes them, left out of headers at its default).",
    )

    @field_validator("suspend_on", mode="before")
    @classmethod
    def _listed(cls, value: object) -> object:
        """A TOML or JSON list, kept as a tuple: rules are compared and hashed whole."""
        return tuple(value) if isinstance(value, list) else value

    @model_validator(mode="after")
    def _consistent(self) -> Self:
        if self.commission != "standard" and self.game not in (None, "punto_banco"):
            raise ValueError(f"commission = {self.commission!r} is punto banco's; Dragon Tiger has none")
        if self.squeeze and self.round_control == "auto" and self.betting_time_s is not None:
            # The table would open the next round on the hand's last card, showing it at once.
            raise ValueError(
                "squeeze needs a game server to open betting: not with round_control = 'auto' "
                "and betting_time_s"
            )
        return self

    def identity(self, running: Mapping[str, Any] | None = None) -> dict[str, Any] | None:
        """The game a settled hand was judged under, as rounds and shoes state it (``GameIdentity``); None
        for a table from before games were chosen, which states none.

        ``running`` is what judged it: the software and the configuration's digest the table started
        under. Not a rule: a replay takes it from the recording's header, as the table stated it.
        """
        if self.game is None:
            return None
        identity: dict[str, Any] = {"game": self.game, "variant": self.commission}
        if self.paytable is not None:
            identity["paytable"] = self.paytable
        if running:
            identity.update((k, v) for k, v in running.items() if v is not None)
        return identity

    def with_changes(self, changes: dict[str, Any]) -> HouseRules:
        """These rules with ``changes``, checked as a config's are.

        From every field as it is: a dump leaves out those a recording's header leaves out (an
        empty ``suspend_on``, a game of None), and validating it would put the defaults back.
        """
        kept = {name: getattr(self, name) for name in type(self).model_fields}
        return type(self).model_validate(kept | changes)

    def burn_fixed(self) -> int | None:
        """The fixed burn count, or None when the count comes from the first card."""
        if self.burn == "first-card-value":
            return None
        if self.burn == "none":
            return 0
        return int(self.burn)
