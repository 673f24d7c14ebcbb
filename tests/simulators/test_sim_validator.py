"""The dealer's expectations against the daemon's validator, in process.

The dealer's rule knowledge is its own (simulators/rules.py and
simulators/expected.py); here its steps go straight into the validator and
every step's alerts, placements and results must match. The end-to-end tests
run the same comparison through real devices.
"""

import random
from pathlib import Path

import pytest

from scannerd.core.house import HouseRules
from scannerd.core.inputs import CardDrawn, Command, CutCardSeen, LinkChanged, Tick
from scannerd.core.validator import CommandRejected, Validator
from simulators.actions import CutCard, Draw, Pause, ServerCommand, Unplug, Unreadable
from simulators.dealer import MISTAKES, Dealer
from simulators.expected import ExpectedTable
from simulators.loopback import mismatches
from simulators.scenario import UNSUPERVISED, load

CASES = {
    "default": (HouseRules(**UNSUPERVISED), {}),
    "one-more": (HouseRules(**UNSUPERVISED, last_hand="one-more"), {}),
    "no-burn": (HouseRules(**UNSUPERVISED, burn="none"), {}),
    "fixed-burn": (HouseRules(**UNSUPERVISED, burn=5), {}),
    "virtual-cut": (HouseRules(**UNSUPERVISED, cut_card_remaining=14), {"device_reports_cut": False}),
    "virtual-cut-one-more": (
        HouseRules(**UNSUPERVISED, cut_card_remaining=20, last_hand="one-more"),
        {"device_reports_cut": False, "cut": 20},
    ),
    "one-deck-foreign": (HouseRules(**UNSUPERVISED, decks=1), {"cut": (10, 20)}),
    "auto": (HouseRules(**UNSUPERVISED, round_control="auto"), {}),
    "deck-check": (HouseRules(**UNSUPERVISED, deck_check_required=True), {}),
    "deck-check-one-deck-foreign": (
        HouseRules(**UNSUPERVISED, decks=1, deck_check_required=True),
        {"cut": (10, 20)},
    ),
    "no-cut-card": (HouseRules(**UNSUPERVISED), {"cut": None}),
    "no-commission": (HouseRules(**UNSUPERVISED, commission="no_commission"), {}),
    "ez": (HouseRules(**UNSUPERVISED, commission="ez", round_control="auto"), {}),
    "dragon-tiger": (HouseRules(**UNSUPERVISED, game="dragon_tiger"), {}),
    "dragon-tiger-auto-no-burn": (
        HouseRules(**UNSUPERVISED, game="dragon_tiger", round_control="auto", burn="none"),
        {},
    ),
    "dragon-tiger-one-deck-foreign": (
        HouseRules(**UNSUPERVISED, game="dragon_tiger", decks=1),
        {"cut": (10, 20)},
    ),
}


def run(dealer: Dealer, steps, reports_cut: bool) -> list[str]:
    v = Validator("T1", dealer.rules)
    ts = 1_700_000_000.0
    problems: list[str] = []
    for step in steps:
        ts += 0.5
        a = step.action
        events, rejected = [], False
        try:
            match a:
                case Draw(card=card):
                    events = v.handle(CardDrawn(ts, card))
                case Unreadable():
                    events = v.handle(CardDrawn(ts, None))
                case CutCard():
                    events = v.handle(CutCardSeen(ts)) if reports_cut else []
                case ServerCommand(name=name, args=args):
                    events = v.handle(Command(ts, name, args))
                case Unplug(seconds=s):
                    events = v.handle(LinkChanged(ts, up=False)) + v.handle(LinkChanged(ts + s, up=True))
                case Pause(seconds=s):
                    ts += s
                    events = v.handle(Tick(ts))  # as the daemon's ticker looks at the table
        except CommandRejected:
            rejected = True
        problems += mismatches(step, events, rejected)
    return problems


@pytest.mark.parametrize("case", CASES)
def test_validator_agrees_with_the_dealer(case):
    rules, kw = CASES[case]
    for seed, error_rate in ((1, 0.0), (2, 0.4)):
        dealer = Dealer(rules, random.Random(seed), pace=0, error_rate=error_rate, **kw)
        problems = run(dealer, dealer.play(shoes=2), kw.get("device_reports_cut", True))
        assert problems == [], problems[:5]


@pytest.mark.parametrize("game", ["punto_banco", "dragon_tiger"])
def test_validator_agrees_with_a_dealer_making_every_mistake_including_stalls(game):
    rules = HouseRules(**UNSUPERVISED, stall_timeout_s=5.0, game=game)
    for seed in (1, 2):
        dealer = Dealer(rules, random.Random(seed), pace=0, error_rate=0.5, mistakes=MISTAKES)
        steps = list(dealer.play(shoes=1))
        assert any("ROUND_STALLED" in s.expect.alerts for s in steps)
        problems = run(dealer, steps, True)
        assert problems == [], problems[:5]


SAMPLES = sorted((Path(__file__).parents[2] / "samples" / "scenarios").glob("*.txt"))


@pytest.mark.parametrize("reports_cut", [True, False], ids=["cut-sensor", "virtual-cut"])
@pytest.mark.parametrize("sample", SAMPLES, ids=lambda p: p.stem)
def test_sample_scenarios_agree_with_the_validator(sample, reports_cut):
    sc = load(sample)
    dealer = sc.dealer(device_reports_cut=reports_cut, pace=0)
    problems = run(dealer, sc.steps(dealer), reports_cut)
    assert problems == [], problems[:5]


def test_the_dealers_reading_of_auto_mode_opens_no_round_for_a_burn_or_a_foreign_card():
    """docs/validator.md, Rounds: the same answer the validator gives (auto-round-control-edges)."""
    expected = ExpectedTable(HouseRules(**UNSUPERVISED, round_control="auto", decks=1, burn=1))
    expected.apply(ServerCommand("new_shoe"))
    assert expected.apply(Draw("KS")).position == "burn"
    assert expected.apply(Draw("3H")).position == "player1"
    for card in ("4D", "3S", "3C"):
        expected.apply(Draw(card))
    foreign = expected.apply(Draw("3H"))
    assert (foreign.alerts, foreign.position) == (("FOREIGN_CARD",), "discard")
    assert expected.apply(Draw("9H")).position == "player1"
