"""The dealer's action stream and the outcomes it expects, one mistake at a time."""

import random

import pytest

from scannerd.core.house import HouseRules
from simulators.actions import CutCard, Draw, Pause, ServerCommand, Unplug, Unreadable
from simulators.dealer import MISTAKES, RANDOM_MISTAKES, STALL_MARGIN_S, Dealer
from simulators.rules import winner


def dealer(seed=1, **kw):
    rules = kw.pop("rules", HouseRules())
    return Dealer(rules, random.Random(seed), pace=0, **kw)


def names(steps):
    out = []
    for s in steps:
        a = s.action
        out.append(a.name if isinstance(a, ServerCommand) else type(a).__name__)
    return out


def alerts(steps):
    return [code for s in steps for code in s.expect.alerts]


def one_round(d, mistake=None):
    list(d.start_shoe())
    return list(d.deal_round(mistake))


def test_a_shoe_starts_with_new_shoe_and_the_burn():
    d = dealer()
    steps = list(d.start_shoe())
    assert names(steps)[0] == "new_shoe"
    burn = [s for s in steps if isinstance(s.action, Draw)]
    assert all(s.action.burn and s.expect.position == "burn" for s in burn)
    first = burn[0].action.card[0]
    assert len(burn) == 1 + ({"A": 1, "T": 10, "J": 10, "Q": 10, "K": 10}.get(first) or int(first))
    assert alerts(steps) == []


def test_a_good_round_follows_the_rules_and_expects_its_winner():
    d = dealer(seed=5)
    steps = one_round(d)
    assert names(steps)[:2] == ["betting_open", "betting_close"]
    cards = [s for s in steps if isinstance(s.action, Draw)]
    assert 4 <= len(cards) <= 6
    hands = {"player": [], "banker": []}
    for s in cards:
        hands[s.expect.position[:6]].append(s.action.card)
    assert [s.expect.position for s in cards[:4]] == ["player1", "banker1", "player2", "banker2"]
    assert cards[-1].expect.round_end == "complete"
    assert cards[-1].expect.winner == winner(hands["player"], hands["banker"])
    assert alerts(steps) == []


def test_early_card_is_drawn_while_betting_is_open():
    steps = one_round(dealer(), "early-card")
    assert names(steps)[:3] == ["betting_open", "Draw", "betting_close"]
    assert steps[1].expect.alerts == ("CARD_BEFORE_BETS_CLOSED",)
    assert steps[1].expect.position == "discard"
    assert steps[-1].expect.round_end == "complete"  # the round carries on


def test_extra_card_follows_a_complete_round():
    steps = one_round(dealer(), "extra-card")
    assert steps[-2].expect.round_end == "complete"
    assert isinstance(steps[-1].action, Draw)
    assert steps[-1].expect.alerts == ("EXTRA_CARD",)
    assert alerts(steps) == ["EXTRA_CARD"]


def test_short_deal_stops_early_and_the_next_betting_open_voids_it():
    d = dealer(seed=3)
    steps = one_round(d, "short-deal")
    assert 1 <= names(steps).count("Draw") <= 3
    assert alerts(steps) == []
    nxt = list(d.deal_round())
    assert nxt[0].action.name == "betting_open"
    assert nxt[0].expect.alerts == ("SHORT_DEAL",)
    assert nxt[0].expect.round_end == "void"


def test_unreadable_card_voids_the_round_and_the_dealer_stops():
    steps = one_round(dealer(), "unreadable")
    assert isinstance(steps[-1].action, Unreadable)
    assert steps[-1].expect.alerts == ("UNREADABLE_CARD",)
    assert steps[-1].expect.round_end == "void"
    assert steps[-1].expect.position == "discard"


def test_foreign_card_is_a_copy_too_many_and_voids_the_round():
    d = dealer(rules=HouseRules(decks=1))
    steps = one_round(d, "foreign-card")
    foreign = steps[-1]
    assert isinstance(foreign.action, Draw)
    assert foreign.expect.alerts == ("FOREIGN_CARD",)
    assert foreign.expect.round_end == "void"
    assert d.expected.counts[foreign.action.card] == 2


