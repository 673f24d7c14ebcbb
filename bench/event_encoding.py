"""Event encoding: the serializers that could write the validator's events, on this machine.

Prints one JSON object: for a card event and a complete round's event (the
commonest and the largest of a card's events), microseconds per event to
encode the plain data the validator builds, with each candidate that is
installed, against the contract's pydantic model (validated, then encoded:
what the card's path paid before). Each candidate is also checked byte for
byte against the model's JSON over floats of every magnitude, where JSON
encoders differ (``1e+16`` or ``1e16``, non-finite values): only an exact
one may publish.

    python bench/event_encoding.py [--repeat N]
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import json
import random
import struct
import timeit
from collections.abc import Callable
from functools import partial
from typing import Any

import pydantic_core

from scannerd.contract.events import CardData, Data, EventData, RoundData
from scannerd.contract.topics import encode

CARD = CardData(
    seq=1_764_633_600_123,
    ts=1_764_633_612.345678,
    table_id="BAC-01",
    shoe_id="S20251202-000000",
    kind="card",
    round_id="S20251202-000000-012",
    position="banker2",
    card="QH",
    shoe_card_no=97,
)
ROUND = RoundData(
    seq=1_764_633_600_127,
    ts=1_764_633_640.5,
    table_id="BAC-01",
    shoe_id="S20251202-000000",
    kind="round",
    round_id="S20251202-000000-012",
    phase="complete",
    hand_no=12,
    last_hand=False,
    player=Data(cards=["9H", "KD"], total=9),
    banker=Data(cards=["4S", "QH", "2C"], total=6),
    winner="player",
    natural=False,
    player_pair=False,
    banker_pair=False,
    reason=None,
    detail=None,
)


def candidates() -> dict[str, Callable[[Any], bytes]]:
    """Every encoder of plain data that is installed here (only orjson is a dependency)."""
    found: dict[str, Callable[[Any], bytes]] = {"pydantic_core.to_json": pydantic_core.to_json}
    for name, module, make in (
        ("orjson.dumps", "orjson", lambda m: m.dumps),
        ("msgspec.json.encode", "msgspec", lambda m: m.json.Encoder().encode),
    ):
        with contextlib.suppress(ImportError):
            found[name] = make(importlib.import_module(module))
    found["json.dumps"] = lambda v: json.dumps(v, separators=(",", ":"), ensure_ascii=False).encode()
    return found


def floats(n: int) -> list[float]:
    rng = random.Random(1)
    out = [1e16, 1e22, 1e-5, 1e-7, 5e-324, float("inf"), float("nan")]
    for _ in range(n):
        out.append(struct.unpack("d", struct.pack("Q", rng.getrandbits(64)))[0])
        out.append(rng.uniform(1.5e9, 2.5e9))
    return out


def exact(encoder: Callable[[Any], bytes], values: list[float]) -> int:
    """How many of ``values``, as an event's ``ts``, encode otherwise than the model does."""
    wrong = 0
    for value in values:
        event = CardData(CARD, ts=value)
        try:
            wrong += encoder(event) != encode(CardData.model.model_validate(event))
        except (TypeError, ValueError):
            wrong += 1
    return wrong


def through_the_model(event: EventData) -> bytes:
    """What the card's path did before: validate the event's model, then encode it."""
    return encode(type(event).model.model_validate(event))


def per_event_us(fn: Callable[[], object], repeat: int) -> float:
    number = 20_000
    return round(min(timeit.repeat(fn, number=number, repeat=repeat)) / number * 1e6, 3)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5, help="best of this many runs of each")
    args = parser.parse_args()
    values = floats(20_000)
    results: dict[str, Any] = {}
    for name, event in (("card", CARD), ("round", ROUND)):
        model = type(event).model.model_validate(event)
        plain = json.loads(encode(model))  # pydantic-core takes a slow path for a dict's subclass
        row = {
            "model_validated_and_encoded": per_event_us(partial(through_the_model, event), args.repeat),
            "model_encoded_only": per_event_us(partial(encode, model), args.repeat),
            "pydantic_core.to_json, plain dict": per_event_us(
                partial(pydantic_core.to_json, plain), args.repeat
            ),
        }
        for enc_name, encoder in candidates().items():
            row[enc_name] = per_event_us(partial(encoder, event), args.repeat)
        results[name] = row
    mismatches = {name: exact(encoder, values) for name, encoder in candidates().items()}
    print(
        json.dumps(
            {
                "benchmark": "event_encoding",
                "us_per_event": results,
                "floats_checked": len(values),
                "floats_not_as_the_model": mismatches,
            }
        )
    )


if __name__ == "__main__":
    main()
