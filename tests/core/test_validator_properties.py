"""Property tests: correct deals raise nothing; no input stream can break the validator."""

import contextlib
import random

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from scannerd.core.cards import ALL_CARDS
from scannerd.core.house import HouseRules
from scannerd.core.inputs import CardDrawn, Command, CutCardSeen, LinkChanged, Tick
from scannerd.core.validator import CommandRejected, Validator
from tests.support.reference_rules import VALUE, deal_round
from tests.support.table import Table


def deal_full_shoe(t: Table, rng: random.Random, decks: int) -> int:
    """Shuffle, burn by the first card, deal rounds until the shoe closes; returns rounds dealt."""
    shoe = [c for c in ALL_CARDS for _ in range(decks)]
    rng.shuffle(shoe)
    it = iter(shoe)
    t.cmd("new_shoe")
    first = next(it)
    t.card(first)
    burn = VALUE[first[0]] or 10
    for _ in range(burn):
        t.card(next(it))
    rounds = 0
    while t.v.state()["shoe"]["status"] != "closed":
        t.cmd("betting_open")
        t.cmd("betting_close")
        player, banker = deal_round(lambda: next(it))
        # The validator sees the cards in the order they came out of the shoe.
        order = [player[0], banker[0], player[1], banker[1], *player[2:], *banker[2:]]
        t.cards(*order)
        done = t.last_round()
        assert (done.phase, done.player.cards, done.banker.cards) == ("complete", player, banker)
        rounds += 1
    return rounds


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**32 - 1), cut=st.integers(6, 120))
def test_any_shuffled_shoe_dealt_correctly_gives_no_alert_but_the_cut_card(seed, cut):
    t = Table(cut_card_remaining=cut)
    rounds = deal_full_shoe(t, random.Random(seed), 8)
    assert t.alerts() == ["CUT_CARD"]
    assert rounds > 50


def test_several_shoes_in_a_row_stay_clean():
    t = Table(cut_card_remaining=14)
    rng = random.Random(7)
    for _ in range(3):
        deal_full_shoe(t, rng, 8)
    assert t.alerts() == ["CUT_CARD"] * 3


_RANK = {"card": 0, "alert": 1, "round": 2, "shoe": 3}


def assert_documented_order(item, out) -> None:
    """docs/validator.md: card, alert, round, shoe within one input, and its exceptions."""
    rest = list(out)
    if rest and rest[-1].kind == "suspension":  # last: the round it voided, the shoe, the suspension
        stop = rest.pop()
        if not stop.suspended:  # resumed: nothing else
            assert not rest
        elif [e.kind for e in rest[-2:]] == ["round", "shoe"] and rest[-2].reason == stop.cause:
            rest = rest[:-2]
        elif rest and rest[-1].kind == "round" and rest[-1].reason == stop.cause:
            rest = rest[:-1]
    if rest and not isinstance(item, Command) and getattr(rest[0], "code", None) == "ROUND_STALLED":
        rest = rest[1:]  # a due stall is raised first, by any input but a command
    if isinstance(item, Command) and item.name == "betting_open" and rest[0].kind == "alert":
        # SHORT_DEAL, the void round and the shoe (when one is known), then the new round.
        assert [e.kind for e in rest] in (["alert", "round", "shoe", "round"], ["alert", "round", "round"])
        return
    if isinstance(item, CardDrawn) and rest[0].kind == "round":
        assert rest[0].phase == "dealing"  # auto mode: the round this card opens, then the card
        rest = rest[1:]
    kinds = [e.kind for e in rest]
    assert kinds == sorted(kinds, key=_RANK.__getitem__), kinds
    assert kinds.count("shoe") <= 1, kinds
    if isinstance(item, CardDrawn):
        about_more = ("CUT_CARD", "UNREADABLE_REPEATED")  # the shoe, the reader: not this card alone
        own = [e.code for e in rest if e.kind == "alert" and e.code not in about_more]
        assert len(own) <= 1, own  # one alert per card (a run of unreadable ones adds its own)


def as_input(ts: float, inp: tuple) -> CardDrawn | CutCardSeen | LinkChanged | Tick | Command:
    """A generated input tuple as the validator input it names."""
    kind = inp[0]
    if kind == "card":
        return CardDrawn(ts, inp[1], inp[2])
    if kind == "cut":
        return CutCardSeen(ts)
    if kind == "link":
        return LinkChanged(ts, inp[1])
    if kind == "tick":
        return Tick(ts)
    return Command(ts, inp[1], inp[2] if len(inp) > 2 else {})


