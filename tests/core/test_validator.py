"""One test per misdeal code and house policy, with their edges (docs/validator.md)."""

import pytest

from scannerd.core.cards import ALL_CARDS
from scannerd.core.inputs import CardDrawn, CutCardSeen, Fault, LinkChanged
from scannerd.core.validator import CommandRejected, Validator
from tests.support.table import Table

# Player 9H 9C = 8 (natural) vs Banker 2S 3D = 5: four cards, player wins.
NATURAL_ROUND = ("9H", "2S", "9C", "3D")
# Player 2+3=5 draws; Banker K+4=4 draws on a player third of 2 (table row 4: 2-7).
SIX_CARD_ROUND = ("2H", "KS", "3C", "4D", "2C", "5S")


def test_a_natural_round_completes_with_results():
    t = Table(burn="none")
    t.cmd("new_shoe", shoe_id="S1")
    out = t.round(*NATURAL_ROUND, round_id="R1")
    assert t.positions(out) == ["player1", "banker1", "player2", "banker2"]
    done = t.last_round()
    assert (done.phase, done.round_id, done.shoe_id) == ("complete", "R1", "S1")
    assert done.player.cards == ["9H", "9C"] and done.player.total == 8
    assert done.banker.total == 5
    assert (done.winner, done.natural, done.player_pair, done.banker_pair) == ("player", True, True, False)
    assert t.alerts() == []


def test_third_cards_go_where_the_rules_send_them():
    t = Table(burn="none")
    t.cmd("new_shoe")
    out = t.round(*SIX_CARD_ROUND)
    assert t.positions(out)[-2:] == ["player3", "banker3"]
    done = t.last_round()
    assert done.player.total == 7 and done.banker.total == 9
    assert (done.winner, done.natural) == ("banker", False)


def test_tie():
    t = Table(burn="none")
    t.round("7H", "7S", "KH", "QS")
    assert t.last_round().winner == "tie"


def test_seq_is_strictly_increasing_and_every_event_names_the_table():
    t = Table()
    t.cmd("new_shoe")
    t.cards("3S", "4S", "5S", "6S")
    t.round(*SIX_CARD_ROUND)
    t.card("AH")
    seqs = [e.seq for e in t.events]
    assert seqs == list(range(1, len(seqs) + 1))
    assert {e.table_id for e in t.events} == {"T1"}


# ----------------------------------------------------------------- misdeal codes


def test_card_before_bets_closed_is_discarded_and_round_carries_on():
    t = Table(burn="none")
    t.cmd("betting_open", round_id="R1")
    out = t.card("AS")
    assert t.positions(out) == ["discard"] and t.alerts(out) == ["CARD_BEFORE_BETS_CLOSED"]
    alert = next(e for e in out if e.kind == "alert")
    assert alert.severity == "misdeal" and alert.round_id == "R1" and alert.card == "AS"
    t.cmd("betting_close")
    t.cards(*NATURAL_ROUND)
    assert t.last_round().phase == "complete"


def test_extra_card_after_a_complete_round_one_alert_per_card_results_stand():
    t = Table(burn="none")
    t.round(*NATURAL_ROUND)
    out = t.cards("5H", "6H")
    assert t.positions(out) == ["discard", "discard"]
    assert t.alerts(out) == ["EXTRA_CARD", "EXTRA_CARD"]
    assert [r.phase for r in t.rounds()] == ["betting", "dealing", "complete"]


def test_short_deal_voids_the_round_and_the_new_round_opens():
    t = Table(burn="none")
    t.round("9H", "2S", "9C", round_id="R1")
    out = t.cmd("betting_open", round_id="R2")
    assert t.alerts(out) == ["SHORT_DEAL"]
    void, opened = t.rounds(out)
    assert (void.round_id, void.phase, void.reason) == ("R1", "void", "SHORT_DEAL")
    assert (opened.round_id, opened.phase) == ("R2", "betting")


def test_unreadable_card_in_a_dealing_round_voids_it():
    t = Table(burn="none")
    t.round("9H", "2S", round_id="R1")
    out = t.card(None)
    assert t.positions(out) == ["discard"] and t.alerts(out) == ["UNREADABLE_CARD"]
    assert (t.last_round().phase, t.last_round().reason) == ("void", "UNREADABLE_CARD")


