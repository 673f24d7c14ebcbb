"""The dealer's view, folded from events, against the validator's own state after every step."""

import random

import pytest
from rich.console import Console

from scannerd.commands.watch import describe, render
from scannerd.core.house import HouseRules
from scannerd.core.inputs import CardDrawn, Command, CutCardSeen, LinkChanged, Tick, ValidatorInput
from scannerd.core.judges.deal import RESULTS_KEPT_WITHOUT_SHOE
from scannerd.core.validator import CommandRejected, Validator
from scannerd.display.view import TableView
from simulators.actions import CutCard, Draw, ServerCommand, Unplug, Unreadable
from simulators.dealer import Dealer

CASES = {
    "default": HouseRules(),
    "one-more": HouseRules(last_hand="one-more"),
    "fixed-burn": HouseRules(burn=5),
    "virtual-cut": HouseRules(cut_card_remaining=14),
    "auto": HouseRules(round_control="auto"),
    "auto-betting": HouseRules(round_control="auto", betting_time_s=2),
    "dragon-tiger": HouseRules(game="dragon_tiger"),
    "dragon-tiger-auto": HouseRules(game="dragon_tiger", round_control="auto"),
    "squeeze": HouseRules(squeeze=True),
    "squeeze-dragon-tiger-auto": HouseRules(game="dragon_tiger", round_control="auto", squeeze=True),
}

# Parts of the screen that the validator's state does not carry (the latest card, the latest notice).
_EVENT_ONLY = ("last_card", "notice")


def current(view: TableView) -> dict:
    """The snapshot without what only the events can tell: an alert's hand is judged when it arrives."""
    snap = {k: v for k, v in view.snapshot().items() if k not in _EVENT_ONLY}
    snap["alerts"] = [{k: v for k, v in a.items() if k != "hand"} for a in snap["alerts"]]
    return snap


def from_state(v: Validator, rules: HouseRules) -> TableView:
    view = TableView(v.table_id, rules.round_control)
    view.load_state(v.state())
    return view


def play(rules: HouseRules, seed: int, error_rate: float):
    """(validator, events of the step) for every step of two simulated shoes."""
    dealer = Dealer(rules, random.Random(seed), pace=0, error_rate=error_rate)
    v = Validator("T1", rules)
    ts = 1_700_000_000.0
    for step in dealer.play(shoes=2):
        ts += 0.5
        events = []
        try:
            match step.action:
                case Draw(card=card):
                    events = v.handle(CardDrawn(ts, card))
                case Unreadable():
                    events = v.handle(CardDrawn(ts, None))
                case CutCard():
                    events = v.handle(CutCardSeen(ts))
                case ServerCommand(name=name, args=args):
                    events = v.handle(Command(ts, name, args))
                case Unplug(seconds=s):
                    events = v.handle(LinkChanged(ts, up=False)) + v.handle(LinkChanged(ts + s, up=True))
        except CommandRejected:
            pass
        yield v, events


@pytest.mark.parametrize("case", CASES)
def test_the_folded_view_agrees_with_the_validator_after_every_step(case):
    rules = CASES[case]
    for seed, error_rate in ((1, 0.0), (2, 0.4)):
        view = TableView("T1", rules.round_control)  # the game it learns from the table's state
        view.load_state(Validator("T1", rules).state())
        winners: list[str] = []
        for v, events in play(rules, seed, error_rate):
            for e in events:
                view.apply(e)
                if e.kind == "round" and e.phase == "complete":
                    winners.append(e.winner)
                if e.kind == "shoe" and e.cards_dealt == 0:
                    winners = []
            assert current(view) == current(from_state(v, rules)), events
            if v.shoe is None:  # with no shoe to end them, only the latest hands are kept
                winners = winners[-RESULTS_KEPT_WITHOUT_SHOE:]
            held = v.round is not None and v.round.phase == "complete" and v.round.hidden  # squeeze
            assert [r.winner for _, r in view.results] == (winners[:-1] if held else winners)


def _round_event(seq: int, phase: str, player: list[str], banker: list[str], **extra) -> dict:
    return {
        "kind": "round",
        "seq": seq,
        "ts": 1.0,
        "table_id": "T1",
        "shoe_id": "S1",
        "round_id": "R1",
        "phase": phase,
        "hand_no": 1,
        "player": {"cards": player, "total": 0},
        "banker": {"cards": banker, "total": 0},
        **extra,
    }