cards = st.sampled_from([*ALL_CARDS, None])
ts_steps = st.floats(0, 100, allow_nan=False)
inputs = st.one_of(
    st.tuples(st.just("card"), cards, st.booleans()),
    st.tuples(st.just("cut")),
    st.tuples(st.just("link"), st.booleans()),
    st.tuples(st.just("tick")),
    st.tuples(
        st.just("cmd"),
        st.sampled_from(
            ["new_shoe", "betting_open", "betting_close", "void_round", "ack_alert", "resume", "bogus"]
        ),
        st.dictionaries(
            st.sampled_from(["round_id", "shoe_id", "reason", "alert_id", "supervisor_id", "x"]),
            st.one_of(st.none(), st.integers(-2, 40), st.text(max_size=70), st.booleans(), st.floats()),
            max_size=3,
        ),
    ),
)


wild_rules = st.builds(
    HouseRules,
    decks=st.integers(1, 2),
    round_control=st.sampled_from(["server", "auto"]),
    burn=st.sampled_from(["first-card-value", "none", 0, 3]),
    cut_card_remaining=st.one_of(st.none(), st.integers(0, 60)),
    last_hand=st.sampled_from(["finish", "one-more"]),
    stall_timeout_s=st.floats(1, 60),
)
wild_stream = st.lists(st.tuples(ts_steps, inputs), max_size=150)


@settings(max_examples=300, deadline=None)
@given(rules=wild_rules, stream=wild_stream)
def test_no_input_stream_raises_anything_but_a_rejected_command(rules, stream):
    t = Table()
    t.v = Validator("T1", rules)  # the drawn rules whole, suspend_on too
    ts = 1_700_000_000.0
    last_seq = 0
    for step, inp in stream:
        ts += step
        kind = inp[0]
        item = as_input(ts, inp)
        try:
            out = t.v.handle(item)
        except CommandRejected:
            assert kind == "cmd"
            continue
        for e in out:
            assert e.seq == last_seq + 1
            last_seq = e.seq
        assert_documented_order(item, out)
        if kind == "card":
            assert sum(e.kind == "card" for e in out) == 1  # every physical card: exactly one card event


# A table's own vocabulary, weighted towards what it meets: well-formed commands, a small pool of
# cards (so one-deck shoes see foreign cards), unreadable and burn-marked cards, the cut card, the
# cable, long waits. Streams of these reach the states where two rules meet.
table_inputs = st.one_of(
    st.tuples(st.just("cmd"), st.sampled_from(["new_shoe", "betting_open", "betting_close", "void_round"])),
    st.tuples(st.just("cmd"), st.just("resume"), st.just({"reason": "checked"})),
    st.tuples(st.just("card"), st.sampled_from(["9H", "2S", "KD", "5C", "AH", None]), st.booleans()),
    st.tuples(st.just("cut")),
    st.tuples(st.just("link"), st.booleans()),
    st.tuples(st.just("tick")),
)


ordered_rules = st.builds(
    HouseRules,
    decks=st.just(1),
    round_control=st.sampled_from(["server", "auto"]),
    burn=st.sampled_from(["first-card-value", "none", 2]),
    cut_card_remaining=st.one_of(st.none(), st.integers(30, 50)),
    last_hand=st.sampled_from(["finish", "one-more"]),
    stall_timeout_s=st.just(30.0),
)
ordered_stream = st.lists(st.tuples(st.sampled_from([0.5, 40.0]), table_inputs), min_size=10, max_size=80)


@settings(max_examples=300, deadline=None)
@given(rules=ordered_rules, stream=ordered_stream)
def test_every_input_publishes_its_events_in_the_documented_order(rules, stream):
    t = Table()
    t.v = Validator("T1", rules)  # the drawn rules whole, suspend_on too
    ts = 1_700_000_000.0
    for step, inp in stream:
        ts += step
        item = as_input(ts, inp)
        try:
            out = t.v.handle(item)
        except CommandRejected:
            continue
        assert_documented_order(item, out)


@settings(max_examples=300, deadline=None)
@given(
    rules=st.builds(
        HouseRules,
        decks=st.just(1),
        round_control=st.sampled_from(["server", "auto"]),
        burn=st.sampled_from(["none", 2]),
        betting_time_s=st.one_of(st.none(), st.floats(1, 60)),
        stall_timeout_s=st.floats(1, 60),
    ),
    stream=st.lists(st.tuples(st.sampled_from([0.5, 3.0, 40.0]), table_inputs), min_size=5, max_size=60),
    probes=st.lists(st.floats(0, 120), min_size=1, max_size=5),
)
def test_no_tick_can_act_before_the_time_the_validator_gives_a_replay(rules, stream, probes):
    """A replay asks ``acts_at`` only from ``acts_from`` on: a tick that would act earlier is lost."""
    t = Table()
    t.v = Validator("T1", rules)  # the drawn rules whole, suspend_on too
    ts = 1_700_000_000.0
    for step, inp in stream:
        ts += step
        with contextlib.suppress(CommandRejected):
            t.v.handle(as_input(ts, inp))
        due = t.v.acts_from()
        for probe in probes:
            if t.v.acts_at(ts + probe):
                assert due is not None and ts + probe >= due, (ts + probe, due)
