"""Fault: a table left running for a long time without a shoe ever being started.

With ``round_control = "auto"`` there may be no game server, and then nothing
sends ``new_shoe``: the validator never knows a shoe. Its state must still not
grow with the number of rounds dealt, because the whole of it is written to
the outbox with every card (the snapshot restored after a crash): a state
that grows makes every commit larger and the daemon's memory with it, on a
PC that runs for months. Found by the footprint soak (bench/footprint.py).
"""

from __future__ import annotations

import json

from scannerd.core.house import HouseRules
from scannerd.core.inputs import CardDrawn
from scannerd.core.validator import Validator

NATURAL = ("9H", "2S", "9C", "3D")


def snapshot_bytes(validator: Validator) -> int:
    return len(json.dumps(validator.snapshot()))


def test_rounds_without_a_shoe_do_not_grow_the_state_written_with_every_card() -> None:
    validator = Validator("T1", HouseRules(round_control="auto", burn="none"))
    ts = 1_700_000_000.0
    sizes = []
    for rounds in range(1, 2001):
        for card in NATURAL:
            ts += 1
            validator.handle(CardDrawn(ts, card))
        if rounds in (100, 2000):
            sizes.append(snapshot_bytes(validator))
    assert validator.state()["shoe"] is None
    assert sizes[1] - sizes[0] < 1024, f"snapshot grew from {sizes[0]} to {sizes[1]} bytes"
