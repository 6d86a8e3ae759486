"""``modiar fair``: the fairness search of one rule set (pipeline.analysis.fairness), run and gathered.

Three steps, each with its progress on stderr:

1. the strong solution of the rule set (engine.solve: from the engine's cache folder, else
   built and cached; about a minute for RULES.md's rules), and its remoteness (engine.remoteness,
   the same way; 74 s more);
2. the value of every start within ``moved`` stones of the rule set's own, with its pie-rule
   value and komi: lookups in the solution, a second or so;
3. the exact outcomes of random and perfect self-play (pipeline.analysis.fairness.EXACT_SPECS) from the
   rule set's own start and from every fair start within ``exact_within`` stones, in parallel
   workers, each kept in the engine's cache folder (pipeline.exact.cache) so that a second run,
   or one stopped and started again, computes only what is missing. About a minute and a half
   an outcome on one core for RULES.md's rules.
"""

from __future__ import annotations

import logging
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import polars as pl
from joblib import Parallel, delayed

import engine
import engine.solver
from engine.exact import MEASURES
from engine.solver import PLAY
from engine.tables import positions_of
from pipeline.analysis.fairness import (
    EXACT_SPECS,
    Balance,
    balance,
    count_starts,
    exact_row,
    most_moved,
    pareto_front,
    start_table,
    starts_within,
)
from pipeline.exact.cache import Start, cached_exact_outcome, exact_folder, exact_jobs, exact_path, read_cached, worker_bytes
from pipeline.exact.progress import ExactBar, Reporter
from pipeline.exact.quality import (
    QUALITY_OVER_OUTCOME,
    SELF_PLAY_QUALITY,
    cached_exact_quality,
    quality_path,
    read_cached_quality,
)
from pipeline.runs.costs import COSTS
from pipeline.runs.estimate import Estimate, remoteness_cost
from pipeline.runs.workers import check_jobs, exit_with_parent, keep_caches_loaded, parallel_jobs

log = logging.getLogger(__name__)
# The columns of a start's exact quality (run_fair's ``quality``): each measure of each self-play.
QUALITY_COLUMNS = tuple(f"{prefix}_{name}" for prefix in SELF_PLAY_QUALITY for name in MEASURES)
# The estimate looks in the cache folder for the exact outcomes of this many starts at most; past
# it, it counts every start as not cached.
LOOKED_UP_STARTS = 10_000


@dataclass(frozen=True)
class FairSearch:
    """What ``run_fair`` found for one rule set."""

    rules: engine.Rules
    moved: int  # the starts within this many moved stones
    exact_within: int  # the fair starts within this many have exact figures
    balance: Balance  # the rule set's own start: value, pie rule, komi
    verdict: engine.solver.Verdict  # the rule set's own start: what decides its value (docs/remoteness.md)
    own: dict[str, float]  # the own start's exact figures (pipeline.analysis.fairness.EXACT_COLUMNS)
    starts: pl.DataFrame  # pipeline.analysis.fairness.start_table, with the exact figures and "pareto"
    seconds: dict[str, float]  # each step's
    quality: bool = False  # whether the exact quality's columns (QUALITY_COLUMNS) are in ``own`` and ``starts``


def run_fair(
    rules: engine.Rules, *, moved: int = 2, exact_within: int = 1, jobs: int = 2, quality: bool = False, progress: bool = True
) -> FairSearch:
    """The fairness search of ``rules`` (see the module docstring), with ``moved`` and
    ``exact_within`` bounded as ``bounded_moved`` bounds them; given ``quality``, with the exact
    quality of SELF_PLAY_QUALITY's self-play from the same starts (step 4)."""
    moved, exact_within = bounded_moved(rules, moved, exact_within)
    check_jobs(jobs)
    seconds: dict[str, float] = {}
    started = time.perf_counter()
    _say(progress, f"fair {rules.name}: the strong solution (engine.solve; built and cached if missing)")
    solution = engine.solve(rules, progress=progress)
    seconds["solve"] = time.perf_counter() - started
    started = time.perf_counter()
    _say(progress, f"fair {rules.name}: the remoteness of every position (engine.remoteness; built and cached if missing)")
    lines = engine.remoteness(rules, progress=progress)
    seconds["remoteness"] = time.perf_counter() - started
    started = time.perf_counter()
    starts = start_table(rules, solution, lines, moved)
    start = engine.start_board(rules)
    own_values = solution.move_values(start, engine.game.SOUTH, 0)
    own_balance = balance(solution.value(start, engine.game.SOUTH, 0), list(own_values))
    own_verdict = engine.solver.verdict(solution, lines)
    del solution, lines
    seconds["values"] = time.perf_counter() - started
    fair = int((starts["value"] == 0).sum())
    _say(progress, f"fair {rules.name}: {starts.height} starts within {moved} moved stones, {fair} fair")
    started = time.perf_counter()
    chosen = starts.filter((pl.col("value") == 0) & (pl.col("moved") <= exact_within))
    counts = [_counts(row) for row in chosen.iter_rows(named=True)]
    outcomes = _exact_outcomes(rules, [None, *counts], exact_jobs(jobs, [rules]), progress)
    seconds["exact"] = time.perf_counter() - started
    own = exact_row(outcomes[None])
    exact = {row["start"]: exact_row(outcomes[_counts(row)]) for row in chosen.iter_rows(named=True)}
    if quality:
        started = time.perf_counter()
        qualities = _exact_qualities(rules, [None, *counts], exact_jobs(jobs, [rules]), progress)
        seconds["quality"] = time.perf_counter() - started
        own |= quality_row(qualities[None])
        for row in chosen.iter_rows(named=True):
            exact[row["start"]] |= quality_row(qualities[_counts(row)])
    starts = starts.with_columns(
        pl.Series(column, [exact[start][column] if start in exact else None for start in starts["start"]], dtype=pl.Float64)
        for column in own
    )
    # The front is of the starts decided by play: a start fair only at the cap is no fair game.
    by_play = starts.with_columns(pl.when(pl.col("decided_by") == PLAY).then(pl.col(column)) for column in own)
    starts = starts.with_columns(pareto_front(by_play, own))
    return FairSearch(rules, moved, exact_within, own_balance, own_verdict, own, starts, seconds, quality)


