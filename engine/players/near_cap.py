"""Perfect's choices near the cap: a policy table's class of a position with fewer plies left
than its far_from, the key of capture minus each child's value with one ply less
(``classes_from``), followed down the solution's log of value changes.

Two sweeps ask for them, in opposite directions: the exact outcomes (engine.exact.outcome) go from
the start towards the cap, plies left falling (``NearCap``); exploitability (engine.exact.exploit)
goes from the cap back to the start, plies left rising (``RisingNearCap``). Both are for
perfect and its dials, whose values come from the solution (``PolicyTable.follows_solution``).
"""

from __future__ import annotations

from typing import Protocol

import numpy as np

from engine.game import ROW
from engine.players.choice import pack_keys
from engine.players.policy import PolicyTable
from engine.players.search import solution
from engine.solver import distinct, slice_indices


class Reach(Protocol):
    """What RisingNearCap reads of the positions reachable from the start (engine.exact.exploit)."""

    positions: list[np.ndarray]  # per parity, the tables' numbers, ascending
    rows: list[np.ndarray]  # per parity, V_0: the mover's row minus the opponent's
    live: list[np.ndarray]  # per parity, the positions with a legal move
    child: list[np.ndarray]  # per parity, (3, n): each pit's child among the other parity (n: none)
    captured: list[np.ndarray]  # per parity, (3, n): each pit's capture
    size: list[int]

    def parents_of(self, parity: int, changed: np.ndarray) -> np.ndarray: ...


def classes_from(table: PolicyTable, legal: np.ndarray, q: np.ndarray) -> np.ndarray:
    """The classes of positions near the cap from their moves, (n, 3) each: which are legal and
    what each is worth, its capture minus the child's value with one ply less."""
    return table.classes_of_keys(pack_keys(legal, q))


class NearCap:
    """``table.classes_at(at, plies_left)`` for the calls of one propagation towards the cap:
    the plies left go down from call to call and ``at`` is a prefix of one array of positions
    that only grows (engine.exact.outcome: the positions not settled, most unsettled first), asked for
    twice a ply (by the chains by margin and by position).

    For perfect's values below far_from, where a position's class is the key of capture minus
    its children's values with k - 1 plies left, it follows each child's place in the solution's
    log (a cursor per child, stepped back as k goes down) and computes the keys of only the
    positions with a child whose value changed, or new to the prefix. Else it asks classes_at,
    remembering the last answer."""

    def __init__(self, table: PolicyTable) -> None:
        self.table = table
        self.asked: tuple[int, np.ndarray, np.ndarray] | None = None
        self.solved = table.follows_solution
        self.j = -1  # the children's plies left the cursors stand at
        empty = np.empty(0, dtype=np.int64)
        self.at, self.classes = empty, empty  # the positions followed, and their classes
        # Per position and pit: the child, the capture, the child's slice of the log [first, ...),
        # its cursor there (first - 1: before its first change), the ply of the change the cursor
        # stands at (-1 before the first) and the child's value without a change.
        self.child = self.captured = self.first = self.cursor = self.base = np.empty((0, ROW), dtype=np.int64)
        self.held = np.empty((0, ROW), dtype=np.int32)

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
        # Step each cursor back past the changes above j: at most a few per call, and only the
        # cursors at a change above j move (``held``: the ply of the change each stands at).
        cursor, first, held = self.cursor.reshape(-1), self.first.reshape(-1), self.held.reshape(-1)
        moving = np.flatnonzero(held > j)
        changed = np.zeros(len(self.at), dtype=bool)
        changed[moving // ROW] = True
        while len(moving):
            cursor[moving] -= 1
            held[moving] = _ply_at(plies, cursor[moving], first[moving])
            moving = moving[held[moving] > j]
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
        held = _ply_at(plies, cursor, first)
        base = solved._row_differences[safe].astype(np.int64)
        if self.j < 0:
            self.at, self.child, self.first, self.cursor, self.held, self.base = new, child, first, cursor, held, base
            self.captured = tables.captured[new].astype(np.int64)
            self.classes = np.empty(0, dtype=np.int64)
            self.classes = self._classes(np.arange(len(new)), solved.change_plies, solved.change_values)
        else:
            start = len(self.at)
            self.at = np.concatenate([self.at, new])
            self.child = np.concatenate([self.child, child])
            self.first = np.concatenate([self.first, first])
            self.cursor = np.concatenate([self.cursor, cursor])
            self.held = np.concatenate([self.held, held])
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
        return classes_from(self.table, child >= 0, self.captured[rows] - value)


def _ply_at(plies: np.ndarray, cursor: np.ndarray, first: np.ndarray) -> np.ndarray:
    """The ply of the log's change at each cursor (int32), -1 for a cursor before its slice's first."""
    return np.where(cursor >= first, plies[np.maximum(cursor, 0)].astype(np.int32), np.int32(-1))


class RisingNearCap:
    """Perfect's classes near the cap for a sweep that starts at the cap and goes away from it
    (engine.exact.exploit: plies left rising from 1), at the positions of one parity of a reach (the
    positions reachable from the start, numbered per parity), from V_(k-1) of the children kept
    ply by ply.

    The solution's log (engine.solver.solution) is position major; here it is turned ply major for the
    children (the other parity's positions): ``owners[bounds[j] .. bounds[j + 1]]`` change value
    at j (1 <= j <= far_from - 2), to ``new_values`` of the same slice.
    """

    def __init__(self, policy: PolicyTable, reach: Reach, parity: int) -> None:
        self.policy, self.reach, self.parity = policy, reach, parity
        solved = solution(policy.rules)
        children = reach.positions[1 - parity]
        self.values = np.append(reach.rows[1 - parity].astype(np.int64), 0)  # V_0 of each child; an illegal pit
        self.held = 0  # self.values holds V_held
        self.first = True
        last = policy.far_from - 2  # the largest j = k - 1 read below far_from
        starts = solved.offsets[children].astype(np.int64)
        lengths = solved.offsets[children + 1].astype(np.int64) - starts
        entries = slice_indices(starts, lengths)
        owners = np.repeat(np.arange(len(children), dtype=np.int32), lengths)
        plies = solved.change_plies[entries]
        kept = plies <= last
        order = np.argsort(plies[kept], kind="stable")
        self.owners = owners[kept][order]
        self.new_values = solved.change_values[entries[kept][order]].astype(np.int64)
        self.bounds = np.searchsorted(plies[kept][order], np.arange(max(last, 0) + 2))  # the first entry at ply >= j

    def update(self, plies_left: int) -> tuple[np.ndarray, np.ndarray]:
        """The positions whose class may have changed since the last update, and their classes
        with ``plies_left``: those with a child whose value changed."""
        changed = []
        for j in range(self.held + 1, plies_left):
            at = slice(self.bounds[j], self.bounds[j + 1])
            self.values[self.owners[at]] = self.new_values[at]
            changed.append(self.owners[at])
        self.held = plies_left - 1
        if self.first:
            self.first = False
            rows = self.reach.live[self.parity]
        else:
            rows = self.reach.parents_of(self.parity, distinct(np.concatenate(changed or [np.empty(0, np.int32)])))
        child = self.reach.child[self.parity][:, rows]
        q = self.reach.captured[self.parity][:, rows].astype(np.int64) - self.values[child]
        return rows, classes_from(self.policy, (child < self.reach.size[1 - self.parity]).T, q.T)
