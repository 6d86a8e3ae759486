"""The strong solution: the value of every position of a rule set at every number of plies left.

RULES.md, "Perfect play": a position is (board, mover, plies left before the cap), its value
the final score difference still to come, the mover's minus the opponent's, under optimal play
by both sides. With k plies left (``engine.tables`` numbers the boards, seen by the mover):

    V_0(i) = own_row(i) - opponent_row(i)                  the cap: each takes its own row
    V_k(i) = own_row(i) - opponent_row(i)                  if the mover has no legal move
    V_k(i) = max over legal pits p of captured[i, p] - V_{k-1}(child[i, p])

Most positions settle after a few dozen plies (captures decide them), but some cycle without
captures and keep changing however large k grows. So the solver does not store a table per
ply: it keeps a log of every change, position-major:

    offsets[i] .. offsets[i + 1]   position i's slice of the log, in increasing plies left
    change_plies[j]                from this many plies left on ...
    change_values[j]               ... position i has this value (until the next change)

V_k(i) is the value of the last change of i's slice with change_plies <= k (a binary search),
and V_0(i) when there is none; a position that never changes costs only its offset.

The method: a layer at a time. The index numbers the boards by their stones (``engine.index``:
the boards of s stones are one layer of consecutive indices) and a move never adds stones, so
a layer's values need only its own and those of the lower positions its captures reach, which
are solved already. For each layer, in increasing stones, the solver iterates k = 1 .. cap:
it replays the lower positions' values from their finished log (a cursor per position), and
recomputes at k only the layer's positions with a child that changed at k - 1 (through the
reverse edges of the layer's moves), or sweeps the whole layer when many did. It stops early
when nothing can change any more, or when the layer's changes have become periodic in k and
its lower positions' provably are too (``_Repeats``: an exact test, after which the changes of
k are those of k - P up to the cap; with singletons playable every layer turns periodic, with
period 2, by k = 45). The layer's changes are then sorted into position-major order and
appended to the log, whose arrays grow in place (``_GrowingArray``) to their final size.

Memory: the log (3 bytes a change, and the offsets) and the tables, plus, while a layer is
solved, its move graph and its changes in ply-major order (5 bytes a change of the layer): for
s stones a pit, the largest layer has C(6s + 5, 5) boards (8.3 M of the 90.8 M at 10 stones).
The solution does not depend on the method: its arrays are those of a plain iteration over
every position k by k (``sweep_values``), which the tests check.

Ply 0 is not in the tables: its captures are forfeited, so its moves come from the scalar
engine (``engine.positions``), and its value is computed from its children's at cap - 1.
Solutions are cached in the ``solutions/`` folder of the caller's cache folder (``engine.cache``),
keyed by the rule set's name, the cap and the engine version, and sealed with what they hold
(``engine.integrity``).
"""

from __future__ import annotations

import contextlib
import json
import logging
import math
import mmap
import time
from dataclasses import dataclass, field
from functools import lru_cache
from math import comb
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np

from engine.board import NORTH, SOUTH, Board, check_board, rotate, unpack
from engine.cache import cache_folder
from engine.index import BoardIndex, board_index
from engine.integrity import DamagedFileError, read_arrays, write_arrays
from engine.memory import return_freed_memory
from engine.moves import Option
from engine.positions import positions
from engine.rules import MAX_PLY_CAP, PITS, ROW, Rules, check_rules
from engine.scoring import row_difference
from engine.tables import CONFIGURED, PositionTables, load_tables, table_rules, tables_folder
from engine.version import ENGINE_VERSION

log = logging.getLogger(__name__)
DEFAULT_RULES = Rules()
ARRAYS = ("offsets", "change_plies", "change_values", "start_values")
# An illegal move points at an extra position of this value: captured - 127 loses to any legal move.
_NO_MOVE = 127
# Above size / this many changed positions (of a layer and below it), a sweep of the layer's
# every position is faster than finding their parents through the reverse edges.
_SWEEP_FRACTION = 8
# Positions a full sweep (sweep_values) takes at a time.
_SWEEP_BLOCK = 1 << 20
# Below size / this many parents, sorting them beats flagging them in an array of the layer.
_SORT_FRACTION = 64
# A layer's log is sorted by position in blocks of about this many changes (fewer positions
# where it is dense), so that the sort's keys stay small.
_LOG_BLOCK_CHANGES = 1 << 22


