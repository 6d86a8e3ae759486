"""What each ``modiar`` command does, once pipeline.cli has parsed its arguments: one function a
command (``study_run``, ``exact``, ...), each taking the parsed arguments, with the checks they
share (a rule set from --rules and --rule, a seed, an output folder, the estimate a long run
must be confirmed against). A user's mistake raises UsageError: one line, no traceback."""

from __future__ import annotations

import argparse
import math
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import engine
from pipeline.runs.paths import (
    DATA,
    ROOT,
    cache_folder,
    cache_source,
    study_config,
    study_dir,
)

if TYPE_CHECKING:
    from pipeline.runs.estimate import Estimate


class UsageError(Exception):
    """A mistake in what the user asked for: reported in one line, exit status 2."""


def rules_from(arguments: argparse.Namespace) -> engine.Rules:
    """The rule set named by ``--rules NAME`` and changed by ``--rule FIELD=VALUE`` options."""
    try:
        rules = engine.Rules.from_name(arguments.rules)
        changes = dict(_rule_change(text) for text in arguments.rule)
        return rules.replace(**changes) if changes else rules
    except (ValueError, TypeError) as error:
        raise UsageError(str(error)) from None


def _rule_change(text: str) -> tuple[str, object]:
    """FIELD=VALUE of ``--rule``, VALUE spelled as engine.game.RuleField.parse reads it."""
    from engine.game import RULE_FIELD
    from pipeline.runs.config import rule_hint

    name, equals, value = text.partition("=")
    if not equals or name not in RULE_FIELD:
        hint = rule_hint(name) if equals else ""
        raise UsageError(f"--rule takes FIELD=VALUE with FIELD one of {', '.join(RULE_FIELD)}, not {text!r}{hint}")
    field = RULE_FIELD[name]
    try:
        return name, field.parse(value)
    except ValueError:
        raise UsageError(f"--rule {name} takes {field.takes}, not {value!r}") from None


def sample(arguments: argparse.Namespace) -> None:
    from pipeline import estimates
    from pipeline.sample import play_sample, summary

    rules = rules_from(arguments)
    if arguments.games < 2:
        raise UsageError(f"--games must be at least 2, not {arguments.games}")
    _check_seed(arguments.seed)
    _afford(lambda: estimates.sample(arguments.south, arguments.north, arguments.games, rules), arguments)
    sample = play_sample(
        arguments.south, arguments.north, games=arguments.games, seed=arguments.seed, rules=rules, progress=not arguments.quiet
    )
    print(summary(sample))


def bench(arguments: argparse.Namespace) -> None:
    from pipeline import estimates
    from pipeline.bench import main as bench
    from pipeline.runs.costs import COSTS_FILE

    if not math.isfinite(arguments.seconds) or arguments.seconds <= 0:
        raise UsageError(f"--seconds is the length of each timed run, a number of seconds above 0, not {arguments.seconds}")
    if arguments.write_costs and not (ROOT / ".git").exists():
        raise UsageError(f"--write-costs rewrites the cost file of a clone, and {COSTS_FILE} is an installed copy's")
    _afford(lambda: estimates.bench(arguments.seconds), arguments)
    bench(seconds=arguments.seconds, write_costs=arguments.write_costs)


def show(arguments: argparse.Namespace) -> None:
    from pipeline import estimates
    from pipeline.show import check_figure_path, show_game

    rules = rules_from(arguments)
    _check_seed(arguments.seed)
    try:
        check_figure_path(arguments.figure)
    except ValueError as error:
        raise UsageError(str(error)) from None
    _afford(lambda: estimates.one_game(arguments.south, arguments.north, rules), arguments)
    _afford(lambda: estimates.solve(rules, rules.ply_cap), arguments)
    record = engine.play_game(arguments.south, arguments.north, rules=rules, seed=arguments.seed)
    show_game(record, rules, engine.solve(rules, progress=False), arguments.figure)


