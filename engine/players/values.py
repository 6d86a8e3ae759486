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
from engine.solver import Solution, ValueLog, per_position, sweep_values
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

    @property
    def swept(self) -> bool:
        return self.solution is None

    def q(self, captured: np.ndarray, child: np.ndarray, plies_left: int) -> np.ndarray:
        j = min(plies_left - 1, self.top)
        held = self.held.get(j)
        values = held[child] if held is not None else self.values_of(np.maximum(child, 0), j)
        return captured - values.astype(np.int64)

    def settled_from(self) -> np.ndarray:
        """For perfect's values (not swept): each position's least plies left k >= 1 such that no
        child's value changes between k - 1 plies left and the far class's (PolicyTable.settled);
        one pass over the solution's log, int16."""
        assert self.solution is not None
        solved = self.solution(self.rules)
        far = min(max(self.far_from, self.rules.ply_cap - 1) - 1, self.top)  # the j of the far class
        # each position's last change up to there
        last = per_position(
            np.maximum, lambda plies: np.where(plies <= far, plies, 0).astype(np.int16), solved.change_plies, solved.offsets, 0
        )
        last = np.append(last, np.int16(0))  # child -1: no move
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
