"""Memoised positions: each board (seen by the mover) analysed once per rule set.

The game loop asks for a position's options again and again; the answer depends only on
the board (and, on the first move, on the forfeit), so it is computed once and kept in a
dict keyed by the board int.
"""

from __future__ import annotations

from functools import lru_cache
from typing import NamedTuple

from engine.game.board import NORTH, SOUTH, Board, row_stones
from engine.game.events import SHIFT
from engine.game.moves import MoveLookups, Option, end_event, move_lookups, options, start_board
from engine.game.rules import Rules
from engine.store import per_rule_set


class Position(NamedTuple):
    """What a strategy sees: the board (absolute pits), who moves, and the legal moves."""

    board: Board
    mover: int
    ply: int
    rules: Rules
    moves: tuple[int, ...]  # absolute pits, ascending
    options: tuple[Option, ...]  # the same moves in the mover's view (this module's memo)


# A dict entry costs about 400 bytes; past this many the memo starts afresh, so that
# memory stays near 1 GiB however many games are played.
MEMO_LIMIT = 2_500_000


class Positions:
    """The memo of one rule set."""

    def __init__(self, rules: Rules) -> None:
        self.rules = rules
        self.name = rules.name
        self.lookups: MoveLookups = move_lookups(rules)
        self.later: dict[Board, tuple[Option, ...]] = {}
        self.first: dict[Board, tuple[Option, ...]] = {}
        self.finals: dict[Board, tuple[int, int, int]] = {}
        self.start = start_board(rules)

    def options(self, board: Board, ply: int) -> tuple[Option, ...]:
        """The legal options of the mover in ``board`` (mover's view) at this ply."""
        memo = self.first if ply == 0 else self.later
        found = memo.get(board)
        return found if found is not None else self.expand(board, ply == 0)

    def expand(self, board: Board, first: bool = False) -> tuple[Option, ...]:
        memo = self.first if first else self.later
        if len(memo) >= MEMO_LIMIT:
            memo.clear()
        found = memo[board] = options(board, first and self.rules.first_move_forfeit, self.lookups)
        return found

    def final(self, board: Board) -> tuple[int, int, int]:
        """A last position (mover's view): its packed end event, had the mover no legal
        move, and the stones left in the mover's and the opponent's rows."""
        found = self.finals.get(board)
        if found is None:
            ended = 0 if self.options(board, 1) else 1 << SHIFT[end_event(board, self.rules)]
            found = self.finals[board] = (ended, row_stones(board, SOUTH), row_stones(board, NORTH))
        return found


@per_rule_set
@lru_cache(maxsize=64)
def positions(rules: Rules) -> Positions:
    return Positions(rules)
