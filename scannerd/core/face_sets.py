"""Sets of card faces as bit masks: what the shuffle check and a shoe's own order keep of a shoe.

Face i is bit i of a mask, i being the card's place in ``ALL_CARDS`` (52 faces,
whatever the number of decks). A set is asked "is y in it?" by a shift, the
cheapest test a card's judging can make; only a hit needs the faces spelt
out, a byte at a time.
"""

from __future__ import annotations

from scannerd.core.cards import ALL_CARDS

FACES = {card: i for i, card in enumerate(ALL_CARDS)}
"""A card's face: its bit in a mask."""
N = len(ALL_CARDS)
ROW_BYTES = (N + 7) // 8
"""Bytes of one mask, as a fingerprint's row is saved."""

# For each byte of a mask and each value it can have, the faces its set bits stand for.
_FACES_IN_BYTE = tuple(
    tuple(tuple(8 * i + b for b in range(8) if value >> b & 1) for value in range(256))
    for i in range(ROW_BYTES)
)


def faces(mask: int) -> list[int]:
    """The faces whose bits are set, lowest first, a byte at a time."""
    out: list[int] = []
    for i, value in enumerate(mask.to_bytes(ROW_BYTES, "little")):
        out += _FACES_IN_BYTE[i][value]
    return out