def analyse(arguments: argparse.Namespace) -> None:
    from pipeline import estimates
    from pipeline.analyse import analysis_lines, parse_counts

    rules = rules_from(arguments)
    try:
        board = parse_counts(arguments.board, rules)
    except ValueError as error:
        raise UsageError(str(error)) from None
    if arguments.ply < 0:
        raise UsageError(f"--ply is the number of moves already played, 0 or more, not {arguments.ply}")
    _afford(lambda: estimates.analyse(rules), arguments)
    mover = 0 if arguments.mover == "south" else 1
    print("\n".join(analysis_lines(board, mover, arguments.ply, rules)))


def solve(arguments: argparse.Namespace) -> None:
    import resource

    from engine.game import MAX_PLY_CAP
    from engine.solver import solve
    from pipeline import estimates

    if arguments.stones is not None:
        arguments.rule.append(f"stones_per_pit={arguments.stones}")
    rules = rules_from(arguments)
    cap = rules.ply_cap if arguments.cap is None else arguments.cap
    if not 1 <= cap <= MAX_PLY_CAP:
        raise UsageError(f"--cap must be a whole number from 1 to {MAX_PLY_CAP}, not {cap}")
    _afford(lambda: estimates.solve(rules, cap), arguments)
    solution = solve(rules, cap)
    game, total, value = solution.rules, solution.rules.total_stones, solution.start_value()
    south, north = (total + value) // 2, (total - value) // 2
    result = "South wins" if value > 0 else "North wins" if value < 0 else "a draw"
    best = ", ".join(str(pit) for pit in solution.best_moves(engine.start_board(game), 0, 0)) or "none"
    print(f"Modiar solved: rules {game.name}, {total} stones, cap {cap} plies, {solution.size:,} positions")
    print(f"start value (South's final total minus North's, perfect play): {value:+d}")
    print(f"final score under perfect play: South {south} - North {north} ({result})")
    print(f"best first move(s): pit {best}")
    shown = min(cap, 50)
    print(f"start value for each cap from 1 to {shown}:")
    for first in range(1, shown + 1, 10):
        last = min(first + 9, shown)
        row = " ".join(f"{solution.start_value(c):+3d}" for c in range(first, last + 1))
        print(f"  caps {first:>2}-{last:<2} {row}")
    print(f"start value at the full cap {cap}: {value:+d}")
    smaller = [c for c in (25, 50, 100, 200) if c < cap]
    trend = ", ".join(f"cap {c}: {solution.still_changing(c // 2, c):,}" for c in smaller)
    print(
        f"positions that never settle: {solution.never_settled:,} of {solution.size:,} "
        f"(value still changing at some k in {cap // 2 + 1}..{cap} plies left)"
        + (f"; by the same measure at {trend}" if trend else "")
    )
    timings = solution.timings
    built = f"tables {timings['tables']:.1f} s, solve {timings['solve']:.1f} s"
    spent = f"read from the cache in {timings['read']:.1f} s (built in: {built})" if "read" in timings else built
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20  # KiB on Linux
    print(f"time: {spent}; peak memory {peak:.2f} GiB")


def study_run(arguments: argparse.Namespace) -> None:
    from pipeline import estimates
    from pipeline.runs.config import ConfigError
    from pipeline.runs.records import RecordError
    from pipeline.study.config import load_study
    from pipeline.study.run import run_study

    _check_workers(arguments)
    try:
        study = load_study(study_config(arguments.config))
        out = _out_folder(arguments.out)
        remote = arguments.scheduler is not None
        _afford(lambda: estimates.study(study, study_dir(study.name, out), jobs=arguments.jobs, remote=remote), arguments, True)
        folder = run_study(
            study,
            out,
            jobs=arguments.jobs,
            backend=arguments.backend,
            scheduler=arguments.scheduler,
            progress=not arguments.quiet,
        )
    except (ConfigError, RecordError) as error:
        raise UsageError(str(error)) from None
    print(f"study {study.name}: {study.total_games():,} games in {folder}")


def _check_workers(arguments: argparse.Namespace) -> None:
    from pipeline.runs.records import RecordError
    from pipeline.runs.workers import check_backend

    if arguments.jobs < 1:
        raise UsageError(f"--jobs must be at least 1, not {arguments.jobs}")
    if arguments.scheduler is not None and arguments.backend != "dask":
        raise UsageError("--scheduler goes with --backend dask")
    try:
        check_backend(arguments.backend)  # dask: installed (the extra modiar-lab[dask])
    except RecordError as error:
        raise UsageError(str(error)) from None


