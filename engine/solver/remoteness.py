"""Remoteness: how many plies a game lasts from a position when both sides play only
value-optimal moves, the side the value favours hurrying to the end and the other delaying it
(docs/remoteness.md gives the definition and why).

With k plies left (``engine.solver.solution``: V_k is the margin still to come, the mover's
minus the opponent's), a position's value-optimal moves are those whose capture minus the
child's V_(k-1) is V_k. The mover is favoured when V_k > 0, the opponent when V_k < 0; at
V_k = 0 neither, and both hurry:

    R_0(i) = AT_CAP                                    the cap stops the game (RULES.md: even
                                                       where the mover has no legal move there)
    R_k(i) = 0                                         k >= 1 and the mover has no legal move: play ends
    R_k(i) = 1 + min over optimal p of R_(k-1)(child)  V_k(i) >= 0: the mover hurries
    R_k(i) = 1 + max over optimal p of R_(k-1)(child)  V_k(i) < 0: the mover delays

where AT_CAP stands above every number of plies (1 + AT_CAP is AT_CAP): a line that reaches
the cap has not ended. R_k(i) < AT_CAP means the favoured side can force the end of play, by
value-optimal moves, within R_k(i) plies whatever the other side's value-optimal moves; at
V_k = 0, that some value-optimal line ends. Beside it, the longest value-optimal line,
every side delaying:

    L_k(i) = 1 + max over optimal p of L_(k-1)(child)   (0 and AT_CAP as for R)

so that L_k(i) < AT_CAP says every value-optimal line from i ends before the cap.

The method: one iteration over every position, k = 1 .. cap, of V, R and L together (V as the
solver's own recursion, which the tests hold to the solution), recomputing at k only the
parents of the positions that changed at k - 1 (through the reverse edges of every move), or
every position when many changed, and stops once nothing changes (the step does not depend on
k). The changes of R and L are logged and turned position-major as the solution's values are
(``Remoteness``: offsets, plies, values per position). A search of the log at k gives R_k, and
where a position has no change up to k, R_0 (AT_CAP) at k = 0 and else AT_CAP, or 0 for a
position without a move.
"""

from __future__ import annotations

import json
import logging
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from engine.game import NORTH, SOUTH, Board, Rules, check_board, check_rules, turned, unpack
from engine.solver.layers import NO_MOVE, LayerChanges, cached_row_differences, distinct, position_major, slice_indices
from engine.solver.solution import Solution, checked_cap, solutions_folder, solve
from engine.solver.value_log import search_log
from engine.store import ENGINE_VERSION, DamagedFileError, read_arrays, write_arrays
from engine.tables import (
    CONFIGURED,
    BoardIndex,
    FirstMoves,
    PositionTables,
    board_index,
    first_moves,
    load_tables,
    table_rules,
    tables_folder,
)

log = logging.getLogger(__name__)
DEFAULT_RULES = Rules()

AT_CAP = 32767  # R or L of a line that reaches the cap: play has not ended
# Above size / this many changed positions, recomputing every position is faster than finding
# the parents of those that changed.
_SWEEP_FRACTION = 8
ARRAYS = (
    "no_move",
    "offsets",
    "change_plies",
    "change_values",
    "longest_offsets",
    "longest_plies",
    "longest_values",
    "start_hurry",
    "start_longest",
)


