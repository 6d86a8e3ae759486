"""The sums each state of engine.exact_quality carries, and one parity's ply of them.

A state's sums (a row of SUMS columns, module engine.exact.quality says what each holds) move
through the graph's sparse products as its mass does. ``Side`` is one parity's states of the
graph (engine.exact.graph.Graph) with the terms of their positions far from the cap
(engine.exact.judge): a ply adds every state's terms from those, corrects the positions whose
children's values or mover's chances still change at that ply, adds the ply to the sums
(``visit_rows``) and moves them a ply on. ``Side.restrict`` keeps the states that hold the mass in a
long tail (engine.exact.thinning), the products then running over their moves only.
"""

from __future__ import annotations

import copy
from typing import Protocol

import numpy as np
from scipy import sparse

from engine.exact.graph import Graph
from engine.exact.judge import Judge, forecasts, lead_changes, position_terms

# The sums of a state, in this order (engine.exact.quality's module docstring).
MASS, BEHIND, BEHIND_BY, NEVER_BEHIND, LAST_OFF = 0, 1, 3, 5, 7
SUMS = 10


class Stepped(Protocol):
    """The moves a Side steps by: one parity's of the whole graph (engine.exact.graph) or of the
    states kept in a tail (engine.exact.tail.Kept, whose corrected moves may lead to -1: a
    state not kept)."""

    all: sparse.csr_array
    ended: np.ndarray

    def corrected(self, ply: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]: ...


class Sink(Protocol):
    """What a Side reads of its propagation (engine.exact.quality) and adds to it."""

    cap: int
    captured: np.ndarray
    rows: np.ndarray
    judges: list[Judge]
    totals: dict[str, float]
    curves: dict[str, np.ndarray]

    def read_ends(self, sums: np.ndarray, final: np.ndarray, ply: int) -> None: ...

    def add_terms(self, terms: np.ndarray, ply: int) -> None: ...


class Marks:
    """What a ply adds to the sums of states whose forecasts have signs ``sign`` and sizes ``size``."""

    def __init__(self, sign: np.ndarray, size: np.ndarray) -> None:
        self.south_behind = (sign < 0).astype(float)
        self.north_behind = (sign > 0).astype(float)
        self.south_by = self.south_behind * size
        self.north_by = self.north_behind * size
        self.south_never = 1 - self.south_behind
        self.north_never = 1 - self.north_behind
        self.off = [sign != w for w in (-1, 0, 1)]


class RowMarks:
    """Marks as blocks of columns, for sums kept a row per state: what the ply adds to BEHIND and
    BEHIND_BY (per unit of mass), what NEVER_BEHIND keeps, and where LAST_OFF starts again."""

    def __init__(self, marks: Marks) -> None:
        self.add = np.column_stack([marks.south_behind, marks.north_behind, marks.south_by, marks.north_by])
        self.keep = np.column_stack([marks.south_never, marks.north_never])
        self.off = np.column_stack(marks.off)

    def subset(self, rows: np.ndarray) -> RowMarks:
        kept = copy.copy(self)
        kept.add, kept.keep, kept.off = self.add[rows], self.keep[rows], self.off[rows]
        return kept


def visit_rows(sums: np.ndarray, mass: np.ndarray, marks: RowMarks, ply: int) -> None:
    """Add ply ``ply`` to the sums of states a row each (states, SUMS), ``mass`` their first column."""
    sums[:, BEHIND:NEVER_BEHIND] += mass[:, None] * marks.add
    sums[:, NEVER_BEHIND:LAST_OFF] *= marks.keep
    np.copyto(sums[:, LAST_OFF:], (mass * (ply + 1))[:, None], where=marks.off)