def study_status(arguments: argparse.Namespace) -> None:
    from pipeline.runs.records import RecordError
    from pipeline.study.status import damage, progress, status

    folder = Path(arguments.folder)
    try:
        state = progress(folder)
        print(status(folder, state))
    except RecordError as error:
        raise UsageError(str(error)) from None
    damaged = damage(state)
    if damaged is not None:  # the study's files are not as its manifest vouches: summary and report refuse it too
        raise UsageError(f"{folder}: {damaged}")


def study_summary(arguments: argparse.Namespace) -> None:
    from pipeline.runs.records import RecordError
    from pipeline.study.summary import summary

    try:
        print(summary(Path(arguments.folder)))
    except RecordError as error:
        raise UsageError(str(error)) from None


def study_report(arguments: argparse.Namespace) -> None:
    from pipeline.runs.records import RecordError
    from pipeline.study.report import build_report

    _check_figure_formats()
    try:
        build_report(Path(arguments.folder), _out_folder(arguments.out), progress=not arguments.quiet)
    except RecordError as error:
        raise UsageError(str(error)) from None


def ladder_run(arguments: argparse.Namespace) -> None:
    from pipeline import estimates
    from pipeline.ladder.run import load_ladder, run_ladder

    ladder, folder = _run_ladder_config(arguments, load_ladder, estimates.ladder, run_ladder)
    print(f"ladder {ladder.name}: {len(ladder.pairings())} pairings and {len(ladder.rungs)} exploitabilities in {folder}")


def search_ladder_run(arguments: argparse.Namespace) -> None:
    from pipeline import estimates
    from pipeline.search_ladder.run import load_search_ladder, run_search_ladder

    ladder, folder = _run_ladder_config(arguments, load_search_ladder, estimates.search_ladder, run_search_ladder)
    print(f"search ladder {ladder.name}: {len(ladder.pairings())} pairings in {folder}")


def _run_ladder_config(
    arguments: argparse.Namespace, load: Callable[[Path], Any], estimate: Callable[..., Any], run: Callable[..., Path]
) -> tuple[Any, Path]:
    """Read a ladder's config (skill or search), print its estimate (refusing what this machine
    cannot hold) and run it into --out with --jobs workers."""
    from pipeline.runs.config import ConfigError
    from pipeline.runs.records import RecordError

    if arguments.jobs < 1:
        raise UsageError(f"--jobs must be at least 1, not {arguments.jobs}")
    try:
        planned = load(study_config(arguments.config))
        _afford(lambda: estimate(planned, jobs=arguments.jobs), arguments, True)
        folder = run(planned, _out_folder(arguments.out), jobs=arguments.jobs, progress=not arguments.quiet)
    except (ConfigError, RecordError) as error:
        raise UsageError(str(error)) from None
    return planned, folder


def search_ladder_report(arguments: argparse.Namespace) -> None:
    from pipeline.search_ladder.report import build_search_ladder_report

    _build_report(build_search_ladder_report, arguments)


def ladder_report(arguments: argparse.Namespace) -> None:
    from pipeline.ladder.report import build_ladder_report

    _build_report(build_ladder_report, arguments)


def _build_report(build: Callable[..., Path], arguments: argparse.Namespace) -> None:
    """A report of the run in ``arguments.folder`` (a ladder, an atlas) into ``--out``."""
    from pipeline.runs.records import RecordError

    _check_figure_formats()
    try:
        build(Path(arguments.folder), _out_folder(arguments.out), progress=not arguments.quiet)
    except RecordError as error:
        raise UsageError(str(error)) from None


def _check_figure_formats() -> None:
    """$MODIAR_FIGURE_FORMATS names formats pipeline.report.figures knows, before a report starts."""
    from pipeline.report.figures import formats

    try:
        formats()
    except ValueError as error:
        raise UsageError(str(error)) from None


