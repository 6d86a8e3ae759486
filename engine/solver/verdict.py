"""A start's verdict under perfect play (first player wins, fair, second player wins) and what
decides it: play, or the ply cap (docs/remoteness.md).

``verdict(solution, lines, board)`` reads the strong solution and the remoteness of one rule
set at one start (South to move at ply 0): its value, its remoteness and longest value-optimal
line, whether play decides the verdict, the least cap from which its value no longer changes up
to the rule set's cap, and its value under a cap one ply shorter and one ply longer (parity).
``start_verdict(rules, tables, board)`` gives the same from the positions reachable from the
start alone, without the solution (the atlas's verdicts). ``analyse(board, mover, ply, rules)``
gives every legal move of a position its value, the value it loses, its remoteness and what
decides it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from engine.game import SOUTH, Board, Rules, apply_move, legal_moves, positions
from engine.solver.remoteness import AT_CAP, Remoteness, remoteness, start_lines
from engine.solver.solution import Solution, solve
from engine.tables import PositionTables, first_moves

PLAY, CAP = "play", "cap"  # what decides a verdict


@dataclass(frozen=True)
class Verdict:
    """What decides the value of one start (South to move at ply 0) under the rule set's cap."""

    value: int  # South's final total minus North's under perfect play
    remoteness: int | None  # plies to the end, the favoured side hurrying (None: the cap stops it)
    longest: int | None  # the longest value-optimal game (None: one reaches the cap)
    decided_by: str  # PLAY or CAP
    stable_from: int  # the least cap c such that the value is the same under every cap from c up
    value_one_less: int  # the value under a cap one ply shorter
    value_one_more: int  # ... and one ply longer

    def columns(self) -> dict[str, Any]:
        """The verdict as the columns of a table row (the fairness search's starts, the atlas's rows)."""
        return {
            "remoteness": self.remoteness,
            "longest_line": self.longest,
            "decided_by": self.decided_by,
            "stable_from_cap": self.stable_from,
            "value_cap_one_less": self.value_one_less,
            "value_cap_one_more": self.value_one_more,
        }

    @property
    def outcome(self) -> str:
        """ "first" (the first player wins), "fair" or "second"."""
        return "first" if self.value > 0 else "second" if self.value < 0 else "fair"


def verdict(solution: Solution, lines: Remoteness, board: Board | None = None) -> Verdict:
    """The verdict of ``board`` (default the rule set's start) as South's start; ``solution``
    and ``lines`` are those of one rule set and cap."""
    if solution.rules != lines.rules:
        raise ValueError(f"the solution is of {solution.rules.name} and the remoteness of {lines.rules.name}")
    board = positions(solution.rules).start if board is None else board
    cap = solution.cap
    by_cap = start_values(solution, board)  # caps 0 .. cap + 1
    remoteness, longest = lines.at(board, SOUTH, 0, solution), lines.longest_at(board, SOUTH, 0, solution)
    return _verdict_of(by_cap, remoteness, longest, cap)


def start_verdict(rules: Rules, tables: PositionTables, board: Board | None = None) -> Verdict:
    """The verdict of ``board`` (default the rule set's start) as South's start, as ``verdict``
    gives it, from the positions reachable from it alone (remoteness.start_lines: no solution and
    no remoteness of every position are built, nor kept)."""
    lines = start_lines(rules, tables, board)
    return _verdict_of(lines.values, int(lines.hurry[-1]), int(lines.longest[-1]), rules.ply_cap)


def _verdict_of(by_cap: np.ndarray, hurry: int | None, longest: int | None, cap: int) -> Verdict:
    """The verdict from the start's values under caps 0 .. cap + 1 and its R and L at ``cap``."""
    value = int(by_cap[cap])
    hurry = None if hurry is None or hurry >= AT_CAP else hurry
    longest = None if longest is None or longest >= AT_CAP else longest
    changed = np.flatnonzero(by_cap[: cap + 1] != value)
    return Verdict(
        value,
        hurry,
        longest,
        decided_by(value, hurry, longest),
        int(changed[-1]) + 1 if len(changed) else 0,
        int(by_cap[cap - 1]),
        int(by_cap[cap + 1]),
    )


