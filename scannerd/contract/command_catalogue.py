"""Every command a table takes from the game server (and the dealer display): the one list of them.

A command is its name (the last level of ``{base}/request/<command>``) and
its request model (the fields it takes, as the contract's JSON Schemas
publish them). Parsing (``scannerd.contract.requests``), the validator's handlers,
the schema documents and the table in docs/mqtt.md all go by this list, and
a test holds the docs to it.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, StringConstraints, field_validator

from scannerd.contract.events import Position
from scannerd.contract.idents import Ident, PlainText
from scannerd.core.games.names import Side, Winner
from scannerd.core.house import MAX_BETTING_TIME_S


class RequestBase(BaseModel):
    """Every request may carry a ``transaction`` that the response echoes."""

    model_config = ConfigDict(extra="forbid", strict=True)

    transaction: Annotated[str, StringConstraints(max_length=128)] | int | None = Field(
        None, description="Caller's id for this request, echoed in the response."
    )

    @field_validator("transaction", mode="before")
    @classmethod
    def _one_clear_message(cls, value: Any) -> Any:
        if value is None or usable_transaction(value):
            return value
        if isinstance(value, str) and len(value) <= 128:
            raise ValueError(
                "must be text: half of a UTF-16 surrogate pair is not, and no answer could carry it"
            )
        raise ValueError("must be a string of at most 128 characters or an integer")


def usable_transaction(value: Any) -> bool:
    """Whether a request's ``transaction`` can be echoed: one the response model takes, and an answer can
    be written with (JSON's ``"\\ud800"`` reads as a string no UTF-8 encoder writes)."""
    if isinstance(value, str):
        return len(value) <= 128 and _is_utf8_text(value)
    return isinstance(value, int) and not isinstance(value, bool)


def _is_utf8_text(value: str) -> bool:
    try:
        value.encode()
    except UnicodeEncodeError:  # a lone surrogate
        return False
    return True


class NewShoeRequest(RequestBase):
    """Start a new shoe (the previous one is finished or abandoned)."""

    shoe_id: Ident | None = Field(None, description="Shoe id; generated from the time when absent.")


class BettingOpenRequest(RequestBase):
    """Open betting for the next round."""

    round_id: Ident | None = Field(None, description="Round id; generated when absent.")
    betting_time_s: Annotated[float, Field(gt=0, le=MAX_BETTING_TIME_S)] | None = Field(
        None,
        description="Seconds betting stays open: the dealer's screen counts down to NO MORE BETS. "
        "Absent: the house's betting_time_s, if any. The game server still closes betting.",
    )


class BettingCloseRequest(RequestBase):
    """Close betting: the round's cards may now be dealt."""


class VoidRoundRequest(RequestBase):
    """Void the open round."""

    reason: Annotated[PlainText, StringConstraints(max_length=200)] | None = Field(
        None, description="Free text stored with the void."
    )


class AckAlertRequest(RequestBase):
    """Acknowledge an open misdeal or warning alert."""

    alert_id: int = Field(description="The alert_id of the AlertEvent to acknowledge.")


class DealerSignInRequest(RequestBase):
    """A dealer takes the table: the rounds opened from now on carry this dealer id."""

    dealer_id: Ident = Field(description="The casino's id for the dealer (a badge or staff number).")


class DealerSignOutRequest(RequestBase):
    """The dealer leaves the table: the rounds opened from now on carry no dealer id."""


class RevealRequest(RequestBase):
    """Show squeezed cards face up on the table's screens (a table with ``[rules] squeeze``).

    Without ``side`` or ``position``: every card of the round still held back.
    """

    side: Side | None = Field(None, description="Every held-back card of this side.")
    position: Position | None = Field(None, description="The card at this position only.")
    round_id: Ident | None = Field(
        None, description="The round meant: refused if another is on the table (a late or repeated request)."
    )


class ResumeRequest(RequestBase):
    """A supervisor lets a suspended table deal again, saying why (docs/validator.md, "Suspension").

    From the game server it names the supervisor, whom the table records as having resumed it
    (vouched for by the game server); from the pit, the pit's broker user is recorded.
    """

    reason: Annotated[PlainText, StringConstraints(min_length=1, max_length=200)] = Field(
        description="Why the table may deal again: kept with the event, for the audit."
    )
    supervisor_id: Ident | None = Field(
        None, description="The supervisor who cleared the table; required from the game server."
    )


class DeckCheckRequest(RequestBase):
    """Count the shoe at its end: ``start`` puts the table in count mode (the shoe closes; every card
    drawn is counted, not dealt), ``end`` compares the whole shoe with full decks and publishes the
    receipt (a ``deck_check`` event)."""

    action: Literal["start", "end"] = Field("start", description="Start the count, or end it.")


class ConfirmResultRequest(RequestBase):
    """The dealer's word on the hand awaiting it, at a table with ``[rules] confirm_result``: the winner
    the turned cards show. The cards' winner completes the round; another raises ``RESULT_MISMATCH``."""

    winner: Winner = Field(description="The winner declared: a side of the table's game, or tie.")
    round_id: Ident | None = Field(
        None, description="The round meant: refused if another is on the table (a late or repeated request)."
    )


class GetStateRequest(RequestBase):
    """Ask for the current shoe, round and open alerts."""


COMMANDS: dict[str, type[RequestBase]] = {
    "new_shoe": NewShoeRequest,
    "betting_open": BettingOpenRequest,
    "betting_close": BettingCloseRequest,
    "void_round": VoidRoundRequest,
    "ack_alert": AckAlertRequest,
    "dealer_sign_in": DealerSignInRequest,
    "dealer_sign_out": DealerSignOutRequest,
    "reveal": RevealRequest,
    "resume": ResumeRequest,
    "deck_check": DeckCheckRequest,
    "confirm_result": ConfirmResultRequest,
    "get_state": GetStateRequest,
}
"""Every command, in the contract's order; the model is the request's payload."""

READS_ONLY = frozenset({"get_state"})
"""Commands answered from the table's state; the validator judges every other one."""

JUDGED = tuple(name for name in COMMANDS if name not in READS_ONLY)
"""The commands the validator judges (``scannerd.core.inputs.Command``), in the contract's order."""
