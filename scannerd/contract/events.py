"""The validator's outputs: the events published to the game server.

The validator judges its inputs (``scannerd/core/inputs.py``); what it
publishes is defined here; their JSON form is the MQTT contract (``docs/mqtt.md``), defined by
the pydantic models below. The validator builds each event as plain data
(``EventData``) that encodes to exactly that JSON: on the card's path a model
per event, validated and encoded, cost several times as much
(docs/performance.md). The models stay the contract's one definition: its
schemas, the client side and the tests that hold the plain data to them.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, Any, ClassVar, Literal, Self, cast, get_args

from pydantic import BaseModel, ConfigDict, Field

from scannerd.contract.alert_catalogue import ALERT_CODES, Severity
from scannerd.core.games.names import Position as Place
from scannerd.core.games.names import Side, Winner
from scannerd.core.house import MAX_DECKS, GameName
from scannerd.core.roads import DerivedRoad, Mark

# --------------------------------------------------------------------------
# Outputs (pydantic: they are the published contract)
# --------------------------------------------------------------------------

Position = Literal[Place, "burn", "discard", "count"]
"""Where a card went: a place of the hand, a burn, set aside, or counted in a deck check."""
Phase = Literal["betting", "dealing", "confirming", "complete", "void"]
ShoeStatus = Literal["unknown", "burning", "dealing", "last_hand", "closed"]

AlertCode = Literal[ALERT_CODES]  # type: ignore[valid-type]  # the catalogue is the one list

MAX_STORED_INT = 2**63 - 1
"""The largest integer SQLite (and most databases) store: every number of an event fits it.

A consumer stores what it is handed; a number past this (``seq`` 2**64 on a forged message) made its
store fail for ever, so such a message is not an event of the contract at all."""
Serial = Annotated[int, Field(ge=1, le=MAX_STORED_INT)]
"""A number that counts up from 1 for the life of the table: ``seq``, ``alert_id``."""
Count = Annotated[int, Field(ge=0, le=MAX_STORED_INT)]
"""A number of things (cards, hands, pairs): never negative, and storable."""
Digest = Annotated[str, Field(pattern=r"^[0-9a-f]{64}$")]
"""A recording chain's digest as it is written down: hex SHA-256, lower case."""


class EventBase(BaseModel):
    """Fields every published event carries; ``seq`` is strictly increasing per table."""

    model_config = ConfigDict(extra="forbid")

    seq: Serial
    ts: float = Field(description="Unix seconds (UTC) of the input that caused the event.")
    table_id: str
    shoe_id: str | None = None


class CardEvent(EventBase):
    """One physical card drawn, and where it went."""

    kind: Literal["card"] = "card"
    round_id: str | None = None
    position: Position
    card: str | None = Field(description="Card code such as 'AS', or null when unreadable.")
    shoe_card_no: Count | None = Field(
        None, description="1-based count of cards drawn in this shoe; null while the shoe is unknown."
    )


class Hand(BaseModel):
    """One side's cards and its count: punto banco's points (0-9), Dragon Tiger's rank (1-13, 0 before)."""

    model_config = ConfigDict(extra="forbid")

    cards: list[str] = Field(default_factory=list)
    total: Annotated[int, Field(ge=0, le=13)] = 0


def _absent(value: Any) -> bool:
    return value is None


# Fields added to the contract after its first tables went live: left out of the payload while
# unset, so a table that uses neither publishes exactly what it did before.
_OPTIONAL: dict[str, Any] = {"default": None, "exclude_if": _absent}


By = Annotated[
    str | None,
    Field(
        **_OPTIONAL,
        description="Who took the operator action behind this event: a staff id, the pit's broker user, "
        "or 'gameserver'. Absent on events no one's action made, and in recordings from before.",
    ),
]
ViaName = Literal["display", "pit", "gameserver", "shoe"]

