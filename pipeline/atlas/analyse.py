"""One rule set analysed exactly: the figures of one row of the atlas (pipeline.atlas.run).

Everything here is computed, nothing sampled, from the rule set's position tables:

    size       positions (every board of at most the rule set's stones), those reachable from
               the start by legal moves, the reachable ones where the mover has no move
               (terminal), and the mean number of legal moves of the others
    perfect    the strong solution (engine.solve): the start's value, South's best first moves
               and each first move's value, the positions whose value never settles, and
               perfect against perfect (ties uniformly at random, as engine's ``perfect``
               plays them) through engine.exact_outcome: the mean and longest length of a
               perfect game
    self-play  random, greedy and alphabeta(depth=4) each against itself (engine.exact_outcome):
               the outcome, the mean length, the chance the cap is reached and, for each rule
               event, the chance it fires at least once in a game and its expected count
    greedy     what a best response wins against greedy in each seat (engine.exploitability)
    verdict    what decides the start's value (engine.solver.start_verdict, docs/remoteness.md): its
               remoteness and longest value-keeping game, play or the cap, the least cap from
               which it no longer changes and its value under a cap one ply shorter and longer;
               and the fingerprint of the game reachable from the start (engine.exact.game_fingerprint)

A row kept from before the verdict columns gains them from ``supplement``, which builds the
tables again and the verdict, but none of the games: the row's other figures stay.

``analyse`` works in a scratch cache folder of its own, removed when it returns (in the scratch/
subfolder of the cache folder it is given, ``modiar atlas run --cache DIR``, else in the system's
temporary folder), and drops every table the engine keeps between calls (engine.release_caches),
so that a worker going through a hundred rule sets holds the tables of one at a time.
"""

from __future__ import annotations

import contextlib
import dataclasses
import logging
import os
import resource
import shutil
import socket
import tempfile
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa

import engine
from engine.exact import game_fingerprint, reachable_positions
from engine.game import END_EVENTS, POSITION_FLAGS, SOUTH
from engine.players import solution as solved
from engine.solver import start_verdict
from engine.store import SCRATCH, process_running
from engine.tables import load_tables, positions_of, table_rules
from pipeline.runs.costs import COSTS
from pipeline.runs.paths import scratch_owner, scratch_prefix

SELF_PLAY_SPECS = {"random": "random", "greedy": "greedy", "alphabeta4": "alphabeta(depth=4)"}
# The events whose chance of firing and expected count each self-play row gives; the end events
# fire at most once a game, so they have a chance only.
COUNTED_EVENTS = (*POSITION_FLAGS, "first_move_forfeit", "capture")
FIRST_PITS = range(3)  # South's pits: the first move is one of them
ROUNDING = 1e-12  # engine.exact_outcome's float sums stay far below this
UNSHARED = "unshared"  # a peak of resident memory less the pages shared with files (peak_memory)
COMPLETION_PARTS = ("supplement_tables", "verdict")  # the parts of a kept row's completion (supplement)
# The columns ``verdict_figures`` fills, last in a row: those a row kept from an older atlas lacks.
VERDICT_COLUMNS: tuple[tuple[str, pa.DataType], ...] = (
    ("remoteness", pa.int64()),
    ("longest_line", pa.int64()),
    ("decided_by", pa.string()),
    ("stable_from_cap", pa.int64()),
    ("value_cap_one_less", pa.int64()),
    ("value_cap_one_more", pa.int64()),
    ("game_fingerprint", pa.string()),
)


@dataclass(frozen=True)
class Analysis:
    """One rule set's row (column -> value, in the atlas's column order) and what it cost."""

    rules: str
    row: dict[str, Any]
    seconds: dict[str, float] = field(default_factory=dict)
    peak_bytes: int | None = None
    peak_measure: str | None = UNSHARED  # what peak_bytes counts (pipeline.atlas.rows.PEAK_MEASURE); None: not said

    @property
    def task_seconds(self) -> float:
        """What this task took: the whole analysis, or for a completed row (``supplement``) its new parts only."""
        if COMPLETION_PARTS[0] in self.seconds:
            return sum(self.seconds.get(part, 0.0) for part in COMPLETION_PARTS)
        return self.seconds.get("total", 0.0)


