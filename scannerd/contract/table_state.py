"""The table's state as ``get_state`` (and every command's answer) gives it: the contract's description.

The validator builds the state as plain JSON-ready data (``Validator.state``),
as it builds its events; these models are that data's one definition. They
give the ``data`` of a ``Response`` its schema, so a client generated from
the AsyncAPI document can validate what it is handed, and the tests hold the
validator's plain data to them over every golden session.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from scannerd.contract.events import (
    AlertCode,
    AlertEvent,
    Count,
    DragonTigerFacts,
    GameIdentity,
    Hand,
    Phase,
    Position,
    PuntoBancoFacts,
    ShoeRoads,
    ShoeStatus,
    Winner,
)
from scannerd.core.games.names import Side
from scannerd.core.house import MAX_DECKS, GameName


class ShoeView(BaseModel):
    """The shoe in play, as its ``shoe`` event describes it, with the ids the event carries beside."""

    model_config = ConfigDict(extra="forbid")

    table_id: str
    shoe_id: str | None
    status: ShoeStatus
    decks: int = Field(ge=1, le=MAX_DECKS)
    cards_dealt: Count
    cards_remaining: Count
    burn_required: Count | None = Field(description="Cards to burn; null until known.")
    burn_done: Count
    cut_card_seen: bool
    hands_dealt: Count
    last_hand_no: Count | None
    identity: GameIdentity | None = Field(None, description="The game the shoe is dealt at.")


class RoundView(BaseModel):
    """The round in play, as its latest ``round`` event, and the position the next card goes to."""

    model_config = ConfigDict(extra="forbid")

    round_id: str
    phase: Phase
    hand_no: Count
    last_hand: bool
    player: Hand | None = Field(None, description="Punto banco's sides.")
    banker: Hand | None = None
    dragon: Hand | None = Field(None, description="Dragon Tiger's sides.")
    tiger: Hand | None = None
    next_position: Position | None = Field(
        description="Where the next card goes while dealing; null in any other phase."
    )
    betting_time_s: float | None = Field(None, description="Present only when a betting time was given.")
    betting_ends_ts: float | None = Field(None, description="Present only when a betting time was given.")
    dealer_id: str | None = Field(
        None, description="Present only when a dealer was signed in at its opening."
    )
    facts: PuntoBancoFacts | DragonTigerFacts | None = Field(
        None, description="A complete round's facts, as its event states them."
    )
    hidden: list[Position] | None = Field(
        None, description="Squeeze tables only: the positions whose cards the screens still hold face down."
    )


class HandResult(BaseModel):
    """One completed hand of the shoe, for the scoreboard (the roads)."""

    model_config = ConfigDict(extra="forbid")

    winner: Winner
    natural: bool
    player_pair: bool
    banker_pair: bool


class SuspensionView(BaseModel):
    """Why the table is suspended, as its ``suspension`` event said when it stopped."""

    model_config = ConfigDict(extra="forbid")

    cause: AlertCode
    alert_id: int
    message: str
    since: float


class DeckCheckView(BaseModel):
    """A deck check under way: the shoe counted at its end (docs/mqtt.md, A deck check)."""

    model_config = ConfigDict(extra="forbid")

    started: float = Field(description="Unix seconds (UTC) when the count began.")
    dealt: Count = Field(description="Cards the shoe gave before the count.")
    counted: Count = Field(description="Cards drawn in the count so far.")


class RecalledCard(BaseModel):
    model_config = ConfigDict(extra="forbid")

    position: Position
    card: str


class RecalledHand(BaseModel):
    """One of the last hands, as the table dealt and judged it (docs/mqtt.md, Hand recall)."""

    model_config = ConfigDict(extra="forbid")

    round_id: str
    shoe_id: str | None
    hand_no: Count
    phase: Literal["complete", "void"]
    cards: list[RecalledCard] = Field(description="Its cards in the order dealt, each with its place.")
    totals: dict[Side, int] = Field(description="Each side's total, by the game's sides.")
    winner: Winner | None
    facts: PuntoBancoFacts | DragonTigerFacts | None
    reason: str | None = Field(description="A void hand's reason: the alert code or OPERATOR_VOID.")
    dealer_id: str | None
    misdeals: list[AlertCode] = Field(description="The misdeals raised on it while it was open.")
    ended: float = Field(description="Unix seconds (UTC) when it was complete or void.")
    betting_s: float | None
    dealing_s: float | None


ALERTS_ANSWERED = 20
"""The open alerts a command's answer carries at most, the newest (``get_state``'s carries all):
a table whose alerts nobody acknowledges would otherwise answer every command with all of them."""


class TableState(BaseModel):
    """What a table is doing now: its shoe, its round, its open alerts, and (``get_state`` only) results."""

    model_config = ConfigDict(extra="forbid")

    table_id: str
    game: GameName | None = Field(None, description="The game the table deals ([rules] game).")
    commission: Literal["no_commission", "ez"] | None = Field(
        None, description="Present only at a punto banco table of another variant than 'standard'."
    )
    squeeze: bool | None = Field(None, description="Present (true) only at a table that squeezes.")
    seq: Count = Field(description="The seq of the last event the table has published (0: none yet).")
    link_up: bool = Field(description="Whether the table reads its shoe now.")
    shoe: ShoeView | None
    round: RoundView | None
    alerts: list[AlertEvent] = Field(
        description="The open alerts, oldest first, as they were published: every one in get_state's"
        f" answer, the newest {ALERTS_ANSWERED} in another command's."
    )
    alerts_open: Count | None = Field(
        None,
        description="Present only in a command's answer that leaves older open alerts out: how many are"
        " open (get_state's answer carries them all).",
    )
    suspended: SuspensionView | None = Field(
        None, description="Present only while the table is suspended: no betting, no dealing."
    )
    dealer_id: str | None = Field(None, description="Present only while a dealer is signed in.")
    results: list[HandResult] | None = Field(
        None, description="The shoe's completed hands, oldest first: in get_state's answer only."
    )
    roads: ShoeRoads | None = Field(
        None, description="The shoe's scoreboard, as its shoe events carry it: in get_state's answer only."
    )
    recall: list[RecalledHand] | None = Field(
        None, description="The last ten hands, oldest first, across shoes: in get_state's answer only."
    )
    deck_check: DeckCheckView | None = Field(None, description="Present only while the shoe is counted.")
