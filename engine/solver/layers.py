"""The retrograde analysis behind engine.solver.solution: the layers of boards solved in increasing stones
(a move never adds stones), each layer iterated over the plies left until every position
settles or repeats with a period, and the changes of each position's value logged
position-major (Solution's layout). See engine.solver.solution for the values and the layout."""

from __future__ import annotations

import contextlib
import math
import mmap
import tempfile
import time
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import NamedTuple

import numpy as np

from engine.game import ROW
from engine.store import per_rule_set, return_freed_memory
from engine.tables import PositionTables, row_differences

# An illegal move points at an extra position of this value: captured - 127 loses to any legal move.
NO_MOVE = 127
# Above size / this many changed positions (of a layer and below it), a sweep of the layer's
# every position is faster than finding their parents through the reverse edges.
_SWEEP_FRACTION = 8
# Below size / this many parents, sorting them beats flagging them in an array of the layer.
_SORT_FRACTION = 64
# A layer's log is sorted by position in blocks of about this many changes (fewer positions
# where it is dense), so that the sort's keys stay small.
_LOG_BLOCK_CHANGES = 1 << 22


@per_rule_set
@lru_cache(maxsize=4)
def cached_row_differences(total: int) -> np.ndarray:
    return row_differences(total)


def slice_indices(starts: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """The indices of the slices [start, start + length), concatenated: each slice's start, then +1 within it."""
    indices: np.ndarray = np.repeat(starts - np.cumsum(lengths) + lengths, lengths) + np.arange(int(lengths.sum()))
    return indices


def distinct(numbers: np.ndarray) -> np.ndarray:
    """The distinct values of ``numbers``, ascending: by a sort, which NumPy 2's np.unique (by hashing)
    is many times slower than on millions of integers."""
    ordered = np.sort(numbers)
    keep = np.ones(len(ordered), dtype=bool)
    np.not_equal(ordered[1:], ordered[:-1], out=keep[1:])
    return ordered[keep]


@dataclass
class LayerChanges:
    """The positions that changed at each k and their new values, in increasing k."""

    plies: list[int] = field(default_factory=list)
    positions: list[np.ndarray] = field(default_factory=list)
    values: list[np.ndarray] = field(default_factory=list)


class _Period(NamedTuple):
    """What a solved layer promises its parents: V_j = V_(j - period) on all its positions for
    onset <= j <= cap (period 1 from the ply after its last change when it settles)."""

    period: int
    onset: int


def solve_layers(
    tables: PositionTables, cap: int, timings: dict[str, float], spill: Path | None = None
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The position-major log of every position, the layers solved in increasing stones; its
    changes in unnamed files of the folder ``spill``, if given (_GrowingArray)."""
    index = tables.index
    values = np.append(row_differences(index.total), np.int8(NO_MOVE))  # index -1: an illegal move
    log = _Log(index.size, index.total, spill)
    starts = np.array([index.layer(stones)[0] for stones in range(index.total + 1)])
    periods: list[_Period] = []
    for stones in range(index.total + 1):
        started = time.perf_counter()
        graph = _LayerGraph(tables, *index.layer(stones))
        lower = [periods[layer] for layer in np.unique(np.searchsorted(starts, graph.lower, side="right") - 1).tolist()]
        built = time.perf_counter()
        changes, period = _iterate_layer(graph, values, log, lower, cap)
        periods.append(period)
        del graph
        iterated = time.perf_counter()
        log.append(*index.layer(stones), changes)
        del changes
        return_freed_memory()
        timings["move_graph"] += built - started
        timings["iterate"] += iterated - built
        timings["log"] += time.perf_counter() - iterated
    return log.finish()


class _LayerGraph:
    """The moves of one layer of positions (the boards of one number of stones), both ways.

    A move stays in the layer or captures down into a lower one, so the layer's values at k need
    its own at k - 1 and those of ``lower``, the lower positions its moves reach. Nodes number
    both: position start + v is node v < size, and lower[j] is node size + j.

    children[p][v]   the child of pit p (an index of all positions), or -1 when p is illegal
    captured[p][v]   as int8: captured - V fits, since |V_k| is at most the stones on the board
                     (the child's, the capture's and the move's value all lie in -s .. s), and
                     an illegal move's 0 - NO_MOVE is -127
    parents[parent_offsets[u] .. parent_offsets[u + 1]]   the layer's positions (v) with a move to node u
    """

    def __init__(self, tables: PositionTables, start: int, stop: int) -> None:
        self.start, self.size = start, stop - start
        self.children = [np.ascontiguousarray(tables.child[start:stop, pit]) for pit in range(ROW)]
        self.captured = [tables.captured[start:stop, pit].astype(np.int8) for pit in range(ROW)]
        self.stuck = np.all([column < 0 for column in self.children], axis=0)  # no legal move: V_k = V_0
        reached = np.zeros(start + 1, dtype=bool)  # the last entry takes the moves that stay in the layer
        for column in self.children:
            reached[np.where(column < 0, start, np.minimum(column, start))] = True
        self.lower = np.flatnonzero(reached[:start]).astype(np.int32)
        del reached
        # The reverse edges sorted by node: one int64 key node * size + v per move, sorted in place.
        keys = []
        for column in self.children:
            moves = np.flatnonzero(column >= 0)
            keys.append(self.node_of(column[moves]) * self.size + moves)
        key = np.concatenate(keys)
        del keys
        key.sort()
        self.parents = (key % max(self.size, 1)).astype(np.int32)
        self.parent_offsets = np.zeros(self.size + len(self.lower) + 1, dtype=np.int64)
        np.cumsum(np.bincount(key // max(self.size, 1), minlength=self.size + len(self.lower)), out=self.parent_offsets[1:])

    def node_of(self, positions: np.ndarray) -> np.ndarray:
        """The nodes (int64) of positions of the layer or of ``lower``."""
        nodes = positions.astype(np.int64) - self.start
        lower = np.flatnonzero(nodes < 0)
        nodes[lower] = self.size + np.searchsorted(self.lower, positions[lower])
        return nodes

    def sweep(self, values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """V_k of every position of the layer from ``values`` (V_(k - 1)), written into it: the
        positions that changed (v, ascending, int32) and their new values (int8)."""
        best = self.captured[0] - values.take(self.children[0])
        for pit in range(1, ROW):
            np.maximum(best, self.captured[pit] - values.take(self.children[pit]), out=best)
        layer = values[self.start : self.start + self.size]
        changed = np.flatnonzero((best != layer) & ~self.stuck).astype(np.int32)
        new_values = best[changed]
        layer[changed] = new_values
        return changed, new_values

    def update(self, todo: np.ndarray, values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``sweep`` for the positions ``todo`` (v, ascending, each with a legal move) alone."""
        best = self.captured[0][todo] - values.take(self.children[0][todo])
        for pit in range(1, ROW):
            np.maximum(best, self.captured[pit][todo] - values.take(self.children[pit][todo]), out=best)
        differs = best != values[todo + self.start]
        changed = todo[differs]
        new_values = best[differs]
        values[changed + self.start] = new_values
        return changed, new_values

    def parents_of(self, changed: np.ndarray, fired_nodes: np.ndarray) -> np.ndarray:
        """The distinct layer positions (v, ascending, int32) with a move to one of the layer's
        positions ``changed`` (v) or to one of the lower nodes ``fired_nodes``."""
        nodes = np.concatenate([changed, fired_nodes]) if len(fired_nodes) else changed
        starts = self.parent_offsets[nodes]
        found = self.parents[slice_indices(starts, self.parent_offsets[nodes + 1] - starts)]
        if len(found) * _SORT_FRACTION < self.size:
            found.sort()
            return found[np.flatnonzero(np.diff(found, prepend=-1))]  # np.unique, without its hashing
        flags = np.zeros(self.size, dtype=bool)
        flags[found] = True
        return np.flatnonzero(flags).astype(np.int32)


class _Replay:
    """The values of a layer's ``lower`` positions (solved already) at each k in turn, read from
    their position-major log: a cursor per position, at its next change."""

    def __init__(self, lower: np.ndarray, first_node: int, log: _Log, values: np.ndarray) -> None:
        values[lower] = cached_row_differences(log.total_stones)[lower]  # V_0
        starts, ends = log.offsets[lower].astype(np.int64), log.offsets[lower + 1].astype(np.int64)
        moving = np.flatnonzero(starts < ends)
        self.positions, self.cursors, self.ends = lower[moving], starts[moving], ends[moving]
        self.nodes = first_node + moving
        self.plies, self.values = log.plies.view(), log.values.view()
        self.next_plies = self.plies[self.cursors]  # -1 once a position's log is used up
        self.used_up = 0

    @property
    def pending(self) -> bool:
        """Whether some position still changes (at a k not yet replayed)."""
        return self.used_up < len(self.positions)

    def advance(self, plies_left: int, values: np.ndarray) -> np.ndarray:
        """Set ``values`` of the positions that change at k = ``plies_left`` to V_k; return their nodes."""
        fired = np.flatnonzero(self.next_plies == plies_left)
        if not len(fired):
            return fired
        cursors = self.cursors[fired]
        nodes = self.nodes[fired]
        values[self.positions[fired]] = self.values[cursors]
        cursors += 1
        more = cursors < self.ends[fired]
        self.cursors[fired] = cursors
        self.next_plies[fired] = np.where(more, self.plies[np.minimum(cursors, self.ends[fired] - 1)], -1)
        self.used_up += len(fired) - int(np.count_nonzero(more))
        if 2 * self.used_up > len(self.positions):
            keep = self.next_plies >= 0
            self.positions, self.cursors, self.ends = self.positions[keep], self.cursors[keep], self.ends[keep]
            self.nodes, self.next_plies, self.used_up = self.nodes[keep], self.next_plies[keep], 0
        return nodes


def _iterate_layer(
    graph: _LayerGraph, values: np.ndarray, log: _Log, lower: list[_Period], cap: int
) -> tuple[LayerChanges, _Period]:
    """V_1 .. V_cap of a layer, recomputing at k only the parents of what changed at k - 1 in the
    layer or below, until nothing changes any more or the layer's changes repeat (``_Repeats``)."""
    replay = _Replay(graph.lower, graph.size, log, values)
    changes = LayerChanges()
    repeats = _Repeats(lower, cap)
    last_change = 0
    for plies_left in range(1, cap + 1):
        fired = replay.advance(plies_left - 1, values) if plies_left > 1 else None
        if fired is None or (len(changes.positions[-1]) + len(fired)) * _SWEEP_FRACTION > graph.size:
            changed, new_values = graph.sweep(values)  # at k = 1, and whenever many changed
        else:
            changed, new_values = graph.update(graph.parents_of(changes.positions[-1], fired), values)
        changes.plies.append(plies_left)
        changes.positions.append(changed)
        changes.values.append(new_values)
        if len(changed):
            last_change = plies_left
        elif not replay.pending:
            break  # nothing will ever change again
        period = repeats.found(changes)
        if period:
            for later in range(plies_left + 1, cap + 1):  # the same arrays again: no memory
                changes.plies.append(later)
                changes.positions.append(changes.positions[later - 1 - period])
                changes.values.append(changes.values[later - 1 - period])
            return changes, _Period(period, plies_left)
    return changes, _Period(1, last_change + 1)


class _Repeats:
    """Finds when a layer's values have become periodic in k, from its changes.

    If the changes at k' = k - P + 1 .. k (positions and values) are those at k' - P, then
    V_k = V_(k - P) on the layer (a position that changed in the last P plies took the value
    of its last change P plies before; any other did not change in either window). If also
    V_j = V_(j - P) on the lower positions for every j >= k (their layers' ``_Period``s: P a
    multiple of each period p, and k >= onset + P - p), then V_(k + 1) = V_(k + 1 - P) on the
    layer, and so on to the cap: from k + 1 on, the changes at k' are those at k' - P.
    Exact, and cheap: only plies with as many changes are compared.
    """

    def __init__(self, lower: list[_Period], cap: int) -> None:
        self.lower, self.cap = lower, cap
        self.step = math.lcm(*(period.period for period in lower)) if lower else 1
        self.runs: dict[int, int] = {}  # candidate P: plies in a row whose changes are those P plies before
        self.plies_of_length: dict[int, list[int]] = {}

    def found(self, changes: LayerChanges) -> int:
        """The period P if the layer's changes repeat from the last k of ``changes`` on, else 0."""
        plies_left, positions, values = changes.plies[-1], changes.positions, changes.values
        same_length = self.plies_of_length.setdefault(len(positions[-1]), [])
        runs = {}
        for earlier in same_length:
            period = plies_left - earlier
            if period % self.step or 3 * period > self.cap:
                continue
            if np.array_equal(positions[earlier - 1], positions[-1]) and np.array_equal(values[earlier - 1], values[-1]):
                runs[period] = self.runs.get(period, 0) + 1
        same_length.append(plies_left)
        self.runs = runs
        for period, run in sorted(runs.items()):
            if run >= period and all(plies_left >= low.onset + period - low.period for low in self.lower):
                return period
        return 0


class _Log:
    """The position-major log of the layers solved so far (``Solution``'s layout), a layer at a time."""

    def __init__(self, size: int, total_stones: int, spill: Path | None = None) -> None:
        self.offsets = np.zeros(size + 1, dtype=np.int32)  # int64 once the log passes 2**31 - 1 changes
        self.plies, self.values = _GrowingArray(np.int16, spill), _GrowingArray(np.int8, spill)
        self.total_stones = total_stones

    def append(self, start: int, stop: int, changes: LayerChanges) -> None:
        """Add the layer of positions start .. stop - 1 from its ``changes`` (ply-major, positions
        counted from start, ascending at each k), a block of positions at a time: the block's slice
        of each k's changes (a binary search) packed as (position, k, value) in one unsigned int,
        sorted, and written in one go."""
        total = sum(len(changed) for changed in changes.positions)
        base = self.plies.length
        if base + total >= 2**31 and self.offsets.dtype == np.int32:
            self.offsets = self.offsets.astype(np.int64)
        self.offsets[start + 1 : stop + 1] = base
        if not total:
            return
        plies, values = self.plies.extend(total), self.values.extend(total)
        ply_bits = changes.plies[-1].bit_length()
        # 32 bits when a block of 2**12 positions or more still fits in them (caps up to 4095).
        packed = np.dtype(np.uint32 if 8 + ply_bits + 12 <= 32 else np.uint64)
        byte, ply_mask, position_shift = packed.type(8), packed.type((1 << ply_bits) - 1), packed.type(8 + ply_bits)
        block = min(1 << (8 * packed.itemsize - 8 - ply_bits), max(1, (stop - start) * _LOG_BLOCK_CHANGES // total))
        edges = [*range(0, stop - start, block), stop - start]
        cuts = np.array([np.searchsorted(changed, edges) for changed in changes.positions]).T.tolist()
        written = 0
        for low, high, first, last in zip(edges, edges[1:], cuts, cuts[1:], strict=False):
            kept = [k for k, (begin, end) in enumerate(zip(first, last, strict=True)) if end > begin]
            keys = np.concatenate([changes.positions[k][first[k] : last[k]] for k in kept]).astype(packed)
            np.subtract(keys, packed.type(low), out=keys)
            np.left_shift(keys, position_shift, out=keys)
            plies_left = np.left_shift(np.array([changes.plies[k] for k in kept], dtype=packed), byte)
            np.bitwise_or(keys, np.repeat(plies_left, [last[k] - first[k] for k in kept]), out=keys)
            np.bitwise_or(keys, np.concatenate([changes.values[k][first[k] : last[k]] for k in kept]).view(np.uint8), out=keys)
            keys.sort()  # by position, then k (a position changes at most once a ply)
            end = written + len(keys)
            plies[written:end] = np.bitwise_and(np.right_shift(keys, byte), ply_mask)
            values[written:end] = keys.astype(np.uint8).view(np.int8)
            lengths = np.bincount(np.right_shift(keys, position_shift).astype(np.intp), minlength=high - low)
            self.offsets[start + low + 1 : start + high + 1] = base + written + np.cumsum(lengths)
            written = end

    def finish(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        return self.offsets, self.plies.finish(), self.values.finish()


class _GrowingArray:
    """A 1-D array that grows at its end without a copy: a memory map, which ``mmap.resize``
    moves whole (mremap) and whose pages take memory only once written, so the capacity can
    double for nothing. A view (``view``, ``extend``) that outlives the next ``extend`` sees the old memory.

    Anonymous and private; or, given a ``folder``, shared with an unnamed file there (removed
    as it is made, so that a killed process leaves nothing: its blocks go with the map). The
    file's pages are the page cache's, which the system writes out and takes back when memory
    runs short, where it would kill the process for anonymous ones: the log of a rule set whose
    games cycle (about 250 changes a position, 3 bytes each) may be larger than the rest of its
    solve and analysis together, and is read a block at a time once written."""

    def __init__(self, dtype: type[np.generic], folder: Path | None = None) -> None:
        self.dtype = np.dtype(dtype)
        self.length = 0
        if folder is None:
            self._map = mmap.mmap(-1, mmap.PAGESIZE, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
            return
        folder.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryFile(dir=folder, prefix="solver-log-") as file:
            file.truncate(mmap.PAGESIZE)
            self._map = mmap.mmap(file.fileno(), mmap.PAGESIZE, flags=mmap.MAP_SHARED)  # holds its own descriptor

    def extend(self, count: int) -> np.ndarray:
        """Grow by ``count`` items; the view of them, to be written."""
        needed = (self.length + count) * self.dtype.itemsize
        if needed > len(self._map):
            self._resize(max(needed, 2 * len(self._map)))
        tail = np.frombuffer(self._map, self.dtype, count=count, offset=self.length * self.dtype.itemsize)
        self.length += count
        return tail

    def view(self) -> np.ndarray:
        return np.frombuffer(self._map, self.dtype, count=self.length)

    def finish(self) -> np.ndarray:
        """The array, its memory map cut to its length (the map lives as long as the array)."""
        if not self.length:
            return np.zeros(0, dtype=self.dtype)
        self._resize(self.length * self.dtype.itemsize)
        return np.frombuffer(self._map, self.dtype)

    def _resize(self, size: int) -> None:
        try:
            self._map.resize(size)
        except (OSError, SystemError, BufferError):
            # No mremap (macOS), or a view still alive: a dask worker's profiler holds the frames it
            # samples, and with them the views of their locals. A new map and a copy, then; the old
            # map goes when its last view does.
            bigger = mmap.mmap(-1, size, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
            used = min(size, self.length * self.dtype.itemsize)
            np.frombuffer(bigger, np.uint8, count=used)[:] = np.frombuffer(self._map, np.uint8, count=used)
            with contextlib.suppress(BufferError):
                self._map.close()
            self._map = bigger


def position_major(
    changes: LayerChanges, size: int, value_type: type[np.generic] = np.int8
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The log ordered by position, then plies left (a counting sort: each k's positions are
    distinct); its values of ``value_type`` (int8 for the solver's values). It empties ``changes``."""
    lengths = np.zeros(size, dtype=np.int32)  # a position changes at most once a ply
    for changed in changes.positions:
        lengths[changed] += 1
    total = int(lengths.sum(dtype=np.int64))
    offsets = np.zeros(size + 1, dtype=np.int32 if total < 2**31 else np.int64)
    np.cumsum(lengths, out=offsets[1:])
    del lengths
    cursor = offsets[:-1].copy()
    change_plies = np.empty(total, dtype=np.int16)
    change_values = np.empty(total, dtype=value_type)
    # Reversed, so that pop() gives increasing k and frees each k's arrays once they are used.
    changes.plies.reverse()
    changes.positions.reverse()
    changes.values.reverse()
    while changes.plies:
        plies_left, changed, values = changes.plies.pop(), changes.positions.pop(), changes.values.pop()
        where = cursor[changed]
        change_plies[where] = plies_left
        change_values[where] = values
        cursor[changed] += 1
    return offsets, change_plies, change_values
