"""The shuffle check on generated shoes: every lazy shuffle the simulator deals, and proper ones.

Shoes are dealt by the rules (burn, hands, cut card) and the next shoe made
from the discards as the dealer picks them up (simulators/shuffles.py), with
fixed seeds. The false-alarm rate and the detection power over many shoes
are measured by ``bench/shuffle_calibration.py`` (docs/shuffle.md); here a few
shoes of each kind show that the check tells them apart, and that the alert
reaches the pit and nobody else.
"""

import json
import random
from collections import Counter

import pytest

from scannerd.contract.events import AlertData
from scannerd.core.cards import ALL_CARDS
from scannerd.core.house import HouseRules
from scannerd.core.inputs import CardDrawn, Command, CutCardSeen
from scannerd.core.shuffle_check import THRESHOLD, ShuffleCheck
from scannerd.core.validator import Validator
from scannerd.display.view import TableView
from scannerd.runtime.shoe_alarm import AlarmState
from simulators.actions import CutCard, Draw, ServerCommand, Unreadable
from simulators.dealer import Dealer
from simulators.rules import FIRST_CARD_BURNS
from simulators.scenario import ScenarioError, parse
from simulators.shuffles import SHUFFLES, deal, discard_pile, next_shoe

LAZY = ("preset", "pile", "cut", "riffle", "riffle-cut", "strip")
PROPER = ("random", "full")


def fresh_order(rng: random.Random) -> list[str]:
    cards = [c for c in ALL_CARDS for _ in range(8)]
    rng.shuffle(cards)
    return cards


def feed(check: ShuffleCheck, shoe_id: str, order: list[str]) -> int | None:
    """Deal ``order`` through the check; the card number that raised the alert, if one did."""
    check.new_shoe(shoe_id)
    drawn, _, _ = deal(order)
    seen: Counter[str] = Counter()
    first = None
    for n, card in enumerate(drawn, 1):
        seen[card] += 1
        if check.card(card, seen, 8) and first is None:
            first = n
    return first


def two_shoes(kind: str, seed: int) -> tuple[ShuffleCheck, int | None]:
    rng = random.Random(seed)
    check = ShuffleCheck()
    order = fresh_order(rng)
    assert feed(check, "S1", order) is None  # nothing to compare the first shoe with
    _, rack, undealt = deal(order)
    second = next_shoe(rng, kind, order, discard_pile(rack, undealt))
    assert sorted(second) == sorted(order)  # a shuffle loses and adds no card
    return check, feed(check, "S2", second)


@pytest.mark.parametrize("kind", LAZY)
def test_each_lazy_shuffle_is_caught_within_the_shoe(kind):
    for seed in range(3):
        check, first = two_shoes(kind, seed)
        assert first is not None, (kind, seed, check.comparisons[0].log_evidence)


@pytest.mark.parametrize("kind", PROPER)
def test_properly_shuffled_shoes_stay_far_below_the_threshold(kind):
    for seed in range(10):
        check, first = two_shoes(kind, seed)
        assert first is None
        assert check.comparisons[0].log_evidence < THRESHOLD / 2


def test_a_repeated_shoe_is_caught_within_its_first_30_cards():
    for seed in range(10):
        _, first = two_shoes("preset", seed)
        assert first is not None and first <= 30


def test_the_discards_come_back_hand_by_hand_the_last_hand_on_top():
    order = fresh_order(random.Random(4))
    _, rack, undealt = deal(order)
    pile = discard_pile(rack, undealt)
    burn = 1 + FIRST_CARD_BURNS[order[0][0]]
    assert pile[: len(undealt)] == undealt
    assert pile[len(undealt) : len(undealt) + len(rack[-1])] == rack[-1]
    assert pile[-burn:] == order[:burn][::-1]  # burned one by one, the first at the bottom
    first_hand = order[burn : burn + len(rack[burn])]
    assert sorted(rack[burn]) == sorted(first_hand)
    assert sorted(pile) == sorted(order)


def test_fingerprints_and_figures_survive_a_snapshot_and_stay_small():
    rng = random.Random(7)
    check = ShuffleCheck()
    orders = [fresh_order(rng) for _ in range(5)]
    for n, order in enumerate(orders[:-1], 1):
        feed(check, f"S{n}", order)
    drawn, _, _ = deal(orders[1])  # the last shoe repeats the second
    check.new_shoe("S5")
    seen: Counter[str] = Counter()
    for card in drawn[:9]:
        seen[card] += 1
        check.card(card, seen, 8)
    snap = json.loads(json.dumps(check.snapshot()))
    assert len(json.dumps(snap)) < 3500  # five fingerprints of 364 bytes, the figures against four
    copy = ShuffleCheck.restore(snap)
    for card in drawn[9:40]:
        seen[card] += 1
        assert [c.earlier for c in check.card(card, seen, 8)] == [c.earlier for c in copy.card(card, seen, 8)]
    assert copy.snapshot() == check.snapshot()
    assert [fp.shoe_id for fp in check.history] == ["S1", "S2", "S3", "S4"]
    assert max(check.comparisons, key=lambda c: c.log_evidence).earlier == "S2"