@dataclass(frozen=True)
class Remoteness:
    """R_k and L_k of every position of ``rules`` for k = 0 .. its cap (the module's docstring)."""

    rules: Rules
    index: BoardIndex
    no_move: np.ndarray  # (n,) bool: the positions where the mover has no legal move
    offsets: np.ndarray  # R's log, position-major, as Solution's values
    change_plies: np.ndarray  # int16
    change_values: np.ndarray  # int16, AT_CAP where the line reaches the cap
    longest_offsets: np.ndarray  # L's log, the same layout
    longest_plies: np.ndarray
    longest_values: np.ndarray
    start_hurry: np.ndarray  # (cap + 1,) int16: R of the start at ply 0 in the game capped at each cap
    start_longest: np.ndarray  # (cap + 1,) int16: L of the same
    timings: dict[str, float] = field(default_factory=dict)

    @property
    def cap(self) -> int:
        return self.rules.ply_cap

    def of(self, indices: np.ndarray, plies_left: int | np.ndarray) -> np.ndarray:
        """R_k of the positions at ``indices`` (mover's view) with k = ``plies_left``, int16 (AT_CAP: the cap)."""
        return self._search(indices, plies_left, self.offsets, self.change_plies, self.change_values)

    def longest_of(self, indices: np.ndarray, plies_left: int | np.ndarray) -> np.ndarray:
        """L_k of the positions at ``indices`` with k = ``plies_left``, int16 (AT_CAP: some line reaches the cap)."""
        return self._search(indices, plies_left, self.longest_offsets, self.longest_plies, self.longest_values)

    def at(self, board: Board, mover: int, ply: int, solution: Solution | None = None) -> int | None:
        """The remoteness of ``mover`` (0 South, 1 North) to move on ``board`` after ``ply``
        plies: the plies to the end of play, None when the favoured side cannot force it
        before the cap (at a value of 0: when no value-optimal line ends before it). At ply 0 it
        reads the children's values from ``solution`` (the same rule set's; else engine.solve's)."""
        return _plies(self._of_board(board, mover, ply, False, solution))

    def longest_at(self, board: Board, mover: int, ply: int, solution: Solution | None = None) -> int | None:
        """The length of the longest value-optimal line from the position (every side delaying),
        None when one reaches the cap."""
        return _plies(self._of_board(board, mover, ply, True, solution))

    def start(self, cap: int | None = None, *, longest: bool = False) -> int | None:
        """R (or L) of the rule set's start at ply 0 in the game capped at ``cap`` (default the
        full cap); its first move is the scalar engine's (a capture may be forfeited)."""
        cap = self.cap if cap is None else cap
        if not isinstance(cap, int) or isinstance(cap, bool) or not 0 <= cap <= self.cap:
            raise ValueError(f"this remoteness covers caps 0 to {self.cap}, not {cap!r}")
        return _plies(int((self.start_longest if longest else self.start_hurry)[cap]))

    def nbytes(self) -> int:
        return sum(getattr(self, name).nbytes for name in ARRAYS)

    def _search(
        self, indices: np.ndarray, plies_left: int | np.ndarray, offsets: np.ndarray, plies: np.ndarray, values: np.ndarray
    ) -> np.ndarray:
        indices = np.asarray(indices, dtype=np.int64)
        k = np.broadcast_to(np.asarray(plies_left, dtype=np.int64), indices.shape)
        # A position without a move has ended (0) once a ply is left; at the cap every one is AT_CAP.
        base = np.where(self.no_move[indices] & (k > 0), np.int16(0), np.int16(AT_CAP))
        return search_log(offsets, plies, values, indices, k, base)

    def _of_board(self, board: Board, mover: int, ply: int, longest: bool, solution: Solution | None) -> int:
        check_board(board)
        if mover not in (SOUTH, NORTH) or isinstance(mover, bool):
            raise ValueError(f"mover is 0 (South) or 1 (North), not {mover!r}")
        if not isinstance(ply, int) or isinstance(ply, bool) or ply < 0:
            raise ValueError(f"ply is the number of moves already played, a whole number >= 0, not {ply!r}")
        if sum(unpack(board)) > self.rules.total_stones:
            raise ValueError(f"board {unpack(board)} holds more stones than {self.rules.name} has")
        seen = board if mover == SOUTH else turned(board)
        plies_left = max(self.cap - ply, 0)
        if ply == 0 and plies_left:
            return self._first_move(seen, plies_left, longest, solution)
        search = self.longest_of if longest else self.of
        return int(search(np.array([self.index.rank(seen)]), plies_left)[0])

    def _first_move(self, seen: Board, plies_left: int, longest: bool, solution: Solution | None) -> int:
        """R (or L) at ply 0, whose moves (forfeit applied) are not the tables'."""
        first = first_moves(self.rules, seen)
        if not len(first.pits):
            return 0  # plies_left >= 1: play ends before the cap
        solution = solve(self.rules, progress=False) if solution is None else solution
        values = solution.values_of(first.children, plies_left - 1).astype(np.int64)
        q = first.captured - values
        best = int(q.max())
        search = self.longest_of if longest else self.of
        lines = search(first.children, plies_left - 1)[q == best].astype(np.int64)
        found = int(lines.max() if longest or best < 0 else lines.min())
        return min(found + 1, AT_CAP)


