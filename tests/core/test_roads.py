"""The scoreboard roads: bead road order, big-road columns, ties and dragon tails; the derived roads."""

from hypothesis import given, settings
from hypothesis import strategies as st

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


# ------------------------------------------------------------------ the derived roads


def marks(text: str, road: str) -> str:
    """A derived road's marks in order as ``R``/``B``, for the results ``text``."""
    from scannerd.core.roads import DERIVED, derived_marks, streaks

    return "".join(m[0].upper() for m in derived_marks(streaks(results(text)), DERIVED[road]))  # type: ignore[index]


def test_big_eye_boy_starts_at_the_second_row_of_the_second_column_or_the_top_of_the_third():
    assert marks("BP", "big_eye_boy") == ""  # the second column has one win: nothing yet
    assert marks("BPP", "big_eye_boy") == "B"  # (col 2, row 2): no win beside it, one above: blue
    assert marks("BPB", "big_eye_boy") == "R"  # (col 3, row 1): columns 1 and 2 are as long: red
    assert marks("BBPB", "big_eye_boy") == "B"  # columns of 2 and 1: not alike, blue


def test_a_worked_shoe_on_all_three_roads():
    """B B B | P P | B B | P | B B B B, worked by hand from the rules in docs/rules.md: columns 3 2 2 1 4.

    Big Eye Boy looks one column back: col 2 row 2 has a win beside it (R); col 3 opens, 2 vs 3 (B),
    row 2 beside col 2's second (R); col 4 opens, 2 vs 2 (R); col 5 opens, 1 vs 2 (B), row 2 has no
    win in col 4 but one just above (B), rows 3 and 4 have neither (R R).
    """
    shoe = "BBB" + "PP" + "BB" + "P" + "BBBB"
    assert marks(shoe, "big_eye_boy") == "RBRRBBRR"
    # Small Road looks two back: starts at col 3 row 2 (col 1 has a third win: R); col 4 opens 2 vs 3 (B);
    # col 5 opens 1 vs 2 (B), row 2 beside col 3's second (R), rows 3 and 4: col 3 has two (B then R).
    assert marks(shoe, "small_road") == "RBBRBR"
    # Cockroach Pig looks three back: starts at col 4 (one win: so col 5 row 1): col 4 vs col 1, 1 vs 3 (B);
    # row 2 beside col 2's second (R); row 3 col 2 has two: just above (B); row 4 neither (R).
    assert marks(shoe, "cockroach_pig") == "BRBR"


def test_a_dragon_tail_keeps_its_columns_length_on_the_derived_roads():
    """Seven banker wins then eight player wins: both runs turn right on the big road, but Big Eye Boy
    reads them as columns of seven and eight, so the eighth player win finds the banker run's seventh
    just above its own row (blue), which a board cut at six rows would not have."""
    shoe = "P" + "B" * 7 + "P" * 8
    assert {(c.col, c.row) for c in big_road(results(shoe))} >= {(1, 5), (2, 5)}  # the tail turned
    assert marks(shoe, "big_eye_boy") == "B" + "R" * 5 + "B" + "R" * 6 + "B"


# ------------------------------------------------------------------ a second derivation, written apart


def _by_the_book(text: str, offset: int) -> str:
    """The derived road as docs/rules.md words it, on the big road drawn as a set of (column, row)
    cells without tails (each run one column, as long as it is): written apart from the module."""
    cells: set[tuple[int, int]] = set()
    order: list[tuple[int, int]] = []
    col, row, last = -1, 0, None
    for c in text:
        if c == "T":
            continue
        col, row = (col, row + 1) if c == last else (col + 1, 0)
        last = c
        cells.add((col, row))
        order.append((col, row))
    start = (offset, 1) if (offset, 1) in cells else (offset + 1, 0)
    if start not in cells:
        return ""
    out = ""
    for col, row in order[order.index(start) :]:
        if row == 0:
            height = lambda k: max((r + 1 for c, r in cells if c == k), default=0)  # noqa: E731
            out += "R" if height(col - 1) == height(col - 1 - offset) else "B"
        elif (col - offset, row) in cells:
            out += "R"
        elif (col - offset, row - 1) in cells:
            out += "B"
        else:
            out += "R"
    return out


@settings(max_examples=500, deadline=None)
@given(st.text(alphabet="BPT", max_size=80))
def test_the_derived_roads_are_what_the_rules_say_for_any_shoe(shoe: str) -> None:
    from scannerd.core.roads import DERIVED

    for road, offset in DERIVED.items():
        assert marks(shoe, road) == _by_the_book(shoe, offset), road


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet="BPT", max_size=60))
def test_the_ask_marks_are_the_marks_the_next_hand_would_add(shoe: str) -> None:
    from scannerd.core.roads import DERIVED, ask

    for side, letter in (("banker", "B"), ("player", "P")):
        asked = ask(results(shoe), side)  # type: ignore[arg-type]
        for road, offset in DERIVED.items():
            now, then = _by_the_book(shoe, offset), _by_the_book(shoe + letter, offset)
            expected = {"R": "red", "B": "blue"}[then[-1]] if len(then) > len(now) else None
            assert asked[road] == expected, (road, side)
