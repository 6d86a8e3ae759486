"""Benchmarks that print their figures: ``make bench`` / ``modiar bench``.

Speed targets are checked here, never by timed unit tests. Figures from one run are
compared with each other (ratios), since the machine is shared and noisy.

Most lines measure a rate or a size of the cost model (pipeline/costs.toml, whose comments name
the line): ``main(write_costs=True)`` (``modiar bench --write-costs``, ``make bench COSTS=write``)
rewrites those entries (pipeline.runs.calibration.WRITTEN) with what this run measured, and keeps
the others.
"""

from __future__ import annotations

import multiprocessing
import os
import platform
import resource
import tempfile
import time
import tracemalloc
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

import engine
from engine.game import game_seeds, positions
from engine.players import PerfectStrategy, policy_table, solution
from engine.tables import build_tables, load_tables, tables_folder
from pipeline.bench_quality import QUALITY_SPECS, quality_line, quality_self_play
from pipeline.estimates import BENCH_RUNS
from pipeline.runs.calibration import Measured, exact_costs, mcts_costs, policy_costs, report_costs, solve_growths
from pipeline.runs.costs import COSTS
from pipeline.runs.paths import DATA, MANIFEST, ROOT
from pipeline.study.config import Study, parse_study
from pipeline.study.report import build_report
from pipeline.study.run import run_study

PERFT_DEPTH = 14
BATCH_GAMES = 1 << 20
# Table strategies timed in batched self-play: each >= 1,000,000 games/s and >= half of random.
BATCHED_STRATEGIES = (
    "random",
    "greedy",
    "heuristic",
    "alphabeta(depth=4)",
    "perfect",
    "perfect(epsilon=0.1)",
    "perfect(temperature=1.0)",
)
# (spec, seconds, GiB beyond the position tables) a policy table's build may take; None: no target.
POLICY_TARGETS = (
    ("heuristic", None, None),
    ("alphabeta(depth=4)", None, None),
    ("alphabeta(depth=12)", 30.0, 1.0),
    ("alphabeta(depth=40)", 120.0, None),
    ("perfect", None, None),
)
# (rules, seconds, GiB) of the strong solution at scale, each solved in a fresh process once its
# tables are cached; peak memory is the process's, tables included. None: no target.
SOLVER_TARGETS = (
    (engine.Rules(), 60.0, None),
    (engine.Rules(min_stones_to_play=1, capture_rows="opponent"), 60.0, None),  # long capture-free cycles
    (engine.Rules(stones_per_pit=8), None, 2.0),
)
# 90.8 M positions, a quarter of an hour: only with MODIAR_BENCH_STONES10=1, or large_solve().
LARGE_SOLVER_TARGET = (engine.Rules(stones_per_pit=10), None, 8.0)
# Exact self-play outcomes of the same strategies, each against 30 s and 2 GiB on one core: any
# pairing of the default study (the strong dials', whose games cycle for hundreds of plies, are
# among the slowest of its 49).
EXACT_TARGETS = tuple((spec, 30.0, 2.0) for spec in BATCHED_STRATEGIES)
# (playouts, games in one batch, games/s target) of mcts self-play through engine.play_batch.
MCTS_TARGETS = ((100, 16_384, 1_000.0), (1000, 2_048, 100.0))
NOTEBOOK_GIB = 2.0  # the peak memory of a notebook's kernel on the default studies

T = TypeVar("T")


@dataclass(frozen=True)
class Throughput:
    games: int
    moves: int
    seconds: float

    @property
    def games_per_second(self) -> float:
        return self.games / self.seconds

    @property
    def moves_per_second(self) -> float:
        return self.moves / self.seconds


def random_games(seconds: float, *, rules: engine.Rules | None = None, first_seed: int = 0) -> Throughput:
    """Play uniformly random complete games through ``engine.play_game`` for ``seconds``."""
    rules = rules or engine.Rules()
    games = moves = 0
    seed = first_seed
    start = time.perf_counter()
    deadline = start + seconds
    while True:
        for _ in range(1000):
            moves += engine.play_game("random", "random", rules=rules, seed=seed).plies
            seed += 1
        games += 1000
        now = time.perf_counter()
        if now >= deadline:
            return Throughput(games, moves, now - start)


