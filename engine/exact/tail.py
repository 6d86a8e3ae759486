"""The tail of long games in engine.exact.outcome: sparse products over the states that hold the mass.

Games of perfect's dials cycle: after ply 200 the mass left sits on 2 to 25 % of the states
reachable, the others holding less than 1e-22 each, yet every ply of engine.exact.outcome._Steady
reads them all. Once the mass in play is below THINNING_BELOW, the Tail of a _Steady follows,
for each chain (by margin and by position) and parity, the most mass each state held over the
last plies of that parity. Every THINNING_PLIES plies (twice as long after a choice that kept
too many to gain, up to THINNING_WAIT_MOST) it keeps only the states that held most, leaving out states that together
held at most half of one ply's budget (below), and numbers them afresh: the products of the
next plies (Kept: the far matrices cut to the kept states' rows and columns) are over them only.

The mass that reaches a state not kept is set aside, counted exactly each ply before the
products: through the matrices, by each kept state's chance of moving to one (Kept.leak, its
column sum in the whole matrix minus that in the cut one), and through the corrected moves of
perfect's near-cap plies, one by one. The run's budget is its tolerance times THINNING_SHARE,
spread evenly over the plies to the cap; a chain whose next ply would pass the budget of the
plies gone by goes back to every state until the next choice. The outcome counts the mass set
aside as unresolved (engine.exact_outcome), which bounds how far any probability may be from
that of a run without it; a tolerance of 0 sets nothing aside.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

import numpy as np
from scipy import sparse

from engine.game import Rules


class _Moves(Protocol):
    """What Kept reads of engine.exact.graph._Moves (one parity's moves in its whole chain); the chain
    by position's also have ``keeping``, ``keep_flags`` and ``occupancy``, that by margin's
    ``ended_margin``."""

    all: sparse.csr_array
    ended: np.ndarray
    ended_at: np.ndarray

    v_from: np.ndarray

    def corrected(self, ply: int, among: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]: ...
    def correction_counts(self, index: np.ndarray) -> np.ndarray: ...
    def column_sums(self) -> np.ndarray: ...


class _Run(Protocol):
    """What the tail reads and writes of engine.exact.outcome._Run."""

    rules: Rules
    set_aside: dict[str, float]


# The share of the tolerance a run may set aside; the mass in play below which states are set
# aside; the plies between two choices; the share of a parity's states above which none are set
# aside (the products would be barely cheaper), and the share of the states kept above which a
# choice keeps the last one.
THINNING_SHARE = 1.0
THINNING_BELOW = 1e-4
THINNING_PLIES = 8
THINNING_KEEPS = 0.35
THINNING_SHRINKS = 0.8
THINNING_WAIT_MOST = 16  # the most plies between two choices (the wait doubles after a choice that kept nothing)
MARGIN, POSITION = "margin", "position"


class Kept:
    """The moves of one parity's states ``ids`` (numbers in the whole chain, ascending) to the
    other parity's ``child_ids``, numbered by rank in those lists; ``where`` and ``child_where``
    map a number in the whole chain to its rank, -1 if not kept."""

    def __init__(
        self,
        base: _Moves,
        ids: np.ndarray,
        where: np.ndarray,
        child_ids: np.ndarray,
        child_where: np.ndarray,
        run: _Run,
    ) -> None:
        self.base, self.ids, self.where, self.child_where, self.run = base, ids, where, child_where, run
        full = base.all
        starts = full.indptr[child_ids]
        lengths = full.indptr[child_ids + 1] - starts
        before = np.cumsum(lengths) - lengths
        entries = np.arange(int(lengths.sum()), dtype=np.int64) + np.repeat(starts - before, lengths)
        columns = where[full.indices[entries]]
        ok = columns >= 0
        entries, columns = entries[ok], columns[ok]
        rows = np.repeat(np.arange(len(child_ids)), lengths)[ok]
        indptr = np.zeros(len(child_ids) + 1, dtype=np.int64)
        np.cumsum(np.bincount(rows, minlength=len(child_ids)), out=indptr[1:])
        shape = (len(child_ids), len(ids))

        def cut(matrix: sparse.csr_array) -> sparse.csr_array:
            return sparse.csr_array((matrix.data[entries], columns, indptr), shape=shape)

        self.all = cut(full)
        chain: Any = base  # the attributes of one chain's moves only
        self.keeping = [cut(matrix) for matrix in getattr(chain, "keeping", [])]
        kept_sums = np.bincount(columns, weights=self.all.data, minlength=len(ids))
        self.leak = np.maximum(base.column_sums()[ids] - kept_sums, 0.0)
        ended = where[base.ended]
        ended_kept = ended >= 0
        self.ended = ended[ended_kept]
        self.ended_at = base.ended_at[ended_kept]
        if hasattr(base, "ended_margin"):
            self.ended_margin = chain.ended_margin[ended_kept]
        if hasattr(base, "keep_flags"):
            self.keep_flags = chain.keep_flags[:, ids]
            self.occupancy = np.zeros(len(ids))
            self.whole_occupancy = chain.occupancy
        self.among = np.flatnonzero(where[base.v_from] >= 0)  # the varying moves from kept states
        self._corrected: tuple[int, tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]] | None = None

    def corrected(self, ply: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """engine.exact.graph._Moves.corrected for the kept states: the moves from them, the ranks of
        the states they lead to (-1 if not kept), their chance minus the far one, their indices."""
        if self._corrected is not None and self._corrected[0] == ply:
            return self._corrected[1]
        start, to, delta, index = self.base.corrected(ply, self.among)
        start, to = self.where[start], self.child_where[to]
        self._corrected = ply, (start, to, delta, index)
        return start, to, delta, index

    def correction_counts(self, index: np.ndarray) -> np.ndarray:
        return self.base.correction_counts(index)

    def leaving(self, ply: int, total: np.ndarray) -> float:
        """The mass of ``total`` (the kept states' masses at ``ply``) that moves to states not
        kept: through the matrices, and through the corrected moves that lead to one."""
        start, to, delta, _ = self.corrected(ply)
        out = to < 0
        return float(self.leak @ total) + float(total[start[out]] @ delta[out])

    @staticmethod
    def leave(to: np.ndarray) -> np.ndarray:
        """Which corrected moves lead to a kept state (Tail.before counted the others)."""
        stay: np.ndarray = to >= 0
        return stay


class Tail:
    """Where a _Steady's products run: over every state, or over the states kept (Kept), chosen
    again every THINNING_PLIES plies from the most mass each state held meanwhile."""

    def __init__(self, run: _Run, moves: tuple[Sequence[_Moves], Sequence[_Moves]], tolerance: float) -> None:
        self.run, self.budget = run, tolerance * THINNING_SHARE
        # A chain without states (that by margin, for engine.exact_lengths) has nothing to set aside.
        chains = {MARGIN: moves[0], POSITION: moves[1]}
        self.chains = {chain: parts for chain, parts in chains.items() if any(part.all.shape[1] for part in parts)}
        self.kept: dict[str, list[Kept] | None] = dict.fromkeys(self.chains)
        self.peak: dict[str, list[np.ndarray | None]] = {chain: [None, None] for chain in self.chains}
        self.due: int | None = None  # the ply of the next choice, once watching
        self.wait = THINNING_PLIES
        self.done = self.budget == 0  # nothing to set aside

    def moves(self, chain: str, ply: int) -> Kept | None:
        """The kept moves of ``chain`` at ``ply``, None for all."""
        kept = self.kept.get(chain)
        return None if kept is None else kept[ply % 2]

    def before(self, ply: int, x: np.ndarray, masses: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Before the products of ``ply``: follow each state's most mass, choose the states kept
        when due and count the mass that this ply's products will move to states not kept; the
        masses (by margin, by position) in the numbering of the states kept."""
        if self.done:
            return x, masses
        if self.due is None:
            if float(masses[0].sum()) > THINNING_BELOW:
                return x, masses
            self.due = ply + THINNING_PLIES
        q = ply % 2
        for chain in self.chains:
            total = x if chain == MARGIN else masses[0]
            peak = self.peak[chain][q]
            self.peak[chain][q] = total.copy() if peak is None else np.maximum(peak, total, out=peak)
        if ply >= self.due:
            x, masses = self._choose_all(ply, x, masses)
            kept_any = any(part is not None for part in self.kept.values())
            # random play keeps too many states to gain: wait longer, up to THINNING_WAIT_MOST
            self.wait = THINNING_PLIES if kept_any else min(2 * self.wait, THINNING_WAIT_MOST)
            self.due = ply + self.wait
        allowed = self.budget * min(1.0, (ply + 1) / self.run.rules.ply_cap)
        for chain in self.chains:
            kept = self.kept[chain]
            if kept is None:
                continue
            leaving = kept[q].leaving(ply, x if chain == MARGIN else masses[0])
            if self.run.set_aside[chain] + leaving > allowed:  # past the budget: back to every state
                x, masses = self._whole(chain, ply, x, masses)
            else:
                self.run.set_aside[chain] += leaving
        return x, masses

    def _choose_all(self, ply: int, x: np.ndarray, masses: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Choose the states each chain keeps (engine.exact.tail.Tail._choose) and renumber its masses."""
        q = ply % 2
        share = self.budget / self.run.rules.ply_cap / 2  # half of one ply's budget, for each chain and parity
        for chain, moves in self.chains.items():
            ranks = self._choose(chain, share)
            if ranks is None:
                continue
            old = self.kept[chain]
            ids = ranks if old is None else [old[p].ids[ranks[p]] for p in (0, 1)]
            if old is not None:
                self._give_back(old)
                self.kept[chain] = None  # its matrices go before the new ones are made
            where = []
            for p in (0, 1):
                where_ = np.full(moves[p].all.shape[1], -1, dtype=np.int64)
                where_[ids[p]] = np.arange(len(ids[p]))
                where.append(where_)
            self.kept[chain] = [Kept(moves[p], ids[p], where[p], ids[1 - p], where[1 - p], self.run) for p in (0, 1)]
            total = x if chain == MARGIN else masses[0]
            self.run.set_aside[chain] += float(total.sum() - total[ranks[q]].sum())
            if chain == MARGIN:
                x = x[ranks[q]]
            else:
                masses = masses[:, ranks[q]]
        self.peak = {chain: [None, None] for chain in self.chains}
        return x, masses

    def _choose(self, chain: str, share: float) -> list[np.ndarray] | None:
        """For each parity, the ranks (in the present numbering) of the states that held most,
        leaving out states that together held at most ``share``; None if that keeps too many."""
        ranks = []
        for p in (0, 1):
            peak = self.peak[chain][p]
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
        now = self.kept[chain]
        if now is None:
            whole = sum(int(moves.all.shape[1]) for moves in self.chains[chain])
            return None if count > THINNING_KEEPS * whole else ranks
        return None if count > THINNING_SHRINKS * sum(len(part.ids) for part in now) else ranks

    def _give_back(self, kept: list[Kept]) -> None:
        """Add the kept states' visits to those of their whole chain (for the expected counts)."""
        for part in kept:
            if hasattr(part, "occupancy"):
                part.whole_occupancy[part.ids] += part.occupancy

    def end(self, ply: int, x: np.ndarray, masses: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The masses at ``ply`` in the numbering of the whole chains, with nothing kept any more."""
        for chain in self.chains:
            x, masses = self._whole(chain, ply, x, masses)
        return x, masses

    def _whole(self, chain: str, ply: int, x: np.ndarray, masses: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The masses at ``ply`` with ``chain``'s in the numbering of its whole chain again."""
        kept = self.kept[chain]
        if kept is None:
            return x, masses
        self._give_back(kept)
        ids, count = kept[ply % 2].ids, kept[ply % 2].base.all.shape[1]
        self.kept[chain] = None
        self.peak[chain] = [None, None]
        if chain == MARGIN:
            whole_x = np.zeros(count)
            whole_x[ids] = x
            return whole_x, masses
        whole = np.zeros((masses.shape[0], count))
        whole[:, ids] = masses
        return x, whole