def test_cards_after_a_void_are_discarded_silently_until_betting_opens():
    t = Table(burn="none")
    t.round("9H", "2S")
    t.card(None)
    out = t.cards("9C", "3D")
    assert t.positions(out) == ["discard", "discard"] and t.alerts(out) == []
    t.cmd("betting_open")
    assert t.alerts(t.card("4C")) == ["CARD_BEFORE_BETS_CLOSED"]


def test_foreign_card_is_the_ninth_copy_and_voids_the_dealing_round():
    t = Table(burn="none", decks=1)
    t.cmd("new_shoe")
    t.round(*NATURAL_ROUND)
    t.round("AS", "2S")
    out = t.card("9H")  # the second 9H in a one-deck shoe
    assert t.alerts(out) == ["FOREIGN_CARD"] and t.positions(out) == ["discard"]
    assert (t.last_round().phase, t.last_round().reason) == ("void", "FOREIGN_CARD")


def test_eight_copies_are_fine_the_ninth_is_foreign_even_between_rounds():
    t = Table(burn="none")
    t.cmd("new_shoe")
    for _ in range(8):
        t.cmd("betting_open")
        t.cmd("betting_close")
        t.cards("AS", "KH", "9D", "QH")  # player 0 banker 0 -> both draw: dealt below
        t.cards("KS", "KD")
    assert t.alerts() == ["SHUFFLE_SUSPECT"]  # the same six cards eight times over: for the pit only
    assert t.alerts(t.card("AS")) == ["FOREIGN_CARD"]


@pytest.mark.parametrize("betting", [False, True])
def test_a_foreign_card_the_shoe_marks_as_a_burn_after_the_burn_stays_a_burn(betting):
    t = Table(burn=1, decks=1)
    t.cmd("new_shoe")
    t.card("KH", burn=True)  # the shoe's own burn
    t.round(*NATURAL_ROUND)
    if betting:
        t.cmd("betting_open")
    out = t.card("9H", burn=True)  # a second 9H, drawn with the shoe in burn mode
    assert t.positions(out) == ["burn"] and t.alerts(out) == ["FOREIGN_CARD"]
    assert [e.round_id for e in out] == [None, None]  # a burn belongs to no round


def test_a_foreign_card_is_reported_as_foreign_whatever_else_is_wrong_with_it():
    """One alert per card, and FOREIGN_CARD outranks the code its moment would give."""
    t = Table(burn="none", decks=1)
    t.cmd("new_shoe")
    t.round(*NATURAL_ROUND)
    assert t.alerts(t.card("9H")) == ["FOREIGN_CARD"]  # not EXTRA_CARD
    t.cmd("betting_open")
    assert t.alerts(t.card("2S")) == ["FOREIGN_CARD"]  # not CARD_BEFORE_BETS_CLOSED
    t.cmd("void_round")
    assert t.alerts(t.card("9C")) == ["FOREIGN_CARD"]  # even while the layout is cleared
    t.cmd("betting_open")
    t.cut()
    t.cmd("betting_close")
    t.cards("AS", "AH", "KS", "KH", "KD", "QD")  # the last hand
    assert t.v.state()["shoe"]["status"] == "closed"
    out = t.card("3D")
    assert t.alerts(out) == ["FOREIGN_CARD"] and t.positions(out) == ["discard"]  # not CARD_AFTER_SHOE_END
    assert t.alerts(t.card("4D")) == ["CARD_AFTER_SHOE_END"]


def ids(events) -> list[str | None]:
    return [e.round_id for e in events]


def test_a_card_names_the_round_open_when_it_is_drawn_and_no_other():
    """A card and its alert carry the round_id of the round in betting or dealing, burns and cards
    drawn with no round open carry none, whatever the card's code."""
    t = Table(burn="none", decks=1)
    t.cmd("new_shoe")
    t.round(*NATURAL_ROUND, round_id="R1")
    assert ids(t.card("9H")) == [None, None]  # foreign, R1 complete
    assert ids(t.card("5H")) == [None, None]  # extra
    t.cmd("betting_open", round_id="R2")
    assert ids(t.card("2S")) == ["R2", "R2"]  # foreign, R2 in betting
    assert ids(t.card("6H")) == ["R2", "R2"]  # before bets closed
    assert ids(t.card("9C", burn=True)) == [None, None]  # foreign, marked a burn
    t.cmd("void_round")
    assert ids(t.card("3D")) == [None, None]  # foreign, R2 void
    assert ids(t.card("7H")) == [None]  # clearing


