"""A first shoe judged by its own order: new decks left in their order, or a stack laid in again.

No earlier shoe is there to compare the first shoe of a table with, and that
is the shoe a cheat brings in. Shoes here are made from new decks by the
simulator (simulators/shuffles.py) with fixed seeds and dealt by the rules;
the false-alarm rate and the power over many shoes are measured by
``bench/shoe_order_calibration.py`` (docs/shuffle.md, "A shoe's own order").
"""

import json
import math
import random
from collections import Counter

import pytest

from scannerd.contract.events import AlertData
from scannerd.core.cards import ALL_CARDS
from scannerd.core.house import HouseRules
from scannerd.core.inputs import Command
from scannerd.core.shoe_order import THRESHOLD, OrderEvidence, new_deck_order
from scannerd.core.shuffle_check import ShuffleCheck
from scannerd.core.validator import Validator
from simulators.dealer import Dealer
from simulators.scenario import ScenarioError, parse
from simulators.shuffles import FIRST_SHOES, deal, first_shoe
from tests.core.test_shuffle_check import feed_validator, fresh_order, shuffle_alerts


def first_alert(order: list[str], decks: int = 8) -> tuple[ShuffleCheck, OrderEvidence | None, int | None]:
    """Deal ``order`` as a table's first shoe: the check, the evidence that alerted and at which card."""
    check = ShuffleCheck()
    check.new_shoe("S1")
    seen: Counter[str] = Counter()
    for n, card in enumerate(deal(order)[0], 1):
        seen[card] += 1
        for crossed in check.card(card, seen, decks):
            assert isinstance(crossed, OrderEvidence)  # there is no earlier shoe to compare with
            return check, crossed, n
    return check, None, None


def test_new_decks_come_out_ace_to_king_in_two_suits_and_king_to_ace_in_two():
    deck = new_deck_order()
    assert sorted(deck) == sorted(ALL_CARDS)
    assert deck[:2] == ["AS", "2S"] and deck[12:14] == ["KS", "AD"] and deck[26:28] == ["KC", "QC"]


@pytest.mark.parametrize(
    ("kind", "against", "within"),
    [
        ("new", "new_decks", 12),
        ("strip", "new_decks", 30),
        ("riffle", "new_decks", 40),
        ("stacked", "own", 120),
    ],
)
def test_a_first_shoe_made_badly_from_new_decks_is_caught_early(kind, against, within):
    for seed in range(3):
        order = first_shoe(random.Random(seed), kind, 8)
        assert order is not None and sorted(order) == sorted(ALL_CARDS * 8)
        check, evidence, at = first_alert(order)
        assert evidence is not None, (kind, seed, check.order.new_decks.peak, check.order.own.peak)
        assert evidence.against == against and at is not None and at <= within, (kind, seed, at)


def test_a_shoe_dealt_backwards_from_new_decks_is_caught_as_well():
    order = (new_deck_order() * 8)[::-1]
    _, evidence, at = first_alert(order)
    assert evidence is not None and evidence.against == "new_decks" and at is not None and at <= 12
    assert evidence.backward > evidence.forward


def test_properly_shuffled_first_shoes_stay_far_below_the_threshold():
    rng = random.Random(20)
    for _ in range(60):
        check, evidence, _ = first_alert(fresh_order(rng))
        assert evidence is None
        assert max(check.order.new_decks.peak, check.order.own.peak) < THRESHOLD * 0.75


def test_the_threshold_is_a_union_over_every_start_and_alternative_at_one_in_a_hundred_thousand():
    assert 8.5 < THRESHOLD / math.log(10) < 9  # log10(8 alternatives * 416 starts / 1e-5)