def _plies(found: int) -> int | None:
    return None if found >= AT_CAP else int(found)


def remoteness(
    rules: Rules = DEFAULT_RULES,
    cap: int | None = None,
    *,
    tables: PositionTables | None = None,
    cache: Path | None = CONFIGURED,
    progress: bool = True,
) -> Remoteness:
    """R and L of every position of ``rules`` capped at ``cap`` plies (default ``rules.ply_cap``),
    from the cache when it holds a sound copy, else built and cached: as ``engine.solve``, whose
    ``solutions/`` folder keeps them beside the solution of the same rule set and cap."""
    check_rules(rules)
    game = rules.replace(ply_cap=rules.ply_cap if cap is None else checked_cap(cap))
    cache = solutions_folder() if cache is CONFIGURED else cache
    path = None if cache is None else remoteness_path(game, cache)
    found = None if path is None else _read(path, game)
    if found is not None:
        return found
    if tables is None:
        tables = load_tables(table_rules(game), None if cache is None else tables_folder(), progress=progress)
    built, _ = build_remoteness(game, tables, progress=progress)
    if path is not None:
        arrays = {name: getattr(built, name) for name in ARRAYS}
        write_arrays(path, {**arrays, "timings": np.array(json.dumps(built.timings))}, _identity(game))
        level = logging.INFO if progress else logging.DEBUG
        log.log(level, "remoteness of %s in %.1f s: %s", game.name, built.timings["remoteness"], path)
    return built


def remoteness_path(rules: Rules, cache: Path) -> Path:
    """Where ``remoteness`` keeps that of ``rules`` (capped at rules.ply_cap) in a folder of solutions."""
    return cache / f"{table_rules(rules).name}-cap{rules.ply_cap}-engine{ENGINE_VERSION}-remoteness.npz"


def _identity(rules: Rules) -> dict[str, str | int]:
    return {"kind": "remoteness", "rules": rules.name, "cap": rules.ply_cap, "engine": ENGINE_VERSION}


def _read(path: Path, rules: Rules) -> Remoteness | None:
    try:
        arrays = read_arrays(path, _identity(rules), (*ARRAYS, "timings"))
    except DamagedFileError as error:
        log.warning("%s; computing it again", error)
        return None
    if arrays is None:
        return None
    timings = json.loads(str(arrays.pop("timings")))
    return Remoteness(rules, board_index(rules.total_stones), **{name: arrays[name] for name in ARRAYS}, timings=timings)


def build_remoteness(rules: Rules, tables: PositionTables, *, progress: bool = False) -> tuple[Remoteness, np.ndarray]:
    """R and L of every position of ``tables`` for k = 0 .. ``rules.ply_cap`` by the iteration
    of the module's docstring, and of the start at ply 0 under every cap; also V_cap of every
    position (int8), the solver's recursion run alongside (which the tests hold to the solution's)."""
    found = _iterate(rules, tables, first_moves(rules), None, log_changes=True, progress=progress)
    started = time.perf_counter()
    hurry_log = position_major(found.hurry_changes, tables.size, np.int16)
    longest_log = position_major(found.longest_changes, tables.size, np.int16)
    timings = found.timings | {"remoteness": found.timings["remoteness"] + time.perf_counter() - started}
    hurry, longest = (found.start[line, : rules.ply_cap + 1].astype(np.int16) for line in (0, 1))
    built = Remoteness(rules, tables.index, found.no_move, *hurry_log, *longest_log, hurry, longest, timings=timings)
    return built, found.values


@dataclass(frozen=True)
class StartLines:
    """One start's value, remoteness and longest value-optimal line (South to move at ply 0)
    under every cap 0 .. rules.ply_cap, and its value under a cap one ply longer."""

    values: np.ndarray  # (cap + 2,) int64: V of the start in the game capped at 0 .. cap + 1
    hurry: np.ndarray  # (cap + 1,) int16: R by cap, AT_CAP where the cap stops the hurried game
    longest: np.ndarray  # (cap + 1,) int16: L by cap
    timings: dict[str, float] = field(default_factory=dict)