def test_foreign_card_is_not_judged_before_a_shoe_is_known():
    t = Table(burn="none", decks=1)
    for _ in range(3):
        t.round("AS", "AH", "KS", "KH", "KD", "QD")
    assert "FOREIGN_CARD" not in t.alerts()


def test_disconnect_with_cards_due_is_a_misdeal_that_voids_the_round():
    t = Table(burn="none")
    t.round("9H", "2S")
    out = t.link(False)
    alert = next(e for e in out if e.kind == "alert")
    assert (alert.code, alert.severity) == ("DEVICE_DISCONNECTED", "misdeal")
    assert t.last_round().reason == "DEVICE_DISCONNECTED"
    assert t.alerts(t.link(True)) == ["DEVICE_RECONNECTED"]


def test_disconnect_between_rounds_is_a_warning_and_repeats_are_ignored():
    t = Table(burn="none")
    out = t.link(False)
    assert [(e.code, e.severity) for e in out] == [("DEVICE_DISCONNECTED", "warning")]
    assert t.link(False) == []


@pytest.mark.parametrize("dealt", [(), ("9H", "2S")], ids=["betting", "dealing"])
def test_a_restart_voids_the_round_it_finds_open(dealt):
    """Dealing, cards may have been missed; betting, a queued betting_close and cards after it."""
    t = Table(burn="none")
    t.cmd("betting_open", round_id="R1")
    if dealt:
        t.cmd("betting_close")
        t.cards(*dealt)
    out = t.restarted()
    assert [(e.kind, getattr(e, "code", None) or getattr(e, "phase", None)) for e in out] == [
        ("alert", "DAEMON_RESTARTED"),
        ("round", "void"),
    ]
    assert out[0].severity == "misdeal" and out[0].round_id == "R1"
    assert (t.last_round().reason, t.last_round().detail) == ("DAEMON_RESTARTED", "stopped")


def test_in_auto_mode_the_void_rounds_cards_are_set_aside_until_the_dealer_acknowledges():
    """The dealer may deal the void round on; no game server's betting_open will end the clearing."""
    t = Table(burn="none", round_control="auto")
    t.cards("9H", "2S")
    alert = next(e for e in t.restarted() if e.kind == "alert")
    assert t.positions(t.card("3D")) == ["discard"]  # the void round's card, not a new round's
    assert t.rounds(t.card("9C")) == []
    t.cmd("ack_alert", alert_id=alert.alert_id)
    out = t.cards("8D", "3C", "KH", "5H")
    assert t.positions(out) == ["player1", "banker1", "player2", "banker2"]
    assert t.last_round().phase == "complete"


def test_a_lost_state_in_auto_mode_opens_no_round_until_its_alert_is_acknowledged():
    t = Table(burn="none", round_control="auto")
    (alert,) = t._feed(Fault(t.step(), "STATE_LOST", "Table state lost"))
    assert t.positions(t.card("9C")) == ["discard"]
    t.cmd("ack_alert", alert_id=alert.alert_id)
    assert t.positions(t.card("8D")) == ["player1"]


def test_a_state_put_back_from_an_old_copy_opens_no_round_under_an_id_used_since():
    """The copy's hand counter is behind what was published: the ids after the loss must differ."""
    t = Table(burn="none")
    t.cmd("new_shoe", shoe_id="S1")
    t.round("8D", "3C", "KH", "5H")
    copy = t.v.snapshot()
    t.round("8D", "3C", "KH", "5H")
    published = {r.round_id for r in t.rounds()}
    t.v = Validator.restore("T1", t.v.rules, copy)
    (alert,) = t._feed(Fault(t.step(), "STATE_LOST", "Table state lost"))
    t.cmd("ack_alert", alert_id=alert.alert_id)
    t.round("8D", "3C", "KH", "5H")
    after = t.last_round().round_id
    assert after == f"S1-002-L{alert.alert_id}" and after not in published
    t.v = Validator.restore("T1", t.v.rules, t.v.snapshot())  # the suffix is state: a restart keeps it
    t.round("8D", "3C", "KH", "5H")
    assert t.last_round().round_id == f"S1-003-L{alert.alert_id}"
    t.cmd("new_shoe", shoe_id="S2")
    t.round("8D", "3C", "KH", "5H")
    assert t.last_round().round_id == "S2-001"  # a new shoe's ids are new without it


