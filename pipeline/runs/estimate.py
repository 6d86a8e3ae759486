"""What a run will cost, said before it starts: an ``Estimate`` and its words, and what a rule set's caches cost.

A rule set's caches are what its games and exact outcomes need built first: its position
tables, its strong solution (when perfect or a dial plays) and its strategies' policy tables,
each free when the cache folder holds it, else priced by the positions of its index at the
rates of pipeline/costs.toml (pipeline.runs.costs). A larger rule set takes more a position than
RULES.md, whose rates the file gives: they grow as (positions / RULES.md's) ** the entry's growth.
pipeline.estimates makes every command's estimate of these, the fairness search its own, and
the caches' bar (pipeline.study.caches) its time left.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import NamedTuple

import engine
from engine.players import (
    AlphaBetaStrategy,
    PerfectStrategy,
    is_table_strategy,
    policies_folder,
    policy_path,
    values_spec,
)
from engine.solver import remoteness_path, solution_path, solutions_folder
from engine.tables import cache_path, positions_of, table_rules, tables_folder
from pipeline.runs.config import RULES_MD
from pipeline.runs.costs import COSTS


class Cost(NamedTuple):
    """Seconds on one core, and the most bytes held at once."""

    seconds: float
    bytes: int


FREE = Cost(0.0, 0)


@dataclass(frozen=True)
class Estimate:
    """``work`` (what will be computed, in words) takes about ``seconds`` and ``bytes`` at its
    peak here; ``smaller`` says how to ask for less. ``remote``: the work runs on a dask
    scheduler's workers, whose memory is theirs."""

    work: str
    seconds: float
    bytes: int
    smaller: str = ""
    remote: bool = False

    def line(self) -> str:
        """The line a long run prints before it starts."""
        if self.remote:
            return f"{self.work}: {about(self.seconds)} on the scheduler's workers"
        return f"{self.work}: {about(self.seconds)} and {size(max(self.bytes, COSTS.base_bytes))} of memory on this machine"


def caches_cost(rules: engine.Rules, specs: Iterable[str]) -> Cost:
    """The caches of ``rules`` that the strategies ``specs`` need and the cache folder lacks:
    the tables, the solution (for perfect and its dials) and a policy table a family of values
    (perfect's dials share perfect's: engine.players.values_spec), built one after another."""
    specs = tuple(dict.fromkeys(specs))
    families = {values_spec(spec): spec for spec in specs if is_table_strategy(spec) and not _policy_cached(spec, rules)}
    solving = _solving(rules) if any(isinstance(engine.make_strategy(spec), PerfectStrategy) for spec in specs) else FREE
    steps = [tables_cost(rules), solving, *(policy_cost(spec, rules) for spec in families.values())]
    return Cost(sum(step.seconds for step in steps), max(step.bytes for step in steps))


def tables_cost(rules: engine.Rules) -> Cost:
    """The rule set's position tables, free when cached."""
    folder = tables_folder()
    if folder is not None and cache_path(table_rules(rules), folder).exists():
        return FREE
    positions = positions_of(rules)
    seconds = _grown(COSTS.table_seconds_per_position, COSTS.table_growth, rules) * positions
    return Cost(seconds, COSTS.base_bytes + COSTS.table_bytes_per_position * positions)


def solution_cost(rules: engine.Rules) -> Cost:
    """The strong solution at the rule set's cap, free when cached; its tables first when they are not."""
    solving = _solving(rules)
    return Cost(solving.seconds + tables_cost(rules).seconds, solving.bytes) if solving.seconds else FREE


def remoteness_cost(rules: engine.Rules) -> Cost:
    """The remoteness of every position at the rule set's cap (engine.remoteness), free when
    cached; the solution and the tables first when they are not."""
    lines = _retrograde(rules, remoteness_path, COSTS.remoteness_seconds_per_position, COSTS.remoteness_bytes_per_position)
    if lines is FREE:
        return FREE
    before = solution_cost(rules)
    return Cost(before.seconds + lines.seconds, max(before.bytes, lines.bytes))


