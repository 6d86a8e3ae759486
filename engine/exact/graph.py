"""The graph of engine.exact_outcome: the states reachable from those in play, found breadth first
through the far classes of both players' policies, and their moves as sparse matrices (by position
and margin for the outcome, by position with the tracked events), stepped a ply at a time; the
moves whose chances change near the cap are kept apart, sorted by when they settle, and corrected
ply by ply. See engine.exact.outcome for the method."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

import numpy as np
from scipy import sparse

from engine.exact.tail import Kept
from engine.game import POSITION_FLAGS, ROW
from engine.players import SCALE, NearCap, PolicyTable
from engine.tables import PositionTables


class _Run(Protocol):
    """What the graph reads and adds to of engine.exact.outcome._Run, the sums of one propagation."""

    tables: PositionTables
    players: tuple[PolicyTable, PolicyTable]
    captured: np.ndarray  # stones off the board at each position
    varying: list[np.ndarray]
    near: list[NearCap]
    flag_bits: np.ndarray
    event_mean: dict[str, float]

    def _score(self, states: States, ply: int) -> None: ...

    def _end(self, states: States, ply: int) -> None: ...


@dataclass
class States:
    """The states in play: position (mover's view), South's margin so far, their mass, and the
    mass not yet touched by each tracked event."""

    position: np.ndarray  # int64
    margin: np.ndarray  # int64
    total: np.ndarray  # float64
    untouched: np.ndarray  # (states, len(TRACKED)) float64

    @classmethod
    def empty(cls, tracked: int) -> States:
        return cls(np.empty(0, np.int64), np.empty(0, np.int64), np.empty(0), np.empty((0, tracked)))


def select(states: States, rows: np.ndarray, *, columns: bool = True) -> States:
    untouched = states.untouched[rows] if columns else np.empty((len(states.position[rows]), 0))
    return States(states.position[rows], states.margin[rows], states.total[rows], untouched)


class Graph:
    """The states reachable from given states through the far classes of both policies, with
    their moves as sparse matrices: by (position, South's captures so far) for the outcome, or
    by position with the events.

    A state is a key: its position in the chain by position, base[position] + s in the chain by
    margin, where s (0 ... the stones off the board) is South's captures so far. A table of
    numbers over the keys finds the new states of each breadth-first step; at the end the states
    of each parity are numbered in the order of their keys, which keeps a position's states, and
    the positions the sparse products read together, close in memory.
    """

    def __init__(self, run: _Run, position: np.ndarray, s: np.ndarray, parity: int, *, by_margin: bool) -> None:
        self.run, self.by_margin = run, by_margin
        self.base = np.zeros(len(run.captured) + 1, dtype=np.int64)
        np.cumsum(run.captured.astype(np.int64) + 1, out=self.base[1:])
        size = int(self.base[-1]) if by_margin else len(run.captured)
        self._numbers = [np.zeros(size, dtype=np.int32) for _ in (0, 1)]  # a state's number + 1
        self.count = [0, 0]
        self._found: list[list[tuple[np.ndarray, np.ndarray]]] = [[], []]
        self._frontier: list[list[tuple[np.ndarray, np.ndarray, np.ndarray]]] = [[], []]
        start = self._add(parity, position.astype(np.int64), s.astype(np.int64))
        edges: list[list[_Edges]] = [[], []]
        while self._frontier[0] or self._frontier[1]:
            for mover in (0, 1):
                if not self._frontier[mover]:
                    continue
                at, south, number = (np.concatenate(parts) for parts in zip(*self._frontier[mover], strict=True))
                self._frontier[mover] = []
                support, widths = _far_widths(run.players[mover], run.varying[mover], run.tables, at)
                for pit in range(ROW):
                    moving = np.flatnonzero(support[:, pit])
                    child = run.tables.child[at[moving], pit].astype(np.int64)
                    later = south[moving]
                    if by_margin and mover == 0:
                        later = later + run.tables.captured[at[moving], pit]
                    found = self._add(1 - mover, child, later)
                    edges[mover].append(_Edges(number[moving], found, pit, widths[moving, pit]))
        del self._numbers
        # Renumber each parity's states in the order of their keys.
        self.position, self.s, rank = [], [], []
        for batches in self._found:
            position_ = np.concatenate([p for p, _ in batches] or [np.empty(0, np.int64)])
            s_ = np.concatenate([s for _, s in batches] or [np.empty(0, np.int64)])
            order = np.argsort(self.base[position_] + s_ if by_margin else position_, kind="stable")
            self.position.append(position_[order].astype(np.int32))
            self.s.append(s_[order].astype(np.uint8))
            rank_ = np.empty(len(order), dtype=np.int32)
            rank_[order] = np.arange(len(order), dtype=np.int32)
            rank.append(rank_)
        del self._found
        self.start = rank[parity][start]
        self.moves = []
        for mover in (0, 1):
            for part in edges[mover]:
                part.start, part.to = rank[mover][part.start], rank[1 - mover][part.to]
            self.moves.append(_Moves(self, mover, edges[mover]))
            edges[mover] = []

    def _add(self, parity: int, position: np.ndarray, s: np.ndarray) -> np.ndarray:
        """The numbers of the states (``position``, ``s``) at ``parity``, numbering the new ones."""
        key = self.base[position] + s if self.by_margin else position
        numbers = self._numbers[parity]
        found: np.ndarray = numbers[key]
        new = np.flatnonzero(found == 0)
        if len(new):
            keys, first = np.unique(key[new], return_index=True)
            at = new[first]
            fresh = np.arange(self.count[parity], self.count[parity] + len(keys), dtype=np.int32)
            numbers[keys] = fresh + 1
            self.count[parity] += len(keys)
            self._found[parity].append((position[at], s[at]))
            self._frontier[parity].append((position[at], s[at], fresh))
            found = numbers[key]
        return found - 1

    def step_margins(self, x: np.ndarray, ply: int, kept: Kept | None = None) -> np.ndarray:
        """Score the states without a move at ``ply`` and move the others: the masses a ply on
        (of the states ``kept``, if given, numbered as it numbers them)."""
        moves: _Moves | Kept = self.moves[ply % 2] if kept is None else kept
        if len(moves.ended):
            self.run._score(States(moves.ended_at, moves.ended_margin, x[moves.ended], np.empty((0, 0))), ply)
        y: np.ndarray = moves.all @ x
        start, to, delta, _ = moves.corrected(ply)
        values = x[start] * delta
        moving = np.flatnonzero(values)  # near the cap most corrected moves are of states without mass
        to, values = to[moving], values[moving]
        if kept is not None:  # the moves to states set aside
            stay = kept.leave(to)
            to, values = to[stay], values[stay]
        if len(to):
            _scatter(y, to, values)
        return y

    def step_events(self, masses: np.ndarray, ply: int, kept: Kept | None = None) -> np.ndarray:
        """End the states without a move at ``ply`` and move the others, counting the events:
        ``masses`` has a row for the total and one for each TRACKED event's untouched mass, or
        the first of those rows only (the total alone, for the lengths: engine.exact_lengths),
        of the states ``kept``, if given, numbered as it numbers them."""
        run = self.run
        moves: _Moves | Kept = self.moves[ply % 2] if kept is None else kept
        if len(moves.ended):
            ended = masses[:, moves.ended]
            run._end(States(moves.ended_at, np.zeros_like(moves.ended_at), ended[0], ended[1:].T), ply)
        total = masses[0]
        moves.occupancy += total  # the expected counts of the far moves are summed at the end
        rows = masses.shape[0]
        after = np.empty((rows, moves.all.shape[0]))
        flags = min(rows, len(moves.keep_flags))
        # The rows moved by the same matrix in one product: each reads the matrix once for all.
        after[:flags] = (moves.all @ (masses[:flags] * moves.keep_flags[:flags]).T).T
        for row, matrix in zip(range(flags, rows), moves.keeping[: rows - flags], strict=True):
            after[row] = matrix @ masses[row]
        start, to, delta, index = moves.corrected(ply)
        moving = np.flatnonzero(total[start])  # near the cap most corrected moves are of states without mass
        start, to, delta, index = start[moving], to[moving], delta[moving], index[moving]
        stay = None if kept is None else kept.leave(to)
        if len(start):
            weight = total[start] * delta
            counts = moves.correction_counts(index)
            for name, mean in zip(CAPTURE_COUNTS, weight @ counts, strict=True):
                run.event_mean[name] += float(mean)
            captured, own = counts[:, 1], counts[:, 3]
            keeps = np.vstack([moves.keep_flags[:, start], captured == 0, own == 0, captured == own])[:rows]
            moved = masses[:, start] * keeps * delta
            if stay is not None:  # the moves to states set aside
                moved, to = moved[:, stay], to[stay]
            for row in range(rows):
                _scatter(after[row], to, moved[row])
        return after

    def count_events(self) -> None:
        """Add the expected counts of the far moves, from how often each state was visited."""
        for moves in self.moves:
            for name, mean in zip(COUNTED, moves.counted(), strict=True):
                self.run.event_mean[name] += float(mean)
            moves.occupancy[:] = 0

    def states(self, masses: np.ndarray, parity: int) -> States:
        """The states of ``parity`` with mass, as engine.exact.outcome.States."""
        totals = masses if masses.ndim == 1 else masses[0]
        alive = np.flatnonzero(totals)
        position = self.position[parity][alive].astype(np.int64)
        if self.by_margin:
            margin = 2 * self.s[parity][alive].astype(np.int64) - self.run.captured[position]
            return States(position, margin, totals[alive], np.empty((len(alive), 0)))
        return States(position, np.zeros_like(position), totals[alive], masses[1:, alive].T.copy())


# The per-move event counts summed into event_mean: those of a capture, then the position flags.
CAPTURE_COUNTS = ("capture", "capture_stones", "capture_pits", "capture_own_row_stones", "capture_opponent_row_stones")
COUNTED = (*CAPTURE_COUNTS, *POSITION_FLAGS)


def _far_widths(
    player: PolicyTable, varying: np.ndarray, tables: PositionTables, at: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """The pits (states, 3) that ``player`` may play at the positions ``at`` while far from the
    cap, and the width of each one's cut (its chance times 2**32). At a position marked in
    ``varying`` (VARIES, and those not yet settled at the floor) every legal pit may be played:
    its width is that of the far class, 0 at VARIES, and the plies where the class differs are
    corrected ply by ply (engine.exact.outcome._Moves.corrected)."""
    classes = player.far[at].astype(np.int64)
    varies = varying[at]
    cycling = classes == player.varies
    classes[cycling] = 0
    widths: np.ndarray = player.chances(classes)
    widths[cycling] = 0
    support = widths > 0
    support[varies] = tables.child[at[varies]] >= 0
    return support, widths


@dataclass
class _Edges:
    """A batch of moves found breadth first: from state ``start`` to state ``to`` by ``pit``,
    with the width of its cut (0 from a position marked VARIES)."""

    start: np.ndarray
    to: np.ndarray
    pit: int
    width: np.ndarray


class _Moves:
    """The moves of one parity's states (``mover`` 0 for South), as sparse matrices."""

    def __init__(self, graph: Graph, mover: int, edges: list[_Edges]) -> None:
        run, tables = graph.run, graph.run.tables
        self.player, self.tables, self.near = run.players[mover], run.tables, run.near[mover]
        count, children = graph.count[mover], graph.count[1 - mover]
        start = _join([part.start for part in edges], np.int32)
        to = _join([part.to for part in edges], np.int32)
        pit = _join([np.full(len(part.start), part.pit, dtype=np.uint8) for part in edges], np.uint8)
        chance = _join([part.width for part in edges], np.int64) / SCALE  # a width may be 2**32
        del edges[:]
        positions_ = graph.position[mover]
        varies = run.varying[mover][positions_[start]]
        # The moves from varying positions, by the plies left below which their chances may
        # differ from the far ones (unsettled_below), most unsettled first: at k plies left the
        # moves to correct are a prefix, and so are their positions.
        v_from, v_to, v_pit = start[varies], to[varies], pit[varies]
        v_at = positions_[v_from]
        below = self.player.unsettled_below(v_at)
        unsettled = np.lexsort((v_at, -below))
        self.v_from, self.v_to, self.v_pit = v_from[unsettled], v_to[unsettled], v_pit[unsettled]
        del v_from, v_to, v_pit
        v_at, below = v_at[unsettled], below[unsettled].astype(np.int16)
        first = np.flatnonzero(np.r_[True, v_at[1:] != v_at[:-1]]) if len(v_at) else np.empty(0, np.int64)
        self.v_positions = v_at[first].astype(np.int64)
        self.v_rows = np.repeat(np.arange(len(first), dtype=np.int32), np.diff(np.r_[first, len(v_at)]))
        self._v_edges_below = -below  # ascending, for searchsorted
        self._v_positions_below = self._v_edges_below[first]
        del v_at, below, first, unsettled
        self.ended = np.flatnonzero((tables.child[positions_] < 0).all(axis=1))  # the games over
        self.ended_at = positions_[self.ended].astype(np.int64)
        self._column_sums: np.ndarray | None = None
        if graph.by_margin:
            self.all = sparse.csr_array((chance, (to, start)), shape=(children, count))
            self.ended_margin = 2 * graph.s[mover][self.ended].astype(np.int64) - run.captured[self.ended_at]
            return
        counts = move_counts(tables, positions_[start], pit.astype(np.int64))
        captured, own = counts[:, 1], counts[:, 3]
        # One sparse structure, a row per child state, for the moves and for the moves that leave
        # a capture, an own-row capture and an opponent-row capture untouched.
        order = np.argsort(to, kind="stable")
        indptr = np.zeros(children + 1, dtype=np.int64)
        np.cumsum(np.bincount(to, minlength=children), out=indptr[1:])
        columns = start[order]

        def matrix(data: np.ndarray) -> sparse.csr_array:
            return sparse.csr_array((data[order], columns, indptr), shape=(children, count))

        self.all = matrix(chance)
        self.keeping = [matrix(chance * keep) for keep in (captured == 0, own == 0, captured == own)]
        self.move_counts = counts[order].astype(np.uint8)  # each entry's capture counts, in COUNTED's order
        flags = tables.flags[positions_].astype(np.int64)
        fired = ((flags[:, None] & run.flag_bits) > 0).T.astype(float)  # (position flags, states)
        fired[:, self.ended] = 0  # a game over plays no turn
        self.keep_flags = np.vstack([np.ones(count), 1 - fired])
        self.occupancy = np.zeros(count)  # the mass that was at each state, summed over the plies

    def counted(self) -> np.ndarray:
        """The expected counts of the events COUNTED over the far moves: the mass at each state,
        summed over the plies, times each move's chance and counts, and its position flags."""
        weight = self.all.data * self.occupancy[self.all.indices]
        fired = 1 - self.keep_flags[1:]
        return np.concatenate([weight @ self.move_counts, fired @ self.occupancy])

    def corrected(self, ply: int, among: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """The moves whose chances at ``ply`` differ from those in the matrices may only be the
        first m of the varying moves (those of positions not settled at the ply's plies left):
        those of them ``among`` (ascending indices of varying moves; else all), as their states,
        the states they lead to, their chance at ``ply`` minus the far one (0 at VARIES) and
        their indices."""
        player = self.player
        plies_left = player.rules.ply_cap - ply
        key = np.int16(-plies_left)  # of the arrays' type: another would have them converted first
        m = int(np.searchsorted(self._v_edges_below, key, side="left"))
        index = np.arange(m) if among is None else among[: int(np.searchsorted(among, m))]
        if not len(index):
            return self.v_from[:0], self.v_to[:0], np.empty(0), index
        n = int(np.searchsorted(self._v_positions_below, key, side="left"))
        at = self.v_positions[:n]
        far = player.far[at].astype(np.int64)
        cycling = far == player.varies
        far[cycling] = 0
        far_chances = player.chances(far) / SCALE  # (positions, pits)
        far_chances[cycling] = 0
        change = player.chances(self.near(at, plies_left)) / SCALE - far_chances
        return self.v_from[index], self.v_to[index], change[self.v_rows[index], self.v_pit[index]], index

    def correction_counts(self, index: np.ndarray) -> np.ndarray:
        """The capture counts (moves, 5) of the varying moves at ``index``, in COUNTED's order."""
        return move_counts(self.tables, self.v_positions[self.v_rows[index]], self.v_pit[index].astype(np.int64))

    def column_sums(self) -> np.ndarray:
        """Each state's total far chance over its moves in the matrices (0 for a state without a move)."""
        if self._column_sums is None:
            self._column_sums = np.bincount(self.all.indices, weights=self.all.data, minlength=self.all.shape[1])
        return self._column_sums


def _scatter(y: np.ndarray, to: np.ndarray, values: np.ndarray) -> None:
    """y[to] += values, with repeated targets summed: np.add.at for a few, np.bincount for many."""
    if len(to) * 8 < len(y):
        np.add.at(y, to, values)
    else:
        y += np.bincount(to, weights=values, minlength=len(y))


def move_counts(tables: PositionTables, at: np.ndarray, pit: np.ndarray | int) -> np.ndarray:
    """The capture counts (moves, 5) of playing ``pit`` at the positions ``at``, in COUNTED's order."""
    captured = tables.captured[at, pit].astype(np.int64)
    own = tables.own_captured[at, pit].astype(np.int64)
    return np.column_stack([captured > 0, captured, tables.capture_pits[at, pit], own, captured - own]).astype(float)


def _join(parts: list[np.ndarray], dtype: type) -> np.ndarray:
    return np.concatenate(parts).astype(dtype) if parts else np.empty(0, dtype=dtype)


class Merger:
    """Merges states with the same position and margin by adding their masses, without a sort.

    The stones captured so far, C, are fixed by the position (the stones missing from the
    board), so a state's margin m = 2 s - C is fixed by South's captures s in 0 .. C: each
    position in play gets C + 1 consecutive slots, and the masses are summed into them by
    np.bincount. The positions in play are numbered through a mark per position, made and
    cleared each ply.
    """

    def __init__(self, captured: np.ndarray) -> None:
        self.captured = captured  # (positions,) uint8: stones captured so far at each position
        self.mark = np.zeros(len(captured), dtype=bool)
        self.number = np.zeros(len(captured), dtype=np.int64)

    def __call__(self, position: np.ndarray, margin: np.ndarray, total: np.ndarray, untouched: np.ndarray) -> States:
        self.mark[position] = True
        alive = np.flatnonzero(self.mark)
        self.mark[alive] = False
        self.number[alive] = np.arange(len(alive))
        width = self.captured[alive].astype(np.int64) + 1
        base = np.cumsum(width) - width
        number = self.number[position]
        slot = base[number] + (margin + self.captured[position]) // 2
        size = int(width.sum())
        merged = np.bincount(slot, weights=total, minlength=size)
        kept = np.flatnonzero(merged)
        owner = np.repeat(np.arange(len(alive)), width)[kept]
        columns = np.empty((len(kept), untouched.shape[1]))
        for k in range(untouched.shape[1]):
            columns[:, k] = np.bincount(slot, weights=untouched[:, k], minlength=size)[kept]
        merged_position = alive[owner]
        merged_margin = 2 * (kept - base[owner]) - self.captured[merged_position]
        return States(merged_position, merged_margin, merged[kept], columns)