def test_a_shoe_that_repeats_its_cards_keeps_a_dealing_round_but_not_a_betting_one():
    """Its cards come again; a betting_close queued meanwhile would be judged after them."""
    dealing = Table(burn="none")
    dealing.round("9H", "2S")
    assert dealing.restarted(cards_repeat=True) == []
    betting = Table(burn="none")
    betting.cmd("betting_open", round_id="R1")
    assert [e.kind for e in betting.restarted(cards_repeat=True)] == ["alert", "round"]
    assert betting.last_round().reason == "DAEMON_RESTARTED"


def test_a_restart_during_the_burn_warns_and_between_rounds_says_nothing():
    t = Table(burn="first-card-value")
    t.cmd("new_shoe")
    t.card("5H")  # the turned card: four more to burn
    assert [(e.code, e.severity) for e in t.restarted()] == [("DAEMON_RESTARTED", "warning")]
    t2 = Table(burn="none")
    t2.round("9H", "2S", "9C", "3D")
    assert t2.restarted() == []


@pytest.mark.parametrize("seconds", [120.0, -120.0])
def test_a_clock_step_changes_event_times_not_the_time_a_round_has_waited(seconds):
    t = Table(burn="none", stall_timeout_s=30)
    t.round("9H", "2S")
    assert t.clock_step(seconds) == []
    assert t.alerts(t.tick(after=20)) == []  # 21 s since the last card, whatever the clock says
    assert t.alerts(t.tick(after=10)) == ["ROUND_STALLED"]


def test_card_after_shoe_end():
    t = Table(burn="none")
    t.cmd("new_shoe")
    t.cmd("betting_open")
    t.cut()
    t.cmd("betting_close")
    t.cards(*NATURAL_ROUND)
    assert t.v.state()["shoe"]["status"] == "closed"
    out = t.card("5C")
    assert t.alerts(out) == ["CARD_AFTER_SHOE_END"] and t.positions(out) == ["discard"]
    with pytest.raises(CommandRejected, match="finished"):
        t.cmd("betting_open")


def test_burn_mismatch_when_betting_closes_mid_burn():
    t = Table(burn=3)
    t.cmd("new_shoe")
    t.cards("AS", "2S")
    t.cmd("betting_open")
    out = t.cmd("betting_close")
    assert [(e.code, e.severity) for e in out if e.kind == "alert"] == [("BURN_MISMATCH", "warning")]
    assert t.positions(t.card("9H")) == ["player1"]


def test_round_stalled_once_judged_on_event_time():
    t = Table(burn="none", stall_timeout_s=30)
    t.round("9H", "2S")
    assert t.tick(after=29) == []
    out = t.tick(after=2)
    assert [(e.code, e.severity) for e in out] == [("ROUND_STALLED", "warning")]
    assert "PLAYER SECOND" in out[0].message
    assert t.tick(after=60) == []


@pytest.mark.parametrize(
    ("make", "then"),
    [
        (lambda ts: Fault(ts, "DEVICE_FAULT", "Shoe alarm E3: Card Not Read"), ["DEVICE_FAULT"]),
        (lambda ts: LinkChanged(ts, False), ["DEVICE_DISCONNECTED", "round", "shoe"]),
        (CutCardSeen, ["CUT_CARD", "shoe"]),
    ],
    ids=["fault", "link-down", "cut-card"],
)
def test_any_device_input_that_finds_the_round_overdue_raises_the_stall_first(make, then):
    t = Table(burn="none", stall_timeout_s=30)
    t.cmd("new_shoe")
    t.round("9H", "2S")
    out = t.v.handle(make(t.step(31)))
    assert kinds(out) == ["ROUND_STALLED", *then]
    assert out[0].ts == out[1].ts


def test_no_stall_when_no_card_is_due():
    t = Table(burn="none", stall_timeout_s=30)
    t.round(*NATURAL_ROUND)
    assert t.tick(after=300) == []