def feed_validator(v: Validator, steps, ts: float = 1_700_000_000.0) -> list:
    events = []
    for step in steps:
        ts += 0.5
        match step.action:
            case Draw(card=card):
                events += v.handle(CardDrawn(ts, card))
            case Unreadable():
                events += v.handle(CardDrawn(ts, None))
            case CutCard():
                events += v.handle(CutCardSeen(ts))
            case ServerCommand(name=name, args=args):
                events += v.handle(Command(ts, name, args))
    return events


def shuffle_alerts(events) -> list[AlertData]:
    return [e for e in events if isinstance(e, AlertData) and e.code == "SHUFFLE_SUSPECT"]


def test_the_validator_alerts_the_pit_early_and_restates_the_figures_at_the_shoes_end():
    rules = HouseRules(suspend_on=())  # the suspension's own tests: tests/core/test_suspension.py
    dealer = Dealer(rules, random.Random(3), pace=0, shuffle="preset")
    v = Validator("T1", rules)
    steps = list(dealer.play(shoes=2))
    events = feed_validator(v, steps)
    first, final = shuffle_alerts(events)
    assert (first.shoe_id, first.severity, first.shuffle.earlier_shoe_id) == ("S2", "warning", "S1")
    assert not first.shuffle.final and first.shuffle.pairs <= 30
    assert "shoe S1" in first.message and "10^" in first.message
    assert final.alert_id == first.alert_id and final.seq > first.seq and final.shuffle.final
    assert final.shuffle.log10_evidence > first.shuffle.log10_evidence
    assert v.open_alerts[first.alert_id] == final  # the pit acknowledges one alert, with its figures
    # Nothing for the dealer: not on the display, and the shoe's alarm stays off.
    view = TableView("T1")
    for e in events:
        view.apply(e)
    assert all(a["code"] != "SHUFFLE_SUSPECT" for a in view.open_alerts())
    alarm = AlarmState()
    alarm.apply(shuffle_alerts(events))
    assert not alarm.on


def test_a_dealer_making_mistakes_still_loads_every_card_of_the_last_shoe_into_the_next():
    rules = HouseRules(suspend_on=())  # the suspension's own tests: tests/core/test_suspension.py
    dealer = Dealer(rules, random.Random(8), pace=0, error_rate=0.5, shuffle="pile")
    events = feed_validator(Validator("T1", rules), dealer.play(shoes=3))
    assert sorted(dealer.shoe.loaded) == sorted(ALL_CARDS * 8)  # next_shoe checks every shoe too
    assert shuffle_alerts(events)


def test_a_properly_shuffling_dealer_raises_nothing_over_several_shoes():
    rules = HouseRules(suspend_on=())  # the suspension's own tests: tests/core/test_suspension.py
    for kind in PROPER:
        dealer = Dealer(rules, random.Random(11), pace=0, shuffle=kind)
        events = feed_validator(Validator("T1", rules), dealer.play(shoes=4))
        assert shuffle_alerts(events) == []


def test_a_restarted_validator_goes_on_comparing_from_its_snapshot():
    rules = HouseRules(suspend_on=())  # the suspension's own tests: tests/core/test_suspension.py
    dealer = Dealer(rules, random.Random(5), pace=0, shuffle="riffle")
    steps = list(dealer.play(shoes=2))
    whole = Validator("T1", rules)
    expected = feed_validator(whole, steps)
    half = len(steps) * 3 // 4
    v = Validator("T1", rules)
    events = feed_validator(v, steps[:half])
    v = Validator.restore("T1", rules, json.loads(json.dumps(v.snapshot())))
    events += feed_validator(v, steps[half:], 1_700_000_000.0 + 0.5 * half)
    assert shuffle_alerts(events) == shuffle_alerts(expected) != []


def test_an_old_snapshot_without_the_check_restores_and_compares_from_the_next_shoe():
    rules = HouseRules(suspend_on=())  # the suspension's own tests: tests/core/test_suspension.py
    v = Validator("T1", rules)
    v.handle(Command(1.0, "new_shoe", {"shoe_id": "S1"}))
    snap = v.snapshot()
    del snap["shuffle"]
    restored = Validator.restore("T1", rules, snap)
    assert restored.shuffle.current is None
    assert restored.handle(CardDrawn(2.0, "AS"))  # a card is still judged as before


def test_a_scenario_names_the_shuffle_and_a_wrong_one_by_its_line():
    assert parse("shuffle riffle-cut\nrounds 1\n").shuffle == "riffle-cut"
    with pytest.raises(ScenarioError, match="line 2: unknown shuffle 'overhand'"):
        parse("seed 1\nshuffle overhand\n")
    assert set(SHUFFLES) | {"random", "preset"} >= set(LAZY + PROPER)
