"""The solver's log: the value of every position as it changes with the plies left, kept
position-major (a slice of (ply, value) changes a position), and the scans that read it.

``sweep_values`` builds such a log by sweeping the recursion over every position, ply by ply
(the way for a few dozen plies); ``Solution`` (engine.solver.solution) keeps the log the
retrograde analysis writes (engine.solver.layers) and reads it through ``search_log``,
``walk_log`` and ``per_position``.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np

from engine.solver.layers import NO_MOVE, LayerChanges, cached_row_differences, distinct, position_major
from engine.store import return_freed_memory
from engine.tables import PositionTables, row_differences

# Positions a full sweep (sweep_values) takes at a time.
_SWEEP_BLOCK = 1 << 20


@dataclass(frozen=True)
class ValueLog:
    """V_0 .. V_plies of every position, as the solver's log of changes (``Solution``'s layout)."""

    plies: int
    total: int  # the stones of the rule set (its index)
    offsets: np.ndarray
    change_plies: np.ndarray
    change_values: np.ndarray
    final: np.ndarray  # V_plies of every position, int8

    def values_of(self, indices: np.ndarray, plies_left: int | np.ndarray) -> np.ndarray:
        """V_k of the positions at ``indices`` with k = ``plies_left`` (at most ``plies``), as int8."""
        indices = np.asarray(indices, dtype=np.int64)
        if isinstance(plies_left, int | np.integer) and plies_left >= self.plies:
            return self.final[indices]
        plies = np.broadcast_to(np.asarray(plies_left, dtype=np.int64), indices.shape)
        base = cached_row_differences(self.total)[indices]
        return search_log(self.offsets, self.change_plies, self.change_values, indices, plies, base)


def sweep_values(tables: PositionTables, plies: int) -> ValueLog:
    """V_0 .. V_plies of every position of ``tables`` by ``plies`` sweeps of the recursion over
    every position (no reverse edges: the way for a few dozen plies, where most positions change
    at every k), in blocks of positions so that the temporaries stay small."""
    size = tables.size
    values = np.append(row_differences(tables.index.total), np.int8(NO_MOVE))  # index -1: an illegal move
    live = np.flatnonzero(tables.legal.any(axis=1)).astype(np.int32)
    changes = LayerChanges()
    for plies_left in range(1, plies + 1):
        changed, new_values = [], []
        for start in range(0, len(live), _SWEEP_BLOCK):
            todo = live[start : start + _SWEEP_BLOCK]
            children = tables.child[todo]
            best = (tables.captured[todo].astype(np.int16) - values[children]).max(axis=1)
            differs = best != values[todo]
            changed.append(todo[differs])
            new_values.append(best[differs].astype(np.int8))
        changes.plies.append(plies_left)
        changes.positions.append(np.concatenate(changed))
        changes.values.append(np.concatenate(new_values))
        values[changes.positions[-1]] = changes.values[-1]
    offsets, change_plies, change_values = position_major(changes, size)
    return ValueLog(plies, tables.index.total, offsets, change_plies, change_values, values[:size].copy())


def per_position(
    reduce: np.ufunc, entry: Callable[[np.ndarray], np.ndarray], plies: np.ndarray, offsets: np.ndarray, empty: Any
) -> np.ndarray:
    """``reduce`` (np.maximum, np.logical_or, ...) over each position's slice of a position-major
    log (``plies`` one per change, ``offsets`` as Solution's) of ``entry(plies)``, ``empty`` for a
    position with none. The log is taken a block of whole slices at a time (about _SCAN_ENTRIES
    changes), so that ``entry``'s temporaries stay small where the log of a rule set whose
    positions keep cycling holds billions of changes."""
    size = len(offsets) - 1
    kind = entry(plies[:0]).dtype
    reduced = np.empty(size, dtype=kind)
    for low, high in _log_blocks(offsets):
        first, last = int(offsets[low]), int(offsets[high])
        # One more entry, so that an empty slice at the end of the block has an element to start at.
        padded = np.append(entry(plies[first:last]), np.asarray(empty, dtype=kind))
        block = reduced[low:high]
        block[:] = reduce.reduceat(padded, offsets[low:high].astype(np.int64) - first)
        block[offsets[low + 1 : high + 1] == offsets[low:high]] = empty
    return reduced


# Changes of the log that a scan over it (per_position, walk_log) takes at a time: a few bytes
# of temporaries each, where the whole log of a cycling rule set at 7 stones a pit holds billions.
_SCAN_ENTRIES = 1 << 25


def _log_blocks(offsets: np.ndarray) -> list[tuple[int, int]]:
    """The log's positions cut into blocks [low, high) of whole slices, about _SCAN_ENTRIES changes each."""
    size, total = len(offsets) - 1, int(offsets[-1])
    cuts = np.searchsorted(offsets, np.arange(_SCAN_ENTRIES, total, _SCAN_ENTRIES), side="right") - 1
    edges = distinct(np.concatenate([[0], cuts, [size]])).tolist()
    return list(itertools.pairwise(edges))


# Plies of the log's changes a step of walk_log selects at a time (about 400,000 a ply with
# singletons allowed at 7 stones a pit, some millions where positions keep cycling), 7 bytes each.
_WALK_PLIES = 16


def walk_log(
    offsets: np.ndarray, plies: np.ndarray, values: np.ndarray, start: np.ndarray, first: int, last: int
) -> Iterator[np.ndarray]:
    """Solution.walk_values over a position-major log (``start``: V_first of every position). A
    position's changes are at distinct plies, so applying those at j to V_(j-1) gives V_j."""
    current = np.append(start.astype(np.int8), np.int8(0))
    yield current
    blocks = _log_blocks(offsets)
    for window in range(first + 1, last + 1, _WALK_PLIES):
        top = min(window + _WALK_PLIES, last + 1)
        owners, new_values, bounds = _window_changes(offsets, plies, values, blocks, window, top)
        # The blocks' pieces, each below glibc's mmap threshold, would otherwise stay in the heap:
        # a gigabyte at 6 stones a pit where positions keep cycling.
        return_freed_memory()
        for step in range(top - window):
            taken = slice(bounds[step], bounds[step + 1])
            current[owners[taken]] = new_values[taken]
            yield current


def _window_changes(
    offsets: np.ndarray, plies: np.ndarray, values: np.ndarray, blocks: list[tuple[int, int]], window: int, top: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The log's changes at window <= j < top, ply by ply: their positions (int32) and new values,
    those at j from bounds[j - window] to bounds[j - window + 1]. A block of the log at a time,
    its owners by a repeat of its positions (a third faster than a binary search of the offsets
    for each change found), each block's changes sorted by ply and then copied to their ply's
    place: no index of the window's every change is made."""
    steps = top - window
    pieces: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []
    for low, high in blocks:
        first, last = int(offsets[low]), int(offsets[high])
        chunk = plies[first:last]
        taken = np.flatnonzero((chunk >= window) & (chunk < top))
        at = chunk[taken]
        order = np.argsort(at, kind="stable")
        taken = taken[order]
        owners = np.repeat(np.arange(low, high, dtype=np.int32), np.diff(offsets[low : high + 1]))[taken]
        pieces.append((owners, values[first:last][taken], np.searchsorted(at[order], np.arange(window, top + 1))))
    counts = np.zeros(steps, dtype=np.int64)
    for _, _, piece_bounds in pieces:
        counts += np.diff(piece_bounds)
    bounds = np.concatenate([[0], np.cumsum(counts)])
    owners, new_values = np.empty(bounds[-1], dtype=np.int32), np.empty(bounds[-1], dtype=values.dtype)
    cursor = bounds[:-1].tolist()
    while pieces:
        piece_owners, piece_values, piece_bounds = pieces.pop(0)
        for step, (begin, end) in enumerate(zip(piece_bounds[:-1].tolist(), piece_bounds[1:].tolist(), strict=True)):
            owners[cursor[step] : cursor[step] + end - begin] = piece_owners[begin:end]
            new_values[cursor[step] : cursor[step] + end - begin] = piece_values[begin:end]
            cursor[step] += end - begin
    return owners, new_values, bounds


def search_log(
    offsets: np.ndarray, plies: np.ndarray, values: np.ndarray, indices: np.ndarray, plies_left: np.ndarray, base: np.ndarray
) -> np.ndarray:
    """For each position, the value of its last change with plies <= plies_left, else ``base``
    (a binary search in every slice at once)."""
    low = offsets[indices].astype(np.int64)
    high = offsets[indices + 1].astype(np.int64)
    first = low.copy()
    if not len(plies):
        return base
    while True:
        searching = low < high
        if not searching.any():
            break
        middle = np.minimum((low + high) // 2, len(plies) - 1)
        right = searching & (plies[middle] <= plies_left)
        low = np.where(right, middle + 1, low)
        high = np.where(searching & ~right, middle, high)
    return np.where(low > first, values[np.maximum(low - 1, 0)], base).astype(values.dtype)