Via = Annotated[
    ViaName | None,
    Field(
        **_OPTIONAL,
        description="Through what the action came. 'gameserver' with a staff id in ``by``: the game "
        "server vouched for that person (no PIN was typed at the table). 'shoe': the shoe's own "
        "button, pressed by the dealer signed in.",
    ),
]


Bonus = Literal["natural_win", "natural_tie", "win", "none"]


class PuntoBancoFacts(BaseModel):
    """What a complete punto banco round shows to the side bets that read it (docs/rules.md, "Facts")."""

    model_config = ConfigDict(extra="forbid")

    player_cards: Annotated[int, Field(ge=2, le=3)]
    banker_cards: Annotated[int, Field(ge=2, le=3)]
    margin: int = Field(ge=0, le=9, description="The winner's points over the loser's; 0 on a tie.")
    size: Literal["small", "big"] = Field(description="small: four cards dealt; big: five or six.")
    banker_six: Literal[0, 2, 3] = Field(description="Banker won with 6: its cards (2 or 3); else 0.")
    dragon_7: bool = Field(description="Banker won with a three-card 7 (EZ Baccarat).")
    panda_8: bool = Field(description="Player won with a three-card 8 (EZ Baccarat).")
    player_bonus: Bonus = Field(description="Player's Dragon Bonus fact; a 'win' by ``margin`` points.")
    banker_bonus: Bonus = Field(description="Banker's Dragon Bonus fact; a 'win' by ``margin`` points.")
    either_pair: bool = Field(description="Player's or Banker's first two cards share a rank.")
    player_perfect_pair: bool = Field(description="Player's first two cards are the same rank and suit.")
    banker_perfect_pair: bool = Field(description="Banker's first two cards are the same rank and suit.")


class DragonTigerFacts(BaseModel):
    """What a complete Dragon Tiger round shows to the side bets that read it (docs/rules.md, "Facts")."""

    model_config = ConfigDict(extra="forbid")

    suited_tie: bool = Field(description="The two cards are the same rank and suit.")
    dragon_size: Literal["small", "big"] | None = Field(description="small: A-6; big: 8-K; null on a 7.")
    dragon_parity: Literal["odd", "even"]
    dragon_colour: Literal["red", "black"]
    tiger_size: Literal["small", "big"] | None = Field(description="small: A-6; big: 8-K; null on a 7.")
    tiger_parity: Literal["odd", "even"]
    tiger_colour: Literal["red", "black"]


class PhaseTimes(BaseModel):
    """How long a round spent in each phase, in seconds of event time: the house's pace."""

    model_config = ConfigDict(extra="forbid")

    betting_s: float | None = Field(
        description="From betting open to betting closed (or to a void before it closed); "
        "0 for a round its first card opened; null when the table was restored from before this was kept."
    )
    dealing_s: float | None = Field(
        description="From betting closed (or the first card) to the round's end; null if never dealt."
    )


class Software(BaseModel):
    """The software the table runs, as it checked its installed files at start (``scannerd selfcheck``)."""

    model_config = ConfigDict(extra="forbid")

    source: Literal["wheel", "not_from_a_wheel"] = Field(
        description="'wheel': installed from a wheel, its files held to the hashes it recorded; "
        "'not_from_a_wheel': an editable or source install, with no recorded hashes and so no digest."
    )
    digest: str | None = Field(
        None,
        pattern=r"^[0-9a-f]{64}$",
        description="SHA-256 (hex) of the wheel's RECORD: the installed set, as `scannerd selfcheck` "
        "prints it. Null when not from a wheel.",
    )
    intact: bool | None = Field(
        None,
        description="Every installed file matched its recorded hash. Null when not from a wheel.",
    )
    build: Literal["compiled", "pure"] | None = Field(
        None,
        exclude_if=_absent,
        description="'compiled': the judging modules run compiled by mypyc from the same source "
        "(docs/performance.md); 'pure': they run as Python, the reference. Absent from older tables.",
    )


