"""Every game's side and position names, as types: the one place outside a game's own module that
spells them.

The contract's models and the request schema need them as ``Literal`` types, which a type checker
reads before any game is loaded, so they are written here once; ``tests/core/test_games.py``
holds them to what the games in ``GAMES`` declare, so a new game is added here too or fails.
Everything else reads a table's sides from its ``Game`` (``Game.sides``, ``marks``, ``colours``):
a layer rule (``tests/test_layers.py``) refuses a side's name as a literal anywhere else.
"""

from __future__ import annotations

from typing import Literal

Side = Literal["player", "banker", "dragon", "tiger"]
"""Every side of every game."""
Winner = Literal["player", "banker", "dragon", "tiger", "tie"]
"""What a round's result can be: a side, or a tie."""
Position = Literal["player1", "banker1", "player2", "banker2", "player3", "banker3", "dragon", "tiger"]
"""Every place a card is dealt to, in every game."""