def test_a_shoe_restored_mid_deal_judges_its_own_order_as_one_never_stopped():
    order = first_shoe(random.Random(2), "riffle", 8)
    assert order is not None
    drawn = deal(order)[0]
    check = ShuffleCheck()
    check.new_shoe("S1")
    seen: Counter[str] = Counter()
    for card in drawn[:7]:
        seen[card] += 1
        check.card(card, seen, 8)
    copy = ShuffleCheck.restore(json.loads(json.dumps(check.snapshot())))
    crossed = []
    for card in drawn[7:60]:
        seen[card] += 1
        crossed.append([e.figures() for e in check.card(card, seen, 8)])
        assert crossed[-1] == [e.figures() for e in copy.card(card, seen, 8)]
    assert copy.snapshot() == check.snapshot() and any(crossed)


def test_a_snapshot_from_before_the_own_order_check_restores_and_judges_on():
    check = ShuffleCheck()
    check.new_shoe("S1")
    snap = check.snapshot()
    del snap["order"]
    copy = ShuffleCheck.restore(snap)
    seen: Counter[str] = Counter()
    crossed = []
    for card in deal(new_deck_order() * 8)[0][:20]:
        seen[card] += 1
        crossed += copy.card(card, seen, 8)
    assert crossed and {e.against for e in crossed if isinstance(e, OrderEvidence)} == {"new_decks"}


def test_the_validator_alerts_the_pit_against_new_decks_and_restates_it_at_the_shoes_end():
    rules = HouseRules(suspend_on=())  # the suspension's own tests: tests/core/test_suspension.py
    dealer = Dealer(rules, random.Random(3), pace=0, first_shoe="new")
    events = feed_validator(Validator("T1", rules), dealer.play(shoes=1))
    first, final = shuffle_alerts(events)
    assert (first.shoe_id, first.severity, first.shuffle.against) == ("S1", "warning", "new_decks")
    assert "earlier_shoe_id" not in first.shuffle and not first.shuffle.final
    assert "new decks" in first.message
    assert final.alert_id == first.alert_id and final.shuffle.final
    assert final.shuffle.forward == final.shuffle.pairs  # every pair in the boxes' order
    assert AlertData.model.model_validate(final).shuffle.against == "new_decks"  # the contract holds it


def test_a_stacked_first_shoe_is_named_as_its_own_order_repeated():
    rules = HouseRules(suspend_on=())  # the suspension's own tests: tests/core/test_suspension.py
    dealer = Dealer(rules, random.Random(4), pace=0, first_shoe="stacked")
    alerts = shuffle_alerts(feed_validator(Validator("T1", rules), dealer.play(shoes=1)))
    assert alerts and {a.shuffle.against for a in alerts} == {"own"}
    assert "dealt before" in alerts[0].message and "stacked shoe" in alerts[0].message


def test_a_scenario_names_the_first_shoe_and_a_wrong_one_by_its_line():
    assert parse("first-shoe stacked\nrounds 1\n").first_shoe == "stacked"
    with pytest.raises(ScenarioError, match="line 2: unknown first shoe 'marked'"):
        parse("seed 1\nfirst-shoe marked\n")
    with pytest.raises(ValueError, match="unknown first shoe"):
        Dealer(HouseRules(), random.Random(1), first_shoe="pile")
    assert {"random", "new", "stacked", "riffle"} <= set(FIRST_SHOES)


def test_a_validator_restarted_without_its_state_file_misses_nothing_it_can_still_see():
    """The state file gone mid-shoe: the restarted table judges the rest of the shoe from scratch, and
    new decks' order is in every stretch of it."""
    rules = HouseRules(suspend_on=())  # the suspension's own tests: tests/core/test_suspension.py
    dealer = Dealer(rules, random.Random(6), pace=0, first_shoe="new")
    steps = list(dealer.play(shoes=1))
    half = len(steps) // 2
    v = Validator("T1", rules)
    v.handle(Command(1.0, "new_shoe", {"shoe_id": "S1"}))
    late = feed_validator(v, steps[half:])
    assert any(a.shuffle.against == "new_decks" for a in shuffle_alerts(late))
