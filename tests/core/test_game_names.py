"""The side and position names the contract's types spell are exactly those the games declare."""

from __future__ import annotations

from typing import get_args

from scannerd.core.games import ALL_SIDES, GAMES
from scannerd.core.games.names import Position, Side, Winner


def test_the_contracts_names_are_the_games_own() -> None:
    """A game added to ``GAMES`` without its names in ``names.py`` (or one removed) fails here."""
    assert set(get_args(Side)) == set(ALL_SIDES)
    assert set(get_args(Winner)) == {*ALL_SIDES, "tie"}
    assert set(get_args(Position)) == {p for game in GAMES.values() for p in game.positions}


def test_every_result_of_every_game_has_a_mark_and_a_colour_of_its_own() -> None:
    """No two results of a game are told apart by colour alone, nor share a mark."""
    for game in GAMES.values():
        results = [*game.sides, "tie"]
        assert list(game.marks) == results and list(game.colours) == results, game.name
        assert len(set(game.marks.values())) == len(results), game.name
