"""The values of the moves of every position, by which each table strategy chooses: what
engine.players.policy folds into a strategy's policy table. Each strategy says which it uses
(engine.players.base.EngineStrategy.policy_values); they meet engine.players.base.PolicyValues.

``q(captured, child, plies_left)`` is the value of each move of a set of positions (a row a
position, a column a pit in the mover's view, ``child`` -1 where the pit has no move, masked by
the caller) with ``plies_left`` plies to the cap; the strategy plays among the best (its rule:
engine.players.choice). ``far_from``: from so many plies left on, the values no longer change.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

import numpy as np

from engine.game import Rules
from engine.solver import Remoteness, Solution, ValueLog, per_position, sweep_values
from engine.tables import PositionTables, row_stones

HEURISTIC_WEIGHT = 128  # above any row: a board holds at most 63 stones


class Zero:
    """Every move alike: random."""

    spec, far_from = "random", 1

    def q(self, captured: np.ndarray, child: np.ndarray, plies_left: int) -> np.ndarray:
        return np.zeros(captured.shape, dtype=np.int64)


class Captures:
    """The capture now: greedy."""

    spec, far_from = "greedy", 1

    def q(self, captured: np.ndarray, child: np.ndarray, plies_left: int) -> np.ndarray:
        return captured


class Heuristic:
    """engine.players.search.HeuristicStrategy's score as one number: the capture now minus the largest
    capture the opponent can answer with (none at the last ply), then the mover's row after the move."""

    spec, far_from = "heuristic", 2

    def __init__(self, tables: PositionTables) -> None:
        self.reply = tables.captured.max(axis=1).astype(np.int64)  # an illegal pit captures 0
        self.rows_after = row_stones(tables.index)[1].astype(np.int64)  # the child's opponent row: the mover's

    def q(self, captured: np.ndarray, child: np.ndarray, plies_left: int) -> np.ndarray:
        reply = self.reply[child] if plies_left > 1 else 0  # child -1 (no move) is masked by the key
        q: np.ndarray = HEURISTIC_WEIGHT * (captured - reply) + self.rows_after[child]
        return q


class Solved:
    """capture - V_j(child), j = min(plies left - 1, ``top``): alphabeta's values from its sweeps
    (``sweeps``, made on first use unless a cache file brought them), perfect's from the solution
    (``solution``, the function that loads it; None for swept values)."""

    def __init__(
        self,
        spec: str,
        far_from: int,
        top: int,
        tables: PositionTables,
        rules: Rules,
        solution: Callable[[Rules], Solution] | None = None,
    ) -> None:
        self.spec, self.far_from, self.top = spec, far_from, top
        self.tables, self.rules, self.solution = tables, rules, solution
        self.sweeps: ValueLog | None = None
        self.held: dict[int, np.ndarray] = {}  # V_j of every position, for a pass over all of them

    hurries = False  # perfect(ties=hurry)'s values (Hurried) break ties by remoteness

    @property
    def swept(self) -> bool:
        return self.solution is None

    def hold(self, j: int) -> None:
        """Keep V_j of every position for the calls of ``q`` at j (a pass over every position)."""
        self.held = {j: np.append(self.values_of(np.arange(self.tables.size), j), np.int8(0))}

    def release(self) -> None:
        self.held = {}

    def changing(self, low: int, high: int) -> np.ndarray:
        """Which positions (and a last entry, False, for child -1) change value at some j,
        low < j <= high: one pass over the solution's log."""
        assert self.solution is not None
        solved = self.solution(self.rules)
        return _changing(solved.change_plies, solved.offsets, low, high)

    def _last_changes(self, far: int) -> np.ndarray:
        """Each position's last change of value at j <= ``far`` (0 for none), int16."""
        assert self.solution is not None
        solved = self.solution(self.rules)
        return _last_changes(solved.change_plies, solved.offsets, far)

    def q(self, captured: np.ndarray, child: np.ndarray, plies_left: int) -> np.ndarray:
        j = min(plies_left - 1, self.top)
        held = self.held.get(j)
        values = held[child] if held is not None else self.values_of(np.maximum(child, 0), j)
        return captured - values.astype(np.int64)

    def settled_from(self) -> np.ndarray:
        """For perfect's values (not swept): each position's least plies left k >= 1 such that no
        child's value changes between k - 1 plies left and the far class's (PolicyTable.settled);
        one pass over the solution's log, int16."""
        far = min(max(self.far_from, self.rules.ply_cap - 1) - 1, self.top)  # the j of the far class
        last = np.append(self._last_changes(far), np.int16(0))  # child -1: no move
        child = self.tables.child
        settled: np.ndarray = np.maximum(np.maximum(last[child[:, 0]], last[child[:, 1]]), last[child[:, 2]]) + 1
        return settled

    def walk(self, ks: range) -> Iterator[int]:
        """Each k of ``ks`` (ascending) in turn, with V_j of every position held for ``q`` at
        j = min(k - 1, top): perfect's values come from one pass over the solution's log
        (Solution.walk_values) instead of a search of it at each k. Swept values search."""
        js = [min(k - 1, self.top) for k in ks]
        if self.solution is None or not js:
            yield from ks
            return
        walker = self.solution(self.rules).walk_values(js[0], js[-1])
        current, j = next(walker), js[0]
        try:
            for k, wanted in zip(ks, js, strict=True):
                while j < wanted:
                    current, j = next(walker), j + 1
                self.held = {wanted: current}
                yield k
        finally:
            self.held = {}

    def values_of(self, indices: np.ndarray, j: int) -> np.ndarray:
        if self.solution is not None:
            return self.solution(self.rules).values_of(indices, j)
        if self.sweeps is None:
            self.sweeps = sweep_values(self.tables, self.top)
        return self.sweeps.values_of(indices, j)