class GameIdentity(BaseModel):
    """The game a hand was judged under: what a regulator asks each game to record beside its result."""

    model_config = ConfigDict(extra="forbid")

    game: GameName
    variant: Literal["standard", "no_commission", "ez"] = Field(
        description="Punto banco's commission variant; 'standard' at Dragon Tiger, which has none."
    )
    paytable: str | None = Field(
        **_OPTIONAL, description="The house's name for the paytable ([rules] paytable); absent when unset."
    )
    version: str | None = Field(**_OPTIONAL, description="The scannerd version that judged the hand.")
    software: Software | None = Field(
        **_OPTIONAL,
        description="The installed files' digest and the build that judged the hand, as the table "
        "checked them at its start (the status topic's ``software``).",
    )
    config_digest: str | None = Field(
        **_OPTIONAL,
        pattern=r"^[0-9a-f]{64}$",
        description="SHA-256 of the effective configuration the table started under (docs/mqtt.md, "
        "the config event); absent where the rules were replaced for a replay.",
    )

    @staticmethod
    def running(version: str | None, software: Software | None, config_digest: str | None) -> dict[str, Any]:
        """The fields that say what judged a hand, as a start states them (``HouseRules.identity``):
        the daemon from what it runs, a replay from the recording's header."""
        return {
            "version": version,
            "software": software.model_dump(mode="json") if software is not None else None,
            "config_digest": config_digest,
        }


class RoundEvent(EventBase):
    """A round changed phase. Results are set once ``phase`` is ``complete``."""

    kind: Literal["round"] = "round"
    round_id: str
    phase: Phase
    hand_no: Count = Field(description="1-based hand number within the shoe (or since start).")
    last_hand: bool = False
    player: Hand | None = Field(**_OPTIONAL, description="Punto banco's sides.")
    banker: Hand | None = Field(**_OPTIONAL)
    dragon: Hand | None = Field(**_OPTIONAL, description="Dragon Tiger's sides.")
    tiger: Hand | None = Field(**_OPTIONAL)
    winner: Winner | None = None
    natural: bool | None = Field(None, description="Punto banco only: null at other games.")
    player_pair: bool | None = Field(None, description="Punto banco only: null at other games.")
    banker_pair: bool | None = Field(None, description="Punto banco only: null at other games.")
    reason: str | None = Field(None, description="For void rounds: the alert code or OPERATOR_VOID.")
    detail: str | None = Field(None, description="Free text given with an operator void.")
    betting_time_s: float | None = Field(
        **_OPTIONAL, description="Seconds betting stays open, from betting_open or the house setting."
    )
    betting_ends_ts: float | None = Field(
        **_OPTIONAL,
        description="Unix seconds (UTC) when betting time runs out (betting opened + betting_time_s): "
        "what the dealer's countdown counts to.",
    )
    dealer_id: str | None = Field(**_OPTIONAL, description="The dealer signed in when the round opened.")
    squeeze: bool | None = Field(
        **_OPTIONAL,
        description="Present (true) at a squeeze table: screens hold its cards face down until revealed.",
    )
    times: PhaseTimes | None = Field(
        **_OPTIONAL, description="On a complete or void round: its time betting and dealing."
    )
    facts: PuntoBancoFacts | DragonTigerFacts | None = Field(
        **_OPTIONAL, description="A complete round's facts, for its game; absent in any other phase."
    )
    identity: GameIdentity | None = Field(
        **_OPTIONAL, description="A complete round's game, variant and paytable; absent in any other phase."
    )
    confirmed_by: str | None = Field(
        **_OPTIONAL,
        description="At a table that confirms results ([rules] confirm_result), on a complete round: "
        "who declared the winner the cards gave (a staff id; absent when no one was signed in).",
    )
    confirmed_via: ViaName | None = Field(
        **_OPTIONAL, description="Through what the declaration came, as ``via``."
    )
    by: By
    via: Via


