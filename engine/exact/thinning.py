"""The tail of long games in engine.exact_quality: products over the states that hold the mass.

As engine.exact.tail does for engine.exact_outcome: games of perfect's dials cycle, and after a
few hundred plies the mass left sits on a small share of the states reachable. Once the mass in
play is below THINNING_BELOW, ``Thinning`` follows the most mass each state held over the last
plies of each parity; every THINNING_PLIES plies (longer after a choice that kept too many, up to
THINNING_WAIT_MOST) it keeps only the states that held most, leaving out states that together
held at most half of one ply's share of the budget (the tolerance, spread over the plies to the
cap), and the next plies' products run over the kept states' moves (engine.exact.tail.Kept) with
each parity's Side restricted to them (engine.exact.sums.Side.restrict).

The mass that moves to a state not kept is set aside before each ply's products, counted exactly
(Kept.leaving), and is part of the quality's unresolved mass; so are the sums it carried: a
measure may be off by at most the unresolved mass times its largest value in a game (the cap,
for a count of plies). A chain whose next ply would pass the budget goes back to every state.
The constants are engine.exact.tail's, read when used (the tests change them).
"""

from __future__ import annotations

from typing import Protocol

import numpy as np

from engine.exact import tail
from engine.exact.graph import Graph
from engine.exact.sums import MASS, Side
from engine.exact.tail import Kept
from engine.game import Rules


class _Run(Protocol):
    """What the thinning reads and adds to of engine.exact.quality's propagation."""

    rules: Rules
    set_aside: dict[str, float]


CHAIN = "margin"  # the one chain of engine.exact_quality, as engine.exact.tail names its chains


class Thinning:
    """Where the products of engine.exact_quality's plies run: over every state of the graph, or
    over the states kept."""

    def __init__(self, run: _Run, graph: Graph, sides: list[Side], tolerance: float) -> None:
        self.run, self.graph, self.whole = run, graph, sides
        self.budget = tolerance * tail.THINNING_SHARE
        self.sides = list(sides)
        self.ids: list[np.ndarray] | None = None
        self.kept: list[Kept] | None = None
        self.peak: list[np.ndarray | None] = [None, None]
        self.due: int | None = None
        self.wait = tail.THINNING_PLIES
        self.done = self.budget == 0

    def before(self, ply: int, sums: np.ndarray) -> np.ndarray:
        """Before the products of ``ply``: follow each state's most mass, choose the states kept
        when due, and set aside the mass this ply moves to states not kept; the sums in the
        numbering of the states kept (or of every state)."""
        if self.done:
            return sums
        mass = sums[:, MASS]
        if self.due is None:
            if float(mass.sum()) > tail.THINNING_BELOW:
                return sums
            self.due = ply + tail.THINNING_PLIES
        q = ply % 2
        peak = self.peak[q]
        self.peak[q] = mass.copy() if peak is None else np.maximum(peak, mass, out=peak)
        if ply >= self.due:
            chosen = self._choose(ply, sums)
            if chosen is not None:
                sums = chosen
            self.wait = tail.THINNING_PLIES if chosen is not None else min(2 * self.wait, tail.THINNING_WAIT_MOST)
            self.due = ply + self.wait
        if self.kept is not None:
            allowed = self.budget * min(1.0, (ply + 1) / self.run.rules.ply_cap)
            leaving = self.kept[q].leaving(ply, sums[:, MASS])
            if self.run.set_aside[CHAIN] + leaving > allowed:
                return self.whole_sums(ply, sums)
            self.run.set_aside[CHAIN] += leaving
        return sums

    def side(self, ply: int) -> Side:
        return self.sides[ply % 2]

    def whole_sums(self, ply: int, sums: np.ndarray) -> np.ndarray:
        """The sums at ``ply`` in the numbering of every state, nothing kept any more."""
        if self.ids is None:
            return sums
        q = ply % 2
        whole = np.zeros((self.graph.count[q], sums.shape[1]))
        whole[self.ids[q]] = sums
        self.ids, self.kept, self.sides = None, None, list(self.whole)
        self.peak = [None, None]
        return whole

    def _choose(self, ply: int, sums: np.ndarray) -> np.ndarray | None:
        """Keep the states that held most (engine.exact.tail.Tail._choose's rule); the sums renumbered, None if not worth it."""
        ranks = self._ranks()
        self.peak = [None, None]
        if ranks is None:
            return None
        q = ply % 2
        ids = ranks if self.ids is None else [self.ids[p][ranks[p]] for p in (0, 1)]
        where = []
        for p in (0, 1):
            where_ = np.full(self.graph.count[p], -1, dtype=np.int64)
            where_[ids[p]] = np.arange(len(ids[p]))
            where.append(where_)
        moves = self.graph.moves
        self.kept = [Kept(moves[p], ids[p], where[p], ids[1 - p], where[1 - p], self.run) for p in (0, 1)]
        self.sides = [self.whole[p].restrict(ids[p], self.kept[p]) for p in (0, 1)]
        self.ids = ids
        self.run.set_aside[CHAIN] += float(sums[:, MASS].sum() - sums[ranks[q], MASS].sum())
        kept: np.ndarray = sums[ranks[q]]
        return kept

    def _ranks(self) -> list[np.ndarray] | None:
        """For each parity, the ranks (in the present numbering) of the states that held most,
        leaving out states that together held at most half of one ply's budget; None if that
        keeps too many to gain."""
        share = self.budget / self.run.rules.ply_cap / 2
        ranks = []
        for peak in self.peak:
            if peak is None:
                return None
            positive = np.flatnonzero(peak > 0)
            exponent = np.frexp(peak[positive])[1]
            if len(exponent):
                low = int(exponent.min())
                below = np.cumsum(np.bincount(exponent - low, weights=peak[positive]))
                cut = int(np.searchsorted(below, share, side="right"))  # the powers of two left out
                positive = positive[exponent >= low + cut]
            ranks.append(positive)
        count = sum(len(part) for part in ranks)
        if self.ids is None:
            return None if count > tail.THINNING_KEEPS * sum(self.graph.count) else ranks
        return None if count > tail.THINNING_SHRINKS * sum(len(part) for part in self.ids) else ranks
