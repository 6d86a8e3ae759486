"""What a command will cost on this machine, said before it starts: time and memory, from measured rates.

Every command that plays, solves or computes makes an ``Estimate`` of its work before doing any,
and ``check`` refuses it in one line (EstimateError) when it needs more memory than this machine
has (pipeline.runs.workers.memory_bytes), or would take longer than LONG_SECONDS and the user did not
say --yes. A study, a ladder and an atlas print ``Estimate.line()`` before they start. What is
already computed is free: the cache folder's position tables, solutions, policy tables and exact
outcomes, a study's chunks in its folder, an atlas's rows in its.

Every rate and size is pipeline/costs.toml's (pipeline.runs.costs.COSTS), each measured as its
comment there says; pipeline.runs.estimate prices a rule set's caches, pipeline.runs.progress a
game, pipeline.exact.cache an exact outcome and pipeline.atlas.plan an atlas's rule set. An
estimate is good to a factor of a few: enough to tell minutes from days, and a machine's memory
from a petabyte. Where the rule set is known, a search deeper than its ply cap is refused here
too (engine.players.search bounds a spec by engine.game.MAX_PLY_CAP alone, having no rule set at
hand).
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

import engine
from engine.play import TREE_BYTES
from engine.players import AlphaBetaStrategy, MctsStrategy, engine_strategy
from engine.tables import positions_of
from pipeline.atlas import plan as atlas_plan
from pipeline.atlas.analyse import estimated_bytes
from pipeline.atlas.config import Atlas
from pipeline.atlas.rows import kept_costs, killed_marks, read_row, row_path
from pipeline.atlas.run import worker_rooms
from pipeline.exact.cache import (
    exact_folder,
    exact_jobs,
    exact_path,
    exact_seconds,
    exploit_path,
    exploit_seconds,
    is_wide,
    worker_bytes,
)
from pipeline.ladder.run import Ladder
from pipeline.play import HUMAN
from pipeline.runs.config import RULES_MD
from pipeline.runs.costs import COSTS
from pipeline.runs.estimate import (
    FREE,
    Cost,
    Estimate,
    about,
    caches_cost,
    remoteness_cost,
    size,
    solution_cost,
    solution_if_perfect,
)
from pipeline.runs.paths import MANIFEST
from pipeline.runs.progress import game_seconds, scalar_game_seconds
from pipeline.runs.records import RecordError, read_study_manifest
from pipeline.runs.workers import check_jobs, memory_bytes
from pipeline.search_ladder.run import SearchLadder, is_cached
from pipeline.study.caches import missing_caches
from pipeline.study.config import Pairing, Study
from pipeline.study.run import Chunk, chunk_listed, plan

LONG_SECONDS = 3600.0  # a run estimated longer than this needs --yes
BENCH_RUNS = 4.5  # modiar bench's timed runs, in --seconds: 2.5 of scalar games, 1 of batched, 1 of strategies


class EstimateError(ValueError):
    """Work this machine cannot hold, or a long run the user did not confirm: one line."""


def check(estimate: Estimate, *, yes: bool) -> None:
    """Refuse (EstimateError) what needs more memory than this machine has, and what takes longer
    than LONG_SECONDS unless ``yes``."""
    memory = memory_bytes()
    way_out = f"; {estimate.smaller}" if estimate.smaller else ""
    if estimate.bytes > memory and not estimate.remote:
        raise EstimateError(
            f"{estimate.work} needs about {size(estimate.bytes)} of memory and this machine has {size(memory)}{way_out}"
        )
    if estimate.seconds > LONG_SECONDS and not yes:
        raise EstimateError(
            f"{estimate.work} would take {about(estimate.seconds)} on this machine, over an hour; --yes runs it anyway"
        )


# ---------------------------------------------------------------------------------------------
# The commands


def sample(south: str, north: str, games: int, rules: engine.Rules) -> Estimate:
    """``modiar sample``: games through engine.play_game, every record held until the summary."""
    specs = (south, north)
    _check_depths(specs, rules)
    ready = solution_if_perfect(specs, rules)
    seconds = ready.seconds + games * scalar_game_seconds(south, north)
    held = _playing_bytes(specs, rules) + games * COSTS.sample_game_bytes
    work = f"{games:,} games of {south} against {north} under {rules.name}"
    return Estimate(work, seconds, max(held, ready.bytes), "play fewer --games")


def one_game(south: str, north: str, rules: engine.Rules) -> Estimate:
    """``modiar show`` and ``modiar play``: one game; a person (human) counts as random, whose
    moves take no time here."""
    played = tuple("random" if spec == HUMAN else spec for spec in (south, north))
    _check_depths(played, rules)
    ready = solution_if_perfect(played, rules)
    seconds = ready.seconds + scalar_game_seconds(*played)
    work = f"a game of {south} against {north} under {rules.name}"
    return Estimate(work, seconds, max(_playing_bytes(played, rules), ready.bytes), "choose a smaller search")


def exact(south: str, north: str, rules: engine.Rules) -> Estimate:
    """``modiar exact``: the tables and policy tables the pairing needs, then its exact outcome."""
    _check_depths((south, north), rules)
    ready = caches_cost(rules, (south, north))
    computed = _exact(south, north, rules)
    work = f"the exact outcome of {south} against {north} under {rules.name}"
    return Estimate(work, ready.seconds + computed.seconds, max(ready.bytes, computed.bytes), "choose fewer stones a pit")


def solve(rules: engine.Rules, cap: int) -> Estimate:
    """``modiar solve``: the strong solution at ``cap`` plies, free when the cache holds it."""
    ready = solution_cost(rules.replace(ply_cap=cap))
    work = f"the strong solution of {rules.name} at a cap of {cap} plies"
    return Estimate(work, ready.seconds, ready.bytes, "choose fewer stones a pit")


def analyse(rules: engine.Rules) -> Estimate:
    """``modiar analyse`` and the hints of ``modiar play``: the solution and the remoteness, free when cached."""
    ready = remoteness_cost(rules)
    work = f"the strong solution and the remoteness of {rules.name}"
    return Estimate(work, ready.seconds, ready.bytes, "choose fewer stones a pit")


def bench(seconds: float) -> Estimate:
    """``modiar bench``: its fixed parts and its timed runs."""
    work = f"the benchmarks with runs of {seconds:g} s"
    return Estimate(work, COSTS.bench_seconds + BENCH_RUNS * seconds, estimated_bytes(RULES_MD), "give a smaller --seconds")


def study(planned: Study, directory: Path, *, jobs: int, remote: bool) -> Estimate:
    """``modiar study run``: the chunks not yet in ``directory``, the caches they need (those not in
    the cache folder) and the exact outcomes not cached, shared by ``jobs`` workers."""
    if not remote:
        check_jobs(jobs)  # its own words for the one mistake it names: more workers than memory
    for rule_set in planned.rule_sets():
        _check_depths(rule_set.strategies, rule_set.rules)
    chunks = _chunks_to_play(planned, directory)
    games = sum(len(chunk) for chunk in chunks)
    play = sum(len(chunk) * game_seconds(chunk.pairing.south, chunk.pairing.north, chunk.pairing.rules) for chunk in chunks)
    builds = [caches_cost(rules, specs) for rules, specs in missing_caches(chunk.pairing for chunk in chunks).items()]
    exacts = [_exact(pairing.south, pairing.north, pairing.rules) for pairing in _exact_to_compute(planned)]
    workers = jobs if remote else exact_jobs(jobs, {pairing.rules for pairing in _exact_to_compute(planned)})
    # a rule set's caches are built by one worker: the workers share the rule sets, not one's steps
    seconds = play / jobs + _seconds(builds) / max(1, min(jobs, len(builds))) + _seconds(exacts) / workers
    worker = max(_worker_bytes(rule_set.strategies, rule_set.rules) for rule_set in planned.rule_sets())
    held = max(jobs * worker, min(jobs, len(builds)) * _bytes(builds), min(workers, len(exacts)) * _bytes(exacts))
    total = planned.total_games()
    played = f"{games:,} games to play" + (f" of its {total:,}" if games < total else "")
    built, computed = _count(len(builds), "rule set"), _count(len(exacts), "exact outcome")
    work = f"study {planned.name}: {played}, the caches of {built} to build, {computed} to compute"
    return Estimate(work, seconds, held, "give it fewer games or use fewer --jobs", remote)


def search_ladder(planned: SearchLadder, *, jobs: int) -> Estimate:
    """``modiar ladder search``: every pairing not in the cache folder at its most games (the
    budget's or the cap's; the stopping rule often ends them sooner), shared by ``jobs`` workers."""
    specs = tuple({spec for pairing in planned.pairings() for spec in pairing})
    _check_depths(specs, planned.rules)
    ready = caches_cost(planned.rules, specs)
    pairings = [pairing for pairing in planned.pairings() if not is_cached(planned, *pairing)]
    play = sum(planned.most_games(*pairing) * game_seconds(*pairing, planned.rules) for pairing in pairings)
    rungs = f"mcts from {min(planned.playouts):,} to {max(planned.playouts):,} playouts"
    work = f"search ladder {planned.name}: {len(pairings)} of {len(planned.pairings())} pairings of {rungs} to play"
    held = max(ready.bytes, jobs * _worker_bytes(specs, planned.rules))
    return Estimate(work, ready.seconds + play / jobs, held, "give it a smaller playout_budget or fewer rungs")


def ladder(planned: Ladder, *, jobs: int) -> Estimate:
    """``modiar ladder run``: the pairings and exploitabilities not in the cache folder, and the
    caches they need, shared by the workers this machine's memory holds."""
    rules = planned.rules
    _check_depths((*planned.rungs, *planned.opponents), rules)
    pairings = [pairing for pairing in planned.pairings() if not _exact_cached(*pairing, rules)]
    exploits = [spec for spec in planned.rungs if not _exploit_cached(spec, rules)]
    needed = {spec: None for pairing in pairings for spec in pairing} | dict.fromkeys(exploits)
    ready = caches_cost(rules, needed) if needed else FREE
    tasks = [_exact(south, north, rules) for south, north in pairings] + [_exploit(spec, rules) for spec in exploits]
    workers = exact_jobs(jobs, [rules])
    seconds = ready.seconds + _seconds(tasks) / workers
    held = max(ready.bytes, min(workers, len(tasks)) * _bytes(tasks))
    computed = _count(len(pairings), "exact outcome")
    work = f"ladder {planned.name}: {computed} and {_count(len(exploits), 'exploitability', 'exploitabilities')} to compute"
    return Estimate(work, seconds, held, "use fewer --jobs or choose fewer stones a pit")