def start_lines(rules: Rules, tables: PositionTables, board: Board | None = None) -> StartLines:
    """The value, R and L of ``board`` as South's start (default the rule set's) under every cap,
    by the module's iteration over only the positions reachable from it: a position's V, R and
    L depend on its children's alone, and the positions a game from the start can reach hold
    all of theirs (a fifth to a sixth of all positions with 7 stones a pit). The same figures as
    the whole ``remoteness`` and the solution give at the start (tested), far cheaper when only
    the start is wanted (the atlas's verdict of every rule set)."""
    first = first_moves(rules, board)
    within = _descendants(tables.child, first.children)
    found = _iterate(rules, tables, first, within, log_changes=False, progress=False)
    hurry, longest = (found.start[line, : rules.ply_cap + 1].astype(np.int16) for line in (0, 1))
    return StartLines(found.start[2], hurry, longest, found.timings)


def _descendants(child: np.ndarray, seeds: np.ndarray) -> np.ndarray:
    """The positions reachable from ``seeds`` by moves, ``seeds`` among them (bool, one a position)."""
    found = np.zeros(len(child), dtype=bool)
    frontier = distinct(np.asarray(seeds, dtype=np.int64))
    found[frontier] = True
    while len(frontier):
        after = child[frontier].ravel()
        after = distinct(after[after >= 0])
        frontier = after[~found[after]]
        found[frontier] = True
    return found


@dataclass
class _Iterated:
    no_move: np.ndarray
    values: np.ndarray  # V_cap of every position (int8; outside ``within``, meaningless)
    start: np.ndarray  # (3, cap + 2): R, L by cap (cap + 1 repeats cap) and V of the start by cap 0 .. cap + 1
    hurry_changes: LayerChanges
    longest_changes: LayerChanges
    timings: dict[str, float]


def _iterate(
    rules: Rules, tables: PositionTables, first: FirstMoves, within: np.ndarray | None, *, log_changes: bool, progress: bool
) -> _Iterated:
    """The iteration of the module's docstring over every position, or over those of ``within``
    (bool, closed under moves: the children of each are in it), with the start's R, L and V by
    cap from ``first``; the changes of R and L logged if ``log_changes``."""
    if tables.index.total != rules.total_stones or table_rules(tables.rules) != table_rules(rules):
        raise ValueError(f"the tables of {tables.rules.name} do not hold the positions of {rules.name}")
    started = time.perf_counter()
    cap, size = rules.ply_cap, tables.size
    child, captured = tables.child, tables.captured
    no_move = np.logical_not(tables.legal.any(axis=1))
    counted = ~no_move if within is None else ~no_move & within
    live = np.flatnonzero(counted).astype(np.int32)
    swept = size if within is None else int(np.count_nonzero(within))  # above swept / _SWEEP_FRACTION changes: sweep
    # The moves of every live position a pit at a time, each pit's column in one piece (3, m).
    every = np.ascontiguousarray(child[live].T), np.ascontiguousarray(captured[live].T)
    values = np.append(cached_row_differences(tables.index.total), np.int8(NO_MOVE))  # index -1: no move
    hurry = np.full(size + 1, AT_CAP, dtype=np.int16)  # k = 0: the cap stops every line
    ended = np.flatnonzero(no_move if within is None else no_move & within).astype(np.int32)  # R, L 0 from k = 1 on
    longest = hurry.copy()
    start = np.zeros((3, cap + 2), dtype=np.int64)  # R, L and V of the start at ply 0, by cap
    start[:2, 0], start[2, 0] = AT_CAP, first.start_rows  # cap 0: each keeps its row
    parents, parent_offsets = _reverse_edges(child)
    timings = {"reverse_edges": time.perf_counter() - started}
    hurry_changes, longest_changes = LayerChanges(), LayerChanges()
    changed = live
    for plies_left in range(1, cap + 1):
        start[:, plies_left] = _first_lines(first, values, hurry, longest)  # the children at plies_left - 1
        if plies_left == 1 or len(changed) * _SWEEP_FRACTION > swept:
            todo = live
        else:
            starts = parent_offsets[changed]
            todo = distinct(parents[slice_indices(starts, parent_offsets[changed + 1] - starts)])
            if within is not None:
                todo = todo[within[todo]]
        moves = every if todo is live else (child[todo].T, captured[todo].T)
        new_values, new_hurry, new_longest = _step(*moves, values, hurry, longest)
        moved_value = new_values != values[todo]
        moved_hurry = new_hurry != hurry[todo]
        moved_longest = new_longest != longest[todo]
        if log_changes:
            for changes, moved, new in ((hurry_changes, moved_hurry, new_hurry), (longest_changes, moved_longest, new_longest)):
                changes.plies.append(plies_left)
                changes.positions.append(todo[moved])
                changes.values.append(new[moved])
        values[todo[moved_value]] = new_values[moved_value]
        hurry[todo[moved_hurry]] = new_hurry[moved_hurry]
        longest[todo[moved_longest]] = new_longest[moved_longest]
        changed = todo[moved_value | moved_hurry | moved_longest]
        if plies_left == 1:  # the positions without a move have ended from k = 1 on; not logged (Remoteness.of)
            hurry[ended], longest[ended] = 0, 0
            changed = np.union1d(changed, ended).astype(np.int32)
        if progress and plies_left % 100 == 0:
            log.info("remoteness of %s: %d of %d plies left", rules.name, plies_left, cap)
        if not len(changed) and plies_left < cap:
            # Nothing changed at k, and the step does not depend on k: nothing changes any more.
            start[:, plies_left + 1 :] = np.array(_first_lines(first, values, hurry, longest))[:, None]
            timings["settled_at"] = plies_left
            break
    else:
        start[:, cap + 1] = _first_lines(first, values, hurry, longest)  # V under a cap one ply longer
    timings["iterate"] = time.perf_counter() - started - timings["reverse_edges"]
    timings["remoteness"] = time.perf_counter() - started
    return _Iterated(no_move, values[:size].copy(), start, hurry_changes, longest_changes, timings)