@dataclass(frozen=True)
class Solution:
    """The value of every position of ``rules`` (its ``ply_cap`` is the cap) at every ply."""

    rules: Rules
    index: BoardIndex
    offsets: np.ndarray  # (n + 1,) int32 or int64
    change_plies: np.ndarray  # (changes,) int16
    change_values: np.ndarray  # (changes,) int8
    start_values: np.ndarray  # (cap + 1,) int8: the start's value at ply 0 under each cap
    # Seconds spent: "tables" loading them, "solve" in all (of which "move_graph" building the
    # reverse edges and "iterate" the plies), and "read" when the solution came from the cache.
    timings: dict[str, float] = field(default_factory=dict)

    @property
    def cap(self) -> int:
        return self.rules.ply_cap

    @property
    def size(self) -> int:
        return self.index.size

    def value(self, board: Board, mover: int, ply: int) -> int:
        """The value for ``mover`` (0 South, 1 North) to move on ``board`` after ``ply`` plies:
        its final total minus the opponent's, counting what is still to come, under perfect play."""
        seen = self._seen(board, mover, ply)
        plies_left = self.cap - ply
        if plies_left <= 0:
            return row_difference(seen)
        if ply == 0:
            return int(self._first_move_values(seen, np.array([plies_left]))[0])
        return self._value_at(self.index.rank(seen), plies_left, row_difference(seen))

    def best_moves(self, board: Board, mover: int, ply: int) -> tuple[int, ...]:
        """The moves (absolute pits, ascending) that achieve ``value``; () when there is no move."""
        seen = self._seen(board, mover, ply)
        if ply >= self.cap:
            return ()
        options = positions(self.rules).options(seen, ply)
        scores = [self._move_value(option, self.cap - ply) for option in options]
        best = max(scores, default=0)
        return tuple(option.pit + ROW * mover for option, score in zip(options, scores, strict=True) if score == best)

    def move_values(self, board: Board, mover: int, ply: int) -> tuple[int, ...]:
        """What each legal move is worth to ``mover`` under perfect play (its capture minus the
        value of the position it leaves), in the order of the moves, pits ascending; () when
        there is no move or the cap is reached."""
        seen = self._seen(board, mover, ply)
        if ply >= self.cap:
            return ()
        return tuple(self._move_value(option, self.cap - ply) for option in positions(self.rules).options(seen, ply))

    def start_value(self, cap: int | None = None) -> int:
        """The start's value (South's final total minus North's) in the game capped at ``cap``
        plies (0 .. self.cap; default the full cap)."""
        cap = self.cap if cap is None else cap
        if not isinstance(cap, int) or isinstance(cap, bool) or not 0 <= cap <= self.cap:
            raise ValueError(f"this solution covers caps 0 to {self.cap}, not {cap!r}")
        return int(self.start_values[cap])

    def values(self, plies_left: int) -> np.ndarray:
        """V_k of every position (index order, mover's view) for k = ``plies_left``, as int8."""
        return self.values_of(np.arange(self.size), plies_left)

    def values_of(self, indices: np.ndarray, plies_left: int | np.ndarray) -> np.ndarray:
        """V_k of the positions at ``indices`` (mover's view) with k = ``plies_left`` (a scalar or
        an array like ``indices``), as int8; k <= 0 gives own row minus opponent row."""
        indices = np.asarray(indices, dtype=np.int64)
        plies = np.broadcast_to(np.asarray(plies_left, dtype=np.int64), indices.shape)
        base = self._row_differences[indices]
        return _search_log(self.offsets, self.change_plies, self.change_values, indices, plies, base)

    def changes_per_ply(self) -> np.ndarray:
        """How many positions change value at each k = 0 .. cap (index k; 0 at k = 0)."""
        return np.bincount(self.change_plies, minlength=self.cap + 1)

    def still_changing(self, after: int, until: int | None = None) -> int:
        """How many positions change value at some plies-left k with after < k <= until
        (default the cap). V_k does not depend on the cap, so this also answers for smaller caps."""
        until = self.cap if until is None else until
        changing = (self.change_plies > after) & (self.change_plies <= until)
        return int(np.count_nonzero(per_position(np.logical_or, changing, self.offsets, False)))

    @property
    def never_settled(self) -> int:
        """Positions that never settle: those whose value still changes at some plies-left k in
        the second half of the cap, cap // 2 < k <= cap (``still_changing(cap // 2)``).

        For the default rules this is the same set of 7,477 positions at every cap from 200 to
        2,000 (measured): each one's value cycles with the plies left, with period 6, 14 or 26,
        while every other position has settled for good by k = 100. At smaller caps the count
        also takes in positions still on their way to settling (33,296 at cap 100).
        """
        return self.still_changing(self.cap // 2)

    def nbytes(self) -> int:
        return sum(getattr(self, name).nbytes for name in ARRAYS)

    @property
    def _row_differences(self) -> np.ndarray:
        return _cached_row_differences(self.rules.total_stones)  # one array per stone count, shared with ValueLog

    def _seen(self, board: Board, mover: int, ply: int) -> Board:
        check_board(board)
        if mover not in (SOUTH, NORTH) or isinstance(mover, bool):
            raise ValueError(f"mover is 0 (South) or 1 (North), not {mover!r}")
        if not isinstance(ply, int) or isinstance(ply, bool) or ply < 0:
            raise ValueError(f"ply is the number of moves already played, a whole number >= 0, not {ply!r}")
        stones = sum(unpack(board))
        if stones > self.rules.total_stones:
            raise ValueError(
                f"board {unpack(board)} holds {stones} stones; the solution of {self.rules.name} "
                f"covers boards of at most {self.rules.total_stones}"
            )
        return board if mover == SOUTH else rotate(board)

    def _value_at(self, position: int, plies_left: int, base: int) -> int:
        if plies_left <= 0:
            return base
        low, high = int(self.offsets[position]), int(self.offsets[position + 1])
        found = int(np.searchsorted(self.change_plies[low:high], plies_left, side="right"))
        return int(self.change_values[low + found - 1]) if found else base

    def _move_value(self, option: Option, plies_left: int) -> int:
        """What a move is worth to the mover: its capture minus the child's value."""
        child = option.child
        return option.captured - self._value_at(self.index.rank(child), plies_left - 1, row_difference(child))

    def _first_move_values(self, seen: Board, plies_left: np.ndarray) -> np.ndarray:
        """The value of ``seen`` at ply 0 (forfeit moves) for each k of ``plies_left`` (>= 1)."""
        options = positions(self.rules).options(seen, 0)
        if not options:
            return np.full(len(plies_left), row_difference(seen), dtype=np.int16)
        scores = [
            captured - self.values_of(np.full(len(plies_left), self.index.rank(child)), plies_left - 1).astype(np.int16)
            for _, child, _, captured in options
        ]
        return np.max(scores, axis=0)


def solve(
    rules: Rules = DEFAULT_RULES,
    cap: int | None = None,
    *,
    tables: PositionTables | None = None,
    cache: Path | None = CONFIGURED,
    verbose: bool = True,
) -> Solution:
    """The strong solution of ``rules`` capped at ``cap`` plies (default ``rules.ply_cap``), from
    the cache when it holds a sound copy, else built and cached.

    ``cache`` is a folder of solutions; by default the ``solutions/`` folder of the engine's
    cache folder (``engine.cache``). ``tables`` saves loading the position tables (only a
    build needs them; else they come from the engine's cache folder). ``cache=None`` builds
    without touching the disk, the tables included. A build is logged (INFO, or DEBUG without ``verbose``).
    """
    check_rules(rules)
    game = rules.replace(ply_cap=rules.ply_cap if cap is None else _checked_cap(cap))
    cache = solutions_folder() if cache is CONFIGURED else cache
    path = None if cache is None else solution_path(game, cache)
    found = None if path is None else _read(path, game)
    if found is not None:
        return found
    started = time.perf_counter()
    if tables is None:
        tables = load_tables(table_rules(game), None if cache is None else tables_folder(), verbose=verbose)
    loaded = time.perf_counter() - started
    built = build_solution(game, tables)
    built.timings["tables"] = loaded
    if path is not None:
        _write(path, built)
        level = logging.INFO if verbose else logging.DEBUG
        log.log(level, "solved %s in %.1f s: %s", game.name, built.timings["solve"], path)
    return built


def cached_solution(rules: Rules = DEFAULT_RULES, cache: Path | None = CONFIGURED) -> Solution | None:
    """The solution of ``rules`` (capped at rules.ply_cap) if the cache holds a sound copy, else
    None: never solves (a report must not spend half a minute on a solution nobody asked for)."""
    cache = solutions_folder() if cache is CONFIGURED else cache
    return None if cache is None else _read(solution_path(rules, cache), rules)


def solutions_folder() -> Path | None:
    """The folder of solutions in the engine's cache folder, None when the engine builds in memory."""
    folder = cache_folder()
    return None if folder is None else folder / "solutions"


def build_solution(rules: Rules, tables: PositionTables) -> Solution:
    """Solve every position of ``tables`` for every k = 0 .. rules.ply_cap (vectorised), a layer of
    boards at a time in increasing stones (the module's docstring gives the method)."""
    if tables.index.total != rules.total_stones or table_rules(tables.rules) != table_rules(rules):
        raise ValueError(f"the tables of {tables.rules.name} cannot solve {rules.name}")
    started = time.perf_counter()
    timings = {"move_graph": 0.0, "iterate": 0.0, "log": 0.0}
    offsets, change_plies, change_values = _solve_layers(tables, rules.ply_cap, timings)
    solution = Solution(rules, tables.index, offsets, change_plies, change_values, np.zeros(rules.ply_cap + 1, np.int8), timings)
    solution.start_values[1:] = solution._first_move_values(positions(rules).start, np.arange(1, rules.ply_cap + 1))
    timings["solve"] = time.perf_counter() - started
    return solution


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
        base = _cached_row_differences(self.total)[indices]
        return _search_log(self.offsets, self.change_plies, self.change_values, indices, plies, base)


def sweep_values(tables: PositionTables, plies: int) -> ValueLog:
    """V_0 .. V_plies of every position of ``tables`` by ``plies`` sweeps of the recursion over
    every position (no reverse edges: the way for a few dozen plies, where most positions change
    at every k), in blocks of positions so that the temporaries stay small."""
    size = tables.size
    values = np.append(row_differences(tables.index.total), np.int8(_NO_MOVE))  # index -1: an illegal move
    live = np.flatnonzero(tables.legal.any(axis=1)).astype(np.int32)
    changes = _Changes()
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
    offsets, change_plies, change_values = _position_major(changes, size)
    return ValueLog(plies, tables.index.total, offsets, change_plies, change_values, values[:size].copy())


@lru_cache(maxsize=4)
def _cached_row_differences(total: int) -> np.ndarray:
    return row_differences(total)


def row_differences(total: int) -> np.ndarray:
    """V_0 of every board of at most ``total`` stones, in index order (int8): own row minus
    opponent row, computed from the index's bars without unranking a single board.

    In index order the bars p_0 < ... < p_5 of ``engine.index`` run through the 6-subsets of
    0 .. total + 5 in colex order: those of largest bar m follow all those of smaller largest
    bar, ordered as their first five bars are, and so on down. Own row is p_2 - 2 stones, the
    opponent's row p_5 - p_2 - 3, so V_0 = 2 p_2 - p_5 + 1.
    """
    top = total + PITS  # every bar is below this
    third = np.concatenate([np.full(comb(m, 2), m, dtype=np.int16) for m in range(2, top)])  # p_2 of the 3-subsets
    for size in range(ROW, PITS):
        third = np.concatenate([third[: comb(m, size)] for m in range(size, top)])
    last = np.repeat(np.arange(PITS - 1, top, dtype=np.int16), [comb(m, PITS - 1) for m in range(PITS - 1, top)])
    return (2 * third - last + 1).astype(np.int8)


def slice_indices(starts: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """The indices of the slices [start, start + length), concatenated: each slice's start, then +1 within it."""
    indices: np.ndarray = np.repeat(starts - np.cumsum(lengths) + lengths, lengths) + np.arange(int(lengths.sum()))
    return indices


def solution_path(rules: Rules, cache: Path) -> Path:
    """Where solve keeps the solution of ``rules`` (capped at rules.ply_cap) in a folder of solutions."""
    return cache / f"{table_rules(rules).name}-cap{rules.ply_cap}-engine{ENGINE_VERSION}.npz"


@dataclass
class _Changes:
    """The positions that changed at each k and their new values, in increasing k."""

    plies: list[int] = field(default_factory=list)
    positions: list[np.ndarray] = field(default_factory=list)
    values: list[np.ndarray] = field(default_factory=list)


class _Period(NamedTuple):
    """What a solved layer promises its parents: V_j = V_(j - period) on all its positions for
    onset <= j <= cap (period 1 from the ply after its last change when it settles)."""

    period: int
    onset: int


def _solve_layers(tables: PositionTables, cap: int, timings: dict[str, float]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The position-major log of every position, the layers solved in increasing stones."""
    index = tables.index
    values = np.append(row_differences(index.total), np.int8(_NO_MOVE))  # index -1: an illegal move
    log = _Log(index.size, index.total)
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
                     an illegal move's 0 - _NO_MOVE is -127
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
        values[lower] = _cached_row_differences(log.total_stones)[lower]  # V_0
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


def _iterate_layer(graph: _LayerGraph, values: np.ndarray, log: _Log, lower: list[_Period], cap: int) -> tuple[_Changes, _Period]:
    """V_1 .. V_cap of a layer, recomputing at k only the parents of what changed at k - 1 in the
    layer or below, until nothing changes any more or the layer's changes repeat (``_Repeats``)."""
    replay = _Replay(graph.lower, graph.size, log, values)
    changes = _Changes()
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

    def found(self, changes: _Changes) -> int:
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

    def __init__(self, size: int, total_stones: int) -> None:
        self.offsets = np.zeros(size + 1, dtype=np.int32)  # int64 once the log passes 2**31 - 1 changes
        self.plies, self.values = _GrowingArray(np.int16), _GrowingArray(np.int8)
        self.total_stones = total_stones

    def append(self, start: int, stop: int, changes: _Changes) -> None:
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
    """A 1-D array that grows at its end without a copy: an anonymous private memory map, which
    ``mmap.resize`` moves whole (mremap) and whose pages take memory only once written, so the
    capacity can double for nothing. A view (``view``, ``extend``) that outlives the next ``extend`` sees the old memory."""

    def __init__(self, dtype: type[np.generic]) -> None:
        self.dtype = np.dtype(dtype)
        self.length = 0
        self._map = mmap.mmap(-1, mmap.PAGESIZE, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)

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


def _position_major(changes: _Changes, size: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The log ordered by position, then plies left (a counting sort: each k's positions are distinct)."""
    lengths = np.zeros(size, dtype=np.int32)  # a position changes at most once a ply
    for changed in changes.positions:
        lengths[changed] += 1
    total = int(lengths.sum(dtype=np.int64))
    offsets = np.zeros(size + 1, dtype=np.int32 if total < 2**31 else np.int64)
    np.cumsum(lengths, out=offsets[1:])
    del lengths
    cursor = offsets[:-1].copy()
    change_plies = np.empty(total, dtype=np.int16)
    change_values = np.empty(total, dtype=np.int8)
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


def per_position(reduce: np.ufunc, entries: np.ndarray, offsets: np.ndarray, empty: Any) -> np.ndarray:
    """``reduce`` (np.maximum, np.logical_or, ...) over each position's slice of a position-major
    log (``entries`` one per change, ``offsets`` as Solution's), ``empty`` for a position with none."""
    # One more entry, so that an empty slice at the end of the log has an element to start at.
    padded = np.append(entries, np.asarray(empty, dtype=entries.dtype))
    reduced: np.ndarray = reduce.reduceat(padded, offsets[:-1].astype(np.int64))
    reduced[np.diff(offsets) == 0] = empty
    return reduced


def _search_log(
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
    return np.where(low > first, values[np.maximum(low - 1, 0)], base).astype(np.int8)


def identity(rules: Rules) -> dict[str, str | int]:
    """What a file of the solution of ``rules`` (capped at rules.ply_cap) says it holds (engine.integrity)."""
    return {"kind": "solution", "rules": table_rules(rules).name, "cap": rules.ply_cap, "engine": ENGINE_VERSION}


def _read(path: Path, rules: Rules) -> Solution | None:
    started = time.perf_counter()
    try:
        arrays = read_arrays(path, identity(rules), (*ARRAYS, "timings"))
    except DamagedFileError as error:
        log.warning("%s; solving again", error)
        return None
    if arrays is None:
        return None
    timings = json.loads(str(arrays.pop("timings")))
    timings["read"] = time.perf_counter() - started
    return Solution(rules, board_index(rules.total_stones), **{name: arrays[name] for name in ARRAYS}, timings=timings)


def _write(path: Path, solution: Solution) -> None:
    arrays = {name: getattr(solution, name) for name in ARRAYS}
    write_arrays(path, {**arrays, "timings": np.array(json.dumps(solution.timings))}, identity(solution.rules))


def _checked_cap(cap: object) -> int:
    """The cap solve() was given, refused (naming ``cap``, not the rule set's field) unless a whole number of plies."""
    if not isinstance(cap, int) or isinstance(cap, bool) or not 1 <= cap <= MAX_PLY_CAP:
        raise ValueError(f"cap is the ply cap to solve at, a whole number from 1 to {MAX_PLY_CAP}, not {cap!r}")
    return cap
