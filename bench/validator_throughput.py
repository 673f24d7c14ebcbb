"""Validator throughput: cards per second on one core, events built and serialised as sent.

Prints one JSON object. The baseline in the same run is the cheapest thing a
bridge could do per card (build a dict, ``json.dumps`` it), so the ratio says
what judging the deal costs on top of merely forwarding the scan, whatever
the machine's speed today. The goals: 200,000 cards/s, and at least 0.6 of
the baseline's speed (``speed_vs_baseline``). ``build`` says which build ran,
compiled or pure (``scannerd.runtime.build``): run it on each to compare them.

``stages_us_per_card`` splits a card's time: judging (the validator's rules
and the shuffle check), building its events as plain data (estimated by
building the same events again from their fields), and encoding them
(``topics.encode_data``). ``shuffle_check_us_per_card`` is the shuffle check
alone over the same cards, as the validator calls it: what it costs of the
judging, and ``validator_without_shuffle_check_cards_per_s`` the rest.
``roads_us_per_card`` and ``recall_us_per_card`` are the scoreboard's roads
(a result added and the columns every complete round carries) and the hand
recall (folding in every event published), each alone over the same shoes:
the other two things the table keeps up with at every hand.
``models_us_per_card`` is what the contract's pydantic models take for the
same events in the same run, validating and encoding each: what the hot
path paid before it built plain data.

    python bench/validator_throughput.py [--shoes N] [--repeat N]
"""

from __future__ import annotations

import argparse
import json
import random
import time

from scannerd.contract.events import Data, EventData
from scannerd.contract.topics import encode, encode_data
from scannerd.core.cards import ALL_CARDS
from scannerd.core.games import PUNTO_BANCO
from scannerd.core.house import HouseRules
from scannerd.core.inputs import CardDrawn, Command
from scannerd.core.recall import Recall
from scannerd.core.roads import Result, Roads
from scannerd.core.shuffle_check import ShuffleCheck
from scannerd.core.validator import Validator
from scannerd.runtime import build

RULES = HouseRules(burn="none", cut_card_remaining=14)
GOAL_CARDS_PER_S = 200_000
GOAL_SPEED_VS_BASELINE = 0.6


def shoe_inputs(rng: random.Random, start: float) -> list:
    """One 8-deck shoe as the daemon would feed it: commands around each round's cards."""
    cards = [c for c in ALL_CARDS for _ in range(8)]
    rng.shuffle(cards)
    v = Validator("bench", RULES)
    ts = start
    out: list = [Command(ts, "new_shoe", {})]
    v.handle(out[0])
    it = iter(cards)
    while v.state()["shoe"]["status"] != "closed":
        for name in ("betting_open", "betting_close"):
            ts += 1
            out.append(Command(ts, name, {}))
            v.handle(out[-1])
        while v.round is not None and v.round.phase == "dealing":
            ts += 1
            out.append(CardDrawn(ts, next(it)))
            v.handle(out[-1])
    return out


def run_validator(inputs: list, serialise: bool = True) -> tuple[float, int]:
    """Judge every input; with ``serialise`` each event is encoded by ``topics.encode_data``, the
    bytes the daemon publishes."""
    v = Validator("bench", RULES)
    n = 0
    t0 = time.perf_counter()
    for inp in inputs:
        events = v.handle(inp)
        if serialise:
            for event in events:
                encode_data(event)
        n += isinstance(inp, CardDrawn)
    return time.perf_counter() - t0, n


def run_shuffle_check(inputs: list) -> float:
    """The shuffle check alone, called with each card as the validator calls it (no burn: every card)."""
    check = ShuffleCheck()
    seen: dict[str, int] = {}
    dealt = 0
    t0 = time.perf_counter()
    for inp in inputs:
        if isinstance(inp, CardDrawn):
            seen[inp.card] = seen.get(inp.card, 0) + 1
            dealt += 1
            check.card(inp.card, seen, RULES.decks, dealt)
        elif inp.name == "new_shoe":
            check.finish()
            check.new_shoe(f"S{inp.ts}")
            seen, dealt = {}, 0
    return time.perf_counter() - t0


def run_roads(events: list[EventData]) -> float:
    """The roads alone, as the deal keeps them: each complete round's result added, its columns drawn."""
    initials = {winner: initial for initial, winner in PUNTO_BANCO.initials.items()}
    roads = Roads(initials)
    t0 = time.perf_counter()
    for event in events:
        if event.get("kind") == "shoe" and event.get("status") == "closed":  # the next shoe starts afresh
            roads = Roads(initials)
        elif event.get("phase") == "complete":
            roads.add(
                Result(
                    event["winner"],
                    bool(event["player_pair"]),
                    bool(event["banker_pair"]),
                    bool(event["natural"]),
                )
            )
            roads.columns(PUNTO_BANCO.sides)
    return time.perf_counter() - t0