def test_old_and_repeated_events_are_ignored():
    view = TableView("T1")
    assert view.apply(_round_event(5, "dealing", [], []))
    assert not view.apply(_round_event(5, "complete", ["9H", "9C"], ["2S", "3D"], winner="player"))
    assert not view.apply(_round_event(4, "void", [], []))
    assert view.round_view()["phase"] == "dealing"


def test_next_action_texts():
    view = TableView("T1")
    assert view.next_action() == ("WAITING FOR THE TABLE", "wait")
    assert view.link == "unknown"
    view.load_state(Validator("T1").state())
    assert view.next_action() == ("WAITING FOR BETS - DO NOT DRAW", "wait")
    assert view.link == "up"
    view.apply(_round_event(1, "betting", [], []))
    assert view.next_action() == ("BETS OPEN - DO NOT DRAW", "wait")
    view.apply(_round_event(2, "dealing", ["2H", "3C"], ["KS", "4D"]))
    assert view.next_action() == ("NEXT: PLAYER THIRD CARD", "go")
    view.apply(_round_event(3, "complete", ["9H", "9C"], ["2S", "3D"], winner="player"))
    assert view.next_action() == ("ROUND COMPLETE - DO NOT DRAW", "wait")
    assert view.round_view()["winner"] == "player"
    view.set_device({"link": "down"})
    assert view.next_action() == ("SHOE OFFLINE - DO NOT DEAL", "stop")


def test_burn_progress_is_counted_from_the_turned_card():
    rules = HouseRules()
    v = Validator("T1", rules)
    view = TableView("T1")
    for inp in (Command(1.0, "new_shoe", {"shoe_id": "S1"}), CardDrawn(2.0, "3S"), CardDrawn(3.0, "KD")):
        for e in v.handle(inp):
            view.apply(e)
    assert view.next_action() == ("BURN: 2 of 4", "burn")


def test_acknowledged_alerts_leave_and_info_alerts_become_the_notice():
    view = TableView("T1")
    base = {"kind": "alert", "ts": 1.0, "table_id": "T1", "round_id": None, "card": None}
    misdeal = {**base, "alert_id": 1, "code": "EXTRA_CARD", "severity": "misdeal", "message": "Extra card"}
    view.apply({**misdeal, "seq": 1})
    view.apply(
        {**base, "seq": 2, "alert_id": 2, "code": "DEVICE_FAULT", "severity": "warning", "message": "x"}
    )
    view.apply(
        {**base, "seq": 3, "alert_id": 3, "code": "CUT_CARD", "severity": "info", "message": "Cut card"}
    )
    assert [a["alert_id"] for a in view.open_alerts()] == [2, 1]
    assert view.notice == "Cut card"
    view.apply({**misdeal, "seq": 4, "acknowledged": True})
    assert [a["alert_id"] for a in view.open_alerts()] == [2]


class Fed:
    """A validator and a view fed its events, as the display is."""

    def __init__(self, rules: HouseRules | None = None) -> None:
        self.validator = Validator("T1", rules or HouseRules(burn="none"))
        self.view = TableView("T1")
        self.view.load_state(self.validator.state())
        self.ts = 1_700_000_000.0

    def __call__(self, *inputs: ValidatorInput | str) -> None:
        for inp in inputs:
            self.ts += 1
            if isinstance(inp, str):
                inp = CardDrawn(self.ts, inp)
            for e in self.validator.handle(inp):
                self.view.apply(e)

    def command(self, name: str, **args) -> None:
        self(Command(self.ts + 1, name, args))

    def round(self, round_id: str, *cards: str) -> None:
        self.command("betting_open", round_id=round_id)
        self.command("betting_close")
        self(*cards)


def test_the_newest_alert_comes_first_names_its_hand_and_its_card_as_the_dealer_reads_it():
    table = Fed()
    table.command("new_shoe", shoe_id="S1")
    table.round("R1", "9H", "2S", "9C", "3D")
    table("TS")  # an extra card after hand 1
    table.command("betting_open", round_id="R2")
    table("AC")  # drawn before bets closed, in hand 2
    first, second = table.view.open_alerts()
    assert (first["code"], first["hand"]) == ("CARD_BEFORE_BETS_CLOSED", "HAND 2")
    assert first["text"].startswith("Card A\u2663 drawn before bets closed")
    assert (second["code"], second["hand"]) == ("EXTRA_CARD", "AFTER HAND 1")
    assert second["text"] == "Extra card 10\u2660: no card is due - set it aside"
    assert second["message"] == "Extra card TS: no card is due - set it aside"  # the contract keeps codes


