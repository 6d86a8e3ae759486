"""What a study needs before its games: the position tables of each rule set, the solution when
a strategy reads it, and each table strategy's policy table, built once per rule set (in
parallel across rule sets) and kept loaded in the workers that play."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from joblib import Parallel, delayed

import engine
from engine.players import engine_strategy, is_table_strategy, policies_folder, policy_path, policy_table
from engine.solver import solution_path, solutions_folder
from engine.tables import cache_path, load_tables, table_rules, tables_folder
from pipeline.runs.estimate import caches_cost
from pipeline.runs.progress import CachesBar
from pipeline.runs.workers import exit_with_parent, parallel_jobs
from pipeline.study.config import Pairing


def build_caches(rules: engine.Rules, strategies: tuple[str, ...], cache: Path) -> str:
    """Build (or check) what the strategies need under a rule set in the cache folder the workers
    load it from: the position tables, the solution when a ``perfect`` plays, and the policy table
    of every table strategy (runs in a worker); returns the rule set's name."""
    exit_with_parent()
    engine.set_cache_folder(cache)
    tables = load_tables(table_rules(rules), progress=False)
    if any(_needs_solution(spec) for spec in strategies):
        engine.solve(rules, tables=tables, progress=False)
    for spec in strategies:
        if is_table_strategy(spec):
            policy_table(spec, rules, tables=tables)
    return rules.name


def missing_caches(pairings: Iterable[Pairing]) -> dict[engine.Rules, tuple[str, ...]]:
    """The rule sets of the pairings whose caches (build_caches) are not all there yet, each with
    the strategies that play under it; largest rule sets first, as they take longest."""
    needed: dict[engine.Rules, dict[str, None]] = {}
    for pairing in pairings:
        needed.setdefault(pairing.rules, {}).update(dict.fromkeys((pairing.south, pairing.north)))
    missing = {rules: tuple(specs) for rules, specs in needed.items() if not _cached(rules, tuple(specs))}
    return dict(sorted(missing.items(), key=lambda item: -item[0].stones_per_pit))


def _cached(rules: engine.Rules, strategies: tuple[str, ...]) -> bool:
    tables, solutions, policies = tables_folder(), solutions_folder(), policies_folder()
    if tables is None or solutions is None or policies is None:
        return True  # no cache folder: each worker builds what it needs in memory
    files = [cache_path(table_rules(rules), tables)]
    if any(_needs_solution(spec) for spec in strategies):
        files.append(solution_path(rules, solutions))
    files += [policy_path(spec, rules, policies) for spec in strategies if is_table_strategy(spec)]
    return all(path.exists() for path in files)


def _needs_solution(spec: str) -> bool:
    return engine_strategy(spec).needs_solution


def build_all(missing: dict[engine.Rules, tuple[str, ...]], jobs: int, progress: bool) -> None:
    if not missing:
        return
    seconds = {rules.name: caches_cost(rules, strategies).seconds for rules, strategies in missing.items()}
    bar = CachesBar(missing, jobs, progress=progress, seconds=seconds)
    try:
        for name in Parallel(n_jobs=parallel_jobs(jobs), return_as="generator_unordered")(
            delayed(build_caches)(rules, strategies, engine.cache_folder()) for rules, strategies in missing.items()
        ):
            bar.built(name)
    finally:
        bar.close()