def atlas_run(arguments: argparse.Namespace) -> None:
    from pipeline import estimates
    from pipeline.atlas.config import load_atlas
    from pipeline.atlas.run import read_atlas_manifest, run_atlas
    from pipeline.runs.config import ConfigError
    from pipeline.runs.records import RecordError

    _check_workers(arguments)
    if arguments.hours is not None and not arguments.hours > 0:
        raise UsageError(f"--hours must be more than 0, not {arguments.hours:g}")
    try:
        atlas = load_atlas(study_config(arguments.config))
        out = _out_folder(arguments.out)
        directory, remote = DATA / atlas.name if out is None else out, arguments.scheduler is not None
        _afford(
            lambda: estimates.atlas(atlas, directory, part=arguments.part, jobs=arguments.jobs, remote=remote), arguments, True
        )
        folder = run_atlas(
            atlas,
            out,
            part=arguments.part,
            jobs=arguments.jobs,
            backend_name=arguments.backend,
            scheduler=arguments.scheduler,
            hours=arguments.hours,
            progress=not arguments.quiet,
        )
        manifest = read_atlas_manifest(folder)
    except (ConfigError, RecordError) as error:
        raise UsageError(str(error)) from None
    refused = f", {len(manifest['refused'])} refused for memory" if manifest["refused"] else ""
    print(f"atlas {atlas.name}: {manifest['done']} of {manifest['rule_sets']} rule sets in {folder / 'atlas.parquet'}{refused}")


def atlas_quality(arguments: argparse.Namespace) -> None:
    from pipeline import estimates
    from pipeline.atlas.quality import run_quality
    from pipeline.report.prose import plural
    from pipeline.runs.records import RecordError

    if arguments.jobs < 1:
        raise UsageError(f"--jobs must be at least 1, not {arguments.jobs}")
    if arguments.hours is not None and not arguments.hours > 0:
        raise UsageError(f"--hours must be more than 0, not {arguments.hours:g}")
    folder = DATA / "atlas" if arguments.folder is None else Path(arguments.folder)
    try:
        _afford(lambda: estimates.atlas_quality(folder, jobs=arguments.jobs), arguments, True)
        done = run_quality(folder, jobs=arguments.jobs, hours=arguments.hours, progress=not arguments.quiet)
    except RecordError as error:
        raise UsageError(str(error)) from None
    print(f"{plural(len(done), 'game')} measured into {folder / 'quality'}; 'modiar atlas report {folder}' shows them")


def atlas_report(arguments: argparse.Namespace) -> None:
    from pipeline.atlas.report import build_atlas_report

    _build_report(build_atlas_report, arguments)


def fair(arguments: argparse.Namespace) -> None:
    from pipeline.analysis.fairness import pie_words
    from pipeline.fair.report import build_fair_report, default_out
    from pipeline.fair.run import bounded_moved, fair_estimate, run_fair
    from pipeline.report.folder import check_report_out
    from pipeline.runs.records import RecordError

    rules = rules_from(arguments)
    if arguments.jobs < 1:
        raise UsageError(f"--jobs must be at least 1, not {arguments.jobs}")
    out = _out_folder(arguments.out)
    try:
        moved, exact_within = bounded_moved(rules, arguments.moved, arguments.exact_within)
        check_report_out(out if out is not None else default_out(rules, exact_within, arguments.quality))  # before any work
        jobs, quality = arguments.jobs, arguments.quality
        _afford(lambda: fair_estimate(rules, moved=moved, exact_within=exact_within, jobs=jobs, quality=quality), arguments, True)
        search = run_fair(rules, moved=moved, exact_within=exact_within, jobs=jobs, quality=quality, progress=not arguments.quiet)
        folder = build_fair_report(search, out)
    except (ValueError, RecordError) as error:
        raise UsageError(str(error)) from None
    fair_starts = search.starts.filter(search.starts["value"] == 0)
    balance = search.balance
    print(f"fair {rules.name}: start value {balance.value:+d}, {pie_words(balance, rules)}, komi {balance.komi:+d}")
    for moved in range(1, search.moved + 1):
        of = search.starts.filter(search.starts["moved"] == moved).height
        fair = (fair_starts["moved"] == moved).sum()
        print(f"  {fair} of {of} starts with {moved} stone{'s' * (moved > 1)} moved are fair under perfect play")
    print(f"report: {folder / 'index.html'} ({', '.join(f'{step} {seconds:.1f} s' for step, seconds in search.seconds.items())})")


