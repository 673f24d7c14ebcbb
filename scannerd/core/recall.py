"""Hand recall: the last hands as the table dealt them, kept for whoever must look back.

A regulator wants the last game and the nine before it recallable at the table, in an error
state too: a dispute over a hand is settled by what the table saw. The recall is a fold over the
table's own events, so the validator (for ``get_state`` and the saved state) and the screens
(from the same events) keep the same hands: each complete or void round, its cards in the order
dealt with their places, the result and facts, who dealt, the misdeals raised on it, and its
times. Pure: no clock, no I/O.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable, Mapping
from typing import Any

from scannerd.core.games import GAMES, Game

KEPT = 10
"""Hands recalled: the last game and the nine before it."""

_OPEN_KEPT = 4
"""Rounds whose misdeals are held while open: one is dealt at a time; a round that never ends (a
state lost with it) must not grow the saved state."""


_PLACES = {
    name: tuple((position, game.side_of(position), game.slot(position)) for position in game.positions)
    for name, game in GAMES.items()
}
"""Each game's positions in deal order with the side and the card of its hand each is: asked once here,
not at every hand recalled."""


def _game_of(event: Mapping[str, Any]) -> Game:
    return next((game for game in GAMES.values() if game.sides[0] in event), GAMES["punto_banco"])


def entry(event: dict[str, Any], misdeals: list[str]) -> dict[str, Any]:
    """A recalled hand from its round's last event (``complete`` or ``void``) and its misdeals.

    The cards in the order dealt: the game's positions in deal order, those the hands hold.
    """
    game = _game_of(event)
    held = [list(event[side]["cards"]) for side in game.sides]
    cards = [
        {"position": position, "card": held[side][slot]}
        for position, side, slot in _PLACES[game.name]
        if slot < len(held[side])
    ]
    times = event.get("times")
    return {
        "round_id": event["round_id"],
        "shoe_id": event.get("shoe_id"),
        "hand_no": event["hand_no"],
        "phase": event["phase"],
        "cards": cards,
        "totals": {side: event[side]["total"] for side in game.sides},
        "winner": event.get("winner"),
        "facts": dict(event["facts"]) if event.get("facts") else None,
        "reason": event.get("reason"),
        "dealer_id": event.get("dealer_id"),
        "misdeals": list(misdeals),
        "ended": float(event["ts"]),
        "betting_s": times["betting_s"] if times else None,
        "dealing_s": times["dealing_s"] if times else None,
    }


class Recall:
    """The last ``KEPT`` hands, newest last, and the misdeals of the rounds still open."""

    def __init__(
        self, hands: list[dict[str, Any]] | None = None, open_misdeals: dict[str, list[str]] | None = None
    ) -> None:
        self.hands: list[dict[str, Any]] = hands or []
        self.open_misdeals: dict[str, list[str]] = open_misdeals or {}

    def observe(self, events: Iterable[dict[str, Any]]) -> None:
        """Fold published events in: a misdeal on an open round is held, a round's end makes its hand.

        Dicts, not any mapping: compiled, a dict's ``get`` is read in place, where a mapping's is a
        method looked up and called, for every event the table publishes (docs/performance.md).
        """
        for event in events:
            kind = event.get("kind")
            if kind == "alert" and event.get("severity") == "misdeal" and not event.get("acknowledged"):
                round_id = event.get("round_id")
                if round_id is not None:
                    codes = self.open_misdeals.setdefault(round_id, [])
                    codes.append(event["code"])
                    while len(self.open_misdeals) > _OPEN_KEPT:
                        del self.open_misdeals[next(iter(self.open_misdeals))]
            elif kind == "round" and event.get("phase") in ("complete", "void"):
                hand = entry(event, self.open_misdeals.pop(event["round_id"], []))
                self.hands = [*self.hands[-(KEPT - 1) :], hand]

    def view(self) -> list[dict[str, Any]]:
        """The hands as ``get_state`` gives them: copies, newest last."""
        return copy.deepcopy(self.hands)

    def saved(self) -> dict[str, Any]:
        """Its part of the snapshot, left out while it holds nothing. Taken after every input, so
        no deep copy: a hand is never changed once made, only an open round's misdeals grow."""
        saved: dict[str, Any] = {}
        if self.hands:
            saved["recall"] = list(self.hands)
        if self.open_misdeals:
            saved["recall_open"] = {round_id: list(codes) for round_id, codes in self.open_misdeals.items()}
        return saved

    @classmethod
    def restore(cls, snap: Mapping[str, Any]) -> Recall:
        """The recall a saved state holds; TypeError for one of another shape, rather than a table that
        fails at its next hand."""
        hands, open_misdeals = snap.get("recall") or [], snap.get("recall_open") or {}
        if not isinstance(hands, list) or not all(isinstance(hand, dict) for hand in hands):
            raise TypeError("recall: not a list of hands")
        codes = open_misdeals.values() if isinstance(open_misdeals, dict) else [None]
        if not all(isinstance(said, list) and all(isinstance(c, str) for c in said) for said in codes):
            raise TypeError("recall_open: not each open round's misdeal codes")
        return cls(copy.deepcopy(hands), copy.deepcopy(open_misdeals))