class RevealEvent(EventBase):
    """Squeezed cards may now be shown face up: the dealer display, the pit and watch show them.

    The game server had the cards at once (their ``card`` events); with ``[rules] squeeze`` the
    screens hold a card face down until an event like this one names its position.
    """

    kind: Literal["reveal"] = "reveal"
    round_id: str
    positions: list[Position] = Field(description="The positions whose cards are revealed now.")
    reason: Literal["request", "timeout", "next_round"] = Field(
        description="'request': the game server's reveal; 'timeout': reveal_timeout_s passed since the "
        "card was drawn; 'next_round': the next round opened with these still held back."
    )
    by: By
    via: Via


class ShuffleEvidence(BaseModel):
    """What a ``SHUFFLE_SUSPECT`` alert found: the order this shoe keeps and how strongly it keeps it."""

    model_config = ConfigDict(extra="forbid")

    against: Literal["new_decks", "own"] | None = Field(
        **_OPTIONAL,
        description="Absent: the shoe keeps an earlier shoe's order (earlier_shoe_id). 'new_decks': it "
        "keeps the order new decks come in; 'own': it deals runs of cards it has dealt before (a "
        "stacked shoe). Both are judged from the shoe alone, the first shoe of a table too.",
    )
    earlier_shoe_id: str | None = Field(
        **_OPTIONAL, description="The recent shoe whose order this shoe keeps; absent with 'against'."
    )
    log10_evidence: float = Field(
        description="log10 of the likelihood ratio against a proper shuffle (docs/shuffle.md)."
    )
    pairs: Count = Field(description="Neighbouring pairs of cards judged so far in this shoe.")
    forward: Count = Field(description="Pairs that followed each other in the order kept, in that order.")
    backward: Count = Field(description="Pairs that followed each other in the order kept, the other way.")
    final: bool = Field(description="True once the shoe is over: the figures for the whole shoe.")


class AlertEvent(EventBase):
    """A misdeal or fault the dealer must see, or a suspect shuffle for the pit.

    Misdeals and warnings stay open until acknowledged.
    """

    kind: Literal["alert"] = "alert"
    alert_id: Serial
    round_id: str | None = None
    code: AlertCode
    severity: Severity
    message: str
    card: str | None = None
    acknowledged: bool = False
    shuffle: ShuffleEvidence | None = Field(**_OPTIONAL, description="With SHUFFLE_SUSPECT only.")
    cleared: bool | None = Field(
        **_OPTIONAL,
        description="True on the acknowledgement the table gave itself: what raised the alert is well "
        "again (CLOCK_UNSYNCED). Left out otherwise.",
    )
    by: By
    via: Via


BeadCode = Annotated[str, Field(pattern=r"^[BPTDG]n?p?b?$")]
BigCode = Annotated[str, Field(pattern=r"^[BPTDG]p?b?[0-9]*$")]


class ShoeRoads(BaseModel):
    """The shoe's scoreboard as data (docs/rules.md, "The scoreboard"): every road as its columns, left
    to right, each of ``rows`` cells top to bottom, null where nothing is drawn, placed as the table's
    own boards place them (dragon tails included); and the ask marks. A game server draws the same
    scoreboard from these without deriving it again."""

    model_config = ConfigDict(extra="forbid")

    rows: int = Field(description="Cells in every column (6).")
    bead: list[list[BeadCode | None]] = Field(
        description="Every hand in order, ties included: the winner's letter (B, P, T; D, G, T at Dragon "
        "Tiger), then n for a natural, p and b for a player and a banker pair."
    )
    big: list[list[BigCode | None]] = Field(
        description="The decisions: the winner's letter, then p and b for the pairs, then the number of "
        "ties marked on the cell (no digits: none). A first cell of ties before any decision is T with "
        "their number."
    )
    big_eye_boy: list[list[Mark | None]]
    small_road: list[list[Mark | None]]
    cockroach_pig: list[list[Mark | None]]
    ask: dict[Side, dict[DerivedRoad, Mark | None]] = Field(
        description="For a next hand of each side: the mark each derived road would add (null: none)."
    )