def estimated_bytes(rules: engine.Rules) -> int:
    """About the most memory ``analyse(rules)`` holds at once: a size a position of its index
    beyond a process's base (pipeline/costs.toml); random self-play's exact outcome is the widest
    step (its states: position and margin)."""
    return COSTS.base_bytes + COSTS.atlas_bytes_per_position * positions_of(rules)


def analyse(rules: engine.Rules, cache: Path | None = None) -> Analysis:
    """Every figure of the atlas for ``rules`` (see the module docstring); the scratch files in
    ``cache``/scratch/, or in the system's temporary folder when ``cache`` is None."""
    row: dict[str, Any] = {"rules": rules.name}
    for name, value in dataclasses.asdict(rules).items():
        row[name] = ".".join(map(str, value)) if isinstance(value, tuple) else value
    seconds: dict[str, float] = {}
    with peak_memory() as peak, scratch_cache(cache):
        with _timed(seconds, "tables"):
            tables = load_tables(table_rules(rules), progress=False)
        with _timed(seconds, "size"):
            row.update(_size(rules, tables))
        with _timed(seconds, "solve"):
            solution = solved(rules)  # kept by engine.players.search for the perfect player's policy
        with _timed(seconds, "perfect"):
            row.update(_perfect(rules, solution, tables))
        del solution
        with _timed(seconds, "verdict"):
            verdict_row = verdict_figures(rules, tables)
        for prefix, spec in SELF_PLAY_SPECS.items():
            with _timed(seconds, prefix):
                row.update(_self_play(prefix, engine.exact_outcome(spec, spec, rules=rules, tables=tables)))
        with _timed(seconds, "exploitability"):
            found = engine.exploitability("greedy", rules=rules, tables=tables)
        row["greedy_exploitability_as_south"] = found.as_south
        row["greedy_exploitability_as_north"] = found.as_north
        del tables
    row.update(verdict_row)
    seconds["total"] = sum(seconds.values())
    return Analysis(rules.name, row, seconds, peak.bytes)


def supplement(rules: engine.Rules, row: dict[str, Any], costs: dict[str, Any] | None, cache: Path | None = None) -> Analysis:
    """``row``, a row of ``rules`` kept from before the verdict columns, with them added: the
    tables built again in a scratch cache (as ``analyse``), then the verdict, none of the games
    played again. Its cost is the kept one's (``costs``, a row record's) plus "supplement_tables"
    and "verdict"; its peak is the kept one's, with what that counted (the completion's where none
    is kept)."""
    if row.get("rules") != rules.name:
        raise ValueError(f"the row is of {row.get('rules')}, not {rules.name}")
    seconds: dict[str, float] = {}
    with peak_memory() as peak, scratch_cache(cache):
        with _timed(seconds, "supplement_tables"):
            tables = load_tables(table_rules(rules), progress=False)
        with _timed(seconds, "verdict"):
            found = verdict_figures(rules, tables)
        del tables
    costs = costs if isinstance(costs, dict) else {}
    kept_seconds = dict(costs.get("seconds") or {})
    total = float(kept_seconds.pop("total", 0.0)) + sum(seconds.values())
    whole = {name: row[name] for name in schema().names if name in row} | found
    kept_peak, measure = costs.get("peak_bytes"), costs.get("peak_measure")
    if not isinstance(kept_peak, int) or isinstance(kept_peak, bool):  # no peak kept: the completion's
        return Analysis(rules.name, whole, kept_seconds | seconds | {"total": total}, peak.bytes)
    # The analysis's peak, as its record measured it, stays the row's: a completion holds far less.
    return Analysis(
        rules.name, whole, kept_seconds | seconds | {"total": total}, kept_peak, measure if isinstance(measure, str) else None
    )


