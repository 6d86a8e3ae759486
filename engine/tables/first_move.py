"""Ply 0: the one move the position tables do not hold.

With ``first_move_forfeit`` the first move captures nothing (RULES.md, "A turn", step 4):
its chain is sown but its stones stay on the board, so its children, captures and events
are not the start's row of ``engine.tables.positions``. The scalar engine applies the forfeit
(``engine.game.options``, ply 0); this module turns its answer into the table numbers that
the solver, the exact chain, exploitability, the policy tables, batched play, replay and
batched MCTS read, once per rule set and start, so that none of them handles the forfeit
itself.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from engine.game import PIT_BITS, PITS, ROW, Board, Option, Rules, positions, row_difference, unpack
from engine.store import per_rule_set
from engine.tables.index import board_index


@dataclass(frozen=True)
class FirstMoves:
    """The legal first moves of one start, ascending by pit (the mover's view, South's row)."""

    board: Board  # the start, seen by the mover
    start: int  # its number in the tables
    start_rows: int  # the mover's row minus the opponent's at the start: the score if no move is legal
    options: tuple[Option, ...]  # the scalar engine's, forfeit applied
    pits: np.ndarray  # (k,) int64
    children: np.ndarray  # (k,) int64, each move's child (the next mover's view) in the tables
    captured: np.ndarray  # (k,) int64, stones each move captures (0 when forfeited)
    events: tuple[int, ...]  # each move's packed events (engine.game.events)

    def by_pit(self) -> tuple[np.ndarray, np.ndarray]:
        """The child (-1 where the pit is not legal) and the capture of each of the three pits."""
        child = np.full(ROW, -1, dtype=np.int64)
        captured = np.zeros(ROW, dtype=np.int64)
        child[self.pits], captured[self.pits] = self.children, self.captured
        return child, captured


@per_rule_set
@lru_cache(maxsize=64)
def first_moves(rules: Rules, board: Board | None = None) -> FirstMoves:
    """The first moves of ``rules`` from ``board`` (the mover's view; the rule set's start when
    None), as the scalar engine plays them at ply 0."""
    memo = positions(rules)
    board = memo.start if board is None else board
    options = memo.options(board, 0)
    index = board_index(rules.total_stones)
    return FirstMoves(
        board,
        index.rank(board),
        row_difference(board),
        options,
        np.array([option.pit for option in options], dtype=np.int64),
        np.array([index.rank(option.child) for option in options], dtype=np.int64),
        np.array([option.captured for option in options], dtype=np.int64),
        tuple(option.events for option in options),
    )


def checked_start(rules: Rules, board: Board | None) -> Board | None:
    """``board`` as a start of ``rules`` (None: the rule set's own), or a one-line ValueError:
    a start holds the rule set's stones, at most PIT_LIMIT a pit."""
    if board is None:
        return None
    if not isinstance(board, int) or isinstance(board, bool) or board < 0 or board >> (PIT_BITS * PITS):
        raise ValueError(f"a start is a board code (engine.pack), not {board!r}")
    stones = unpack(board)
    if sum(stones) != rules.total_stones:
        raise ValueError(f"the start {list(stones)} holds {sum(stones)} stones; {rules.name} plays with {rules.total_stones}")
    return board