class ShoeEvent(EventBase):
    """The shoe's state: published when it changes phase and after every round."""

    kind: Literal["shoe"] = "shoe"
    status: ShoeStatus
    decks: int = Field(ge=1, le=MAX_DECKS)
    cards_dealt: Count
    cards_remaining: Count | None
    burn_required: Count | None = Field(None, description="Cards to burn; null until known.")
    burn_done: Count = 0
    cut_card_seen: bool = False
    hands_dealt: Count = 0
    last_hand_no: Count | None = None
    identity: GameIdentity | None = Field(**_OPTIONAL, description="The game the shoe is dealt at.")
    roads: ShoeRoads | None = Field(
        **_OPTIONAL, description="The shoe's scoreboard, as its hands so far draw it; empty at its start."
    )
    by: By
    via: Via


class DealerEvent(EventBase):
    """A dealer signed in at the table, or out (``dealer_id`` null): who deals the rounds from now on."""

    kind: Literal["dealer"] = "dealer"
    dealer_id: str | None = Field(description="The dealer now at the table; null once signed out.")
    by: By
    via: Via


class AnchorEvent(EventBase):
    """A recording the table sealed: kept by the game server, it proves the file must be in the archive.

    A file can be deleted, renamed or swapped for another table's signed file
    without any file left showing it; ``scannerd verify --anchors`` finds that
    against the anchors the game server kept (docs/recording.md).
    """

    kind: Literal["anchor"] = "anchor"
    file: str = Field(description="The file's name in the table's recording directory, once finished.")
    lines: Serial = Field(description="Its lines, the header and the seal included.")
    digest: Digest = Field(description="The chain's digest of its last line (hex SHA-256).")


class SuspensionEvent(EventBase):
    """The table stopped after a malfunction, or a supervisor let it deal again.

    While suspended no betting opens and every card drawn is set aside as a
    misdeal, until a supervisor resumes the table (docs/validator.md,
    "Suspension"). ``cause``, ``alert_id`` and ``since`` name what stopped it
    in both events; the resuming one adds who, through what and why.
    """

    kind: Literal["suspension"] = "suspension"
    suspended: bool = Field(description="True: the table stopped; false: a supervisor resumed it.")
    cause: AlertCode = Field(description="The alert code that suspended the table.")
    alert_id: Serial = Field(description="The alert that suspended the table.")
    since: float = Field(description="Unix seconds (UTC) when the table was suspended.")
    message: str = Field(description="What the table shows while suspended: the alert's words.")
    reason: str | None = Field(None, description="The supervisor's reason for resuming (resumed only).")
    by: By
    via: Via


class ShoeDevice(BaseModel):
    """The shoe device as it introduced itself."""

    model_config = ConfigDict(extra="forbid")

    model: str
    serial: str


class DeckCheckEvent(EventBase):
    """The count of a shoe at its end, the receipt a regulator asks for: started, then done.

    ``started``'s event says the table is in count mode (every card drawn is counted, at ``count``);
    the ``done`` one compares every card the shoe gave, dealt or counted, with ``decks`` full decks
    (docs/validator.md, "The deck check").
    """

    kind: Literal["deck_check"] = "deck_check"
    status: Literal["counting", "done"] = Field(description="counting: the count began; done: the receipt.")
    started: float = Field(description="Unix seconds (UTC) when the count began.")
    expected: Count = Field(description="Cards a full shoe holds: decks times 52.")
    dealt: Count = Field(
        description="Cards drawn from the shoe before the count, burns and discards included."
    )
    counted: Count = Field(description="Cards drawn in the count so far.")
    unreadable: Count | None = Field(
        None, exclude_if=lambda v: v is None, description="done: cards dealt or counted that were not read."
    )
    complete: bool | None = Field(
        None,
        exclude_if=lambda v: v is None,
        description="done: every card was read. False: the unread cards may be among those missing.",
    )
    missing: list[str] | None = Field(
        None,
        exclude_if=lambda v: v is None,
        description="done: each card short of full decks, once per copy.",
    )
    surplus: list[str] | None = Field(
        None, exclude_if=lambda v: v is None, description="done: each card beyond full decks, once per copy."
    )
    device: ShoeDevice | None = Field(
        description="The device that read the shoe, as it named itself; null when it never did."
    )
    by: By
    via: Via