# ----------------------------------------------------------------- order within one input


def kinds(events) -> list[str]:
    return [e.code if e.kind == "alert" else e.kind for e in events]


def test_betting_close_mid_burn_publishes_alert_round_shoe():
    t = Table(burn=3)
    t.cmd("new_shoe")
    t.card("AS")
    t.cmd("betting_open")
    out = t.cmd("betting_close")
    assert kinds(out) == ["BURN_MISMATCH", "round", "shoe"]
    assert out[-1].status == "dealing"


def test_a_last_burn_card_that_is_foreign_publishes_card_alert_shoe():
    t = Table(decks=1)  # first-card-value: a 2 burns two more
    t.cmd("new_shoe")
    t.cards("2H", "5C")
    out = t.card("2H")  # the second 2H of a one-deck shoe, and the last burn card
    assert kinds(out) == ["card", "FOREIGN_CARD", "shoe"]
    card, alert, shoe = out
    assert card.position == "burn" and alert.alert_id == alert.seq and shoe.status == "dealing"


def test_the_card_that_ends_a_hand_and_reaches_the_virtual_cut_card_gives_one_shoe_event_last():
    t = Table(burn="none", decks=1, cut_card_remaining=48)
    t.cmd("new_shoe")
    t.round(*NATURAL_ROUND[:3])
    out = t.card(NATURAL_ROUND[3])  # ends the hand and leaves 48 cards: the cut card lies behind it
    assert kinds(out) == ["card", "CUT_CARD", "round", "shoe"]
    assert "next hand is the last" in out[1].message and out[1].round_id is None
    assert not out[2].last_hand and out[3].status == "last_hand"
    t.round(*NATURAL_ROUND)
    assert t.last_round().last_hand and t.v.state()["shoe"]["status"] == "closed"


def test_a_card_that_voids_the_round_and_reaches_the_virtual_cut_card():
    t = Table(burn="none", decks=1, cut_card_remaining=50)
    t.cmd("new_shoe")
    t.round("9H")
    out = t.card(None)  # 50 left: the cut card comes out behind the unreadable card
    assert kinds(out) == ["card", "UNREADABLE_CARD", "CUT_CARD", "round", "shoe"]
    assert "next hand is the last" in out[2].message


# ----------------------------------------------------------------- burn policy


def test_first_card_value_burns_that_many_more():
    t = Table()  # burn defaults to first-card-value
    t.cmd("new_shoe")
    out = t.cards("4H", "2C", "3C", "4C", "5C")
    assert t.positions(out) == ["burn"] * 5
    assert t.v.state()["shoe"]["status"] == "dealing"
    assert t.alerts(t.card("9H")) == ["EXTRA_CARD"]


@pytest.mark.parametrize(("first", "burned"), [("AS", 2), ("9S", 10), ("TS", 11), ("KD", 11)])
def test_first_card_value_counts_ace_one_and_tens_ten(first, burned):
    t = Table()
    t.cmd("new_shoe")
    t.cards(first, *["2H"] * (burned - 1))
    assert t.v.state()["shoe"]["burn_done"] == burned
    assert t.v.state()["shoe"]["status"] == "dealing"


def test_burn_cards_during_betting_are_burns_not_early_cards():
    t = Table(burn=2)
    t.cmd("new_shoe")
    t.cmd("betting_open")
    out = t.cards("5H", "6H")
    assert t.positions(out) == ["burn", "burn"] and t.alerts() == []


def test_unreadable_turned_card_burns_until_betting_closes():
    t = Table()
    t.cmd("new_shoe")
    out = t.cards(None, "2H", "9C", "4D", "JS", "6H", "KC", "8D", "3S", "TH", "5C", "QD")
    assert set(t.positions(out)) == {"burn"}
    t.cmd("betting_open")
    t.cmd("betting_close")
    assert t.alerts() == ["BURN_MISMATCH"]


def test_fixed_and_no_burn():
    t = Table(burn=1)
    t.cmd("new_shoe")
    assert t.positions(t.card("KH")) == ["burn"]
    t2 = Table(burn="none")
    t2.cmd("new_shoe")
    assert t2.alerts(t2.card("KH")) == ["EXTRA_CARD"]


def test_no_burn_before_a_shoe_is_known():
    t = Table()
    assert t.alerts(t.card("KH")) == ["EXTRA_CARD"]