def atlas_quality(directory: Path, *, jobs: int) -> Estimate:
    """``modiar atlas quality``: the distinct games of the atlas in ``directory`` not yet measured,
    as the run plans them (pipeline.atlas.quality.plan_quality)."""
    from pipeline.atlas.quality import plan_quality

    planned = plan_quality(directory, jobs)
    count = len(planned.shared) + len(planned.alone)
    more = f" ({len(planned.refused)} refused for memory)" if planned.refused else ""
    work = f"atlas quality: {_count(count, 'distinct game')} to measure{more}"
    return Estimate(work, planned.wall_seconds(jobs), planned.held_bytes(jobs) if count else 0, "give --hours, or fewer --jobs")


def atlas(planned: Atlas, directory: Path, *, part: str | None, jobs: int, remote: bool) -> Estimate:
    """``modiar atlas run``: the rule sets whose rows are not in ``directory``, and those whose
    rows lack the verdict columns (completed, which costs less: pipeline.atlas.plan.completion_seconds),
    as the run plans them (pipeline.atlas.plan: ``jobs`` workers, fewer for those that need more
    memory); those no worker holds are refused by the atlas itself, and cost nothing."""
    wanted = planned.rule_sets(part)
    found = {rules.name: read_row(directory, rules) for rules in wanted if row_path(directory, rules.name).exists()}
    incomplete = {name: row.costs for name, row in found.items() if row is not None and not row.complete}
    missing = [rules for rules in wanted if found.get(rules.name) is None or rules.name in incomplete]
    rooms = {jobs: 2**62} if remote else worker_rooms("loky", jobs)
    kept = kept_costs(directory)  # what the rows already there took: the rule sets alike cost as much
    run = atlas_plan.plan(missing, rooms, kept, killed_marks(directory, missing), directory, incomplete)
    seconds, held = 0.0, 0
    for phase in run.phases:  # each phase's workers share its time, and each holds its largest rule set
        seconds += sum(atlas_plan.task_seconds(rules, kept, incomplete) for rules in phase.rule_sets) / phase.workers
        largest = max(atlas_plan.task_bytes(rules, kept, incomplete) for rules in phase.rule_sets)
        held = max(held, min(phase.workers, len(phase.rule_sets)) * largest)
    planned_names = [rules.name for phase in run.phases for rules in phase.rule_sets]
    completed = sum(name in incomplete for name in planned_names)
    more = f" ({len(run.refused)} refused for memory)" if run.refused else ""
    parts = (
        [_count(len(planned_names) - completed, "rule set") + " to analyse"]
        if len(planned_names) > completed or not completed
        else []
    )
    if completed:
        parts.append(f"{_count(completed, 'kept rule set')} to complete with the verdict columns")
    work = f"atlas {planned.name}: {', '.join(parts)}{more}"
    return Estimate(work, seconds, held, "use fewer --jobs", remote)