def perft_time(depth: int) -> tuple[int, float]:
    start = time.perf_counter()
    count = engine.perft(depth)
    return count, time.perf_counter() - start


def main(seconds: float = 10.0, *, write_costs: bool = False) -> None:
    """Run every benchmark, each in a fresh process so that its peak memory is its own; with
    ``write_costs``, rewrite the entries of the cost file this run measured."""
    started = time.perf_counter()
    print(f"machine: {platform.processor() or platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}")
    print(f"engine {engine.ENGINE_VERSION}, rules {engine.Rules().name}; targets in brackets")
    measured = _in_child(scalar_games, seconds)
    measured |= _in_child(table_build)
    batched = _in_child(batched_games, seconds)
    print(f"  batched / scalar (cold): {batched * measured['scalar_game_seconds']:,.0f}x")
    measured |= _in_child(full_solve)
    measured |= solver_scales(large=os.environ.get("MODIAR_BENCH_STONES10") == "1")
    print("\npolicy tables of the default rules, each built in a fresh process from the cached tables and solution")
    policies = {
        spec: _in_child(policy_build, spec, target_seconds, target_gib) for spec, target_seconds, target_gib in POLICY_TARGETS
    }
    measured |= policy_costs(policies)
    _in_child(batched_strategies, seconds)
    print("\nmcts self-play, searches in lockstep (engine.play.mcts), one process, tables loaded")
    measured |= mcts_costs(
        {playouts: _in_child(mcts_batches, playouts, games, target) for playouts, games, target in MCTS_TARGETS}
    )
    print("\nexact outcomes of the default rules, each in a fresh process once the tables are loaded")
    outcomes = {spec: _in_child(exact_self_play, spec, target, gib) for spec, target, gib in EXACT_TARGETS}
    measured |= exact_costs(outcomes)
    print("\nexact quality beside the exact outcome of the same self-play, each in a fresh process")
    for spec in QUALITY_SPECS:
        print(quality_line(spec, outcomes[spec], _in_child(quality_self_play, spec)))
    _in_child(study_runs)
    notebook_runs()
    measured |= _in_child(atlas_rule_set)
    measured["bench_seconds"] = time.perf_counter() - started - BENCH_RUNS * seconds
    report_costs(measured, write=write_costs)


def scalar_games(seconds: float) -> Measured:
    """engine.play_game, cold then warm: a random game's seconds, from the cold run."""
    print(f"\nrandom games through engine.play_game, one process, {seconds:.0f} s runs [>= 20,000 games/s]")
    cold = random_games(seconds)
    _print_throughput("cold", cold)
    warm = random_games(seconds, first_seed=cold.games)
    _print_throughput("warm", warm)
    again = random_games(seconds / 2, first_seed=0)
    _print_throughput("replay", again, "(the cold run's seeds again: every position known)")
    memoised = len(positions(engine.Rules()).later)
    print(f"  cold run: {_verdict(cold.games_per_second >= 20_000)}; positions memoised: {memoised:,}")
    count, took = perft_time(PERFT_DEPTH)
    print(f"  perft({PERFT_DEPTH}) = {count:,} in {took:.2f} s; {_peak()}")
    return {"scalar_game_seconds": 1 / cold.games_per_second}


def table_build() -> Measured:
    """Build the default rules' position tables from nothing, then read the cached copy: their
    seconds and bytes a position."""
    print("\nposition tables of the default rules [built in <= 60 s]")
    start = time.perf_counter()
    built = build_tables(engine.Rules())
    took = time.perf_counter() - start
    size = f"{built.nbytes() / 2**20:,.0f} MiB of tables"
    print(f"  built {built.size:,} positions in {took:.1f} s ({_verdict(took <= 60)}); {size}")
    measured = {"table_seconds_per_position": took / built.size, "table_bytes_per_position": built.nbytes() / built.size}
    del built
    load_tables(engine.Rules(), progress=False)  # writes the cache if it is missing
    start = time.perf_counter()
    load_tables(engine.Rules(), progress=False)
    print(f"  read back from {tables_folder()} in {time.perf_counter() - start:.1f} s (checksum verified); {_peak()}")
    return measured


