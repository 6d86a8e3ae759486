"""Perfect's choices near the cap (NearCap): a policy table's class of a position with fewer
plies left than its far_from, followed child by child down the solution's log of value changes
(two plies a call), for the exact outcomes (engine.exact) of perfect and its dials."""

from __future__ import annotations

import numpy as np

from engine.choice import pack_keys
from engine.policy import PolicyTable
from engine.rules import ROW
from engine.search import solution
from engine.values import Solved


class NearCap:
    """``table.classes_at(at, plies_left)`` for the calls of one propagation towards the cap:
    the plies left go down from call to call and ``at`` is a prefix of one array of positions
    that only grows (engine.exact: the positions not settled, most unsettled first), asked for
    twice a ply (by the chains by margin and by position).

    For perfect's values below far_from, where a position's class is the key of capture minus
    its children's values with k - 1 plies left, it follows each child's place in the solution's
    log (a cursor per child, stepped back as k goes down) and computes the keys of only the
    positions with a child whose value changed, or new to the prefix. Else it asks classes_at,
    remembering the last answer."""

    def __init__(self, table: PolicyTable) -> None:
        self.table = table
        self.asked: tuple[int, np.ndarray, np.ndarray] | None = None
        self.solved = isinstance(table.values, Solved) and not table.values.swept
        self.j = -1  # the children's plies left the cursors stand at
        empty = np.empty(0, dtype=np.int64)
        self.at, self.classes = empty, empty  # the positions followed, and their classes
        # Per position and pit: the child, the capture, the child's slice of the log [first, ...),
        # its cursor there (first - 1: before its first change) and its value without a change.
        self.child = self.captured = self.first = self.cursor = self.base = np.empty((0, ROW), dtype=np.int64)

    def __call__(self, at: np.ndarray, plies_left: int) -> np.ndarray:
        if self.asked is not None:
            k, before, classes = self.asked
            if k == plies_left and len(at) <= len(before) and np.array_equal(before[: len(at)], at):
                return classes[: len(at)]
        if self.solved and plies_left < self.table.far_from and self._follows(at, plies_left):
            classes = self._step(at, plies_left)
        else:
            classes = self.table.classes_at(at, plies_left)
        self.asked = (plies_left, at, classes)
        return classes

    def _follows(self, at: np.ndarray, plies_left: int) -> bool:
        """Whether the cursors can step to ``plies_left``: first use, or k lower and ``at`` the
        same positions and more."""
        if self.j < 0:
            return True
        return plies_left - 1 <= self.j and len(at) >= len(self.at) and np.array_equal(at[: len(self.at)], self.at)

    def _step(self, at: np.ndarray, plies_left: int) -> np.ndarray:
        solved, j = solution(self.table.rules), plies_left - 1
        plies, values = solved.change_plies, solved.change_values
        if self.j < 0 or len(at) > len(self.at):
            self._grow(at, j)
        if not len(self.at):
            return self.classes
        # Step each cursor back past the changes above j: at most a few per call.
        changed = np.zeros(len(self.at), dtype=bool)
        while True:
            back = (self.cursor >= self.first) & (plies[np.maximum(self.cursor, 0)] > j)
            if not back.any():
                break
            self.cursor[back] -= 1
            changed |= back.any(axis=1)
        self.j = j
        rows = np.flatnonzero(changed)
        if len(rows):
            self.classes[rows] = self._classes(rows, plies, values)
        return self.classes

    def _grow(self, at: np.ndarray, j: int) -> None:
        """Take in the positions of ``at`` beyond those followed, their cursors at ``j``."""
        solved, tables = solution(self.table.rules), self.table.tables
        new = at[len(self.at) :] if self.j >= 0 else at
        child = tables.child[new].astype(np.int64)
        safe = np.maximum(child, 0)
        first = solved.offsets[safe].astype(np.int64)
        end = solved.offsets[safe + 1].astype(np.int64)
        # the last change with plies <= j in each slice, by a binary search in every slice at once
        low, high = first.copy(), end.copy()
        plies = solved.change_plies
        while True:
            searching = low < high
            if not searching.any():
                break
            middle = np.minimum((low + high) // 2, max(len(plies) - 1, 0))
            right = searching & (plies[middle] <= j)
            low = np.where(right, middle + 1, low)
            high = np.where(searching & ~right, middle, high)
        cursor = low - 1
        base = solved._row_differences[safe].astype(np.int64)
        if self.j < 0:
            self.at, self.child, self.first, self.cursor, self.base = new, child, first, cursor, base
            self.captured = tables.captured[new].astype(np.int64)
            self.classes = np.empty(0, dtype=np.int64)
            self.classes = self._classes(np.arange(len(new)), solved.change_plies, solved.change_values)
        else:
            start = len(self.at)
            self.at = np.concatenate([self.at, new])
            self.child = np.concatenate([self.child, child])
            self.first = np.concatenate([self.first, first])
            self.cursor = np.concatenate([self.cursor, cursor])
            self.base = np.concatenate([self.base, base])
            self.captured = np.concatenate([self.captured, tables.captured[new].astype(np.int64)])
            self.classes = np.concatenate([self.classes, np.zeros(len(new), dtype=np.int64)])
            rows = np.arange(start, len(self.at))
            self.classes[rows] = self._classes(rows, solved.change_plies, solved.change_values)
        self.j = j

    def _classes(self, rows: np.ndarray, plies: np.ndarray, values: np.ndarray) -> np.ndarray:
        """The classes of the followed positions ``rows``, from their cursors."""
        cursor, first = self.cursor[rows], self.first[rows]
        value = np.where(cursor >= first, values[np.maximum(cursor, 0)].astype(np.int64), self.base[rows])
        child = self.child[rows]
        q = self.captured[rows] - value
        return self.table.classes_of_keys(pack_keys(child >= 0, q))