def test_a_tie_is_nobodys_win_and_naturals_and_pairs_are_marked():
    table = Fed()
    table.round("R1", "2H", "KS", "3C", "4D", "2C", "3S")
    rnd = table.view.round_view()
    assert rnd["winner"] == "tie" and rnd["player"]["total"] == rnd["banker"]["total"] == 7
    table.round("R2", "9H", "4S", "9C", "4D")
    rnd = table.view.round_view()
    assert rnd["player"] == {"cards": ["9H", "9C"], "total": 8, "natural": True, "pair": True, "calls": []}
    assert rnd["banker"] == {"cards": ["4S", "4D"], "total": 8, "natural": True, "pair": True, "calls": []}


def test_a_warning_leaves_the_screen_when_its_cause_ends_and_a_notice_at_the_next_hand():
    table = Fed()
    table(LinkChanged(table.ts + 1, up=False))  # between hands: a warning, not a void
    assert [a["code"] for a in table.view.open_alerts()] == ["DEVICE_DISCONNECTED"]
    assert table.view.next_action() == ("SHOE OFFLINE - DO NOT DEAL", "stop")
    table(LinkChanged(table.ts + 1, up=True))
    assert table.view.open_alerts() == []
    assert len(table.validator.open_alerts) == 1  # still open for the pit to acknowledge
    assert table.view.notice == "Shoe reconnected"

    table.round("R1", "2H", "KS")
    assert table.view.notice is None  # a passing notice goes when the next hand begins
    table(Tick(table.ts + 60))
    assert [a["code"] for a in table.view.open_alerts()] == ["ROUND_STALLED"]
    table("3C", "4D", "2C", "5S")  # the dealer goes on, and the hand ends
    assert [a["code"] for a in table.view.open_alerts()] == []


def test_a_dragon_tiger_table_is_shown_as_such():
    v = Validator("T1", HouseRules(game="dragon_tiger", round_control="auto", burn="none"))
    view = TableView("T1", "auto")
    view.load_state(v.state())
    assert view.next_action()[0] == "NEXT: DRAGON CARD"
    for ts, card in enumerate(["9H", "KD", "5C"], start=1):
        for e in v.handle(CardDrawn(float(ts), card)):
            view.apply(e)
    snap = view.snapshot()
    rnd = snap["round"]
    assert rnd["sides"] == ["dragon", "tiger"] and rnd["dragon"]["cards"] == ["5C"]
    assert view.next_action() == ("NEXT: TIGER CARD", "go")
    assert snap["history"]["counts"] == {"tiger": 1, "dragon": 0, "tie": 0, "hands": 1}
    assert [c["winner"] for c in snap["history"]["big"]] == ["tiger"]
    text = Console(width=120, record=True)
    text.print(render(snap, "online", True, "broker"))
    shown = text.export_text()
    assert "DRAGON" in shown and "DRAGON (D) 0  TIGER (T) 1  TIE (=) 0" in shown and "PLAYER" not in shown


@pytest.mark.parametrize(
    ("rules", "cards", "calls"),
    [
        # Banker's three-card 7 over Player's 6: EZ's Dragon 7, on Banker's hand only.
        ({"commission": "ez"}, ["2S", "3H", "4S", "AD", "3C"], ([], ["DRAGON 7"])),
        # The same round at a standard table: nothing its bets read.
        ({}, ["2S", "3H", "4S", "AD", "3C"], ([], [])),
        # Banker wins with a two-card 6 at No Commission: SUPER 6.
        ({"commission": "no_commission"}, ["2S", "3H", "2D", "3D", "AC"], ([], ["SUPER 6"])),
        # A suited tie at Dragon Tiger: called on both hands, as a tie is.
        ({"game": "dragon_tiger"}, ["7H", "7H"], (["SUITED"], ["SUITED"])),
    ],
)
def test_the_facts_a_tables_bets_read_are_called_on_the_hand_they_concern(rules, cards, calls):
    house = HouseRules(round_control="auto", burn="none", **rules)
    v = Validator("T1", house)
    folded = TableView("T1", "auto")
    folded.load_state(v.state())
    for ts, card in enumerate(cards, start=1):
        for e in v.handle(CardDrawn(float(ts), card)):
            folded.apply(e)
    for view in (folded, from_state(v, house)):
        rnd = view.round_view()
        assert tuple(rnd[side]["calls"] for side in rnd["sides"]) == calls


