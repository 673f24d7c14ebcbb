"""The simulator's drawing rules against a table transcribed from docs/rules.md."""

import pytest

from simulators.rules import deal_of, next_card_for, points, position_of, value, winner

# docs/rules.md: "Banker draws when the Player's third card is worth" (Player drew, no natural).
BANKER_DRAWS_WHEN_PLAYER_THIRD_IS = {
    0: "0123456789",
    1: "0123456789",
    2: "0123456789",
    3: "012345679",
    4: "234567",
    5: "4567",
    6: "67",
    7: "",
}
# A card of each point value, to build hands with a chosen total.
CARD_OF = {0: "KH", 1: "AS", 2: "2D", 3: "3C", 4: "4H", 5: "5S", 6: "6D", 7: "7C", 8: "8H", 9: "9S"}


def expected_deal(p: int, b: int, third: int) -> list[str]:
    """The hands that take a card after the first four, in order, straight from docs/rules.md."""
    if p >= 8 or b >= 8:
        return []  # natural: both stand
    if p <= 5:
        return ["player", "banker"] if str(third) in BANKER_DRAWS_WHEN_PLAYER_THIRD_IS[b] else ["player"]
    return ["banker"] if b <= 5 else []


@pytest.mark.parametrize("p", range(10))
def test_every_player_banker_third_card_combination(p):
    for b in range(10):
        for third in range(10):
            player = [CARD_OF[p], "TS"]
            banker = [CARD_OF[b], "QD"]
            got = []
            while (hand := next_card_for(player, banker)) is not None:
                got.append(hand)
                if hand == "player":
                    player.append(CARD_OF[third])
                else:
                    banker.append("JC")
            assert got == expected_deal(p, b, third), (p, b, third)


def test_first_four_alternate_player_banker():
    player, banker, seen = [], [], []
    for card in ["9S", "9H", "KS", "KH"]:
        pos = position_of(player, banker)
        seen.append(pos)
        (player if pos.startswith("player") else banker).append(card)
    assert seen == ["player1", "banker1", "player2", "banker2"]
    assert position_of(player, banker) is None  # 9 v 9: naturals


def test_values_and_totals():
    assert [value(c) for c in ["AS", "9H", "TD", "JC", "QS", "KH"]] == [1, 9, 0, 0, 0, 0]
    assert points(["7S", "8H"]) == 5
    assert winner(["7S", "KH"], ["6D", "KC"]) == "player"
    assert winner(["7S", "KH"], ["7D", "KC"]) == "tie"


def test_eight_deck_probabilities_match_the_published_figures():
    """Every ordered draw of an 8-deck shoe, by point value, through the simulator's rules.

    Counts are exact integers over 416*415*...*411 ordered six-card draws: a
    round that ends after m cards stands for every way the unused cards follow.
    """
    left = {v: 32 for v in range(1, 10)} | {0: 128}
    ways = {"player": 0, "banker": 0, "tie": 0}

    def falling(n: int, k: int) -> int:
        out = 1
        for i in range(k):
            out *= n - i
        return out

    def deal(player: list[str], banker: list[str], count: int) -> None:
        hand = next_card_for(player, banker)
        if hand is None:
            used = len(player) + len(banker)
            ways[winner(player, banker)] += count * falling(416 - used, 6 - used)
            return
        for v, k in left.items():
            if k:
                left[v] -= 1
                card = CARD_OF[v]
                if hand == "player":
                    deal([*player, card], banker, count * k)
                else:
                    deal(player, [*banker, card], count * k)
                left[v] += 1

    deal([], [], 1)
    total = falling(416, 6)
    assert sum(ways.values()) == total
    assert round(ways["banker"] / total, 6) == 0.458597
    assert round(ways["player"] / total, 6) == 0.446247
    assert round(ways["tie"] / total, 6) == 0.095156


def test_the_dealer_deals_dragon_tiger_one_card_a_side_and_ranks_ace_low():
    deal = deal_of("dragon_tiger")
    assert deal.position_of([], []) == "dragon"
    assert deal.position_of(["AS"], []) == "tiger"
    assert deal.position_of(["AS"], ["2S"]) is None
    assert deal.winner(["AS"], ["2S"]) == "tiger" and deal.winner(["KD"], ["QD"]) == "dragon"
    assert deal.winner(["TC"], ["TH"]) == "tie"
    assert deal_of(None) is deal_of("punto_banco")  # a table from before games were chosen