def bounded_moved(rules: engine.Rules, moved: int, exact_within: int) -> tuple[int, int]:
    """``moved`` and ``exact_within`` checked (ValueError) and each made at most ``most_moved``,
    with a warning: moving more stones than the rule set can move reaches no other start."""
    if moved < 1:
        raise ValueError(f"--moved is 1 or more, not {moved}")
    if not 0 <= exact_within <= moved:
        raise ValueError(f"--exact-within is from 0 to --moved ({moved}), not {exact_within}")
    most = most_moved(rules)
    beyond = [f"{option} {asked}" for option, asked in (("--moved", moved), ("--exact-within", exact_within)) if asked > most]
    if beyond:
        are = "is" if len(beyond) == 1 else "are"
        log.warning(
            "%s %s more stones than %s can move (%d at most); using %d", " and ".join(beyond), are, rules.name, most, most
        )
    return min(moved, most), min(exact_within, most)


def fair_estimate(rules: engine.Rules, *, moved: int, exact_within: int, jobs: int, quality: bool = False) -> Estimate:
    """What ``run_fair`` costs, before any work (at pipeline/costs.toml's rates): the strong
    solution when it is not cached, a lookup a start, and the exact outcomes not cached (with
    ``quality``, each with its exact quality too, QUALITY_OVER_OUTCOME times as long). Which
    starts are fair is known only once they are looked up, so every start within ``exact_within``
    is counted: at most that many."""
    solve = remoteness_cost(rules)
    starts = count_starts(rules, moved)
    outcomes = _outcomes_to_compute(rules, exact_within)
    if quality:
        outcomes += _outcomes_to_compute(rules, exact_within, quality=True) * round(QUALITY_OVER_OUTCOME)
    scale = positions_of(rules) / positions_of(engine.Rules())
    workers = exact_jobs(jobs, [rules])  # as many as this machine's memory holds, as run_fair takes
    exact = len(outcomes) * COSTS.fair_exact_seconds * scale / workers
    lookups = COSTS.base_bytes + COSTS.solution_bytes_per_position * positions_of(rules) + COSTS.fair_start_bytes * starts
    held = max(solve.bytes, lookups, min(workers, len(outcomes)) * worker_bytes(rules))
    built = ", the strong solution or its remoteness to build" if solve.seconds else ""
    computed = f"{'up to ' if exact_within else ''}{len(outcomes):,}" if outcomes else "no"
    work = f"fair {rules.name}: {starts:,} starts within {moved} moved stones{built}, {computed} exact outcomes to compute"
    smaller = "give a smaller --moved or --exact-within, or fewer --jobs"
    return Estimate(work, solve.seconds + COSTS.fair_start_seconds * starts + exact, held, smaller)


def _outcomes_to_compute(rules: engine.Rules, exact_within: int, *, quality: bool = False) -> list[str]:
    """The spec of each exact outcome (with ``quality``, each exact quality of SELF_PLAY_QUALITY)
    the cache folder lacks, from the rule set's own start and every start within ``exact_within``
    (all counted missing past LOOKED_UP_STARTS)."""
    folder = exact_folder()
    count = count_starts(rules, exact_within) if exact_within else 0
    kinds = tuple(SELF_PLAY_QUALITY.values()) if quality else EXACT_SPECS
    if folder is None or count > LOOKED_UP_STARTS:
        return [spec for _ in range(count + 1) for spec in kinds]
    starts: list[Start] = [None, *(starts_within(rules, exact_within) if exact_within else [])]
    specs = {spec: engine.canonical_spec(spec) for spec in kinds}
    path = quality_path if quality else exact_path
    return [spec for start in starts for spec in kinds if not path(specs[spec], specs[spec], rules, folder, start).exists()]