def squeezed_events(cards: list[str]) -> tuple[Validator, list]:
    v = Validator("T1", HouseRules(burn="none", squeeze=True))
    events = v.handle(Command(1.0, "betting_open", {"round_id": "R1"}))
    events += v.handle(Command(2.0, "betting_close", {}))
    for ts, card in enumerate(cards, start=3):
        events += v.handle(CardDrawn(float(ts), card))
    return v, events


def test_a_view_that_never_had_the_state_holds_a_squeezed_face_back_all_the_same():
    """The watch with --no-get-state, the pit before its answer: the round events say squeeze."""
    _, events = squeezed_events(["9H", "2S", "9C", "3D"])
    view = TableView("T1")
    for e in events:
        view.apply(e)
    rnd = view.round_view()
    assert rnd["player"]["cards"] == ["back", "back"] and rnd["winner"] is None
    assert view.results == [] and view.last_card["card"] == "back"
    assert view.next_action() == ("SQUEEZE - WAIT FOR THE REVEAL", "wait")


def test_a_card_whose_event_the_view_missed_is_held_back_too():
    _, events = squeezed_events(["9H", "2S", "9C", "3D"])
    view = TableView("T1")
    for e in events:
        if not (e.kind == "card" and e.position == "banker2"):
            view.apply(e)
    assert view.round_view()["banker"]["cards"] == ["back", "back"]


def test_where_the_next_card_goes_is_not_said_while_a_card_is_held():
    """NEXT: PLAYER THIRD would tell the held cards are no natural and Player 0-5."""
    v, _ = squeezed_events(["2H", "KS", "3C", "4D"])
    view = TableView("T1")
    view.load_state(v.state())
    assert view.round_view()["next_position"] is None
    assert view.next_action() == ("SQUEEZE - WAIT FOR THE REVEAL", "wait")
    for e in v.handle(Command(9.0, "reveal", {})):
        view.apply(e)
    assert view.next_action() == ("NEXT: PLAYER THIRD CARD", "go")


def test_watch_lines_hold_a_squeezed_rounds_winner_back():
    _, events = squeezed_events(["9H", "2S", "9C", "3D"])
    complete = next(e for e in events if e.kind == "round" and e.phase == "complete")
    assert "winner=" not in describe("round", dict(complete), squeeze=True)
    assert "winner=player" in describe("round", dict(complete))


def test_watch_draws_the_three_derived_roads_and_the_ask_marks() -> None:
    """B B B | P P | B B | P | B B B B, the worked shoe of docs/rules.md: Big Eye Boy red, blue, red, red,
    blue, blue, red, red; a next Banker would add red to it (col 5 row 5: neither), a next Player blue."""
    v = Validator("T1", HouseRules(round_control="auto", burn="none"))
    view = TableView("T1", "auto")
    view.load_state(v.state())
    hands = {"B": ("2S", "9H", "3C", "KD"), "P": ("9H", "2S", "KC", "3D")}  # naturals: four cards a hand
    ts = 0.0
    for side in "BBBPPBBPBBBB":
        for card in hands[side]:
            ts += 1
            for e in v.handle(CardDrawn(ts, card)):
                view.apply(e)
    snap = view.snapshot()
    assert [c["mark"][0] for c in snap["history"]["big_eye_boy"]] == list("rbrrbbrr")
    text = Console(width=160, record=True)
    text.print(render(snap, "online", True, "broker"))
    shown = text.export_text()
    assert "Big Eye Boy" in shown and "Small Road" in shown and "Cockroach Pig" in shown and "Ask" in shown
    # The marks as shapes: filled red, hollow blue; eight on Big Eye Boy, six on Small Road, four on
    # Cockroach Pig.
    assert shown.count("\u25cf") + shown.count("\u25cb") == 8 + 6 + 4 + sum(
        m is not None for side in snap["history"]["ask"].values() for m in side.values()
    )
    assert snap["history"]["ask"]["banker"]["big_eye_boy"] == "red"
    assert snap["history"]["ask"]["player"]["big_eye_boy"] == "blue"
