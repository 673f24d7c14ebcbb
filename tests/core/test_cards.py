from drivers.cards import ALL_CARDS, normalise
from scannerd.core.cards import BURN_COUNT, POINTS, hand_total


def test_a_deck_has_52_distinct_cards():
    assert len(set(ALL_CARDS)) == 52


def test_point_values_follow_the_rules():
    assert [POINTS[r] for r in "A23456789TJQK"] == [1, 2, 3, 4, 5, 6, 7, 8, 9, 0, 0, 0, 0]


def test_burn_count_counts_tens_and_faces_as_ten():
    assert [BURN_COUNT[r] for r in "A9TJQK"] == [1, 9, 10, 10, 10, 10]


def test_normalise_accepts_device_spellings():
    assert normalise("10", "h") == "TH"
    assert normalise("a", "S") == "AS"
    assert normalise("X", "S") is None
    assert normalise("4", "Z") is None


def test_normalise_reads_no_rank_one_a_ten_that_lost_its_zero_is_not_an_ace():
    assert normalise("1", "S") is None


def test_hand_total_is_modulo_ten():
    assert hand_total(["9H", "8C"]) == 7
    assert hand_total(["KH", "TC", "QS"]) == 0