def cache_show(arguments: argparse.Namespace) -> None:
    from pipeline.cache import show

    print(show(cache_folder(arguments.cache), cache_source(arguments.cache)))


def cache_clear(arguments: argparse.Namespace) -> None:
    from pipeline.cache import CacheBusyError, NotACacheError, UnconfirmedError, clear_folder

    folder = cache_folder(arguments.cache)

    def ask(question: str) -> bool | None:  # None: no terminal to ask at
        if not sys.stdin.isatty():
            return None
        try:
            return input(question).strip().lower() in ("y", "yes")
        except EOFError:
            return False

    try:
        print(clear_folder(folder, yes=arguments.yes, ask=ask))
    except (NotACacheError, CacheBusyError, UnconfirmedError) as error:
        raise UsageError(str(error)) from None


def play(arguments: argparse.Namespace) -> int:
    from pipeline import estimates
    from pipeline.play import HUMAN, play_terminal

    rules = rules_from(arguments)
    _check_seed(arguments.seed)
    for spec in (arguments.south, arguments.north):
        if spec != HUMAN:
            engine.make_strategy(spec)
    _afford(lambda: estimates.one_game(arguments.south, arguments.north, rules), arguments)
    if arguments.hints:
        _afford(lambda: estimates.analyse(rules), arguments)
    play_terminal(arguments.south, arguments.north, rules=rules, seed=arguments.seed, hints=arguments.hints)
    return 0  # a finished game or one the person left: neither is an error


def exact(arguments: argparse.Namespace) -> None:
    import json
    import time

    from engine.tables import kept_tables
    from pipeline import estimates
    from pipeline.exact.progress import ExactLine
    from pipeline.exact.summary import exact_record, exact_text

    rules = rules_from(arguments)
    south, north = (_table_strategy(spec) for spec in (arguments.south, arguments.north))
    _afford(lambda: estimates.exact(south, north, rules), arguments)
    started = time.perf_counter()
    kept_tables(rules)  # from the cache, or built, cached and logged (as are a solution and the policy tables)
    for spec in (south, north):
        engine.policy_table(spec, rules)
    ready = time.perf_counter()
    estimate = estimates.exact(south, north, rules).seconds
    line = ExactLine(f"exact outcome of {south} against {north}", estimate, progress=not arguments.quiet)
    try:
        outcome = engine.exact_outcome(south, north, rules=rules, progress=line)
    finally:
        line.close()
    seconds = {"tables": ready - started, "propagation": time.perf_counter() - ready}
    print(json.dumps(exact_record(outcome, seconds)) if arguments.json else exact_text(outcome, seconds))


def _table_strategy(spec: str) -> str:
    """The canonical spec of a strategy with a policy table: exact outcomes need one on each side."""
    from engine.players import NotATableStrategyError, values_spec

    try:
        values_spec(spec)
    except NotATableStrategyError as error:
        raise UsageError(f"{error}; modiar exact takes table strategies only (all but mcts), modiar sample plays it") from None
    return engine.canonical_spec(spec)


def _afford(estimate: Callable[[], Estimate], arguments: argparse.Namespace, announce: bool = False) -> None:
    """Refuse, before any work, what this machine cannot hold and a long run not confirmed with
    --yes (pipeline.estimates); with ``announce``, print what will be computed and its estimate."""
    from pipeline import estimates

    try:
        found = estimate()
        estimates.check(found, yes=arguments.yes)
    except estimates.EstimateError as error:
        raise UsageError(str(error)) from None
    if announce and not arguments.quiet:
        print(found.line(), flush=True)


def _out_folder(text: str | None) -> Path | None:
    """The folder of --out; an empty one would mean the current folder, which is never meant."""
    if text is None:
        return None
    if not text.strip():
        raise UsageError("--out must name a folder, not an empty string")
    return Path(text)


def _check_seed(seed: int) -> None:
    if not 0 <= seed < 2**63:
        raise UsageError(f"--seed must be a whole number from 0 to 2**63 - 1, not {seed}")