def test_device_marked_burn_outside_a_round_is_a_burn():
    t = Table(burn="none")
    out = t.card("KH", burn=True)
    assert t.positions(out) == ["burn"] and t.alerts() == []


# ----------------------------------------------------------------- cut card and last hand


def test_cut_card_mid_hand_makes_it_the_last_hand():
    t = Table(burn="none")
    t.cmd("new_shoe")
    t.round("9H", "2S")
    out = t.cut()
    assert t.alerts(out) == ["CUT_CARD"] and "this hand is the last" in out[0].message
    assert out[0].severity == "info"
    t.cards("9C", "3D")
    assert t.v.state()["shoe"]["status"] == "closed"


def test_cut_card_between_hands_makes_the_next_hand_last():
    t = Table(burn="none")
    t.cmd("new_shoe")
    t.round(*NATURAL_ROUND)
    assert "next hand is the last" in t.cut()[0].message
    t.round(*NATURAL_ROUND)
    assert t.last_round().last_hand
    assert t.v.state()["shoe"]["status"] == "closed"


def test_one_more_deals_another_hand_after_the_cut_card_hand():
    t = Table(burn="none", last_hand="one-more")
    t.cmd("new_shoe")
    t.round("9H", "2S")
    t.cut()
    t.cards("9C", "3D")
    assert t.v.state()["shoe"]["status"] == "last_hand"
    t.round(*NATURAL_ROUND)
    assert t.v.state()["shoe"]["status"] == "closed"


def test_virtual_cut_card_counts_from_the_back():
    t = Table(burn="none", decks=1, cut_card_remaining=48)
    t.cmd("new_shoe")
    out = t.round(*NATURAL_ROUND)  # 52 - 4 = 48 left: the cut card is next
    assert t.alerts(out) == ["CUT_CARD"]
    assert "next hand is the last" in next(e for e in out if e.kind == "alert").message
    t.round(*NATURAL_ROUND)
    assert t.v.state()["shoe"]["status"] == "closed"


def test_one_more_after_a_virtual_cut_card_behind_a_hand_deals_two_more_hands():
    t = Table(burn="none", decks=1, cut_card_remaining=48, last_hand="one-more")
    t.cmd("new_shoe")
    out = t.round(*NATURAL_ROUND)  # its last card leaves 48: the cut card lies behind this hand
    assert "two more hands" in next(e for e in out if e.kind == "alert").message
    t.round(*NATURAL_ROUND)
    assert t.v.state()["shoe"]["status"] == "last_hand"
    t.round(*NATURAL_ROUND)
    assert t.v.state()["shoe"]["status"] == "closed"


def test_voiding_the_last_hand_also_ends_the_shoe():
    t = Table(burn="none")
    t.cmd("new_shoe")
    t.cmd("betting_open")
    t.cut()
    t.cmd("void_round", reason="dealer error")
    assert t.last_round().reason == "OPERATOR_VOID" and t.last_round().detail == "dealer error"
    assert t.v.state()["shoe"]["status"] == "closed"


def test_short_dealing_the_last_hand_is_refused_with_a_clear_reason():
    t = Table(burn="none")
    t.cmd("new_shoe")
    t.round("9H", "2S")
    t.cut()
    with pytest.raises(CommandRejected, match="last hand"):
        t.cmd("betting_open")


# ----------------------------------------------------------------- round control


def test_auto_mode_opens_a_round_on_the_first_card():
    t = Table(burn="none", round_control="auto")
    t.cards(*NATURAL_ROUND, *SIX_CARD_ROUND)
    assert [r.phase for r in t.rounds()] == ["dealing", "complete", "dealing", "complete"]
    assert t.alerts() == []


def test_auto_mode_after_a_void_the_next_card_starts_a_round():
    t = Table(burn="none", round_control="auto")
    t.cards("9H", "2S", None)
    out = t.cards(*NATURAL_ROUND)
    assert t.positions(out) == ["player1", "banker1", "player2", "banker2"]


def test_auto_mode_the_round_a_card_opens_comes_before_that_card():
    t = Table(burn="none", round_control="auto")
    out = t.card("9H")
    assert kinds(out) == ["round", "card"]
    assert out[0].phase == "dealing" and out[1].round_id == out[0].round_id