def test_a_foreign_card_not_yet_detectable_plays_as_a_card():
    d = dealer(seed=2)  # 8 decks: no card has been seen eight times this early
    steps = one_round(d, "foreign-card")
    assert alerts(steps) == []
    assert steps[-1].expect.round_end == "complete"


def test_skipped_burn_shows_when_betting_closes():
    d = dealer()
    steps = list(d.start_shoe(skip_burn=True))
    assert names(steps) == ["new_shoe"]
    steps = list(d.deal_round())
    assert steps[1].action.name == "betting_close"
    assert steps[1].expect.alerts == ("BURN_MISMATCH",)
    assert alerts(list(d.deal_round())) == []


def test_unplug_mid_round_voids_it():
    steps = one_round(dealer(unplug_seconds=0.5), "unplug")
    assert steps[-1].action == Unplug(0.5)
    assert steps[-1].expect.alerts == ("DEVICE_DISCONNECTED", "DEVICE_RECONNECTED")
    assert steps[-1].expect.round_end == "void"


def test_stall_stops_with_a_card_due_then_deals_the_round_to_its_end():
    d = dealer(rules=HouseRules(stall_timeout_s=2.0))
    steps = one_round(d, "stall")
    (pause,) = [s for s in steps if isinstance(s.action, Pause)]
    assert pause.action == Pause(2.0 + STALL_MARGIN_S)
    assert pause.expect.alerts == ("ROUND_STALLED",)
    before = steps[: steps.index(pause)]
    assert 1 <= sum(isinstance(s.action, Draw) for s in before) <= 3  # cards were dealt, more are due
    assert alerts(steps) == ["ROUND_STALLED"]
    assert steps[-1].expect.round_end == "complete"


def test_a_stall_is_never_a_random_mistake_unless_asked_for():
    assert "stall" in MISTAKES and "stall" not in RANDOM_MISTAKES
    d = dealer(seed=3, rules=HouseRules(stall_timeout_s=1.0), error_rate=1.0, mistakes=["stall"])
    assert alerts(list(d.play(rounds=3))) == ["ROUND_STALLED"] * 3


def test_unplug_between_rounds_voids_nothing():
    d = dealer()
    one_round(d)
    (step,) = d.unplug(1.0)
    assert step.expect.alerts == ("DEVICE_DISCONNECTED", "DEVICE_RECONNECTED")
    assert step.expect.round_end is None


@pytest.mark.parametrize(("last_hand", "after"), [("finish", 0), ("one-more", 1)])
def test_the_shoe_ends_after_the_cut_card_by_house_policy(last_hand, after):
    d = dealer(seed=4, rules=HouseRules(last_hand=last_hand))
    steps = list(d.play(shoes=1))
    cut = next(i for i, s in enumerate(steps) if isinstance(s.action, CutCard))
    assert steps[cut].expect.alerts == ("CUT_CARD",)
    assert names(steps[cut:]).count("betting_open") == after
    assert d.expected.closed
    assert alerts(steps) == ["CUT_CARD"]


def test_without_a_game_server_the_dealer_sends_no_commands_and_burns_nothing():
    d = dealer(rules=HouseRules(round_control="auto"))
    steps = list(d.play(rounds=5))
    assert not [s for s in steps if isinstance(s.action, ServerCommand)]
    assert steps[0].expect.position == "player1"
    with pytest.raises(ValueError):
        list(d.deal_round("extra-card"))


def test_the_seed_reproduces_the_session():
    a = list(dealer(seed=9, error_rate=0.3).play(rounds=40))
    b = list(dealer(seed=9, error_rate=0.3).play(rounds=40))
    assert a == b
    assert alerts(a)  # 40 rounds at 30%: some mistakes were made


def test_pace_spaces_cards_and_pauses_between_rounds():
    d = Dealer(HouseRules(), random.Random(1), pace=1.0)
    list(d.start_shoe())
    steps = list(d.deal_round())
    assert steps[0].delay == 3.0  # betting_open after clearing the layout
    assert steps[1].delay == 0.0  # betting time is the game server's
    assert {s.delay for s in steps[2:]} == {1.0}


def test_unknown_mistakes_are_refused():
    with pytest.raises(ValueError):
        dealer(mistakes=["spill-coffee"])
    with pytest.raises(ValueError):
        list(dealer().deal_round("skip-burn"))
