"""The strong solution: the value of every position of a rule set at every number of plies left.

RULES.md, "Perfect play": a position is (board, mover, plies left before the cap), its value
the final score difference still to come, the mover's minus the opponent's, under optimal play
by both sides. With k plies left (``engine.tables`` numbers the boards, seen by the mover):

    V_0(i) = own_row(i) - opponent_row(i)                  the cap: each takes its own row
    V_k(i) = own_row(i) - opponent_row(i)                  if the mover has no legal move
    V_k(i) = max over legal pits p of captured[i, p] - V_{k-1}(child[i, p])

Most positions settle after a few dozen plies (captures decide them), but some cycle without
captures and keep changing however large k grows. So the solver does not store a table per
ply: it iterates k = 1 .. cap, recomputing at k only the parents of the positions that changed
at k - 1 (found through the reverse edges of the move graph), and keeps a log of every change,
position-major:

    offsets[i] .. offsets[i + 1]   position i's slice of the log, in increasing plies left
    change_plies[j]                from this many plies left on ...
    change_values[j]               ... position i has this value (until the next change)

V_k(i) is the value of the last change of i's slice with change_plies <= k (a binary search),
and V_0(i) when there is none; a position that never changes costs only its offset.

Ply 0 is not in the tables: its captures are forfeited, so its moves come from the scalar
engine (``engine.positions``), and its value is computed from its children's at cap - 1.
Solutions are cached in the ``solutions/`` folder of the caller's cache folder (``engine.cache``),
keyed by the rule set's name, the cap and the engine version, and checked against a SHA-256 of
their bytes (the pattern of ``engine.tables``).
"""

from __future__ import annotations

import hashlib
import json
import logging
import time
import zipfile
from dataclasses import dataclass, field
from functools import lru_cache
from math import comb
from pathlib import Path
from typing import Any

import numpy as np

from engine.board import NORTH, SOUTH, Board, check_board, rotate, unpack
from engine.cache import cache_folder, write_atomic
from engine.index import BoardIndex, board_index
from engine.moves import Option
from engine.positions import positions
from engine.rules import PITS, ROW, Rules
from engine.scoring import row_difference
from engine.tables import CONFIGURED, PositionTables, load_tables, table_rules, tables_folder
from engine.version import ENGINE_VERSION

log = logging.getLogger(__name__)
DEFAULT_RULES = Rules()
ARRAYS = ("offsets", "change_plies", "change_values", "start_values")
# An illegal move points at an extra position of this value: captured - 127 loses to any legal move.
_NO_MOVE = 127
# Above size / this many changed positions, finding their parents by a pass over every move
# is faster than through the reverse edges (measured on the default rules).
_SCAN_FRACTION = 4
# Positions a full sweep (sweep_values) takes at a time.
_SWEEP_BLOCK = 1 << 20
# Below size / this many parents, sorting them beats flagging them in an array of every position.
_SORT_FRACTION = 64


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
    game = rules.replace(ply_cap=rules.ply_cap if cap is None else cap)
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
    """Solve every position of ``tables`` for every k = 0 .. rules.ply_cap (vectorised)."""
    if tables.index.total != rules.total_stones or table_rules(tables.rules) != table_rules(rules):
        raise ValueError(f"the tables of {tables.rules.name} cannot solve {rules.name}")
    started = time.perf_counter()
    graph = _MoveGraph(tables)
    timings = {"move_graph": time.perf_counter() - started}
    log = _iterate(graph, row_differences(rules.total_stones), rules.ply_cap)
    del graph
    timings["iterate"] = time.perf_counter() - started - timings["move_graph"]
    offsets, change_plies, change_values = _position_major(log, tables.size)
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


def checksum(arrays: dict[str, np.ndarray], name: str) -> str:
    digest = hashlib.sha256(name.encode())
    for array_name in ARRAYS:
        digest.update(array_name.encode())
        digest.update(np.ascontiguousarray(arrays[array_name]).tobytes())
    return digest.hexdigest()


def solution_path(rules: Rules, cache: Path) -> Path:
    """Where solve keeps the solution of ``rules`` (capped at rules.ply_cap) in a folder of solutions."""
    return cache / f"{table_rules(rules).name}-cap{rules.ply_cap}-engine{ENGINE_VERSION}.npz"


