"""The scoreboard roads: bead road order, big-road columns, ties and dragon tails."""

from scannerd.core.roads import Result, bead_road, big_road, columns


def results(text: str) -> list[Result]:
    """``"BBPT"`` -> results; B banker, P player, T tie."""
    names = {"B": "banker", "P": "player", "T": "tie"}
    return [Result(names[c]) for c in text]  # type: ignore[arg-type]


def grid(text: str, rows: int = 6) -> dict[tuple[int, int], str]:
    """The big road as {(col, row): "B"/"P"/"-" plus one "t" per tie}."""
    return {
        (c.col, c.row): (c.winner or "-")[0].upper() + "t" * c.ties for c in big_road(results(text), rows)
    }


def test_bead_road_fills_columns_top_to_bottom_and_keeps_ties():
    cells = bead_road(results("BPTBBBP"))
    assert [(c.col, c.row, c.result.winner[0]) for c in cells] == [
        (0, 0, "b"),
        (0, 1, "p"),
        (0, 2, "t"),
        (0, 3, "b"),
        (0, 4, "b"),
        (0, 5, "b"),
        (1, 0, "p"),
    ]
    assert columns(cells) == 2


def test_big_road_starts_a_column_when_the_winner_changes():
    assert grid("BBPPPB") == {(0, 0): "B", (0, 1): "B", (1, 0): "P", (1, 1): "P", (1, 2): "P", (2, 0): "B"}


def test_a_tie_marks_the_previous_cell_and_does_not_break_the_streak():
    assert grid("BTTBP") == {(0, 0): "Btt", (0, 1): "B", (1, 0): "P"}


def test_ties_before_the_first_decision_mark_the_first_cell():
    assert grid("TT") == {(0, 0): "-tt"}
    assert grid("TTPB") == {(0, 0): "Ptt", (1, 0): "B"}


def test_a_streak_longer_than_six_rows_turns_right_as_a_dragon_tail():
    g = grid("BBBBBBBBP")
    assert [g[(0, r)] for r in range(6)] == ["B"] * 6
    assert g[(1, 5)] == "B" and g[(2, 5)] == "B"
    # The next streak starts in the next column, above the tail.
    assert g[(1, 0)] == "P"


def test_a_streak_that_meets_an_earlier_tail_turns_above_it():
    g = grid("BBBBBBBB" + "PPPPPPP")
    # Banker's tail runs along row 5 to column 2; Player's column 1 stops at row 4 and turns there.
    assert [g[(1, r)] for r in range(5)] == ["P"] * 5
    assert g[(2, 4)] == "P" and g[(3, 4)] == "P"
    assert (1, 5) in g and g[(1, 5)] == "B"


def test_a_column_blocked_at_once_runs_along_the_top_and_the_next_one_moves_past_it():
    # With two rows: B's tail takes row 1 of columns 0-2; P cannot go down, so it turns along row 0,
    # and the next streak starts past P's tail.
    g = grid("BBBB" + "PPP" + "B", rows=2)
    assert g[(0, 0)] == "B" and g[(1, 1)] == "B" and g[(2, 1)] == "B"
    assert g[(1, 0)] == "P" and g[(2, 0)] == "P" and g[(3, 0)] == "P"
    assert g[(4, 0)] == "B"


def test_pairs_are_kept_on_both_roads():
    rs = [Result("banker", player_pair=True), Result("banker", banker_pair=True)]
    assert [(c.result.player_pair, c.result.banker_pair) for c in bead_road(rs)] == [
        (True, False),
        (False, True),
    ]
    assert [(c.player_pair, c.banker_pair) for c in big_road(rs)] == [(True, False), (False, True)]


def test_empty_shoe_has_empty_roads():
    assert bead_road([]) == [] and big_road([]) == [] and columns([]) == 0