def solution_if_perfect(specs: Iterable[str], rules: engine.Rules) -> Cost:
    """What perfect or a dial needs before its first move: the solution, when not cached."""
    perfect = [strategy for strategy in map(engine.make_strategy, specs) if isinstance(strategy, PerfectStrategy)]
    if not perfect:
        return FREE
    return remoteness_cost(rules) if any(strategy.ties == "hurry" for strategy in perfect) else solution_cost(rules)


def policy_cost(spec: str, rules: engine.Rules) -> Cost:
    """The policy table of a table strategy once the tables (and solution) are there, free when
    cached: a pass over every position, and for alphabeta(depth=d) d - 1 sweeps more."""
    if _policy_cached(spec, rules):
        return FREE
    positions = positions_of(rules)
    strategy = engine.make_strategy(spec)
    sweeps = strategy.depth - 1 if isinstance(strategy, AlphaBetaStrategy) else 0
    seconds = (COSTS.policy_seconds_per_position + sweeps * COSTS.sweep_seconds_per_position) * positions
    log = min(sweeps * COSTS.sweep_bytes_per_position, COSTS.solve_bytes_per_position)
    return Cost(seconds, COSTS.base_bytes + (COSTS.table_bytes_per_position + COSTS.policy_bytes_per_position + log) * positions)


def about(seconds: float) -> str:
    """``about 12 min``, ``more than a century``."""
    said = duration(seconds)
    return said if said.startswith("more") else f"about {said}"


def duration(seconds: float) -> str:
    """``40 s``, ``12 min``, ``3.5 h``, ``9 days``, ``more than a century``."""
    for unit, length in (("years", 365.25 * 86400), ("days", 86400), ("h", 3600), ("min", 60)):
        if seconds >= 2 * length or (unit == "h" and seconds >= length):
            if unit == "years" and seconds >= 100 * length:
                return "more than a century"
            return f"{seconds / length:.1f} {unit}" if seconds < 10 * length else f"{seconds / length:,.0f} {unit}"
    return f"{max(seconds, 1):.0f} s"


def size(n_bytes: float) -> str:
    """``700 MiB``, ``4.4 GiB``, ``2.7 PiB``."""
    value, units = float(n_bytes), ["B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB", "ZiB", "YiB"]
    while value >= 1024 and len(units) > 1:
        value, units = value / 1024, units[1:]
    return f"{value:,.1f} {units[0]}" if value < 100 else f"{value:,.0f} {units[0]}"


def _solving(rules: engine.Rules) -> Cost:
    """The strong solution alone, its tables loaded; free when cached."""
    return _retrograde(rules, solution_path, COSTS.solve_seconds_per_position, COSTS.solve_bytes_per_position)


def _retrograde(rules: engine.Rules, path: Callable[[engine.Rules, Path], Path], seconds: float, size: float) -> Cost:
    """A retrograde pass over every position whose file ``path`` names in the folder of
    solutions (the solution, its remoteness): free when cached, else at ``seconds`` and ``size``
    a position, grown as the solver's rates grow with the positions."""
    folder = solutions_folder()
    if folder is not None and path(rules, folder).exists():
        return FREE
    positions = positions_of(rules)
    held = COSTS.base_bytes + round(_grown(size, COSTS.solve_bytes_growth, rules) * positions)
    return Cost(_grown(seconds, COSTS.solve_seconds_growth, rules) * positions, held)


def _grown(rate: float, growth: float, rules: engine.Rules) -> float:
    """A rate a position measured under RULES.md, as it grows for a larger rule set (a smaller one keeps it)."""
    return rate * max(1.0, positions_of(rules) / positions_of(RULES_MD)) ** growth


def _policy_cached(spec: str, rules: engine.Rules) -> bool:
    folder = policies_folder()
    return folder is not None and policy_path(spec, rules, folder).exists()