def test_auto_mode_a_foreign_card_with_no_round_dealing_opens_no_round():
    t = Table(burn="none", round_control="auto", decks=1)
    t.cmd("new_shoe")
    t.cards(*NATURAL_ROUND)
    out = t.card("9H")
    assert kinds(out) == ["card", "FOREIGN_CARD"] and out[0].round_id is None
    assert t.positions(t.cards(*SIX_CARD_ROUND))[0] == "player1"  # the next card opens the round


def test_auto_mode_cards_of_the_shoes_burn_open_no_round():
    t = Table(burn=2, round_control="auto")
    t.cmd("new_shoe")
    assert t.positions(t.cards("5H", "6H")) == ["burn", "burn"] and t.rounds() == []


def test_auto_mode_takes_the_game_servers_commands_as_server_mode_does():
    t = Table(burn="none", round_control="auto")
    t.cmd("betting_open", round_id="R1")
    assert t.alerts(t.card("4C")) == ["CARD_BEFORE_BETS_CLOSED"]  # no round opened by the card
    t.cmd("betting_close")
    t.cards(*NATURAL_ROUND)
    assert [(r.round_id, r.phase) for r in t.rounds()] == [
        ("R1", "betting"),
        ("R1", "dealing"),
        ("R1", "complete"),
    ]
    t.cards("9H", "2S")  # a round opened by its first card
    out = t.cmd("betting_open", round_id="R3")
    assert kinds(out) == ["SHORT_DEAL", "round", "round"]


# ----------------------------------------------------------------- commands


@pytest.mark.parametrize(
    ("setup", "name", "args", "message"),
    [
        ((), "betting_close", {}, "not open"),
        (("betting_open",), "betting_open", {}, "already open"),
        ((), "void_round", {}, "no open round"),
        (("betting_open",), "new_shoe", {}, "still open"),
        ((), "ack_alert", {"alert_id": 99}, "no open alert"),
        ((), "ack_alert", {"alert_id": "1"}, "integer"),
        ((), "betting_open", {"round_id": 7}, "round_id"),
        ((), "new_shoe", {"shoe_id": ""}, "shoe_id"),
        ((), "shuffle", {}, "unknown command"),
    ],
)
def test_commands_that_make_no_sense_are_rejected_and_change_nothing(setup, name, args, message):
    t = Table()
    for s in setup:
        t.cmd(s)
    before = t.v.snapshot()
    with pytest.raises(CommandRejected, match=message):
        t.cmd(name, **args)
    assert t.v.snapshot() == before


def test_operator_void():
    t = Table(burn="none")
    t.round("9H", round_id="R9")
    out = t.cmd("void_round")
    assert t.rounds(out)[0].reason == "OPERATOR_VOID" and t.alerts(out) == []


def test_ack_alert_closes_it_and_publishes_the_acknowledgement():
    t = Table(burn="none")
    alert = t.card("AS")[-1]
    assert [a["alert_id"] for a in t.v.state()["alerts"]] == [alert.alert_id]
    out = t.cmd("ack_alert", alert_id=alert.alert_id)
    assert out[0].acknowledged and out[0].alert_id == alert.alert_id and out[0].seq > alert.seq
    assert t.v.state()["alerts"] == []


def test_info_alerts_do_not_wait_for_acknowledgement():
    t = Table(burn="none")
    t.cmd("new_shoe")
    t.cut()
    assert t.v.state()["alerts"] == []


def test_generated_ids_are_stable_functions_of_the_input():
    t = Table(burn="none")
    t.cmd("new_shoe")
    t.cmd("betting_open")
    shoe_id = t.v.state()["shoe"]["shoe_id"]
    assert shoe_id.startswith("S2023")
    assert t.v.state()["round"]["round_id"] == f"{shoe_id}-001"  # the hand number, zero-padded


def test_round_ids_with_no_shoe_known_count_the_tables_rounds():
    t = Table(burn="none")
    t.round(*NATURAL_ROUND)
    t.cmd("betting_open")
    assert list(dict.fromkeys(r.round_id for r in t.rounds())) == ["T1-R1", "T1-R2"]