class Side:
    """One parity's states in the graph, with their far terms (engine.exact.judge)."""

    def __init__(self, run: Sink, graph: Graph, parity: int) -> None:
        self.run, self.parity, self.south = run, parity, parity == 0
        self.moves: Stepped = graph.moves[parity]
        judge = self.judge = run.judges[parity]
        position = graph.position[parity].astype(np.int64)
        self.margin = 2 * graph.s[parity].astype(np.int64) - run.captured[position]
        starts = np.flatnonzero(np.r_[True, position[1:] != position[:-1]]) if len(position) else np.empty(0, np.int64)
        self.first = np.append(starts, len(position))  # each position's states: first[u] .. first[u + 1]
        self.at = position[starts]
        self.owner = np.repeat(np.arange(len(starts)), np.diff(self.first))
        far = judge.moves(self.at, run.cap, far=True)
        far_chances = judge.chances(self.at, run.cap, far=True)
        self.terms = position_terms(far, far_chances)
        self.forecast = forecasts(far, self.owner, self.margin, self.south).astype(float)
        self.changes = lead_changes(far, far_chances, self.owner, self.forecast, self.south)
        self.squares = self.forecast**2
        marks = Marks(np.sign(self.forecast), np.abs(self.forecast))
        self.south_ahead, self.north_ahead = marks.north_behind, marks.south_behind
        self.marks = RowMarks(marks)
        self.dirty = judge.dirty_from(self.at)
        self._order()
        self.rows = run.rows[position]

    def _order(self) -> None:
        self.order = np.argsort(-self.dirty, kind="stable")  # the positions that change first, first
        self.dirty_below = self.dirty[self.order]
        self.lengths = np.diff(self.first)

    def restrict(self, ids: np.ndarray, moves: Stepped) -> Side:
        """This side over the states ``ids`` only (ascending numbers), moved by ``moves``."""
        kept = copy.copy(self)
        kept.moves = moves
        owner = self.owner[ids]
        starts = np.flatnonzero(np.r_[True, owner[1:] != owner[:-1]]) if len(ids) else np.empty(0, np.int64)
        positions = owner[starts]
        kept.first = np.append(starts, len(ids))
        kept.owner = np.repeat(np.arange(len(starts)), np.diff(kept.first))
        kept.at, kept.terms, kept.dirty = self.at[positions], self.terms[positions], self.dirty[positions]
        for name in ("margin", "forecast", "changes", "squares", "south_ahead", "north_ahead", "rows"):
            setattr(kept, name, getattr(self, name)[ids])
        kept.marks = self.marks.subset(ids)
        kept._order()
        return kept

    def step(self, sums: np.ndarray, ply: int) -> np.ndarray:
        """Ply ``ply`` of this parity's states, their sums a row each (states, SUMS): the sums a ply on."""
        run, moves = self.run, self.moves
        plies_left = run.cap - ply
        mass = sums[:, MASS].copy()
        ended = moves.ended
        if len(ended):  # games over: their forecast is their final margin
            run.read_ends(sums[ended].T, self.margin[ended] + signed_rows(self.rows[ended], ply), ply)
        per_position = np.add.reduceat(mass, self.first[:-1]) if len(mass) else mass
        run.add_terms(per_position @ self.terms, ply)
        run.totals["lead_changes"] += float(mass @ self.changes)
        self._curves(mass, ply)
        count = int(np.searchsorted(-self.dirty_below, -plies_left, side="left"))
        dirty = np.sort(self.order[:count])
        dirty = dirty[per_position[dirty] > 0]
        saved = None
        if len(dirty):  # positions whose terms differ from the far ones at this ply
            states = _ranges(self.first, dirty)
            saved = self._correct(sums, mass, per_position, dirty, states, ply)
        visit_rows(sums, mass, self.marks, ply)
        if saved is not None:
            sums[states] = saved
        return self._moved(sums, mass, ply)

    def _curves(self, mass: np.ndarray, ply: int) -> None:
        curves = self.run.curves
        curves["in_play"][ply] += float(mass.sum())
        curves["forecast"][ply] += float(mass @ self.forecast)
        curves["forecast_squares"][ply] += float(mass @ self.squares)
        curves["south_ahead"][ply] += float(mass @ self.south_ahead)
        curves["north_ahead"][ply] += float(mass @ self.north_ahead)

    def _correct(
        self, sums: np.ndarray, mass: np.ndarray, per_position: np.ndarray, dirty: np.ndarray, states: np.ndarray, ply: int
    ) -> np.ndarray:
        """Correct the terms of the positions ``dirty`` (their states ``states``) to their values
        at ``ply``; their states' sums with the ply added, to put back after the far visit."""
        run, plies_left = self.run, self.run.cap - ply
        owner = np.repeat(np.arange(len(dirty)), self.lengths[dirty])
        now = self.judge.moves(self.at[dirty], plies_left)
        chances = self.judge.chances(self.at[dirty], plies_left)
        run.add_terms(per_position[dirty] @ (position_terms(now, chances) - self.terms[dirty]), ply)
        exact = forecasts(now, owner, self.margin[states], self.south).astype(float)
        changes = lead_changes(now, chances, owner, exact, self.south)
        here = mass[states]
        run.totals["lead_changes"] += float(here @ (changes - self.changes[states]))
        curves = run.curves
        curves["forecast"][ply] += float(here @ (exact - self.forecast[states]))
        curves["forecast_squares"][ply] += float(here @ (exact**2 - self.squares[states]))
        curves["south_ahead"][ply] += float(here @ ((exact > 0) - self.south_ahead[states]))
        curves["north_ahead"][ply] += float(here @ ((exact < 0) - self.north_ahead[states]))
        saved: np.ndarray = sums[states]
        visit_rows(saved, here, RowMarks(Marks(np.sign(exact), np.abs(exact))), ply)
        return saved

    def _moved(self, sums: np.ndarray, mass: np.ndarray, ply: int) -> np.ndarray:
        """The sums a ply on: the far matrix's product, and the moves whose chances differ at
        ``ply`` corrected (those to states not kept, in a tail, were set aside before)."""
        moves = self.moves
        matrix = moves.all
        after: np.ndarray = matrix @ sums
        start, to, delta, _ = moves.corrected(ply)
        moving = np.flatnonzero(mass[start] * (to >= 0)) if len(start) else start
        if len(moving):
            start, to, delta = start[moving], to[moving], delta[moving]
            after += sparse.csr_array((delta, (to, start)), shape=matrix.shape) @ sums
        return after


def signed_rows(rows: np.ndarray, ply: int) -> np.ndarray:
    """The mover's row minus the opponent's, to South's side (South moves at even plies)."""
    return rows if ply % 2 == 0 else -rows


def _ranges(first: np.ndarray, at: np.ndarray) -> np.ndarray:
    """The states of the positions ``at``: first[u] .. first[u + 1] for each, in order."""
    lengths = first[at + 1] - first[at]
    before = np.cumsum(lengths) - lengths
    ranges: np.ndarray = np.arange(int(lengths.sum())) + np.repeat(first[at] - before, lengths)
    return ranges