def _first_lines(first: FirstMoves, values: np.ndarray, hurry: np.ndarray, longest: np.ndarray) -> tuple[int, int, int]:
    """R, L and V of the start at ply 0 from V, R and L of its first moves' children (one ply less)."""
    if not len(first.pits):
        return 0, 0, first.start_rows
    q = first.captured - values[first.children].astype(np.int64)
    best = int(q.max())
    optimal = q == best
    lines = hurry[first.children][optimal]
    found = (int(lines.min() if best >= 0 else lines.max()), int(longest[first.children][optimal].max()))
    return min(found[0] + 1, AT_CAP), min(found[1] + 1, AT_CAP), best


def _step(
    child: np.ndarray, captured: np.ndarray, values: np.ndarray, hurry: np.ndarray, longest: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """V_k, R_k and L_k of positions with a legal move, from their moves (``child`` (3, m), a
    row a pit, -1 for none; ``captured`` the same) and V, R, L of every position at k - 1. A pit
    at a time: reductions along rows of (m, 3) arrays are several times slower."""
    pits = range(len(child))
    # An illegal move: captured 0 - NO_MOVE, below any legal one.
    q = [captured[pit].astype(np.int16) - values.take(child[pit]) for pit in pits]
    best = q[0].copy()
    for pit in pits[1:]:
        np.maximum(best, q[pit], out=best)
    hurried = np.full(len(best), AT_CAP, dtype=np.int16)
    delayed = np.full(len(best), -1, dtype=np.int16)
    new_longest = delayed.copy()
    for pit in pits:
        optimal = q[pit] == best
        lines = hurry.take(child[pit])
        np.minimum(hurried, lines, out=hurried, where=optimal)
        np.maximum(delayed, lines, out=delayed, where=optimal)
        np.maximum(new_longest, longest.take(child[pit]), out=new_longest, where=optimal)
    new_hurry = np.where(best >= 0, hurried, delayed)
    for lines in (new_hurry, new_longest):
        np.add(lines, 1, out=lines, where=lines < AT_CAP)
    return best.astype(np.int8), new_hurry, new_longest


def _reverse_edges(child: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The parents of every position (a position with several moves to it listed once a move),
    as slices of one array: those of c at parents[offsets[c] : offsets[c + 1]]."""
    flat = child.reshape(-1)
    moves = np.flatnonzero(flat >= 0)
    targets = flat[moves]
    order = np.argsort(targets, kind="stable")
    parents = (moves[order] // child.shape[1]).astype(np.int32)
    offsets = np.zeros(len(child) + 2, dtype=np.int64)  # one more: the sentinel position -1 has none
    np.cumsum(np.bincount(targets, minlength=len(child)), out=offsets[1 : len(child) + 1])
    offsets[-1] = offsets[-2]
    return parents, offsets