def test_an_alerts_id_is_the_seq_it_is_first_published_with():
    t = Table(burn="none")
    alert = t.card("AS")[-1]
    assert alert.alert_id == alert.seq
    again = t.cmd("ack_alert", alert_id=alert.alert_id)[0]
    assert (again.alert_id, again.seq) == (alert.seq, alert.seq + 1)


def test_cards_remaining_stops_at_zero_when_more_cards_come_than_the_shoe_holds():
    t = Table(burn="none", decks=1)
    t.cmd("new_shoe")
    for card in ALL_CARDS:
        t.card(card, burn=True)
    out = t.card("AS", burn=True)
    assert t.alerts(out) == ["FOREIGN_CARD"]
    shoe = t.v.state()["shoe"]
    assert (shoe["cards_dealt"], shoe["cards_remaining"]) == (53, 0)


def test_results_kept_before_any_new_shoe_are_in_the_state():
    t = Table(burn="none", round_control="auto")
    t.cards(*NATURAL_ROUND)
    assert [r["winner"] for r in t.v.state()["results"]] == ["player"]
    t.cmd("new_shoe")
    assert t.v.state()["results"] == []


# ----------------------------------------------------------------- snapshot


def test_snapshot_restore_continues_identically_mid_round():
    a = Table(burn=2, cut_card_remaining=400)
    a.cmd("new_shoe")
    a.cards("AS", "2S")
    a.round("9H", "2S", "9C")  # banker's second card still due
    a.card("AH")  # an open alert to carry over
    b = Table(burn=2, cut_card_remaining=400)
    b.v = Validator.restore("T1", a.v.rules, a.v.snapshot())
    b.ts = a.ts
    for t in (a, b):
        t.events = []
        t.cards("3D")
        t.round(*SIX_CARD_ROUND)
    assert a.events == b.events
    assert a.v.snapshot() == b.v.snapshot()


def test_a_rejected_command_never_swallows_a_due_stall_alert():
    t = Table(burn="none", stall_timeout_s=5)
    t.round("9H", "2S")
    last_seq = t.events[-1].seq
    t.step(10)
    with pytest.raises(CommandRejected):
        t.cmd("betting_close")
    out = t.tick(after=0)
    assert [(e.code, e.seq) for e in out] == [("ROUND_STALLED", last_seq + 1)]


def test_a_fault_raises_its_alert_against_the_current_round():
    t = Table(burn="none")
    t.round("9H", round_id="R1")
    out = t.v.handle(Fault(t.step(), "DEVICE_FAULT", "Shoe alarm E3: Card Not Read"))
    assert [(e.code, e.severity, e.round_id) for e in out] == [("DEVICE_FAULT", "warning", "R1")]
    assert t.v.state()["round"]["phase"] == "dealing"  # a device's own alarm decides nothing
    with pytest.raises(ValueError):
        t.v.handle(Fault(t.step(), "NOT_A_FAULT", "x"))


def test_state_carries_the_shoes_results_and_the_last_seq_for_late_viewers():
    t = Table(burn="none")
    t.cmd("new_shoe")
    t.round(*NATURAL_ROUND)
    t.round("7H", "7S", "KH", "QS")
    state = Validator.restore("T1", t.v.rules, t.v.snapshot()).state()
    assert state["seq"] == t.events[-1].seq
    assert state["results"] == [
        {"winner": "player", "natural": True, "player_pair": True, "banker_pair": False},
        {"winner": "tie", "natural": False, "player_pair": False, "banker_pair": False},
    ]
    t.cmd("new_shoe")
    assert t.v.state()["results"] == []


def test_a_snapshot_restored_twice_gives_the_same_validator_both_times():
    """A start judging its journal again, or an audit, restores from one snapshot more than once."""
    t = Table(burn="none")
    t.cmd("new_shoe", shoe_id="S1")
    t.cmd("betting_open")
    t.cmd("betting_close")
    t.cards("9H", "2S")
    snap = t.v.snapshot()
    first = Validator.restore("T1", t.v.rules, snap)
    first.handle(CardDrawn(t.step(), "3D", False))  # the first plays on: the snapshot must not follow it
    second = Validator.restore("T1", t.v.rules, snap)
    assert second.snapshot() == Validator.restore("T1", t.v.rules, t.v.snapshot()).snapshot()
    assert second.round.player == ["9H"] and second.shoe.counts != first.shoe.counts