class ConfigEvent(EventBase):
    """The table started under another configuration than at its last start: the keys that changed.

    A secret (the broker password, a key or token read from a file or credential) is named among
    the keys when it changed, never given; the digests are those the table's ``status`` states.
    """

    kind: Literal["config"] = "config"
    digest: Digest = Field(description="SHA-256 of the effective configuration now (status config_digest).")
    previous_digest: Digest = Field(description="The same at the last start.")
    changed: list[str] = Field(
        description="The keys that changed, added or went, dotted (section.key), in order."
    )


EventKind = Literal[
    "card", "round", "alert", "shoe", "dealer", "anchor", "reveal", "config", "suspension", "deck_check"
]
"""Every kind of event, as a type: a consumer ``match``es a kind with ``assert_never`` last, so mypy
names a consumer that forgot a new kind (``tests/contract/test_event_kinds.py``)."""


def kind_of(event: Mapping[str, Any]) -> EventKind | None:
    """An event's kind as the type, or None for a payload whose kind is no event's (old news, garbage)."""
    kind = event.get("kind")
    return cast(EventKind, kind) if kind in get_args(EventKind) else None


Event = (
    CardEvent
    | RoundEvent
    | AlertEvent
    | ShoeEvent
    | DealerEvent
    | AnchorEvent
    | RevealEvent
    | SuspensionEvent
    | ConfigEvent
    | DeckCheckEvent
)


# --------------------------------------------------------------------------
# Outputs as the validator builds them: plain data with the models' JSON
# --------------------------------------------------------------------------


class Data(dict[str, Any]):
    """A JSON object exactly as published, read by key or by attribute.

    ``scannerd.contract.topics`` encodes it as it is, so its keys are in the model's
    field order and its values of the model's types (a float field holds a
    float); ``tests/contract/test_event_data.py`` checks, over every golden session and
    generated input streams, that the bytes are those of the model.
    """

    __slots__ = ()
    _unset: ClassVar[frozenset[str]] = frozenset()
    """Fields left out of the payload while unset: they read as None, as on the model."""

    def __getattr__(self, name: str) -> Any:
        try:
            return self[name]
        except KeyError:
            if name in self._unset:
                return None
            raise AttributeError(name) from None


class EventData(Data):
    """One event as plain data; ``model`` is the contract's class for its kind."""

    __slots__ = ()
    model: ClassVar[type[EventBase]]

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        cls._unset = frozenset(n for n, f in cls.model.model_fields.items() if f.exclude_if is not None)

    @classmethod
    def of(cls, event: EventBase) -> Self:
        """A model's event as the validator would have built it: a saved alert restored, a test's event."""
        return cls(_nested(event.model_dump(mode="json")))


def _nested(raw: dict[str, Any]) -> dict[str, Any]:
    """Nested objects (a round's hands, a shuffle alert's evidence) read by attribute too, as built."""
    return {k: Data(_nested(v)) if isinstance(v, dict) else v for k, v in raw.items()}


class CardData(EventData):
    __slots__ = ()
    model = CardEvent


class RoundData(EventData):
    __slots__ = ()
    model = RoundEvent


class AlertData(EventData):
    __slots__ = ()
    model = AlertEvent


class ShoeData(EventData):
    __slots__ = ()
    model = ShoeEvent


class DealerData(EventData):
    __slots__ = ()
    model = DealerEvent


class AnchorData(EventData):
    __slots__ = ()
    model = AnchorEvent


class RevealData(EventData):
    __slots__ = ()
    model = RevealEvent


class SuspensionData(EventData):
    __slots__ = ()
    model = SuspensionEvent


class ConfigData(EventData):
    __slots__ = ()
    model = ConfigEvent


class DeckCheckData(EventData):
    __slots__ = ()
    model = DeckCheckEvent