# q of perfect(ties=hurry): the value of a move in units above any tie-break of remoteness.
HURRY_WEIGHT = 1 << 16


class Hurried(Solved):
    """perfect's values with ties broken by remoteness (engine.solver.remoteness): among the
    moves of best value, the least remoteness of the child where the position's value favours
    the mover or is 0, the greatest where it favours the opponent (AT_CAP, a line the cap
    stops, is the most remote):

        q = HURRY_WEIGHT * (capture - V_j(child)) - R_j(child)   value of the best move >= 0
        q = HURRY_WEIGHT * (capture - V_j(child)) + R_j(child)   value of the best move < 0

    A position's class changes where a child's value or remoteness does, so the far class, the
    positions that vary and those settled read both logs."""

    hurries = True

    def __init__(
        self,
        spec: str,
        far_from: int,
        top: int,
        tables: PositionTables,
        rules: Rules,
        solution: Callable[[Rules], Solution],
        lines: Callable[[Rules], Remoteness],
    ) -> None:
        super().__init__(spec, far_from, top, tables, rules, solution)
        self.lines = lines
        self.held_lines: dict[int, np.ndarray] = {}

    def q(self, captured: np.ndarray, child: np.ndarray, plies_left: int) -> np.ndarray:
        value = super().q(captured, child, plies_left)
        j = min(plies_left - 1, self.top)
        held = self.held_lines.get(j)
        lines = held[child] if held is not None else self.lines(self.rules).of(np.maximum(child, 0), j)
        best = np.where(child >= 0, value, np.iinfo(np.int64).min).max(axis=-1, keepdims=True)
        tie = np.where(best >= 0, -lines.astype(np.int64), lines.astype(np.int64))
        q: np.ndarray = HURRY_WEIGHT * value + tie
        return q

    def hold(self, j: int) -> None:
        super().hold(j)
        self.held_lines = {j: np.append(self.lines(self.rules).of(np.arange(self.tables.size), j), np.int16(0))}

    def release(self) -> None:
        super().release()
        self.held_lines = {}

    def changing(self, low: int, high: int) -> np.ndarray:
        found = self.lines(self.rules)
        changes: np.ndarray = super().changing(low, high) | _changing(found.change_plies, found.offsets, low, high)
        return changes

    def _last_changes(self, far: int) -> np.ndarray:
        found = self.lines(self.rules)
        last: np.ndarray = np.maximum(super()._last_changes(far), _last_changes(found.change_plies, found.offsets, far))
        return last


def _changing(plies: np.ndarray, offsets: np.ndarray, low: int, high: int) -> np.ndarray:
    """Which positions of a position-major log change at some j, low < j <= high, and False for child -1."""
    changes = per_position(np.logical_or, lambda at: (at > low) & (at <= high), plies, offsets, False)
    return np.append(changes, False)


def _last_changes(plies: np.ndarray, offsets: np.ndarray, far: int) -> np.ndarray:
    """Each position's last change at j <= ``far`` in a position-major log (0 for none), int16."""
    return per_position(np.maximum, lambda at: np.where(at <= far, at, 0).astype(np.int16), plies, offsets, 0)