class _MoveGraph:
    """The moves of every position in both directions, laid out for gathers.

    children[p][i]   the child of pit p, or ``size`` (an extra position) when p is illegal
    captured[p][i]   as int16, so that captured - V needs no conversion
    parents[parent_offsets[c] .. parent_offsets[c + 1]]   the positions with a move to c
    """

    def __init__(self, tables: PositionTables) -> None:
        self.size = size = tables.size
        self.children = [np.where(tables.child[:, pit] >= 0, tables.child[:, pit], size).astype(np.int32) for pit in range(ROW)]
        self.captured = [tables.captured[:, pit].astype(np.int16) for pit in range(ROW)]
        self.live = np.flatnonzero(tables.legal.any(axis=1)).astype(np.int32)
        edges = np.flatnonzero(tables.child.ravel() >= 0)  # edge e is pit e % 3 of position e // 3
        targets = tables.child.ravel()[edges]
        self.parents = (edges[np.argsort(targets)] // ROW).astype(np.int32)
        del edges
        self.parent_offsets = np.zeros(size + 1, dtype=np.int64)
        np.cumsum(np.bincount(targets, minlength=size), out=self.parent_offsets[1:])

    def best(self, todo: np.ndarray, values: np.ndarray) -> np.ndarray:
        """max over pits of captured - values[child] for the positions ``todo`` (int16)."""
        best = self.captured[0][todo] - values[self.children[0][todo]]
        for pit in range(1, ROW):
            np.maximum(best, self.captured[pit][todo] - values[self.children[pit][todo]], out=best)
        return best

    def parents_of(self, changed: np.ndarray) -> np.ndarray:
        """The distinct parents of the positions ``changed``, ascending, as int32."""
        if len(changed) * _SCAN_FRACTION > self.size:
            # Many changed: one pass over every move beats gathering millions of parent slices.
            flagged = np.zeros(self.size + 1, dtype=bool)
            flagged[changed] = True
            moved = flagged[self.children[0]] | flagged[self.children[1]] | flagged[self.children[2]]
            return np.flatnonzero(moved).astype(np.int32)
        starts = self.parent_offsets[changed]
        lengths = self.parent_offsets[changed + 1] - starts
        found = self.parents[slice_indices(starts, lengths)]
        if len(found) * _SORT_FRACTION < self.size:
            return np.unique(found)
        flagged = np.zeros(self.size, dtype=bool)
        flagged[found] = True
        return np.flatnonzero(flagged).astype(np.int32)


@dataclass
class _Changes:
    """The positions that changed at each k and their new values, in increasing k."""

    plies: list[int] = field(default_factory=list)
    positions: list[np.ndarray] = field(default_factory=list)
    values: list[np.ndarray] = field(default_factory=list)


def _iterate(graph: _MoveGraph, initial: np.ndarray, cap: int) -> _Changes:
    """V_1 .. V_cap, recomputing at k only the parents of what changed at k - 1."""
    values = np.append(initial, np.int8(_NO_MOVE))  # V_0, and the target of illegal moves
    changes = _Changes()
    todo = graph.live  # at k = 1, every position with a move
    for plies_left in range(1, cap + 1):
        if plies_left > 1:
            todo = graph.parents_of(changes.positions[-1])
        best = graph.best(todo, values)
        differs = best != values[todo]
        changed = todo[differs]
        values[changed] = best[differs]
        changes.plies.append(plies_left)
        changes.positions.append(changed)
        changes.values.append(best[differs].astype(np.int8))
        if not len(changed):
            break  # nothing will ever change again
    return changes


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


def _read(path: Path, rules: Rules) -> Solution | None:
    if not path.exists():
        return None
    started = time.perf_counter()
    try:
        with np.load(path, allow_pickle=False) as stored:
            arrays = {name: stored[name] for name in ARRAYS}
            expected = str(stored["checksum"])
            timings = json.loads(str(stored["timings"]))
    except (OSError, ValueError, KeyError, EOFError, NotImplementedError, zipfile.BadZipFile) as error:  # a damaged zip
        log.warning("solution %s is unreadable (%s); solving again", path, error)
        return None
    if checksum(arrays, rules.name) != expected:
        log.warning("solution %s fails its checksum; solving again", path)
        return None
    timings["read"] = time.perf_counter() - started
    return Solution(rules, board_index(rules.total_stones), **arrays, timings=timings)


def _write(path: Path, solution: Solution) -> None:
    arrays = {name: getattr(solution, name) for name in ARRAYS}
    digest, timings = np.array(checksum(arrays, solution.rules.name)), np.array(json.dumps(solution.timings))
    write_atomic(path, lambda handle: np.savez(handle, checksum=digest, timings=timings, **arrays))
