"""The score at the end of a game (RULES.md, "End of the game"), stated once.

Each player adds the stones left in its own row to the stones it captured; more stones wins
and equal totals are a draw. A game stopped at the ply cap is scored the same way.
``final_score`` says it for one game (Python ints) and for a batch of games (NumPy arrays)
alike; ``row_difference`` is what the end adds to the score difference of the player to
move, the form the searches and the solver count in (RULES.md, "Perfect play").
"""

from __future__ import annotations

from typing import TypeVar

import numpy as np

from engine.game.board import NORTH, SOUTH, Board, row_stones

WINNERS = ("south", "north", "draw")  # final_score gives the index of one of these

Stones = TypeVar("Stones", int, np.ndarray)


def final_score(
    captured_south: Stones, captured_north: Stones, south_row: Stones, north_row: Stones
) -> tuple[Stones, Stones, Stones]:
    """``(winner, score_south, score_north)`` of a finished game: each side's total is the stones
    it captured plus the stones left in its own row, and ``winner`` indexes WINNERS.

    Ints give ints; arrays (one entry per game) give arrays, element by element.
    """
    score_south = captured_south + south_row
    score_north = captured_north + north_row
    # 0 when South has more, 1 when North has more, 2 when they are equal; written with
    # comparisons only, so that ints and arrays go through the same lines.
    winner = (score_south < score_north) + 2 * (score_south == score_north)
    return winner, score_south, score_north


def row_difference(board: Board) -> int:
    """What the end of the game adds to the mover's score difference on ``board`` (the mover's
    view): the stones of the mover's row minus those of the opponent's."""
    return row_stones(board, SOUTH) - row_stones(board, NORTH)