def verdict_figures(rules: engine.Rules, tables: engine.tables.PositionTables) -> dict[str, Any]:
    """The VERDICT_COLUMNS of ``rules``'s row: the start's verdict (engine.solver.start_verdict,
    from the positions reachable from the start alone) and the fingerprint of its reachable game."""
    return start_verdict(rules, tables).columns() | {"game_fingerprint": game_fingerprint(rules, tables)}


def schema() -> pa.Schema:
    """The atlas's columns and their types, in order: what ``analyse`` fills in a row (the
    VERDICT_COLUMNS last)."""
    columns: list[tuple[str, pa.DataType]] = [("rules", pa.string())]
    for name, value in dataclasses.asdict(engine.Rules()).items():
        kind = pa.bool_() if isinstance(value, bool) else pa.int64() if isinstance(value, int) else pa.string()
        columns.append((name, kind))
    columns += [(name, pa.int64()) for name in ("positions", "reachable_positions", "terminal_positions")]
    columns += [("mean_branching", pa.float64()), ("start_value", pa.int64()), ("best_first_moves", pa.list_(pa.int64()))]
    columns += [(f"first_move_{pit}_value", pa.int64()) for pit in FIRST_PITS]
    columns += [("never_settled", pa.int64()), ("perfect_mean_plies", pa.float64())]
    columns += [("perfect_max_plies", pa.int64()), ("perfect_cap_reached", pa.float64())]
    for prefix in SELF_PLAY_SPECS:
        figures = ["south_win", "draw", "north_win", "first_player_score", "mean_plies", "cap_reached", "unresolved"]
        figures += [f"{name}_{kind}" for name in COUNTED_EVENTS for kind in ("fires", "mean")]
        figures += [f"{name}_fires" for name in END_EVENTS]
        columns += [(f"{prefix}_{figure}", pa.float64()) for figure in figures]
    columns += [(f"greedy_exploitability_as_{seat}", pa.float64()) for seat in ("south", "north")]
    return pa.schema(columns + list(VERDICT_COLUMNS))


def kept_schema() -> pa.Schema:
    """The columns of a row kept from before the verdict columns: ``schema`` without them."""
    return pa.schema([column for column in schema() if column.name not in dict(VERDICT_COLUMNS)])


def _size(rules: engine.Rules, tables: engine.tables.PositionTables) -> dict[str, Any]:
    reachable = reachable_positions(rules, tables)
    moves = tables.legal[reachable].sum(axis=1)
    return {
        "positions": tables.size,
        "reachable_positions": len(reachable),
        "terminal_positions": int(np.count_nonzero(moves == 0)),
        "mean_branching": float(moves[moves > 0].mean()) if np.any(moves > 0) else 0.0,
    }


def _perfect(rules: engine.Rules, solution: engine.Solution, tables: engine.tables.PositionTables) -> dict[str, Any]:
    start = engine.start_board(rules)
    pits = engine.legal_moves(start, SOUTH, 0, rules)
    values = dict(zip(pits, solution.move_values(start, SOUTH, 0), strict=True))
    row: dict[str, Any] = {
        "start_value": solution.start_value(),
        "best_first_moves": list(solution.best_moves(start, SOUTH, 0)),
    }
    for pit in FIRST_PITS:
        row[f"first_move_{pit}_value"] = values.get(pit)
    row["never_settled"] = solution.never_settled
    outcome = engine.exact_lengths("perfect", "perfect", rules=rules, tables=tables)  # its lengths are all the row takes
    played = np.flatnonzero(outcome.plies > 0)
    row["perfect_mean_plies"] = outcome.mean_plies
    row["perfect_max_plies"] = int(played[-1]) if len(played) else 0
    row["perfect_cap_reached"] = _cap_reached(outcome)
    return row


