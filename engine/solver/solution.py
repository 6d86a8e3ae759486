"""The strong solution: the value of every position of a rule set at every number of plies left.

RULES.md, "Perfect play": a position is (board, mover, plies left before the cap), its value
the final score difference still to come, the mover's minus the opponent's, under optimal play
by both sides. With k plies left (``engine.tables.positions`` numbers the boards, seen by the mover):

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

The method: a layer at a time. The index numbers the boards by their stones (``engine.tables.index``:
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
When the solution goes to a cache folder, its log's changes are kept in unnamed files there,
whose pages the system writes out and takes back under pressure rather than killing the
process (engine.solver.layers._GrowingArray): rule sets whose games cycle log hundreds of
changes a position, several GB that are read a block at a time once written.
The solution does not depend on the method: its arrays are those of a plain iteration over
every position k by k (``sweep_values``), which the tests check.

Ply 0 is not in the tables: its captures are forfeited, so its moves come from the scalar
engine (``engine.game.options``), and its value is computed from its children's at cap - 1.
Solutions are cached in the ``solutions/`` folder of the caller's cache folder (``engine.store.cache``),
keyed by the rule set's name, the cap and the engine version, and sealed with what they hold
(``engine.store.integrity``).
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from engine.game import (
    MAX_PLY_CAP,
    NORTH,
    ROW,
    SOUTH,
    Board,
    Option,
    Rules,
    check_board,
    check_rules,
    positions,
    row_difference,
    turned,
    unpack,
)
from engine.solver.layers import (
    cached_row_differences,
    solve_layers,
)
from engine.solver.value_log import per_position, search_log, walk_log
from engine.store import ENGINE_VERSION, SOLUTIONS, DamagedFileError, cache_folder, read_arrays, write_arrays
from engine.tables import (
    CONFIGURED,
    BoardIndex,
    PositionTables,
    board_index,
    first_moves,
    load_tables,
    table_rules,
    tables_folder,
)

log = logging.getLogger(__name__)
DEFAULT_RULES = Rules()
ARRAYS = ("offsets", "change_plies", "change_values", "start_values")


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
            return int(self.first_move_values(seen, np.array([plies_left]))[0])
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
        return search_log(self.offsets, self.change_plies, self.change_values, indices, plies, base)

    def walk_values(self, first: int, last: int) -> Iterator[np.ndarray]:
        """V_j of every position for j = ``first`` .. ``last`` in turn, as ``values`` gives them,
        each one the previous with the log's changes at j applied (one pass over the log, where
        calling ``values`` for each j searches the whole log each time). The array yielded is
        one buffer of size + 1 updated in place, its last entry 0 (a child -1, no move, indexes
        it): copy what must outlive the next step."""
        return walk_log(self.offsets, self.change_plies, self.change_values, self.values(first), first, last)

    def changes_per_ply(self) -> np.ndarray:
        """How many positions change value at each k = 0 .. cap (index k; 0 at k = 0)."""
        return np.bincount(self.change_plies, minlength=self.cap + 1)

    def still_changing(self, after: int, until: int | None = None) -> int:
        """How many positions change value at some plies-left k with after < k <= until
        (default the cap). V_k does not depend on the cap, so this also answers for smaller caps."""
        until = self.cap if until is None else until
        changing = per_position(
            np.logical_or, lambda plies: (plies > after) & (plies <= until), self.change_plies, self.offsets, False
        )
        return int(np.count_nonzero(changing))

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
        return cached_row_differences(self.rules.total_stones)  # one array per stone count, shared with ValueLog

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
        return board if mover == SOUTH else turned(board)

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

    def first_move_values(self, seen: Board, plies_left: np.ndarray) -> np.ndarray:
        """The value of ``seen`` at ply 0 (forfeit moves) for each k of ``plies_left`` (>= 1)."""
        first = first_moves(self.rules, seen)
        if not len(first.pits):
            return np.full(len(plies_left), first.start_rows, dtype=np.int16)
        scores = [
            captured - self.values_of(np.full(len(plies_left), child), plies_left - 1).astype(np.int16)
            for child, captured in zip(first.children.tolist(), first.captured.tolist(), strict=True)
        ]
        return np.max(scores, axis=0)


def solve(
    rules: Rules = DEFAULT_RULES,
    cap: int | None = None,
    *,
    tables: PositionTables | None = None,
    cache: Path | None = CONFIGURED,
    progress: bool = True,
) -> Solution:
    """The strong solution of ``rules`` capped at ``cap`` plies (default ``rules.ply_cap``), from
    the cache when it holds a sound copy, else built and cached.

    ``cache`` is a folder of solutions; by default the ``solutions/`` folder of the engine's
    cache folder (``engine.store.cache``). ``tables`` saves loading the position tables (only a
    build needs them; else they come from the engine's cache folder). ``cache=None`` builds
    without touching the disk, the tables included. A build is logged (INFO, or DEBUG without ``progress``).
    """
    check_rules(rules)
    game = rules.replace(ply_cap=rules.ply_cap if cap is None else checked_cap(cap))
    cache = solutions_folder() if cache is CONFIGURED else cache
    path = None if cache is None else solution_path(game, cache)
    found = None if path is None else _read(path, game)
    if found is not None:
        return found
    started = time.perf_counter()
    if tables is None:
        tables = load_tables(table_rules(game), None if cache is None else tables_folder(), progress=progress)
    loaded = time.perf_counter() - started
    built = build_solution(game, tables, cache)  # the log beside the solutions it goes to
    built.timings["tables"] = loaded
    if path is not None:
        _write(path, built)
        level = logging.INFO if progress else logging.DEBUG
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
    return None if folder is None else folder / SOLUTIONS.folder


def build_solution(rules: Rules, tables: PositionTables, spill: Path | None = None) -> Solution:
    """Solve every position of ``tables`` for every k = 0 .. rules.ply_cap (vectorised), a layer of
    boards at a time in increasing stones (the module's docstring gives the method). Its log is
    kept in unnamed files of the folder ``spill``, if given, whose pages the system may take back
    (engine.solver.layers._GrowingArray), else in memory."""
    if tables.index.total != rules.total_stones or table_rules(tables.rules) != table_rules(rules):
        raise ValueError(f"the tables of {tables.rules.name} cannot solve {rules.name}")
    started = time.perf_counter()
    timings = {"move_graph": 0.0, "iterate": 0.0, "log": 0.0}
    offsets, change_plies, change_values = solve_layers(tables, rules.ply_cap, timings, spill)
    solution = Solution(rules, tables.index, offsets, change_plies, change_values, np.zeros(rules.ply_cap + 1, np.int8), timings)
    solution.start_values[1:] = solution.first_move_values(positions(rules).start, np.arange(1, rules.ply_cap + 1))
    timings["solve"] = time.perf_counter() - started
    return solution


def solution_path(rules: Rules, cache: Path) -> Path:
    """Where solve keeps the solution of ``rules`` (capped at rules.ply_cap) in a folder of solutions."""
    return cache / f"{table_rules(rules).name}-cap{rules.ply_cap}-engine{ENGINE_VERSION}.npz"


def identity(rules: Rules) -> dict[str, str | int]:
    """What a file of the solution of ``rules`` (capped at rules.ply_cap) says it holds (engine.store.integrity)."""
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


def checked_cap(cap: object) -> int:
    """The cap solve() was given, refused (naming ``cap``, not the rule set's field) unless a whole number of plies."""
    if not isinstance(cap, int) or isinstance(cap, bool) or not 1 <= cap <= MAX_PLY_CAP:
        raise ValueError(f"cap is the ply cap to solve at, a whole number from 1 to {MAX_PLY_CAP}, not {cap!r}")
    return cap