def start_values(solution: Solution, board: Board) -> np.ndarray:
    """The value of ``board`` as South's start under every cap 0 .. solution.cap + 1 (int64): the
    children's values with one ply less are in the solution up to its cap."""
    rows = first_moves(solution.rules, board).start_rows  # cap 0: each keeps its row
    later = solution.first_move_values(board, np.arange(1, solution.cap + 2)).astype(np.int64)
    return np.concatenate([[rows], later])


def decided_by(value: int, remoteness: int | None, longest: int | None) -> str:
    """PLAY when the side ahead can end play before the cap (at a value of 0: when every
    value-keeping game ends), else CAP (docs/remoteness.md)."""
    return PLAY if (remoteness is not None if value else longest is not None) else CAP


# The columns of ``analyse``'s frame, in order.
MOVE_COLUMNS = ("pit", "captures", "value", "value_lost", "remoteness", "longest_line", "decided_by")


def analyse(
    board: Board,
    mover: int = SOUTH,
    ply: int = 0,
    rules: Rules | None = None,
    *,
    solution: Solution | None = None,
    lines: Remoteness | None = None,
) -> Any:
    """Every legal move of ``mover`` (0 South, 1 North) on ``board`` after ``ply`` plies under
    ``rules`` (default RULES.md's), as a polars DataFrame, a row a move, pits ascending:

        pit          the absolute pit played
        captures     the stones it captures (0 when the first move's forfeit gives them up)
        value        what it is worth to the mover under perfect play afterwards: its capture
                     minus the opponent's value of the position it leaves (the margin still to
                     come, RULES.md's "Perfect play")
        value_lost   the best move's value minus this one's (0: a best move)
        remoteness   the plies until play ends when this move is played and then both sides keep
                     to value-optimal moves, the side ahead hurrying (null: the cap stops it)
        longest_line the longest such game (null: one reaches the cap)
        decided_by   "play" or "cap": whether play or the ply cap decides the margin after it

    The solution and remoteness of ``rules`` are ``solution`` and ``lines`` when given, else they
    come from the engine's cache folder (built there the first time)."""
    import polars as pl  # the engine's one frame; polars is loaded only when asked for

    rules = Rules() if rules is None else rules
    moves = legal_moves(board, mover, ply, rules) if ply < rules.ply_cap else ()  # checks the arguments first
    solution = solve(rules, progress=False) if solution is None else solution
    lines = remoteness(rules, progress=False) if lines is None else lines
    seen_ply = ply + 1
    columns: dict[str, list[Any]] = {name: [] for name in MOVE_COLUMNS}
    for pit in moves:
        result = apply_move(board, mover, pit, ply, rules)
        child_value = solution.value(result.board, 1 - mover, seen_ply)
        after, longest = lines.at(result.board, 1 - mover, seen_ply), lines.longest_at(result.board, 1 - mover, seen_ply)
        columns["pit"].append(pit)
        columns["captures"].append(result.captured)
        columns["value"].append(result.captured - child_value)
        columns["remoteness"].append(None if after is None else after + 1)
        columns["longest_line"].append(None if longest is None else longest + 1)
        columns["decided_by"].append(decided_by(child_value, after, longest))
    best = max(columns["value"], default=0)
    columns["value_lost"] = [best - value for value in columns["value"]]
    schema = {
        "pit": pl.Int64,
        "captures": pl.Int64,
        "value": pl.Int64,
        "value_lost": pl.Int64,
        "remoteness": pl.Int64,
        "longest_line": pl.Int64,
        "decided_by": pl.String,
    }
    return pl.DataFrame(columns, schema=schema).select(MOVE_COLUMNS)