def _self_play(prefix: str, outcome: engine.ExactOutcome) -> dict[str, Any]:
    row: dict[str, Any] = {
        f"{prefix}_south_win": float(outcome.south_win),
        f"{prefix}_draw": float(outcome.draw),
        f"{prefix}_north_win": float(outcome.north_win),
        f"{prefix}_first_player_score": outcome.first_player_score,
        f"{prefix}_mean_plies": outcome.mean_plies,
        f"{prefix}_cap_reached": _cap_reached(outcome),
        f"{prefix}_unresolved": outcome.unresolved,
    }
    for name in COUNTED_EVENTS:
        row[f"{prefix}_{name}_fires"] = _settled(outcome.event_fires[name])
        row[f"{prefix}_{name}_mean"] = _settled(outcome.event_mean[name])
    for name in END_EVENTS:
        row[f"{prefix}_{name}_fires"] = _settled(outcome.event_fires[name])
    return row


def _cap_reached(outcome: engine.ExactOutcome | engine.ExactLengths) -> float:
    """The chance that a game lasts the whole cap."""
    cap = outcome.rules.ply_cap
    return float(outcome.plies[cap]) if len(outcome.plies) > cap else 0.0


def _settled(value: float) -> float:
    """0 for a chance or a count within ROUNDING of it: engine.exact_outcome gets a chance of firing
    as the total mass less the mass on which the event has not fired, so an event that never
    fires comes out as a float residue (1e-16) rather than 0."""
    return 0.0 if abs(value) < ROUNDING else value


@contextlib.contextmanager
def _timed(seconds: dict[str, float], part: str) -> Iterator[None]:
    started = time.perf_counter()
    try:
        yield
    finally:
        seconds[part] = seconds.get(part, 0.0) + time.perf_counter() - started


@contextlib.contextmanager
def scratch_cache(cache: Path | None) -> Iterator[None]:
    """The engine's cache folder, for the duration, a new folder (in ``cache``/scratch/, else in the
    system's temporary folder) removed afterwards: the perfect player reads the solution from
    there, and nothing of this rule set stays on disk or in memory. scratch/ itself stays: another
    task may be making its folder in it; the folders killed tasks of this machine left are removed."""
    before = engine.cache_folder()
    logger = logging.getLogger("engine")
    level = logger.level
    parent = None if cache is None else cache / SCRATCH
    if parent is not None:
        parent.mkdir(parents=True, exist_ok=True)
        _remove_stale_scratch(parent)
    with tempfile.TemporaryDirectory(prefix=scratch_prefix(), dir=parent) as folder:
        engine.set_cache_folder(folder)
        logger.setLevel(max(logging.WARNING, level))  # the builds of scratch files are no news; a damaged one still is
        try:
            yield
        finally:
            logger.setLevel(level)
            engine.set_cache_folder(before)
            engine.release_caches()


def _remove_stale_scratch(parent: Path) -> None:
    """Remove the scratch folders in ``parent`` of tasks of this machine that no longer run (a
    killed task leaves its folder); another machine's are left to it."""
    host = socket.gethostname()
    for folder in parent.iterdir():
        owner = scratch_owner(folder.name)
        if owner is not None and owner[0] == host and not process_running(owner[1]):
            shutil.rmtree(folder, ignore_errors=True)


class Peak:
    bytes: int | None = None


@contextlib.contextmanager
def peak_memory(interval: float = 0.05) -> Iterator[Peak]:
    """The largest resident size of this process while the block runs, less its pages shared
    with files (the solver's log: engine.solver.layers._GrowingArray; the system takes those
    back rather than kill the process), sampled every ``interval`` seconds from /proc (a worker
    runs many rule sets, so its lifetime peak would not do); where there is no /proc, the
    lifetime peak."""
    peak = Peak()
    statm = "/proc/self/statm"
    if not os.path.exists(statm):
        try:
            yield peak
        finally:
            peak.bytes = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
        return
    page = os.sysconf("SC_PAGE_SIZE")
    stop = threading.Event()
    largest = [0]

    def sample() -> None:
        while True:
            with open(statm) as handle:
                _, resident, shared, *_ = handle.read().split()
            largest[0] = max(largest[0], (int(resident) - int(shared)) * page)
            if stop.wait(interval):
                return

    watcher = threading.Thread(target=sample, daemon=True)
    watcher.start()
    try:
        yield peak
    finally:
        stop.set()
        watcher.join()
        peak.bytes = largest[0]
