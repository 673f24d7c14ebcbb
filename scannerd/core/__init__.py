"""Pure judgement: the cards, the game's rules, the validator, the shuffle check, the table and its inputs.

Nothing here reads a clock, does I/O or starts a thread: time comes in with each input,
which is what makes a replay exact and the core fast.
"""
