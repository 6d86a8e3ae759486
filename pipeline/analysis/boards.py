"""The boards of replayed plies as they lie on the table: a position of engine.play.replays (seen by
its mover) turned back to South's view, and each game's distinct states (board and mover), for
Ludii's PositionalRepetition (pipeline.analysis.turns)."""

from __future__ import annotations

import numpy as np

from engine.tables import BoardIndex, turned_ranks

ROTATE_BLOCK = 1 << 16  # plies whose boards are turned back to South's view together (bounded temporaries)


def distinct_states(state: np.ndarray, final: np.ndarray, lengths: np.ndarray, bits: int) -> tuple[np.ndarray, np.ndarray]:
    """The number of distinct states and of distinct boards of each game of a chunk: keyed by
    (game, board, side to move), one sort puts each game's repeats side by side, of states
    and of boards alike."""
    games = np.arange(len(lengths), dtype=np.int64) << bits
    keys = np.concatenate([np.repeat(games, lengths) | state, games | final])
    keys.sort()
    # Two neighbours differ in some bit (a new state), or in a bit above the side to move's (a new board).
    differ = keys[1:] ^ keys[:-1]
    new_state = np.ones(len(keys), dtype=bool)
    new_state[1:] = differ != 0
    new_board = np.ones(len(keys), dtype=bool)
    new_board[1:] = differ > 1
    del differ
    game = np.right_shift(keys, bits, out=keys)
    return np.bincount(game[new_state], minlength=len(lengths)), np.bincount(game[new_board], minlength=len(lengths))


def as_it_lies(index: BoardIndex, position: np.ndarray, mover: np.ndarray) -> np.ndarray:
    """board * 2 + mover for positions in the mover's view: North's boards turned back by three
    pits (engine.tables.turned_ranks, from the ranks alone), ROTATE_BLOCK plies at a time."""
    board = position.astype(np.int64)
    for start in range(0, len(board), ROTATE_BLOCK):
        north = np.flatnonzero(mover[start : start + ROTATE_BLOCK] == 1) + start
        board[north] = turned_ranks(index, board[north])
    board *= 2
    board += mover
    return board
