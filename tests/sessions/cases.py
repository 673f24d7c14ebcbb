"""The regression sessions, written by hand: one function per interesting case.

Each case is a short table session: the device bytes (as each shoe really
prints them, cut at odd places by :class:`Script`) and the game server's
commands. ``python -m tests.sessions build`` writes them to
``tests/sessions/<name>.jsonl``; the golden ``.chk`` next to each is what a
replay must publish. Rounds use the deals below, whose outcomes are easy
to check by hand.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Protocol

from scannerd.core.cards import ALL_CARDS
from scannerd.core.house import SUSPEND_ON
from scannerd.core.inputs import Actor
from simulators.faults import FaultRates
from simulators.recording import record_simulation
from simulators.scenario import Scenario, load, parse
from tests.sessions.script import BEFORE_GAMES, BEFORE_SUSPENSION, STARTED_AT, FramedShoe, Script
from tests.support.frames import beetek, linecode, typed

SCENARIOS = Path(__file__).parent.parent.parent / "samples" / "scenarios"

# Deals in dealing order (player1, banker1, player2, banker2[, player3[, banker3]]).
NATURAL = ("9H", "2S", "9C", "3D")  # player 8 (natural) v banker 5: player, player pair
STAND = ("3H", "4D", "3S", "3C")  # player 6 v banker 7, both stand: banker
THIRD = ("2H", "KD", "3S", "5C", "4H", "2C")  # player 5 draws 4 -> 9; banker 5 draws on a 4 -> 7: player
TIE = ("7H", "7S", "QC", "KD")  # 7 v 7: tie
BANKER_ONLY = ("TH", "AD", "7C", "3S", "5D")  # player 7 stands; banker 4 draws -> 9: banker


class Session(Protocol):
    suffix: str

    def write(self, path: Path) -> None: ...


CASES: dict[str, Callable[[], Session]] = {}


def case(fn: Callable[[], Script]) -> Callable[[], Script]:
    CASES[fn.__name__.replace("_", "-")] = fn
    return fn


@dataclass(frozen=True)
class SimSession:
    """A session the simulated dealer deals (``scannerd record --from-sim``): long, with wire faults."""

    driver: str
    scenario: Scenario
    suffix = ".jsonl.gz"

    def write(self, path: Path) -> None:
        record_simulation(self.scenario, self.driver, path, started_at=STARTED_AT)


def sim_case(name: str, driver: str, scenario: Scenario, *, game: bool = False) -> None:
    """A simulated session; ``game``: of a table that chose its game (the scenario's), not from before."""
    house = scenario.house.model_copy(update=BEFORE_SUSPENSION if game else BEFORE_GAMES)
    CASES[name] = lambda: SimSession(driver, replace(scenario, house=house))


def round_(s: Script, round_id: str, cards: bytes, pieces: int | None = None) -> Script:
    """Betting opens and closes, then the cards come in one burst each read."""
    s.cmd("betting_open", round_id=round_id).cmd("betting_close", after=5.0)
    return s.device(cards, after=1.5, pieces=pieces)


# ---------------------------------------------------------------------- one per driver


@case
def beetek_clean() -> Script:
    """Bee-Tek: a burn by the first card's value, then rounds; every way the shoe writes a card."""
    s = Script("beetek-clean", "beetek")
    s.link(True, detail="beetek on /dev/shoe-1")
    s.cmd("new_shoe", shoe_id="S1")
    s.device(beetek("H5", burn=True), pieces=4)  # suit-first, 5: burn 5 more
    for card in ("KS", "2D", "10C", "7H", "QD"):
        s.device(beetek(card, burn=True), after=0.8)
    round_(s, "R1", beetek(*NATURAL), pieces=5)
    round_(s, "R2", beetek(*STAND, crlf=False), pieces=3)  # firmware without line ends
    s.cmd("betting_open", round_id="R3").cmd("betting_close", after=4.0)
    for card in ("2H", "K D", "S3", "5C", "4h", "2C"):  # odd spacing and case, sent one by one
        s.device(beetek(card.replace(" ", "")), after=1.2, pieces=2)
    return s


@case
def linecode_clean() -> Script:
    """Line-code scanner, automatic table: both code shapes, any line ending, a position letter."""
    s = Script("linecode-clean", "linecode", rules={"burn": "none"})
    s.link(True)
    s.cmd("new_shoe", shoe_id="L1")
    round_(s, "R1", linecode("H09", "A02", "C09", "D03"), pieces=6)  # NATURAL in letter-rank
    round_(s, "R2", b"2030\n4040\rB1030\r\nP3030\n", pieces=4)  # STAND in suit-digit, mixed endings
    return s


@case
def linecode_letter_rank_table() -> Script:
    """A site programmed letter-rank codes (driver option): a suit-digit code is then unreadable."""
    s = Script(
        "linecode-letter-rank-table", "linecode", rules={"burn": "none"}, options={"table": "letter-rank"}
    )
    s.link(True)
    s.cmd("new_shoe", shoe_id="L2")
    round_(s, "R1", linecode("H09", "A02"), pieces=2)
    s.device(linecode("3090"), after=1.0)  # 9C in suit-digit: not in this site's table
    return s


@case
def framed_clean() -> Script:
    """Our framed shoe: boot hello, burn cards flagged by the device, a retransmission dropped."""
    shoe = FramedShoe()
    s = Script("framed-clean", "framed", rules={"burn": 3})
    s.link(True, detail="framed on /dev/shoe-1")
    s.device(shoe.boot(), pieces=3)
    s.cmd("new_shoe", shoe_id="F1")
    s.device(shoe.cards("4C", "8S", "JH", burn=True), pieces=4)
    round_(s, "R1", shoe.cards(*NATURAL[:2]), pieces=2)
    s.device(shoe.repeat_last(NATURAL[1]), after=0.25)  # our ack was lost: the shoe says it again
    s.device(shoe.cards(*NATURAL[2:]), after=1.0)
    round_(s, "R2", shoe.cards(*THIRD), pieces=7)
    return s


@case
def usb_hid_clean() -> Script:
    """A keyboard-wedge scanner on USB: suit-digit codes typed as reports, with and without the
    position letter; a failed read voids its round."""
    s = Script("usb-hid-clean", "usb-hid", rules={"burn": "none"})
    s.link(True, detail="usb-hid on usb:1209:0001:HS0001 (bus 1 address 1)")
    s.cmd("new_shoe", shoe_id="H1")
    s.cmd("betting_open", round_id="R1").cmd("betting_close", after=5.0)
    s.reports(typed("2090", "1020", "3090", "4030"), after=1.5)  # NATURAL
    s.cmd("betting_open", round_id="R2").cmd("betting_close", after=5.0)
    s.reports(typed("P2030", "B4040", "P1030", "B3030"), after=1.5)  # STAND, with position letters
    s.cmd("betting_open", round_id="R3").cmd("betting_close", after=5.0)
    s.reports(typed("2020", "NOREAD"), after=1.5)  # the scanner could not read the banker's card
    return s


@case
def usb_framed_clean() -> Script:
    """Our framed shoe on USB bulk endpoints: boot hello, flagged burns, a lost ack's repeat dropped,
    the cut card making the next hand the last."""
    shoe = FramedShoe()
    s = Script("usb-framed-clean", "usb-framed", rules={"burn": 2})
    s.link(True, detail="usb-framed on usb:1209:0002:FS0001 (bus 1 address 1)")
    s.device(shoe.boot(), pieces=1)
    s.cmd("new_shoe", shoe_id="U1")
    s.device(shoe.cards("6D", "QS", burn=True), pieces=1)
    round_(s, "R1", shoe.cards(*TIE), pieces=2)
    s.device(shoe.repeat_last(TIE[-1]), after=0.25)  # our ack was lost: the shoe says it again
    s.device(shoe.cut(), after=2.0)
    round_(s, "R2", shoe.cards(*BANKER_ONLY), pieces=1)
    s.cmd("betting_open", round_id="R3", after=2.0)  # refused: the shoe is finished
    return s


# ---------------------------------------------------------------------- each misdeal


@case
def misdeal_card_before_bets_closed() -> Script:
    s = Script("misdeal-card-before-bets-closed", "beetek", rules={"burn": "none"})
    s.link(True)
    s.cmd("new_shoe", shoe_id="S1")
    s.cmd("betting_open", round_id="R1")
    s.device(beetek("9H"), after=2.0)  # dealt while bets are still being placed
    s.cmd("betting_close", after=3.0)
    s.device(beetek(*NATURAL), after=1.5, pieces=3)
    return s


@case
def misdeal_extra_card() -> Script:
    s = Script("misdeal-extra-card", "beetek", rules={"burn": "none"})
    s.link(True)
    s.cmd("new_shoe", shoe_id="S1")
    round_(s, "R1", beetek(*STAND), pieces=2)
    s.device(beetek("8D"), after=1.0)  # a fifth card where none is due
    round_(s, "R2", beetek(*TIE), pieces=3)
    return s


@case
def misdeal_short_deal() -> Script:
    s = Script("misdeal-short-deal", "beetek", rules={"burn": "none"})
    s.link(True)
    s.cmd("new_shoe", shoe_id="S1")
    round_(s, "R1", beetek(*THIRD[:5]), pieces=3)  # banker's third card never comes
    round_(s, "R2", beetek(*NATURAL), pieces=2)  # next betting_open voids R1
    return s


@case
def misdeal_unreadable() -> Script:
    s = Script("misdeal-unreadable", "beetek", rules={"burn": "none"})
    s.link(True)
    s.cmd("new_shoe", shoe_id="S1")
    round_(s, "R1", beetek("3H", "4D") + b" [Game]<Game> \r\n", pieces=2)  # the sensor could not read it
    s.device(beetek("3C"), after=1.0)  # the dealer clears the voided round's cards
    round_(s, "R2", beetek(*STAND), pieces=2)
    return s


@case
def misdeal_foreign_card() -> Script:
    """A one-deck shoe: a second nine of hearts cannot be from it."""
    s = Script("misdeal-foreign-card", "beetek", rules={"burn": "none", "decks": 1})
    s.link(True)
    s.cmd("new_shoe", shoe_id="S1")
    round_(s, "R1", beetek(*NATURAL), pieces=2)
    round_(s, "R2", beetek("3H", "9H"), pieces=2)
    return s


@case
def foreign_card_marked_as_a_burn() -> Script:
    """After the burn, the dealer burns a card with the framed shoe in burn mode, and it is a second
    9H of a one-deck shoe: FOREIGN_CARD, and the card stays a burn."""
    shoe = FramedShoe()
    s = Script("foreign-card-marked-as-a-burn", "framed", rules={"burn": 1, "decks": 1})
    s.link(True)
    s.device(shoe.boot())
    s.cmd("new_shoe", shoe_id="F1")
    s.device(shoe.cards("KH", burn=True))
    round_(s, "R1", shoe.cards(*NATURAL), pieces=2)
    s.device(shoe.cards("9H", burn=True), after=2.0)
    round_(s, "R2", shoe.cards(*STAND), pieces=2)
    return s


@case
def misdeal_foreign_card_out_of_turn() -> Script:
    """Copies too many of a one-deck shoe, each drawn when no card is due: between rounds, before bets
    close, while a void round is cleared, after the shoe's end. Each gives FOREIGN_CARD, and only that."""
    s = Script(
        "misdeal-foreign-card-out-of-turn",
        "beetek",
        rules={"burn": "none", "decks": 1, "cut_card_remaining": 44},
    )
    s.link(True)
    s.cmd("new_shoe", shoe_id="S1")
    round_(s, "R1", beetek(*NATURAL), pieces=2)
    s.device(beetek("9H"), after=1.0)  # not EXTRA_CARD
    s.cmd("betting_open", round_id="R2")
    s.device(beetek("2S"), after=1.0)  # not CARD_BEFORE_BETS_CLOSED
    s.cmd("void_round", reason="foreign card on the layout")
    s.device(beetek("9C"), after=1.0)  # not a silent discard
    round_(s, "R3", beetek(*STAND), pieces=2)  # its first card leaves 44: the virtual cut card, last hand
    s.device(beetek("3D"), after=1.0)  # not CARD_AFTER_SHOE_END
    s.device(beetek("4H"), after=1.0)  # a card of this shoe: CARD_AFTER_SHOE_END
    return s


@case
def misdeal_card_after_shoe_end() -> Script:
    """A virtual cut card (the shoe cannot see it) ends a one-deck shoe; a card after the end."""
    s = Script(
        "misdeal-card-after-shoe-end", "beetek", rules={"burn": "none", "decks": 1, "cut_card_remaining": 46}
    )
    s.link(True)
    s.cmd("new_shoe", shoe_id="S1")
    round_(s, "R1", beetek(*STAND), pieces=2)  # 4 dealt, 48 left
    round_(s, "R2", beetek(*TIE), pieces=2)  # the 6th card leaves 46: cut card, this hand is the last
    s.cmd("betting_open", round_id="R3", after=2.0)  # refused: the shoe is finished
    s.device(beetek("AS"), after=1.0)
    return s


@case
def burn_marked_after_shoe_end() -> Script:
    """The framed shoe marks a card as a burn after the shoe's last hand: no burn is due, so it is
    the card after the shoe's end that it is (a discard, CARD_AFTER_SHOE_END), not a burn."""
    shoe = FramedShoe()
    s = Script(
        "burn-marked-after-shoe-end", "framed", rules={"burn": 1, "decks": 1, "cut_card_remaining": 46}
    )
    s.link(True)
    s.device(shoe.boot())
    s.cmd("new_shoe", shoe_id="F1")
    s.device(shoe.cards("KH", burn=True))  # 51 left
    round_(s, "R1", shoe.cards(*STAND), pieces=2)  # 47 left
    round_(s, "R2", shoe.cards(*TIE), pieces=2)  # its first card leaves 46: the last hand
    s.device(shoe.cards("5C", burn=True), after=2.0)
    return s


@case
def foreign_burn_card_while_betting() -> Script:
    """A card the shoe marks as a burn, a second 9H of a one-deck shoe, drawn while betting is open:
    FOREIGN_CARD names the round in betting, and the card stays a burn the round never sees."""
    shoe = FramedShoe()
    s = Script("foreign-burn-card-while-betting", "framed", rules={"burn": 1, "decks": 1})
    s.link(True)
    s.device(shoe.boot())
    s.cmd("new_shoe", shoe_id="F1")
    s.device(shoe.cards("KH", burn=True))
    round_(s, "R1", shoe.cards(*NATURAL), pieces=2)
    s.cmd("betting_open", round_id="R2", after=2.0)
    s.device(shoe.cards("9H", burn=True), after=1.0)
    s.cmd("betting_close", after=4.0)
    s.device(shoe.cards(*STAND), after=1.5, pieces=2)
    return s


@case
def misdeal_ten_lost_its_zero() -> Script:
    """A Bee-Tek ``10S`` loses its ``0`` on the wire: ``1S`` is no card (not an ace), the round is void."""
    s = Script("misdeal-ten-lost-its-zero", "beetek", rules={"burn": "none"})
    s.link(True)
    s.cmd("new_shoe", shoe_id="S1")
    round_(s, "R1", beetek("3H", "4D", "1S"), pieces=2)
    s.device(beetek("3C"), after=1.0)  # the dealer clears the voided round's cards
    round_(s, "R2", beetek("10S", "2D", "S10", "5C", "3H"), pieces=3)  # tens read whole: banker 7 v 3
    return s


# ---------------------------------------------------------------------- burn and cut-card policies


@case
def burn_face_card() -> Script:
    """The turned card is a king: ten more are burned."""
    s = Script("burn-face-card", "beetek")
    s.link(True)
    s.cmd("new_shoe", shoe_id="S1")
    s.device(beetek("KC", "2S", "3S", "4S", "5S", "6S", "7S", "8S", "9S", "JS", "QS", burn=True), pieces=5)
    round_(s, "R1", beetek(*TIE), pieces=2)
    return s


@case
def burn_mismatch() -> Script:
    """Betting closes with the burn half done."""
    s = Script("burn-mismatch", "beetek")
    s.link(True)
    s.cmd("new_shoe", shoe_id="S1")
    s.device(beetek("4D", "5D", burn=True), pieces=2)  # a 4 says burn four more; only one follows
    round_(s, "R1", beetek(*NATURAL), pieces=3)
    return s


@case
def burn_last_card_foreign() -> Script:
    """A one-deck shoe's last burn card is a second 2H: card, alert, then the shoe (burn finished)."""
    s = Script("burn-last-card-foreign", "beetek", rules={"decks": 1})
    s.link(True)
    s.cmd("new_shoe", shoe_id="S1")
    s.device(beetek("2H", "5C", burn=True), pieces=2)  # a 2 says burn two more
    s.device(beetek("2H", burn=True), after=1.0)
    round_(s, "R1", beetek(*STAND), pieces=2)
    return s


@case
def burn_fixed_without_tags() -> Script:
    """A fixed burn of two, from a shoe that does not tag burn cards."""
    s = Script("burn-fixed-without-tags", "beetek", rules={"burn": 2})
    s.link(True)
    s.cmd("new_shoe", shoe_id="S1")
    s.device(beetek("6H", "QH"), pieces=2)
    round_(s, "R1", beetek(*BANKER_ONLY), pieces=3)
    return s


@case
def cut_card_finish() -> Script:
    """The framed shoe sees the cut card in the middle of a hand: that hand is the last."""
    shoe = FramedShoe()
    s = Script("cut-card-finish", "framed", rules={"burn": "none"})
    s.link(True)
    s.device(shoe.boot())
    s.cmd("new_shoe", shoe_id="F1")
    round_(s, "R1", shoe.cards(*STAND[:2]), pieces=2)
    s.device(shoe.cut(), after=1.0)
    s.device(shoe.cards(*STAND[2:]), after=1.0)
    s.cmd("betting_open", round_id="R2", after=2.0)  # refused: the shoe is finished
    s.cmd("new_shoe", shoe_id="F2", after=5.0)
    return s


@case
def cut_card_virtual_behind_a_hand() -> Script:
    """A virtual cut card reached by the card that finishes a hand lies behind it: the next hand is
    the last. The cut card's alert comes before that round's result, and the shoe last."""
    s = Script(
        "cut-card-virtual-behind-a-hand",
        "linecode",
        rules={"burn": "none", "decks": 1, "cut_card_remaining": 48},
    )
    s.link(True)
    s.cmd("new_shoe", shoe_id="L1")
    round_(s, "R1", linecode("H09", "A02", "C09", "D03"), pieces=2)  # NATURAL: its 4th card leaves 48
    round_(s, "R2", linecode("H03", "D04", "A03", "C03"), pieces=2)  # STAND: the last hand
    s.cmd("betting_open", round_id="R3", after=2.0)  # refused: the shoe is finished
    return s


@case
def cut_card_one_more() -> Script:
    """House rule 'one-more': the cut card between hands leaves two more hands."""
    shoe = FramedShoe()
    s = Script("cut-card-one-more", "framed", rules={"burn": "none", "last_hand": "one-more"})
    s.link(True)
    s.device(shoe.boot())
    s.cmd("new_shoe", shoe_id="F1")
    round_(s, "R1", shoe.cards(*TIE), pieces=2)
    s.device(shoe.cut(), after=2.0)
    round_(s, "R2", shoe.cards(*NATURAL), pieces=2)
    round_(s, "R3", shoe.cards(*STAND), pieces=2)
    s.cmd("betting_open", round_id="R4", after=2.0)  # refused
    return s


# ---------------------------------------------------------------------- the link and the wire


@case
def disconnect_mid_round() -> Script:
    """The cable comes out with cards due: the round is void; half a frame is lost with the link."""
    s = Script("disconnect-mid-round", "beetek", rules={"burn": "none"})
    s.link(True)
    s.cmd("new_shoe", shoe_id="S1")
    round_(s, "R1", beetek(*THIRD[:3]), pieces=2)
    s.device(b" [Game]<Car", after=0.5)
    s.link(False, after=0.3, detail="/dev/shoe-1: device reports readiness to read but returned no data")
    s.link(True, after=4.0, detail="beetek on /dev/shoe-1 (/dev/ttyUSB1)")
    s.device(b"d:5C> \r\n" + beetek("8D"), after=1.0)  # the rest of the lost frame is noise now
    round_(s, "R2", beetek(*NATURAL), pieces=2)
    return s


@case
def disconnect_between_rounds() -> Script:
    """Out between rounds: a warning, kept until acknowledged; after the reconnect the framed session
    holds cards back until the shoe has said hello again, and takes the shoe's repeat."""
    s = Script("disconnect-between-rounds", "framed", rules={"burn": "none"})
    shoe = FramedShoe()
    s.link(True)
    s.device(shoe.boot())
    s.cmd("new_shoe", shoe_id="F1")
    round_(s, "R1", shoe.cards(*TIE), pieces=3)
    s.link(False, after=2.0, detail="/dev/shoe-1: [Errno 5] Input/output error")
    s.link(True, after=3.0)
    s.cmd("ack_alert", alert_id=10)  # the DEVICE_DISCONNECTED warning (alert ids are the alert's seq)
    s.cmd("betting_open", round_id="R2").cmd("betting_close", after=5.0)
    s.device(shoe.cards(STAND[0]), after=0.5)  # held back: no hello since the reconnect
    s.device(shoe.hello_reply() + shoe.repeat_last(STAND[0]), after=0.25, pieces=2)
    s.device(shoe.cards(*STAND[1:]), after=1.0, pieces=2)
    return s


@case
def junk_bytes_beetek() -> Script:
    """Line noise, an orphan tag, a frame missing its start and an unknown frame between good ones;
    then the shoe's own alarm frame."""
    s = Script("junk-bytes-beetek", "beetek", rules={"burn": "none"})
    s.link(True)
    s.cmd("new_shoe", shoe_id="S1")
    s.cmd("betting_open", round_id="R1").cmd("betting_close", after=5.0)
    noisy = b"\x00\xff~~" + beetek("9H") + b"[Game] \r\n" + beetek("2S") + b"Card:3D>" + beetek("9C")
    s.device(noisy + b" [Status]<Ready> " + beetek("3D") + b"\x7f\x80", after=1.0, pieces=6)
    s.device(b" [Game]<Alarm:E12 Card jam> ", after=2.0)
    return s


@case
def junk_bytes_framed() -> Script:
    """A frame with a bad checksum, a run of noise and a truncated frame: the good ones still count."""
    shoe = FramedShoe()
    s = Script("junk-bytes-framed", "framed", rules={"burn": "none"})
    s.link(True)
    s.device(shoe.boot())
    s.cmd("new_shoe", shoe_id="F1")
    s.cmd("betting_open", round_id="R1").cmd("betting_close", after=5.0)
    first = shoe.cards(NATURAL[0])
    corrupt = bytearray(shoe.cards(NATURAL[1]))
    corrupt[4] ^= 0x20  # one bit flipped on the wire: dropped; the shoe repeats it
    repeat = shoe.repeat_last(NATURAL[1])
    s.device(first + bytes(corrupt) + b"\x13\x37noise" + first[:5], after=1.0, pieces=4)
    s.device(repeat + shoe.cards(*NATURAL[2:]), after=0.3, pieces=3)
    return s


@case
def junk_bytes_linecode() -> Script:
    """Control bytes and an overlong line are noise; the codes around them still read."""
    s = Script("junk-bytes-linecode", "linecode", rules={"burn": "none"})
    s.link(True)
    s.cmd("new_shoe", shoe_id="L1")
    s.cmd("betting_open", round_id="R1").cmd("betting_close", after=5.0)
    data = b"\x00\x1b[0m\r\nH09\r\n" + b"9" * 40 + b"\r\nA02\r\n\x07\x07\nC09\r\nD03\r\n"
    s.device(data, after=1.0, pieces=5)
    return s


# ---------------------------------------------------------------------- time, commands, modes


@case
def round_stalled() -> Script:
    """No card for 45 s while cards are due: the replayed tick raises ROUND_STALLED at 30 s."""
    s = Script("round-stalled", "beetek", rules={"burn": "none"})
    s.link(True)
    s.cmd("new_shoe", shoe_id="S1")
    round_(s, "R1", beetek(*THIRD[:2]), pieces=1)
    s.device(beetek(*THIRD[2:]), after=45.0, pieces=2)
    return s


@case
def round_stalled_by_device_input() -> Script:
    """A round overdue when the next thing from the shoe is not a card: the shoe's alarm, the cable
    coming out, the cut card. Each arrives between two ticks, so it is that input that finds the round
    stalled: ROUND_STALLED comes first, then what the input itself gives."""
    shoe = FramedShoe()
    s = Script("round-stalled-by-device-input", "framed", rules={"burn": "none"})
    s.link(True)
    s.device(shoe.boot())
    s.cmd("new_shoe", shoe_id="F1")
    round_(s, "R1", shoe.cards(*STAND[:2]), pieces=1)
    s.device(shoe.fault("E3", "Card Not Read"), after=29.998)  # 30.002 s after the last card
    s.device(shoe.cards(*STAND[2:]), after=1.0)
    round_(s, "R2", shoe.cards(*TIE[:2]), pieces=1)
    s.link(False, after=29.998, detail="/dev/shoe-1: [Errno 5] Input/output error")  # round void
    s.link(True, after=3.0)
    s.device(shoe.hello_reply())
    round_(s, "R3", shoe.cards(*NATURAL[:2]), pieces=1)
    s.device(shoe.cut(), after=29.998)  # this hand is the last
    s.device(shoe.cards(*NATURAL[2:]), after=1.0)
    return s


@case
def operator_commands() -> Script:
    """Operator void, alert acknowledgement, refused and malformed requests, a generated shoe id."""
    s = Script("operator-commands", "beetek", rules={"burn": "none"})
    s.link(True)
    s.cmd("new_shoe")  # no id given: generated from the time
    s.cmd("betting_close")  # refused: betting is not open
    round_(s, "R1", beetek(*THIRD[:2]), pieces=1)
    s.cmd("void_round", reason="dealer dropped a card")
    s.device(beetek(*THIRD[2:4]), after=1.0)  # clearing the voided round: no alert
    s.cmd("betting_open", round_id="R2")
    s.device(beetek("AC"), after=1.0)  # CARD_BEFORE_BETS_CLOSED, alert 12
    s.cmd("ack_alert", alert_id=12)
    s.cmd("ack_alert", alert_id=12)  # refused: already acknowledged
    s.cmd("ack_alert", alert_id="one")  # malformed: refused by the request parser
    s.cmd("shuffle")  # unknown command
    s.cmd("betting_close")
    s.device(beetek(*BANKER_ONLY), pieces=2)
    return s


@case
def auto_round_control() -> Script:
    """No game server: the first card of a round opens it."""
    s = Script("auto-round-control", "linecode", rules={"burn": "none", "round_control": "auto"})
    s.link(True)
    s.device(linecode("A03", "D04", "H03", "C03"), after=1.0, pieces=3)  # STAND
    s.device(linecode("H07", "A07", "C12", "D13"), after=8.0, pieces=2)  # TIE
    s.device(linecode("NOREAD"), after=8.0)
    s.device(linecode("H10", "D01", "C07", "A03", "D05"), after=1.0, pieces=4)  # BANKER_ONLY
    return s


@case
def auto_round_control_edges() -> Script:
    """Auto mode with a shoe: burn cards open no round, a round opened by a card comes before the card,
    a foreign card opens none, and the game server's betting_open and betting_close still work."""
    s = Script("auto-round-control-edges", "linecode", rules={"burn": 1, "round_control": "auto", "decks": 1})
    s.link(True)
    s.cmd("new_shoe", shoe_id="L1")
    s.device(linecode("A13"), after=1.0)  # KS: the burn
    s.device(linecode("H03", "D04", "A03", "C03"), after=2.0, pieces=2)  # STAND, opening its round
    s.device(linecode("H03"), after=2.0)  # a second 3H: FOREIGN_CARD, no round
    s.cmd("betting_open", round_id="R2", after=2.0)
    s.device(linecode("H05"), after=1.0)  # CARD_BEFORE_BETS_CLOSED
    s.cmd("betting_close", after=2.0)
    s.device(linecode("H09", "A02", "C09", "D03"), after=1.5, pieces=2)  # NATURAL
    s.device(linecode("H07", "A07", "C12", "D13"), after=8.0, pieces=2)  # TIE, opening its round
    return s


@case
def auto_cut_card_virtual_opens_a_round() -> Script:
    """Auto mode: the card that reaches a virtual cut card is the first of a hand and opens its round.
    That round is the last hand: the round's opening says so, before its card and the cut card's alert."""
    s = Script(
        "auto-cut-card-virtual-opens-a-round",
        "linecode",
        rules={"burn": "none", "round_control": "auto", "decks": 1, "cut_card_remaining": 47},
    )
    s.link(True)
    s.cmd("new_shoe", shoe_id="L1")
    s.device(linecode("A03", "D04", "H03", "C03"), after=1.0, pieces=2)  # STAND: 48 left
    s.device(linecode("H09", "A02", "C09", "D03"), after=8.0, pieces=2)  # NATURAL: its 1st leaves 47
    s.device(linecode("H07"), after=8.0)  # after the last hand: CARD_AFTER_SHOE_END
    return s


@case
def ids_and_counts() -> Script:
    """The ids the table makes up and its counts at the edges: a shoe id from the time, zero-padded
    round ids, an alert's id (its first seq) kept when it is acknowledged, and cards_remaining
    stopping at 0 when a one-deck shoe gives up more than 52 cards."""
    s = Script("ids-and-counts", "beetek", rules={"burn": "none", "decks": 1})
    s.link(True)
    s.cmd("new_shoe")
    s.cmd("betting_open").cmd("betting_close", after=5.0)  # round <shoe_id>-001
    s.device(beetek(*NATURAL), after=1.5, pieces=2)
    s.device(beetek("5H"), after=1.0)  # EXTRA_CARD: alert 11, the seq it is first published with
    s.cmd("ack_alert", alert_id=11)  # published again, with a new seq and the same alert_id
    rest = [c for c in ALL_CARDS if c not in (*NATURAL, "5H")]
    s.device(beetek(*rest, burn=True), after=2.0, pieces=6)  # the other 47, burned by the shoe: 0 left
    s.device(beetek("5H", burn=True), after=1.0)  # card 53 of 52: foreign, and still 0 left
    s.cmd("get_state")
    return s


@case
def results_before_a_shoe() -> Script:
    """No game server and no new_shoe yet: round ids come from the table, and get_state carries the
    results of the hands kept so far; a new_shoe clears them."""
    s = Script("results-before-a-shoe", "linecode", rules={"burn": "none", "round_control": "auto"})
    s.link(True)
    s.device(linecode("H09", "A02", "C09", "D03"), after=1.0, pieces=2)  # NATURAL, round T1-R1
    s.device(linecode("H07", "A07", "C12", "D13"), after=8.0, pieces=2)  # TIE, round T1-R2
    s.cmd("get_state", after=2.0)
    s.cmd("new_shoe", shoe_id="L1")
    s.cmd("get_state")
    return s


# ---------------------------------------------------------------------- from the simulator

sim_case(
    "sim-every-mistake-framed",
    "framed",
    replace(
        load(SCENARIOS / "every-mistake.txt"),
        faults=FaultRates(junk=0.1, split=0.3, duplicate=0.1, retransmit=0.05),
    ),
)
sim_case(
    "sim-careless-dealer-beetek",
    "beetek",
    parse("seed 11\nerror-rate 0.2\nfaults junk=0.05 split=0.3\nplay 25"),
)


# ---------------------------------------------------------------------- every game and variant

sim_case(
    "sim-dragon-tiger-framed",
    "framed",
    parse("seed 21\nhouse game=dragon_tiger\nerror-rate 0.3\nfaults junk=0.05 split=0.3\nplay 30"),
    game=True,
)
sim_case(
    "sim-dragon-tiger-one-deck-beetek",
    "beetek",
    parse("seed 24\nhouse game=dragon_tiger decks=1 burn=none\nerror-rate 0.5\nplay 26"),
    game=True,
)
sim_case(
    "sim-no-commission-beetek",
    "beetek",
    parse("seed 22\nhouse commission=no_commission\nerror-rate 0.2\nplay 40"),
    game=True,
)
sim_case(
    "sim-ez-linecode", "linecode", parse("seed 23\nhouse commission=ez\nerror-rate 0.2\nplay 40"), game=True
)


@case
def squeeze_reveals() -> Script:
    """A squeeze table: a side revealed, a card revealed, the rest by the house timeout; then a hand
    whose held-back cards the next round shows; and a reveal that is refused."""
    s = Script(
        "squeeze-reveals",
        "beetek",
        rules={"game": "punto_banco", "burn": "none", "squeeze": True, "reveal_timeout_s": 8.0},
    )
    s.link(True, detail="beetek on /dev/shoe-1")
    s.cmd("new_shoe", shoe_id="S1")
    round_(s, "R1", beetek(*NATURAL), pieces=2)
    s.cmd("reveal", side="player", after=2.0)
    s.cmd("reveal", position="banker1", after=1.0)
    s.wait(10.0)  # banker2 shows by itself, at its draw + 8 s, whenever the table next looks
    s.cmd("get_state")
    round_(s, "R2", beetek(*STAND), pieces=1)
    round_(s, "R3", beetek(*NATURAL), pieces=1)  # R2 was never revealed: R3's betting shows it
    s.cmd("reveal", side="dragon")  # not a side at punto banco: refused, nothing changes
    return s


@case
def dragon_tiger_squeeze() -> Script:
    """Dragon Tiger with squeeze: Tiger revealed first, Dragon by the timeout; then a round left held."""
    s = Script(
        "dragon-tiger-squeeze",
        "beetek",
        rules={"game": "dragon_tiger", "burn": "none", "squeeze": True, "reveal_timeout_s": 5.0},
    )
    s.link(True, detail="beetek on /dev/shoe-1")
    s.cmd("new_shoe", shoe_id="S1")
    round_(s, "R1", beetek("7H", "7H"), pieces=1)
    s.cmd("reveal", side="tiger", after=1.0)
    s.wait(6.0)
    round_(s, "R2", beetek("KS", "2C"), pieces=1)
    s.cmd("get_state")
    return s


@case
def staff_and_suspension() -> Script:
    """Who did what, and a table that stops: wrong PINs lock a dealer out, another signs in and
    acknowledges with her PIN; a foreign card suspends the table, betting is refused and a card
    drawn is set aside; a dealer cannot resume it, the supervisor the game server names does; the
    pit voids a round as its broker user."""
    s = Script(
        "staff-and-suspension",
        "beetek",
        rules={"game": "punto_banco", "decks": 1, "burn": "none", "suspend_on": list(SUSPEND_ON),
               "pin_attempts": 3, "ack_needs_pin": True},
    )  # fmt: skip
    desk = Actor("gameserver", "gameserver")
    s.link(True, detail="beetek on /dev/shoe-1")
    s.cmd("new_shoe", shoe_id="S1", actor=desk)
    for _ in range(3):  # the third locks D-1 out
        s.cmd("dealer_sign_in", dealer_id="D-1", actor=Actor("display", "D-1", "dealer", "wrong"))
    s.cmd("dealer_sign_in", dealer_id="D-1", actor=Actor("display", "D-1", "dealer", "right"))  # locked
    s.cmd("dealer_sign_in", dealer_id="D-2", actor=Actor("display", "D-2", "dealer", "right"))
    s.device(beetek("7H"), pieces=1)  # no round: an extra card
    s.cmd("ack_alert", alert_id=5, actor=Actor("display", role="unknown"))  # no PIN typed: refused
    s.cmd("ack_alert", alert_id=5, actor=Actor("display", "D-2", "dealer", "right"))
    s.cmd("betting_open", round_id="R1", actor=desk)
    s.cmd("betting_close", actor=desk)
    s.device(beetek("AS", "AS"), pieces=1)  # one deck: the second ace of spades is foreign
    s.cmd("betting_open", round_id="R2", actor=desk)  # suspended: refused
    s.device(beetek("KD"), pieces=1)  # drawn anyway: set aside
    s.cmd("resume", reason="looks fine", supervisor_id="D-2", actor=Actor("gameserver", "D-2", "dealer"))
    s.cmd("resume", reason="foreign card removed", supervisor_id="S-1",
          actor=Actor("gameserver", "S-1", "supervisor"))  # fmt: skip
    s.cmd("betting_open", round_id="R2", actor=desk)
    s.cmd("void_round", reason="dispute at the table", actor=Actor("pit", "pit"))
    s.cmd("get_state")
    return s
