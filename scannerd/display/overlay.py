"""What the stream's overlay shows of a table: what a player at home may see, and nothing else.

The overlay is drawn over the video a studio sends to players, so it is a
public screen: the round as dealt, its totals and result, the roads and the
betting time. What the dealer's screen also carries (alerts and their text,
the dealer's and supervisors' ids, the device, the shoe's notices, why the
table stopped, where the next card goes) never leaves the server for it: the
overlay is sent this view, built from the same :class:`TableView` in the
same step as the dealer's, so it can neither lag the dealer's screen nor say
more than this. A squeeze table's cards come as ``back`` until revealed,
with no total and no result, exactly as :meth:`TableView.round_view` holds
them back.
"""

from __future__ import annotations

from typing import Any

from scannerd.display.view import TableView

_ROUND_KEYS = ("round_id", "hand_no", "phase", "last_hand", "sides", "winner", "betting_ends_ts")
_HAND_KEYS = ("cards", "total", "natural", "pair", "calls")


def overlay_view(view: TableView) -> dict[str, Any]:
    """The overlay's whole view: JSON-ready, and only what the module docstring lets through."""
    rnd = view.round_view()
    return {
        "table_id": view.table_id,
        "game": view.game_view(),
        "shoe_id": view.shoe["shoe_id"] if view.shoe else None,
        "round": None
        if rnd is None
        else {k: rnd[k] for k in _ROUND_KEYS}
        | {side: {k: rnd[side][k] for k in _HAND_KEYS} for side in rnd["sides"]},
        "history": view.history(),
    }