def run_recall(events: list[EventData]) -> float:
    """The recall alone, folding in the events as the validator publishes them."""
    recall = Recall()
    t0 = time.perf_counter()
    for event in events:
        recall.observe((event,))
    return time.perf_counter() - t0


def rebuild(event: EventData) -> EventData:
    """The same event built again from its fields, as the validator builds it: by keywords, nested
    hands and evidence too (the scan for them makes this an estimate from above)."""
    for value in event.values():
        if isinstance(value, dict):
            Data(**value)
    return type(event)(**event)


def run_stages(inputs: list) -> dict[str, float]:
    """Seconds of each stage over all the inputs, the events' and the models' (see the module's doc)."""
    v = Validator("bench", RULES)
    t0 = time.perf_counter()
    events = [e for inp in inputs for e in v.handle(inp)]
    t1 = time.perf_counter()
    for event in events:
        rebuild(event)
    t2 = time.perf_counter()
    for event in events:
        encode_data(event)
    t3 = time.perf_counter()
    models = [type(e).model.model_validate(e) for e in events]
    t4 = time.perf_counter()
    for model in models:
        encode(model)
    t5 = time.perf_counter()
    return {
        "roads": run_roads(events),
        "recall": run_recall(events),
        "judging": (t1 - t0) - (t2 - t1),
        "building": t2 - t1,
        "encoding": t3 - t2,
        "models_building": t4 - t3,
        "models_encoding": t5 - t4,
        "events": len(events),
    }


def run_baseline(inputs: list) -> tuple[float, int]:
    n = 0
    t0 = time.perf_counter()
    for seq, inp in enumerate(inputs):
        if isinstance(inp, CardDrawn):
            json.dumps({"seq": seq, "ts": inp.ts, "table_id": "bench", "card": inp.card})
            n += 1
    return time.perf_counter() - t0, n


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shoes", type=int, default=20)
    parser.add_argument("--repeat", type=int, default=5, help="best of this many runs of each")
    args = parser.parse_args()
    rng = random.Random(1)
    inputs: list = []
    for i in range(args.shoes):
        inputs += shoe_inputs(rng, 1_700_000_000.0 + i * 10_000)
    # Best of --repeat for each, interleaved, so all see the same (shared, noisy) machine.
    val, built, shuffle, base, stages = [], [], [], [], []
    for _ in range(args.repeat):
        val.append(run_validator(inputs))
        built.append(run_validator(inputs, serialise=False))
        shuffle.append(run_shuffle_check(inputs))
        base.append(run_baseline(inputs))
        stages.append(run_stages(inputs))
    v_s, cards = min(val)
    m_s, _ = min(built)
    s_s = min(shuffle)
    b_s, _ = min(base)
    stage = {name: min(run[name] for run in stages) for name in stages[0]}

    def per_card(*names: str) -> dict[str, float]:
        return {name.removeprefix("models_"): round(stage[name] / cards * 1e6, 2) for name in names}

    print(
        json.dumps(
            {
                "benchmark": "validator_throughput",
                "build": build.running(),
                "cards": cards,
                "validator_cards_per_s": round(cards / v_s),
                "validator_unserialised_cards_per_s": round(cards / m_s),
                "validator_without_shuffle_check_cards_per_s": round(cards / (v_s - s_s)),
                "baseline_cards_per_s": round(cards / b_s),
                "ratio_to_baseline": round(v_s / b_s, 2),
                "speed_vs_baseline": round(b_s / v_s, 3),
                "events_per_card": round(stage["events"] / cards, 2),
                "stages_us_per_card": per_card("judging", "building", "encoding"),
                "shuffle_check_us_per_card": round(s_s / cards * 1e6, 2),
                "roads_us_per_card": round(stage["roads"] / cards * 1e6, 2),
                "recall_us_per_card": round(stage["recall"] / cards * 1e6, 2),
                "models_us_per_card": per_card("models_building", "models_encoding"),
                "goal_cards_per_s": GOAL_CARDS_PER_S,
                "goal_speed_vs_baseline": GOAL_SPEED_VS_BASELINE,
            }
        )
    )


if __name__ == "__main__":
    main()