# ---------------------------------------------------------------------------------------------
# The parts


def _check_depths(specs: Iterable[str], rules: engine.Rules) -> None:
    """Refuse a search deeper than the rule set's ply cap: from any position it already reaches
    the end of every game at the cap's depth, so a deeper one is the same search spelt otherwise
    (and its policy table would sweep every position that many times for nothing)."""
    for spec in specs:
        strategy = engine.make_strategy(spec)
        if isinstance(strategy, AlphaBetaStrategy) and strategy.depth > rules.ply_cap:
            raise EstimateError(
                f"{spec} searches deeper than the {rules.ply_cap}-ply cap of {rules.name}; "
                f"alphabeta(depth={rules.ply_cap}) already searches to the end of every game"
            )


def _exact(south: str, north: str, rules: engine.Rules) -> Cost:
    """An exact outcome (pipeline.exact.cache's rates, scaled from RULES.md by the positions): a
    wide pairing holds up to worker_bytes, a narrow one little beyond its tables."""
    scale = positions_of(rules) / positions_of(RULES_MD)
    seconds = exact_seconds(south, north) * scale
    wide = is_wide(south) or is_wide(north)
    held = worker_bytes(rules) if wide else COSTS.base_bytes + 2 * _policy_bytes(rules)
    return Cost(seconds, held)


