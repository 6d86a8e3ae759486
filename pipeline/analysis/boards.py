"""The boards of replayed plies as they lie on the table: a position of engine.play.replays (seen by
its mover) turned back to South's view, and each game's distinct states (board and mover), for
Ludii's PositionalRepetition (pipeline.analysis.turns)."""

from __future__ import annotations

from functools import lru_cache
from math import comb
from typing import NamedTuple

import numpy as np

from engine.game import PITS, ROW
from engine.tables import BoardIndex

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
    pits (engine.rotate), ROTATE_BLOCK plies at a time."""
    board = position.astype(np.int64)
    for start in range(0, len(board), ROTATE_BLOCK):
        north = np.flatnonzero(mover[start : start + ROTATE_BLOCK] == 1) + start
        board[north] = rotated(index, board[north])
    board *= 2
    board += mover
    return board


def rotated(index: BoardIndex, ranks: np.ndarray) -> np.ndarray:
    """The index of each board turned by three pits, from the ranks alone.

    The bars of a board (engine.tables.index) are p_k = c_0 + ... + c_k + k, and its rank is the sum
    of C(p_k, k + 1): p_5, ..., p_0 come back in turn as the largest n with C(n, k + 1) at most
    what is left of the rank (as engine.tables.row_stones). The turned board c_3, c_4, c_5, c_0,
    c_1, c_2 has the bars p_(3+k) - p_2 - 1 for k = 0, 1, 2 and p_5 - p_2 + p_(k-3) for k = 3, 4, 5."""
    tables = _unrank_tables(index)
    top = np.searchsorted(tables.binomial[PITS - 1], ranks, side="right") - 1
    bars = [top] * PITS  # bars[0 .. 4] are found below
    rest = ranks - tables.binomial[PITS - 1][top]
    for k in range(PITS - 2, -1, -1):
        bars[k] = tables.bar[k][rest].astype(np.int64)
        rest = rest - tables.binomial[k][bars[k]]
    turned = [bars[ROW + k] - bars[ROW - 1] - 1 for k in range(ROW)]
    turned += [bars[PITS - 1] - bars[ROW - 1] + bars[k] for k in range(ROW)]
    return sum(tables.binomial[k][bar] for k, bar in enumerate(turned))


class _UnrankTables(NamedTuple):
    binomial: tuple[np.ndarray, ...]  # binomial[k][n] = C(n, k + 1) for every bar position n
    bar: tuple[np.ndarray, ...]  # bar[k][r] = the largest n with C(n, k + 1) <= r, k = 0 .. 4 (uint8)


@lru_cache(maxsize=4)
def _unrank_tables(index: BoardIndex) -> _UnrankTables:
    """What rotated looks up. Once p_(k+1) is found, what is left of the rank is below
    C(p_(k+1), k + 1), so bar[k] covers 0 .. C(total + 6, k + 1) - 1: 1.9 MB for 42 stones. The
    top bar, whose table would be as long as the index, is found by a binary search instead."""
    binomial = tuple(np.ascontiguousarray(index.binomial[:, k + 1]) for k in range(PITS))
    bar = tuple(
        (np.searchsorted(binomial[k], np.arange(comb(index.total + PITS, k + 1)), side="right") - 1).astype(np.uint8)
        for k in range(PITS - 1)
    )
    return _UnrankTables(binomial, bar)