def batched_games(seconds: float) -> float:
    """engine.play_batch, uniformly random games, one core; returns games/s."""
    print(f"\nrandom games through engine.play_batch, one process, {seconds:.0f} s [>= 430,000 games/s on one core]")
    tables = load_tables(engine.Rules(), progress=False)
    start = time.perf_counter()
    engine.play_batch(1 << 16, "random", "random", tables=tables)
    print(f"  batch tables derived (with a first batch of 65,536 games) in {time.perf_counter() - start:.1f} s")
    games = moves = batch = 0
    start = time.perf_counter()
    while time.perf_counter() - start < seconds:
        played = engine.play_batch(BATCH_GAMES, "random", "random", tables=tables, seed=batch)
        games, moves, batch = games + len(played), moves + int(played.plies.sum()), batch + 1
    result = Throughput(games, moves, time.perf_counter() - start)
    _print_throughput("batched", result, f"({BATCH_GAMES:,} games a batch)")
    print(f"  {_verdict(result.games_per_second >= 430_000)}; {_peak()}")
    return result.games_per_second


def policy_build(spec: str, target_seconds: float | None, target_gib: float | None) -> tuple[float, float]:
    """Build one policy table in memory (the cache untouched) once the position tables (and, for
    perfect, the solution) are loaded: its seconds and the bytes NumPy allocates beyond them
    (tracemalloc)."""
    rules = engine.Rules()
    tables = load_tables(rules, progress=False)
    if isinstance(engine.make_strategy(spec), PerfectStrategy):
        solution(rules)
    tracemalloc.start()
    start = time.perf_counter()
    table = policy_table(spec, rules, tables=tables, cache=None)
    took = time.perf_counter() - start
    peak = tracemalloc.get_traced_memory()[1] / 2**30
    tracemalloc.stop()
    print(
        f"  {spec:<22} {took:5.1f} s, {peak:.2f} GiB beyond the tables, {len(table.keys):,} classes, "
        f"{len(table.varying):,} positions whose class varies; {_peak()}" + _targets(took, target_seconds, peak, target_gib)
    )
    return took, peak * 2**30