def _counts(row: dict[str, object]) -> tuple[int, ...]:
    return tuple(int(row[f"pit_{pit}"]) for pit in range(engine.game.PITS))  # type: ignore[call-overload]


def _exact_outcomes(
    rules: engine.Rules, starts: list[Start], jobs: int, progress: bool
) -> dict[Start, dict[str, engine.ExactOutcome]]:
    found: dict[Start, dict[str, engine.ExactOutcome]] = {start: {} for start in starts}
    tasks = []
    for start in starts:
        for spec in EXACT_SPECS:
            cached = read_cached(engine.canonical_spec(spec), engine.canonical_spec(spec), rules, start)
            if cached is None:
                tasks.append((start, spec))
            else:
                found[start][spec] = cached
    if not tasks:
        return found
    bar = ExactBar(
        [(_name(start, spec), COSTS.fair_exact_seconds) for start, spec in tasks],
        jobs,
        progress=progress,
        desc=f"fair {rules.name}: exact outcomes",
        unit="outcomes",
    )
    try:
        for start, spec, outcome, seconds in Parallel(n_jobs=parallel_jobs(jobs), return_as="generator_unordered")(
            delayed(_exact_job)(rules, start, spec, engine.cache_folder(), bar.folder) for start, spec in tasks
        ):
            found[start][spec] = outcome
            bar.done(_name(start, spec), seconds)
    finally:
        bar.close()
    return found


def quality_row(found: dict[str, engine.ExactQuality]) -> dict[str, float]:
    """The QUALITY_COLUMNS of a start from its self-play's exact qualities (SELF_PLAY_QUALITY's prefix -> quality)."""
    return {f"{prefix}_{name}": float(found[prefix].measures[name]) for prefix in SELF_PLAY_QUALITY for name in MEASURES}


def _exact_qualities(
    rules: engine.Rules, starts: list[Start], jobs: int, progress: bool
) -> dict[Start, dict[str, engine.ExactQuality]]:
    """The exact quality of each SELF_PLAY_QUALITY self-play from each of ``starts``, from the
    cache folder or computed (and cached) by ``jobs`` workers, with a bar."""
    found: dict[Start, dict[str, engine.ExactQuality]] = {start: {} for start in starts}
    tasks = []
    for start in starts:
        for prefix, spec in SELF_PLAY_QUALITY.items():
            cached = read_cached_quality(engine.canonical_spec(spec), engine.canonical_spec(spec), rules, start)
            if cached is None:
                tasks.append((start, prefix))
            else:
                found[start][prefix] = cached
    if not tasks:
        return found
    bar = ExactBar(
        [(_name(start, SELF_PLAY_QUALITY[prefix]), QUALITY_OVER_OUTCOME * COSTS.fair_exact_seconds) for start, prefix in tasks],
        jobs,
        progress=progress,
        desc=f"fair {rules.name}: exact quality",
        unit="qualities",
    )
    try:
        for start, prefix, quality, seconds in Parallel(n_jobs=parallel_jobs(jobs), return_as="generator_unordered")(
            delayed(_quality_job)(rules, start, prefix, engine.cache_folder(), bar.folder) for start, prefix in tasks
        ):
            found[start][prefix] = quality
            bar.done(_name(start, SELF_PLAY_QUALITY[prefix]), seconds)
    finally:
        bar.close()
    return found


def _quality_job(
    rules: engine.Rules, start: Start, prefix: str, cache: Path | None, reports: Path | None
) -> tuple[Start, str, engine.ExactQuality, float]:
    """One exact quality from a start, from the cache folder or computed and cached (in a worker)."""
    exit_with_parent()
    keep_caches_loaded()
    started = time.perf_counter()
    engine.set_cache_folder(cache)
    spec = SELF_PLAY_QUALITY[prefix]
    reporter = Reporter(reports, _name(start, spec))
    try:
        quality = cached_exact_quality(spec, spec, rules, reporter, start)
        return start, prefix, quality, time.perf_counter() - started
    finally:
        reporter.close()


def _name(start: Start, spec: str) -> str:
    where = "the rule set's start" if start is None else " ".join(map(str, start))
    return f"{spec} from {where}"


def _exact_job(
    rules: engine.Rules, start: Start, spec: str, cache: Path | None, reports: Path | None
) -> tuple[Start, str, engine.ExactOutcome, float]:
    """One exact outcome from a start, from the cache folder or computed and cached (in a worker)."""
    exit_with_parent()
    keep_caches_loaded()
    started = time.perf_counter()
    engine.set_cache_folder(cache)
    reporter = Reporter(reports, _name(start, spec))
    try:
        outcome = cached_exact_outcome(spec, spec, rules, reporter, start)
        return start, spec, outcome, time.perf_counter() - started
    finally:
        reporter.close()


def _say(progress: bool, message: str) -> None:
    if progress:
        print(message, file=sys.stderr)