def _exploit(spec: str, rules: engine.Rules) -> Cost:
    """An exploitability: a best response over every position reachable against ``spec``."""
    scale = positions_of(rules) / positions_of(RULES_MD)
    return Cost(exploit_seconds(spec) * scale, worker_bytes(rules))


def _policy_bytes(rules: engine.Rules) -> int:
    return (COSTS.table_bytes_per_position + COSTS.policy_bytes_per_position) * positions_of(rules)


def _playing_bytes(specs: Iterable[str], rules: engine.Rules) -> int:
    """A process playing games through engine.play_game: the interpreter, the memoised positions
    and what its strategies search."""
    return COSTS.base_bytes + COSTS.positions_bytes + _search_bytes(specs, rules)


def _worker_bytes(specs: Iterable[str], rules: engine.Rules) -> int:
    """A worker of a study (COSTS.study_worker_bytes, measured under RULES.md), with the tables of
    a larger rule set and what its strategies search."""
    larger = max(0, positions_of(rules) - positions_of(RULES_MD)) * COSTS.table_bytes_per_position
    return COSTS.study_worker_bytes + larger + _search_bytes(specs, rules, batched=True)


def _search_bytes(specs: Iterable[str], rules: engine.Rules, *, batched: bool = False) -> int:
    """A loaded solution for perfect, and the tree of the largest mcts search (``batched``: the
    trees and tables of engine.play_batch's searches)."""
    strategies = [engine_strategy(spec) for spec in specs]
    solution = any(strategy.needs_solution for strategy in strategies)
    playouts = max((strategy.playouts for strategy in strategies if isinstance(strategy, MctsStrategy)), default=0)
    if batched and playouts:
        search = TREE_BYTES + COSTS.mcts_board_bytes_per_position * positions_of(rules)
    else:
        search = playouts * COSTS.mcts_playout_bytes
    return solution * COSTS.solution_bytes_per_position * positions_of(rules) + search


def _chunks_to_play(planned: Study, directory: Path) -> list[Chunk]:
    """The study's chunks its folder's manifest does not list (a manifest that cannot be read, or
    is another config's, lists none: the run itself says what is wrong with it)."""
    listed = None
    try:
        manifest = read_study_manifest(directory) if (directory / MANIFEST).is_file() else None
        if manifest is not None and manifest["config"] == planned.as_dict():
            listed = manifest
    except (RecordError, OSError):
        pass
    return [chunk for chunk in plan(planned) if listed is None or not chunk_listed(listed, chunk)]


def _exact_to_compute(planned: Study) -> list[Pairing]:
    return [pairing for pairing in planned.exact_pairings() if not _exact_cached(pairing.south, pairing.north, pairing.rules)]


def _exact_cached(south: str, north: str, rules: engine.Rules) -> bool:
    folder = exact_folder()
    return folder is not None and exact_path(south, north, rules, folder).exists()


def _exploit_cached(spec: str, rules: engine.Rules) -> bool:
    folder = exact_folder()
    return folder is not None and exploit_path(spec, rules, folder).exists()


def _seconds(costs: list[Cost]) -> float:
    return sum(cost.seconds for cost in costs)


def _bytes(costs: list[Cost]) -> int:
    return max((cost.bytes for cost in costs), default=0)


def _count(count: int, word: str, plural: str | None = None) -> str:
    return f"{count:,} {word if count == 1 else plural or word + 's'}"
