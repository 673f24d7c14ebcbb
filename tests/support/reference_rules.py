"""The drawing rules as written in docs/rules.md, kept apart from the code under test."""

from __future__ import annotations

# Banker's third-card table: one row per Banker two-card total, one column per
# value (0-9) of the Player's third card. D = draws, S = stands.
BANKER_TABLE = {
    0: "DDDDDDDDDD",
    1: "DDDDDDDDDD",
    2: "DDDDDDDDDD",
    3: "DDDDDDDDSD",
    4: "SSDDDDDDSS",
    5: "SSSSDDDDSS",
    6: "SSSSSSDDSS",
    7: "SSSSSSSSSS",
}

VALUE = {
    "A": 1,
    "2": 2,
    "3": 3,
    "4": 4,
    "5": 5,
    "6": 6,
    "7": 7,
    "8": 8,
    "9": 9,
    "T": 0,
    "J": 0,
    "Q": 0,
    "K": 0,
}


def expected_draws(p: int, b: int, third: int | None) -> tuple[bool, bool]:
    """(player draws, banker draws) for two-card totals p and b; ``third`` is the
    value of the Player's third card when the Player draws."""
    if p >= 8 or b >= 8:
        return False, False
    if p >= 6:
        return False, b <= 5
    assert third is not None
    return True, BANKER_TABLE[b][third] == "D"


def deal_round(draw) -> tuple[list[str], list[str]]:
    """Deal one round from ``draw()`` the way a correct dealer would: (player, banker) cards."""
    player = [draw()]
    banker = [draw()]
    player.append(draw())
    banker.append(draw())
    p = (VALUE[player[0][0]] + VALUE[player[1][0]]) % 10
    b = (VALUE[banker[0][0]] + VALUE[banker[1][0]]) % 10
    player_draws, _ = expected_draws(p, b, 0)
    if player_draws:
        player.append(draw())
        if expected_draws(p, b, VALUE[player[2][0]])[1]:
            banker.append(draw())
    elif expected_draws(p, b, None)[1]:
        banker.append(draw())
    return player, banker
