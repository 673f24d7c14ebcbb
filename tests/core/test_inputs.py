"""The objects made for every card and every command keep what frozen dataclasses gave them.

``CardDrawn``, ``Command``, the device's ``DeviceCard`` and the contract's
``Request`` hold their fields ``Final`` rather than frozen, for speed
(``scannerd/core/inputs.py``). What else uses them still gets what it did:
equal by type and value, hashable where their fields are, and rebuilt by
``copy`` and ``pickle`` (the process pool and a Dask cluster move them).
"""

from __future__ import annotations

import copy
import pickle

import pytest

from drivers.events import DeviceCard, DeviceCutCard
from scannerd.contract.requests import Request
from scannerd.core.inputs import Actor, CardDrawn, Command, CutCardSeen, Tick

MADE_EVERY_CARD_OR_COMMAND = [
    CardDrawn(1.5, "AS", device_burn=True),
    CardDrawn(2.0, None),
    Command(3.0, "betting_open", {"round_id": "R1"}, Actor("display", by="D7", role="dealer")),
    DeviceCard("KD", burn=False, ack=41),
    Request("betting_close", "tx-1", {}, pit_user="pit1"),
]


@pytest.mark.parametrize("made", MADE_EVERY_CARD_OR_COMMAND, ids=lambda m: type(m).__name__)
def test_copy_and_pickle_rebuild_them(made: object) -> None:
    assert copy.copy(made) == made and copy.deepcopy(made) == made
    for protocol in range(2, pickle.HIGHEST_PROTOCOL + 1):
        again = pickle.loads(pickle.dumps(made, protocol))
        assert again == made and type(again) is type(made)


def test_they_are_equal_by_type_and_value_and_hashable_as_frozen_ones_were() -> None:
    assert CardDrawn(1.0, "AS") == CardDrawn(1.0, "AS") != CardDrawn(1.0, "AH")
    assert CardDrawn(1.0, None) != Tick(1.0) and Tick(1.0) != CutCardSeen(1.0)
    assert DeviceCard(None) != DeviceCutCard()
    assert len({CardDrawn(1.0, "AS"), CardDrawn(1.0, "AS"), DeviceCard("AS"), DeviceCard("AS", ack=1)}) == 3
    for with_a_dict in (Command(1.0, "new_shoe", {"shoe_id": "S1"}), Request("get_state")):
        with pytest.raises(TypeError):  # a dict in a field, as frozen: no hash
            hash(with_a_dict)
