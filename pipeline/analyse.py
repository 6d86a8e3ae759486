"""``modiar analyse``: every legal move of a position with its value, the value it loses, its
remoteness and what decides it (engine.analyse); and the same as hints in ``modiar play``."""

from __future__ import annotations

import functools
import re

import engine
from engine.game import PLAYER_NAMES
from engine.solver import PLAY, decided_by

BOARD_HELP = (
    "the six pits' stones, South's pits 0 1 2 then North's 3 4 5 (the order of sowing), e.g. \"7 7 7 / 7 7 7\" or 6,7,8,7,7,7"
)


def parse_counts(text: str, rules: engine.Rules) -> engine.Board:
    """The board of six counts written as BOARD_HELP says; ValueError in one line naming the problem."""
    words = [word for word in re.split(r"[\s,/]+", text.strip()) if word]
    if len(words) != engine.game.PITS or not all(word.isdigit() for word in words):
        raise ValueError(f"a board is six whole numbers, {BOARD_HELP}; not {text!r}")
    counts = [int(word) for word in words]
    if any(count > engine.game.PIT_LIMIT for count in counts):
        raise ValueError(f"a pit holds at most {engine.game.PIT_LIMIT} stones, not {max(counts)} (board {text!r})")
    if sum(counts) > rules.total_stones:
        raise ValueError(f"board {text!r} holds {sum(counts)} stones; {rules.name} has {rules.total_stones}")
    return engine.pack(counts)


def analysis_lines(board: engine.Board, mover: int, ply: int, rules: engine.Rules, *, picture: bool = True) -> list[str]:
    """The position's value and remoteness, and a table of its moves (engine.analyse), in lines."""
    solution, lines = _solved(rules)
    name, other = PLAYER_NAMES[mover], PLAYER_NAMES[1 - mover]
    played = "1 ply" if ply == 1 else f"{ply} plies"
    said = [f"{rules.name}, {name} to move after {played} (cap {rules.ply_cap}):"]
    if picture:
        said.append(engine.render(board))
    if ply >= rules.ply_cap:
        return [*said, "the cap is reached: no move is legal"]
    value = solution.value(board, mover, ply)
    moves = engine.analyse(board, mover, ply, rules, solution=solution, lines=lines)
    if not moves.height:
        return [*said, f"{name} has no legal move: play has ended ({name}'s row minus {other}'s: {value:+d})"]
    hurry, longest = lines.at(board, mover, ply), lines.longest_at(board, mover, ply)
    ahead = name if value > 0 else other if value < 0 else "neither side"
    said.append(
        f"value {value:+d} to {name} under perfect play (the margin still to come): {ahead} ahead, "
        f"decided by {'play' if decided_by(value, hurry, longest) == PLAY else 'the cap'}"
    )
    said.append(
        f"remoteness {_plies(hurry)} (the side ahead hurrying, the other delaying); "
        f"the longest value-keeping game {_plies(longest)}"
    )
    said.append("  pit  captures  value  lost  remoteness  longest  decided by")
    for row in moves.iter_rows(named=True):
        said.append(
            f"  {row['pit']:>3}  {row['captures']:>8}  {row['value']:>+5d}  {row['value_lost']:>4}  "
            f"{_cell(row['remoteness']):>10}  {_cell(row['longest_line']):>7}  "
            f"{'play' if row['decided_by'] == PLAY else 'cap'}"
        )
    return said


@functools.lru_cache(maxsize=1)
def _solved(rules: engine.Rules) -> tuple[engine.Solution, engine.Remoteness]:
    """The solution and remoteness of ``rules``, read once for all the positions of a game
    (``modiar play --hints`` asks after every move; each file is hundreds of MB)."""
    return engine.solve(rules, progress=False), engine.remoteness(rules, progress=False)


def value_lost(solution: engine.Solution, board: engine.Board, mover: int, ply: int, pit: int) -> int:
    """How many stones of value the move ``pit`` gives up against a best move (0: a best move)."""
    values = solution.move_values(board, mover, ply)
    moves = engine.legal_moves(board, mover, ply, solution.rules)
    return max(values) - values[moves.index(pit)]


def _plies(plies: int | None) -> str:
    return "none: the cap stops it" if plies is None else f"{plies} plies"


def _cell(plies: int | None) -> str:
    return "cap" if plies is None else str(plies)
