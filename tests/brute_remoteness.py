"""A brute force of the value, remoteness and longest value-optimal line of every state of every
game from a rule set's start, written from docs/remoteness.md's definitions with the plain
reference implementation of RULES.md (tests/reference.py): it shares nothing with the engine.
It walks every game breadth first, a ply at a time, then computes each state back from the cap."""

from __future__ import annotations

import functools

import reference

from engine import Rules
from engine.solver import AT_CAP


class BruteForce:
    """Every state (board code, mover, ply) of every game from the start, capped at ``cap``,
    with its value (margin still to come), remoteness R and longest value-optimal line L."""

    def __init__(self, rules: Rules, cap: int) -> None:
        self.rules, self.cap = rules, cap
        uncapped = rules.replace(ply_cap=cap + 1)  # to ask whether a move exists at the cap
        start = reference.board_code(reference.start_board(rules))
        self.layers: list[set[tuple[int, int]]] = [{(start, 0)}]
        self.moves: dict[tuple[int, int, int], list[tuple[int, int]]] = {}  # (captured, child code) a move
        for ply in range(cap + 1):
            found = set()
            for board, mover in self.layers[ply]:
                results = reference.move_results(reference.board_from_code(board), mover, ply, uncapped)
                moves = [(result.captured, reference.board_code(result.board)) for result in results.values()]
                self.moves[board, mover, ply] = moves
                if ply < cap:
                    found.update((child, 1 - mover) for _, child in self.moves[board, mover, ply])
            if ply < cap:
                self.layers.append(found)
        self.value: dict[tuple[int, int, int], int] = {}
        self.hurry: dict[tuple[int, int, int], int] = {}
        self.longest: dict[tuple[int, int, int], int] = {}
        for ply in range(cap, -1, -1):
            for board, mover in self.layers[ply]:
                self._solve(board, mover, ply)

    def _solve(self, board: int, mover: int, ply: int) -> None:
        state = (board, mover, ply)
        cells = reference.board_from_code(board)
        moves = self.moves[state]
        if not moves or ply == self.cap:
            self.value[state] = reference.row_stones(cells, mover) - reference.row_stones(cells, 1 - mover)
            # RULES.md, "Ply cap": a game still going at the cap ends there, by the cap, even where
            # the mover would have had no legal move; before it, no move ends play.
            self.hurry[state] = self.longest[state] = AT_CAP if ply == self.cap else 0
            return
        scores = [(captured - self.value[child, 1 - mover, ply + 1], (child, 1 - mover, ply + 1)) for captured, child in moves]
        best = max(score for score, _ in scores)
        optimal = [after for score, after in scores if score == best]
        lines = [self.hurry[after] for after in optimal]
        # The favoured side hurries, the other delays; at a value of 0 both hurry.
        hurried = min(lines) if best >= 0 else max(lines)
        self.value[state] = best
        self.hurry[state] = min(hurried + 1, AT_CAP)
        self.longest[state] = min(max(self.longest[after] for after in optimal) + 1, AT_CAP)


@functools.cache
def brute_force(rules: Rules, cap: int) -> BruteForce:
    """BruteForce(rules, cap), once a session."""
    return BruteForce(rules, cap)