def batched_strategies(seconds: float) -> None:
    """Batched self-play of every table strategy, its policy table loaded (or built) first."""
    print("\nbatched self-play of each table strategy, one process [>= 1,000,000 games/s and >= half of random]")
    rules = engine.Rules()
    tables = load_tables(rules, progress=False)
    speeds = {}
    for spec in BATCHED_STRATEGIES:
        engine.play_batch(1 << 10, spec, spec, tables=tables)  # the policy table and the batch tables, untimed
        games = moves = batch = 0
        start = time.perf_counter()
        while time.perf_counter() - start < seconds / len(BATCHED_STRATEGIES):
            played = engine.play_batch(BATCH_GAMES // 4, spec, spec, tables=tables, seed=batch)
            games, moves, batch = games + len(played), moves + int(played.plies.sum()), batch + 1
        speeds[spec] = Throughput(games, moves, time.perf_counter() - start)
    for spec, result in speeds.items():
        ratio = result.games_per_second / speeds["random"].games_per_second
        met = result.games_per_second >= 1_000_000 and ratio >= 0.5
        _print_throughput(f"{spec:<24}", result, f"({ratio:.2f}x random; {_verdict(met)})")
    print(f"  {_peak()}")


def mcts_batches(playouts: int, games: int, target: float) -> tuple[float, float]:
    """``games`` games of mcts(playouts) self-play in one engine.play_batch call, and a few
    through engine.play_game for the ratio; memory is the process's peak. Returns the games a
    second of each."""
    rules = engine.Rules()
    tables = load_tables(rules, progress=False)
    spec = f"mcts(playouts={playouts})"
    engine.play_batch(2, spec, spec, tables=tables)  # the search tables, untimed
    start = time.perf_counter()
    batch = engine.play_batch(games, spec, spec, tables=tables, seed=1)
    took = time.perf_counter() - start
    scalar_games = max(4, games // 400)
    start = time.perf_counter()
    for seed in game_seeds(1, scalar_games):
        engine.play_game(spec, spec, rules=rules, seed=int(seed))
    scalar = scalar_games / (time.perf_counter() - start)
    speed = games / took
    print(
        f"  {spec:<20} {games:,} games in {took:.1f} s: {speed:,.0f} games/s ({int(batch.plies.sum()) / took:,.0f} moves/s); "
        f"engine.play_game {scalar:,.1f} games/s ({speed / scalar:.0f}x); {_peak()} "
        f"[>= {target:,.0f} games/s: {_verdict(speed >= target)}; <= 2 GiB: {_verdict(_peak_gib() <= 2)}]"
    )
    return _against_random(spec, games // 2, tables)


def _against_random(spec: str, games: int, tables: engine.tables.PositionTables) -> tuple[float, float]:
    """Games of ``spec`` against random a second, batched and through engine.play_game: the
    cost model's unit, one side searching (pipeline.runs.calibration.mcts_costs)."""
    start = time.perf_counter()
    engine.play_batch(games, spec, "random", tables=tables, seed=2)
    batched = games / (time.perf_counter() - start)
    scalar_games = max(4, games // 200)
    start = time.perf_counter()
    for seed in game_seeds(2, scalar_games):
        engine.play_game(spec, "random", rules=tables.rules, seed=int(seed))
    scalar = scalar_games / (time.perf_counter() - start)
    print(f"  {'':<20} against random, {games:,} games: {batched:,.0f} games/s; engine.play_game {scalar:,.1f} games/s")
    return batched, scalar


def exact_self_play(spec: str, target_seconds: float, target_gib: float) -> tuple[float, float]:
    """engine.exact_outcome of ``spec`` against itself once the tables (and policy tables) are
    loaded; memory is what NumPy allocates beyond them (tracemalloc) and the process's peak.
    Returns its seconds and that peak in bytes."""
    rules = engine.Rules()
    tables = load_tables(rules, progress=False)
    policy_table(spec, rules, tables=tables)
    tracemalloc.start()
    start = time.perf_counter()
    outcome = engine.exact_outcome(spec, spec, rules=rules, tables=tables)
    took = time.perf_counter() - start
    beyond = tracemalloc.get_traced_memory()[1] / 2**30
    tracemalloc.stop()
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20
    met = took <= target_seconds and peak <= target_gib
    verdict = f" [<= {target_seconds:.0f} s and {target_gib:.0f} GiB: {_verdict(met)}]"
    print(
        f"  {spec:<20} {took:5.1f} s, first-player score {outcome.first_player_score:.9f}, mean length "
        f"{outcome.mean_plies:.3f} plies, unresolved {outcome.unresolved:.1e}; {beyond:.2f} GiB beyond the tables, "
        f"{_peak()}{verdict}"
    )
    return took, peak * 2**30


def full_solve() -> Measured:
    """Solve the default rules with cap 400 once the tables exist, without the solution cache:
    its seconds a position, and its process's peak a position beyond a process's base."""
    print("\nstrong solution of the default rules, cap 400 [<= 60 s after the tables, peak <= 4 GiB]")
    tables = load_tables(engine.Rules(), progress=False)
    solution = engine.solve(engine.Rules(), 400, tables=tables, cache=None, progress=False)
    took = solution.timings["solve"]
    print(f"  solved in {took:.1f} s ({_verdict(took <= 60)}): start value {solution.start_value():+d},")
    best = solution.best_moves(engine.start_board(), 0, 0)
    print(f"  best first move(s) {best}, {solution.never_settled:,} positions never settle")
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20
    print(f"  {_peak()} ({_verdict(peak <= 4)})")
    return {
        "solve_seconds_per_position": took / solution.size,
        "solve_bytes_per_position": max(1.0, (peak * 2**30 - COSTS.base_bytes) / solution.size),
    }


def solver_scales(large: bool = False) -> Measured:
    """The strong solution of each rule set of SOLVER_TARGETS (and, if ``large``, 10 stones a pit:
    how its seconds and bytes a position grow beyond RULES.md's, as exponents of the positions' ratio)."""
    print("\nstrong solution at scale, cap 400, each in a fresh process once its tables are cached")
    solved: dict[engine.Rules, tuple[float, float]] = {}
    for rules, target_seconds, target_gib in (*SOLVER_TARGETS, *([LARGE_SOLVER_TARGET] if large else [])):
        _in_child(_cache_tables, rules)
        solved[rules] = _in_child(solver_scale, rules, target_seconds, target_gib)
    return solve_growths(solved[engine.Rules()], LARGE_SOLVER_TARGET[0], solved[LARGE_SOLVER_TARGET[0]]) if large else {}


def large_solve() -> None:
    """The 10-stone solve alone (``python -c 'from pipeline.bench import large_solve; large_solve()'``)."""
    rules, target_seconds, target_gib = LARGE_SOLVER_TARGET
    _in_child(_cache_tables, rules)
    _in_child(solver_scale, rules, target_seconds, target_gib)


def solver_scale(rules: engine.Rules, target_seconds: float | None, target_gib: float | None) -> tuple[float, float]:
    """Solve ``rules`` without the solution cache: seconds to read the tables and to solve, and
    the process's peak memory (ru_maxrss, tables included) in all and per position. Returns the
    seconds and the bytes beyond a process's base, a position."""
    start = time.perf_counter()
    tables = load_tables(rules, progress=False)
    read = time.perf_counter() - start
    solution = engine.solve(rules, 400, tables=tables, cache=None, progress=False)
    took = solution.timings["solve"]
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    print(
        f"  {rules.name:<26} {solution.size:>10,} positions: solved in {took:6.1f} s (tables read in {read:.1f} s), "
        f"{len(solution.change_plies) / solution.size:.1f} changes a position; peak {peak / 2**30:.2f} GiB = "
        f"{peak / solution.size:.0f} bytes a position" + _targets(took, target_seconds, peak / 2**30, target_gib)
    )
    return took / solution.size, max(1.0, peak - COSTS.base_bytes) / solution.size


def _cache_tables(rules: engine.Rules) -> None:
    load_tables(rules, progress=False)  # builds and caches them when missing


def study_runs() -> None:
    """Whole studies written to Parquet: a million random games, and one CPU-bound pairing on 1 and 2 jobs."""
    print(
        "\nstudies written to Parquet [1,000,000 random games <= 30 s on 2 cores, games/ <= 40 MB; "
        "its report <= 20 s; mcts, searched in batches: 2 jobs >= 1.8x 1 job]"
    )
    million = parse_study({"name": "million", "seed": 1, "games_per_seat": 1_000_000, "strategies": ["random"]})
    # mcts is the most CPU-bound strategy per game: work that the jobs share.
    searching = parse_study({"name": "search", "seed": 1, "games_per_seat": 30_000, "strategies": ["mcts(playouts=20)"]})
    with tempfile.TemporaryDirectory() as scratch:
        took = _timed_run(million, Path(scratch) / "million", jobs=2)
        size = sum(path.stat().st_size for path in (Path(scratch) / "million" / "games").glob("*.parquet")) / 1e6
        print(f"  1,000,000 random games, 2 jobs: {took:.1f} s ({_verdict(took <= 30)})")
        print(f"  games/ holds {size:.1f} MB ({_verdict(size <= 40)})")
        _timed_report(Path(scratch) / "million", Path(scratch) / "million-report", "the 1,000,000-game study", 20)
        if (DATA / "default" / MANIFEST).exists():
            default = f"{DATA / 'default'} (every pairing of make study; <= 60 s, 1.5 GiB)"
            _timed_report(DATA / "default", Path(scratch) / "default-report", default, 60, 1.5)
        one = _timed_run(searching, Path(scratch) / "one", jobs=1)
        two = _timed_run(searching, Path(scratch) / "two", jobs=2)
        print(f"  30,000 games of mcts(playouts=20) self-play: 1 job {one:.1f} s, 2 jobs {two:.1f} s")
        print(f"  speed-up {one / two:.2f}x ({_verdict(one / two >= 1.8)})")


def notebook_runs() -> None:
    """``make notebooks`` on the studies there are (data/default, data/variants), each notebook
    run as pipeline.notebooks runs it, in a fresh process whose one child is the notebook's
    kernel: its time and the kernel's peak memory."""
    print(f"\nthe notebooks of make notebooks, on the studies built [each <= {NOTEBOOK_GIB:.0f} GiB; <= 2 minutes in all]")
    took, ran = 0.0, True
    with tempfile.TemporaryDirectory() as scratch:
        for path in sorted((ROOT / "notebooks").glob("*.ipynb")):
            outcome, seconds, peak = _in_child(_timed_notebook, path, Path(scratch) / path.name)
            took, ran = took + seconds, ran and outcome.startswith("ran")
            verdict = f" ({_verdict(peak <= NOTEBOOK_GIB)})" if outcome.startswith("ran") else f" ({outcome})"
            print(f"  {path.name}: {seconds:.1f} s, kernel's peak memory {peak:.2f} GiB{verdict}")
    print(f"  in all {took:.1f} s ({_verdict(took <= 120) if ran else 'not every study is built'})")


def _timed_notebook(path: Path, out: Path) -> tuple[str, float, float]:
    """pipeline.notebooks.run_notebook: its outcome, seconds, and the peak memory (GiB) of its
    kernel, this process's one child, reaped when the notebook is done."""
    from pipeline.notebooks import run_notebook

    start = time.perf_counter()
    outcome = run_notebook(path, out)
    return outcome, time.perf_counter() - start, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 2**20


def _timed_report(study: Path, out: Path, label: str, seconds: float, gib: float | None = None) -> None:
    """Time ``modiar study report`` on a study folder against ``seconds`` (and a peak of ``gib``)."""
    start = time.perf_counter()
    build_report(study, out, progress=False)
    took = time.perf_counter() - start
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20
    met = took <= seconds and (gib is None or peak <= gib)
    print(f"  report of {label}: {took:.1f} s, {_peak()} ({_verdict(met)})")


def _timed_run(study: Study, out: Path, jobs: int) -> float:
    start = time.perf_counter()
    run_study(study, out, jobs=jobs, progress=False)
    return time.perf_counter() - start


def _in_child(job: Callable[..., T], *arguments: object) -> T:
    with ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("spawn")) as pool:
        return pool.submit(job, *arguments).result()


def _peak() -> str:
    return f"peak memory {_peak_gib():.2f} GiB"


def _peak_gib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20


def _targets(seconds: float, target_seconds: float | None, gib: float, target_gib: float | None) -> str:
    """ " [<= 60 s: meets the target; <= 2 GiB: ...]" for the targets given, "" for none."""
    targets = []
    if target_seconds is not None:
        targets.append(f"<= {target_seconds:.0f} s: {_verdict(seconds <= target_seconds)}")
    if target_gib is not None:
        targets.append(f"<= {target_gib:.0f} GiB: {_verdict(gib <= target_gib)}")
    return f" [{'; '.join(targets)}]" if targets else ""


def _verdict(met: bool) -> str:
    return "meets the target" if met else "MISSES the target"


def _print_throughput(label: str, result: Throughput, note: str = "") -> None:
    print(
        f"  {label:>6}: {result.games:>9,} games in {result.seconds:5.2f} s = {result.games_per_second:>8,.0f} games/s,"
        f" {result.moves_per_second:>10,.0f} moves/s, {result.moves / result.games:.1f} plies/game {note}"
    )


def atlas_rule_set() -> Measured:
    """One task of the atlas (pipeline.atlas.analyse) on the default rules, from nothing: what a rule set
    costs, part by part, and its peak memory per position (the atlas's memory estimate). Returns
    its seconds a position."""
    from pipeline.atlas.analyse import analyse, estimated_bytes

    rules = engine.Rules()
    estimated = estimated_bytes(rules)
    target = f"[<= {estimated / 2**30:.1f} GiB, the atlas's estimate]"
    print(f"\none rule set of the atlas from nothing (pipeline.atlas.analyse, {rules.name}) {target}")
    analysis = analyse(rules)
    parts = ", ".join(f"{part} {seconds:.1f}" for part, seconds in analysis.seconds.items() if part != "total")
    print(f"  {analysis.seconds['total']:.0f} s in all; seconds per part: {parts}")
    peak = analysis.peak_bytes or 0
    per_position = (peak - COSTS.base_bytes) / analysis.row["positions"]
    print(
        f"  peak {peak / 2**30:.2f} GiB, {per_position:.0f} bytes a position beyond the {COSTS.base_bytes >> 20} MB base "
        f"(the estimate takes {COSTS.atlas_bytes_per_position}: {estimated / 2**30:.2f} GiB; {_verdict(peak <= estimated)})"
    )
    return {"atlas_seconds_per_position": analysis.seconds["total"] / analysis.row["positions"]}


if __name__ == "__main__":
    main()
