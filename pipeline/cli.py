"""The ``modiar`` command.

A user mistake (a bad option, an unknown strategy, an impossible rule set) ends with one
line on stderr that names it, and exit status 2; never a traceback.
"""

from __future__ import annotations

import argparse
import logging
import math
import os
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

import numpy as np

import engine
from pipeline.paths import (
    DATA,
    bundled_atlases,
    bundled_ladders,
    bundled_studies,
    cache_folder,
    cache_source,
    study_config,
    study_dir,
)

if TYPE_CHECKING:
    from pipeline.estimates import Estimate

USAGE_ERROR = 2
# modiar exact: the float sums of a length distribution may fall short of a cumulative probability
# they reach exactly (engine.exact: its rounding stays far below 1e-12).
ROUNDING = 1e-12


class UsageError(Exception):
    """A mistake in what the user asked for: reported in one line, exit status 2."""


class _Parser(argparse.ArgumentParser):
    """argparse, whose mistakes (an unknown option, a missing argument, a value of the wrong kind)
    end as every other: one line, ``modiar: error: ...``, not a usage block and the error."""

    def error(self, message: str) -> NoReturn:
        raise UsageError(f"{message} (see {self.prog} --help)")


def main(argv: Sequence[str] | None = None) -> int:
    try:
        arguments = _parser().parse_args(argv)
        if "cache" in arguments:
            _check_cache_folder(cache_folder(arguments.cache))
    except UsageError as error:
        print(f"modiar: error: {error}", file=sys.stderr)
        return USAGE_ERROR
    added = _log_to_stderr()
    engine.set_cache_folder(cache_folder(getattr(arguments, "cache", None)))
    try:
        return int(arguments.run(arguments) or 0)
    except (UsageError, engine.UnknownStrategyError) as error:
        print(f"modiar: error: {error}", file=sys.stderr)
        return USAGE_ERROR
    except BrokenPipeError:  # the reader went away (modiar study status DIR | head): nothing to say
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # and nothing to flush at exit
        return 141
    except OSError as error:  # a file or folder the user named that cannot be read or written
        where = f"{error.filename}: " if error.filename else ""
        print(f"modiar: error: {where}{error.strerror or error}", file=sys.stderr)
        return USAGE_ERROR
    except KeyboardInterrupt:
        print("modiar: interrupted", file=sys.stderr)
        return 130
    finally:
        for logger in added:
            for handler in logger.handlers[:]:
                logger.removeHandler(handler)
            logger.setLevel(logging.NOTSET)


def _check_cache_folder(folder: Path) -> None:
    """Refuse a cache folder that is a file, or lies below one: found before any work, not when the
    first table is written, after games were played."""
    existing = next((path for path in (folder, *folder.parents) if path.exists()), None)
    if existing is not None and not existing.is_dir():
        raise UsageError(f"the cache folder {folder} cannot be made: {existing} is a file; name a folder with --cache")


def _log_to_stderr() -> list[logging.Logger]:
    """The engine's and the pipeline's messages (a cache built, a corrupt file rebuilt) on
    stderr, one line each; other libraries' loggers are left as they are. Returns the loggers
    given the handler, which main() takes back when it returns: a program or a test that calls
    main() keeps the engine silent afterwards, as a library should be."""
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("modiar: %(message)s"))
    added = []
    for name in ("engine", "pipeline"):
        logger = logging.getLogger(name)
        if not logger.handlers:
            logger.addHandler(handler)
            logger.setLevel(logging.INFO)
            added.append(logger)
    return added


def rules_from(arguments: argparse.Namespace) -> engine.Rules:
    """The rule set named by ``--rules NAME`` and changed by ``--rule FIELD=VALUE`` options."""
    try:
        rules = engine.Rules.from_name(arguments.rules)
        changes = dict(_rule_change(text) for text in arguments.rule)
        return rules.replace(**changes) if changes else rules
    except (ValueError, TypeError) as error:
        raise UsageError(str(error)) from None


def _rule_change(text: str) -> tuple[str, object]:
    """FIELD=VALUE of ``--rule``, VALUE spelled as engine.rules.RuleField.parse reads it."""
    from engine.rules import RULE_FIELD

    name, equals, value = text.partition("=")
    if not equals or name not in RULE_FIELD:
        raise UsageError(f"--rule takes FIELD=VALUE with FIELD one of {', '.join(RULE_FIELD)}, not {text!r}")
    field = RULE_FIELD[name]
    try:
        return name, field.parse(value)
    except ValueError:
        raise UsageError(f"--rule {name} takes {field.takes}, not {value!r}") from None


def _sample(arguments: argparse.Namespace) -> None:
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


def _bench(arguments: argparse.Namespace) -> None:
    from pipeline import estimates
    from pipeline.bench import main as bench

    if not math.isfinite(arguments.seconds) or arguments.seconds <= 0:
        raise UsageError(f"--seconds is the length of each timed run, a number of seconds above 0, not {arguments.seconds}")
    _afford(lambda: estimates.bench(arguments.seconds), arguments)
    bench(seconds=arguments.seconds)


def _show(arguments: argparse.Namespace) -> None:
    from pipeline import estimates
    from pipeline.play import ending

    rules = rules_from(arguments)
    _check_seed(arguments.seed)
    _afford(lambda: estimates.one_game(arguments.south, arguments.north, rules), arguments)
    record = engine.play_game(arguments.south, arguments.north, rules=rules, seed=arguments.seed)
    board = engine.start_board(rules)
    print(engine.render(board))
    for ply, pit in enumerate(record.moves):
        mover = ply % 2
        board = engine.apply_move(board, mover, pit, ply, rules).board
        print(f"\nply {ply}: {('South', 'North')[mover]} plays pit {pit}\n{engine.render(board)}")
    print(f"\n{ending(record, rules)}")


def _solve(arguments: argparse.Namespace) -> None:
    import resource

    from engine.rules import MAX_PLY_CAP
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


def _study_run(arguments: argparse.Namespace) -> None:
    from pipeline import estimates
    from pipeline.config import ConfigError
    from pipeline.records import RecordError
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
    from pipeline.records import RecordError
    from pipeline.workers import check_backend

    if arguments.jobs < 1:
        raise UsageError(f"--jobs must be at least 1, not {arguments.jobs}")
    if arguments.scheduler is not None and arguments.backend != "dask":
        raise UsageError("--scheduler goes with --backend dask")
    try:
        check_backend(arguments.backend)  # dask: installed (the extra modiar-lab[dask])
    except RecordError as error:
        raise UsageError(str(error)) from None


def _study_status(arguments: argparse.Namespace) -> None:
    from pipeline.records import RecordError
    from pipeline.study.status import status

    try:
        print(status(Path(arguments.folder)))
    except RecordError as error:
        raise UsageError(str(error)) from None


def _study_summary(arguments: argparse.Namespace) -> None:
    from pipeline.records import RecordError
    from pipeline.study.summary import summary

    try:
        print(summary(Path(arguments.folder)))
    except RecordError as error:
        raise UsageError(str(error)) from None


def _study_report(arguments: argparse.Namespace) -> None:
    from pipeline.records import RecordError
    from pipeline.study.report import build_report

    _check_figure_formats()
    try:
        build_report(Path(arguments.folder), _out_folder(arguments.out), progress=not arguments.quiet)
    except RecordError as error:
        raise UsageError(str(error)) from None


def _ladder_run(arguments: argparse.Namespace) -> None:
    from pipeline import estimates
    from pipeline.ladder.run import load_ladder, run_ladder

    ladder, folder = _run_ladder_config(arguments, load_ladder, estimates.ladder, run_ladder)
    print(f"ladder {ladder.name}: {len(ladder.pairings())} pairings and {len(ladder.rungs)} exploitabilities in {folder}")


def _search_ladder_run(arguments: argparse.Namespace) -> None:
    from pipeline import estimates
    from pipeline.ladder.search import load_search_ladder, run_search_ladder

    ladder, folder = _run_ladder_config(arguments, load_search_ladder, estimates.search_ladder, run_search_ladder)
    print(f"search ladder {ladder.name}: {len(ladder.pairings())} pairings in {folder}")


def _run_ladder_config(
    arguments: argparse.Namespace, load: Callable[[Path], Any], estimate: Callable[..., Any], run: Callable[..., Path]
) -> tuple[Any, Path]:
    """Read a ladder's config (skill or search), print its estimate (refusing what this machine
    cannot hold) and run it into --out with --jobs workers."""
    from pipeline.config import ConfigError
    from pipeline.records import RecordError

    if arguments.jobs < 1:
        raise UsageError(f"--jobs must be at least 1, not {arguments.jobs}")
    try:
        planned = load(study_config(arguments.config))
        _afford(lambda: estimate(planned, jobs=arguments.jobs), arguments, True)
        folder = run(planned, _out_folder(arguments.out), jobs=arguments.jobs, progress=not arguments.quiet)
    except (ConfigError, RecordError) as error:
        raise UsageError(str(error)) from None
    return planned, folder


def _search_ladder_report(arguments: argparse.Namespace) -> None:
    from pipeline.ladder.search_report import build_search_ladder_report

    _build_report(build_search_ladder_report, arguments)


def _ladder_report(arguments: argparse.Namespace) -> None:
    from pipeline.ladder.report import build_ladder_report

    _build_report(build_ladder_report, arguments)


def _build_report(build: Callable[..., Path], arguments: argparse.Namespace) -> None:
    """A report of the run in ``arguments.folder`` (a ladder, an atlas) into ``--out``."""
    from pipeline.records import RecordError

    _check_figure_formats()
    try:
        build(Path(arguments.folder), _out_folder(arguments.out), progress=not arguments.quiet)
    except RecordError as error:
        raise UsageError(str(error)) from None


def _check_figure_formats() -> None:
    """$MODIAR_FIGURE_FORMATS names formats pipeline.figures knows, before a report starts."""
    from pipeline.figures import formats

    try:
        formats()
    except ValueError as error:
        raise UsageError(str(error)) from None


def _atlas_run(arguments: argparse.Namespace) -> None:
    from pipeline import estimates
    from pipeline.atlas.run import load_atlas, read_manifest, run_atlas
    from pipeline.config import ConfigError
    from pipeline.records import RecordError

    _check_workers(arguments)
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
            progress=not arguments.quiet,
        )
        manifest = read_manifest(folder)
    except (ConfigError, RecordError) as error:
        raise UsageError(str(error)) from None
    refused = f", {len(manifest['refused'])} refused for memory" if manifest["refused"] else ""
    print(f"atlas {atlas.name}: {manifest['done']} of {manifest['rule_sets']} rule sets in {folder / 'atlas.parquet'}{refused}")


def _atlas_report(arguments: argparse.Namespace) -> None:
    from pipeline.atlas.report import build_atlas_report

    _build_report(build_atlas_report, arguments)


def _cache_show(arguments: argparse.Namespace) -> None:
    from pipeline.cache import show

    print(show(cache_folder(arguments.cache), cache_source(arguments.cache)))


def _cache_clear(arguments: argparse.Namespace) -> None:
    from pipeline.cache import CacheBusyError, NotACacheError, check, clear, described

    folder = cache_folder(arguments.cache)
    try:
        found = check(folder)
        if not found.folders:
            print(f"the cache folder {folder} holds nothing: nothing to clear")
            return
        if not arguments.yes:
            if not sys.stdin.isatty():
                raise UsageError(f"modiar cache clear would remove {described(found)} from {folder}: add --yes to remove them")
            if not _confirmed(f"remove {described(found)} from the cache folder {folder}? [y/N] "):
                print("nothing removed")
                return
            found = check(folder)  # again: a run may have started while the question waited
        removed = described(found)
        clear(found)
    except (NotACacheError, CacheBusyError) as error:
        raise UsageError(str(error)) from None
    print(f"removed {removed} from the cache folder {folder}")


def _confirmed(question: str) -> bool:
    try:
        return input(question).strip().lower() in ("y", "yes")
    except EOFError:
        return False


def _play(arguments: argparse.Namespace) -> int:
    from pipeline import estimates
    from pipeline.play import HUMAN, play_terminal

    rules = rules_from(arguments)
    _check_seed(arguments.seed)
    for spec in (arguments.south, arguments.north):
        if spec != HUMAN:
            engine.make_strategy(spec)
    _afford(lambda: estimates.one_game(arguments.south, arguments.north, rules), arguments)
    play_terminal(arguments.south, arguments.north, rules=rules, seed=arguments.seed)
    return 0  # a finished game or one the person left: neither is an error


def _exact(arguments: argparse.Namespace) -> None:
    import json
    import time

    from engine.tables import kept_tables
    from pipeline import estimates
    from pipeline.exact.progress import ExactLine

    rules = rules_from(arguments)
    south, north = (_table_strategy(spec) for spec in (arguments.south, arguments.north))
    _afford(lambda: estimates.exact(south, north, rules), arguments)
    started = time.perf_counter()
    kept_tables(rules)  # from the cache, or built, cached and logged (as are a solution and the policy tables)
    for spec in (south, north):
        engine.policy_table(spec, rules)
    ready = time.perf_counter()
    estimate = estimates.exact(south, north, rules).seconds
    line = ExactLine(f"exact outcome of {south} against {north}", estimate, disable=arguments.quiet)
    try:
        outcome = engine.exact_outcome(south, north, rules=rules, progress=line)
    finally:
        line.close()
    seconds = {"tables": ready - started, "propagation": time.perf_counter() - ready}
    print(json.dumps(_exact_record(outcome, seconds)) if arguments.json else _exact_text(outcome, seconds))


def _table_strategy(spec: str) -> str:
    """The canonical spec of a strategy with a policy table: exact outcomes need one on each side."""
    from engine.policy import NotATableStrategyError, values_spec

    try:
        values_spec(spec)
    except NotATableStrategyError as error:
        raise UsageError(f"{error}; modiar exact takes table strategies only (all but mcts), modiar sample plays it") from None
    return engine.canonical_spec(spec)


def _exact_record(outcome: engine.ExactOutcome, seconds: dict[str, float]) -> dict[str, object]:
    """Everything ``modiar exact --json`` prints, in a fixed order."""
    rules = outcome.rules
    return {
        "south": outcome.south,
        "north": outcome.north,
        "rules": {"name": rules.name, "fields": {name: getattr(rules, name) for name in engine.Rules.__dataclass_fields__}},
        "engine_version": engine.ENGINE_VERSION,
        "south_win": float(outcome.south_win),
        "draw": float(outcome.draw),
        "north_win": float(outcome.north_win),
        "first_player_score": float(outcome.first_player_score),
        "margin_mean": _margin_mean(outcome),
        "margin": {str(margin): float(p) for margin, p in sorted(outcome.margin.items())},
        "length": _length_summary(outcome),
        "plies": [float(p) for p in outcome.plies],
        "event_fires": {name: float(outcome.event_fires[name]) for name in engine.EVENTS},
        "event_mean": {name: float(outcome.event_mean[name]) for name in engine.EVENTS},
        "unresolved": float(outcome.unresolved),
        "seconds": seconds,
    }


def _exact_text(outcome: engine.ExactOutcome, seconds: dict[str, float]) -> str:
    length, cap = _length_summary(outcome), outcome.rules.ply_cap
    likely = sorted(outcome.margin.items(), key=lambda item: (-item[1], item[0]))[:3]
    lines = [
        f"exact outcome: {outcome.south} (South) against {outcome.north} (North), rules {outcome.rules.name}",
        "",
        f"{'result':<32}{'probability':>14}",
        f"{'South wins':<32}{outcome.south_win:>14.9f}",
        f"{'draws':<32}{outcome.draw:>14.9f}",
        f"{'North wins':<32}{outcome.north_win:>14.9f}",
        f"{'first-player score':<32}{outcome.first_player_score:>14.9f}   (South's expected score, a draw counting 1/2)",
        "",
        "game length (plies)",
        f"{'  mean':<32}{length['mean']:>14.3f}",
        f"{'  standard deviation':<32}{length['standard_deviation']:>14.3f}",
        f"{'  median':<32}{_ply_text(length['median']):>14}",
        f"{'  1st percentile':<32}{_ply_text(length['percentile_1']):>14}",
        f"{'  99th percentile':<32}{_ply_text(length['percentile_99']):>14}",
        f"{f'  reaches the cap of {cap}':<32}{length['at_cap']:>14.9f}",
        "",
        "final margin (South's score minus North's)",
        f"{'  mean':<32}{_margin_mean(outcome):>14.3f}",
        f"{'  most likely':<32}{'   '.join(f'{margin:+d} ({p:.4f})' for margin, p in likely)}",
        "",
        f"{'rule event':<32}{'fires at least once':>22}{'mean per game':>18}",
    ]
    for name in engine.EVENTS:
        lines.append(f"{name:<32}{outcome.event_fires[name]:>22.9f}{outcome.event_mean[name]:>18.9f}")
    total = seconds["tables"] + seconds["propagation"]
    lines += [
        "",
        f"unresolved: {outcome.unresolved:.3g} (the mass of games still in play when the propagation stopped,"
        " or set aside in the tail)",
        f"time: {total:.2f} s (tables, read or built: {seconds['tables']:.2f} s; propagation: {seconds['propagation']:.2f} s)",
    ]
    return "\n".join(lines)


def _length_summary(outcome: engine.ExactOutcome) -> dict[str, float | int | None]:
    """Mean, standard deviation, median, 1st and 99th percentiles and the probability of reaching the
    cap of the game's length; a percentile is the smallest k with P(length <= k) >= q (None when
    the mass resolved never reaches q)."""
    plies = outcome.plies
    k = np.arange(len(plies))
    mean = float(k @ plies)
    cumulative = np.cumsum(plies)

    def percentile(q: float) -> int | None:
        reached = np.flatnonzero(cumulative >= q - ROUNDING)
        return int(reached[0]) if len(reached) else None

    return {
        "mean": mean,
        "standard_deviation": float(np.sqrt(((k - mean) ** 2) @ plies)),
        "median": percentile(0.5),
        "percentile_1": percentile(0.01),
        "percentile_99": percentile(0.99),
        "at_cap": float(plies[outcome.rules.ply_cap]),
    }


def _margin_mean(outcome: engine.ExactOutcome) -> float:
    return float(sum(margin * p for margin, p in outcome.margin.items()))


def _ply_text(value: float | int | None) -> str:
    return "beyond" if value is None else str(value)


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


def _parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="modiar", description="Modiar: exact engine and study pipeline.")
    commands = parser.add_subparsers(title="commands", required=True, metavar="COMMAND")

    sample = commands.add_parser("sample", help="play seeded games and print win rates, game length and rule events")
    _add_game_options(sample)
    sample.add_argument("--games", type=int, default=20_000, help="how many games (default 20,000)")
    sample.add_argument("--seed", type=int, default=7, help="the sample's seed (default 7)")
    sample.add_argument("--quiet", action="store_true", help="no progress bar")
    _add_yes_option(sample)
    _add_cache_option(sample)
    sample.set_defaults(run=_sample)

    show = commands.add_parser("show", help="play one seeded game and draw the board after every move")
    _add_game_options(show)
    show.add_argument("--seed", type=int, default=0, help="the game's seed (default 0)")
    _add_yes_option(show)
    _add_cache_option(show)
    show.set_defaults(run=_show)

    bench = commands.add_parser("bench", help="measure the engine's speed")
    bench.add_argument("--seconds", type=float, default=10.0, help="length of each timed run (default 10)")
    _add_yes_option(bench)
    _add_cache_option(bench)
    bench.set_defaults(run=_bench)

    solve = commands.add_parser("solve", help="solve the game: the value and best moves of every position under perfect play")
    _add_rule_options(solve)
    solve.add_argument("--stones", type=int, help="stones per pit, short for --rule stones_per_pit=N")
    solve.add_argument("--cap", type=int, help="the ply cap (default the rule set's, 400)")
    _add_yes_option(solve)
    _add_cache_option(solve)
    solve.set_defaults(run=_solve)

    exact = commands.add_parser(
        "exact",
        help="the exact outcome of two table strategies: win, draw and loss, game length and rule events, no sampling",
        description="The exact outcome distribution of SOUTH against NORTH (engine.exact_outcome): every game weighted "
        "by its probability, so no sampling error. Every strategy but mcts has the policy table this needs.",
    )
    exact.add_argument("south", metavar="SOUTH", help="South's strategy, e.g. random, greedy, perfect(epsilon=0.1)")
    exact.add_argument("north", metavar="NORTH", help="North's strategy")
    _add_rule_options(exact)
    exact.add_argument("--json", action="store_true", help="print one JSON object with everything, and nothing else on stdout")
    exact.add_argument("--quiet", action="store_true", help="no progress line")
    _add_yes_option(exact)
    _add_cache_option(exact)
    exact.set_defaults(run=_exact)

    _add_study_commands(commands)
    _add_ladder_commands(commands)
    _add_atlas_commands(commands)
    _add_cache_commands(commands)
    play = commands.add_parser("play", help="play a game in the terminal: a person (human) against any strategy")
    play.add_argument("--south", default="human", help="South's strategy, or human (default human)")
    play.add_argument("--north", default="greedy", help="North's strategy, or human (default greedy)")
    play.add_argument("--seed", type=int, default=0, help="the seed of the strategies' random choices (default 0)")
    _add_rule_options(play)
    _add_yes_option(play)
    _add_cache_option(play)
    play.set_defaults(run=_play)
    return parser


def _add_study_commands(commands: argparse._SubParsersAction[_Parser]) -> None:
    study = commands.add_parser("study", help="run a study from a TOML config into Parquet records, or show how far it got")
    actions = study.add_subparsers(title="study commands", required=True, metavar="ACTION")
    run = actions.add_parser("run", help="play every game of a study not yet on disk (resumes a stopped run)")
    run.add_argument(
        "config", help=f"the study's TOML file, or a bundled study: {', '.join(bundled_studies())} (e.g. modiar study run smoke)"
    )
    run.add_argument("--out", help="the folder of the records (default data/<study name>)")
    run.add_argument("--jobs", type=int, default=2, help="worker processes (default 2)")
    _add_backend_options(run)
    run.add_argument("--quiet", action="store_true", help="no progress bar")
    _add_cache_option(run)
    _add_yes_option(run)
    run.set_defaults(run=_study_run)
    status = actions.add_parser("status", help="chunks done, games and per-pairing counts of a study folder")
    status.add_argument("folder", help="the study's folder, e.g. data/smoke")
    status.set_defaults(run=_study_status)
    summary = actions.add_parser("summary", help="first-player advantage per pairing and rule-event rates, with 95%% intervals")
    summary.add_argument("folder", help="the study's folder, e.g. data/default")
    summary.set_defaults(run=_study_summary)
    report = actions.add_parser("report", help="write the study's report: HTML, Markdown, CSV tables and SVG/PDF/PNG figures")
    report.add_argument("folder", help="the study's folder, e.g. data/default")
    report.add_argument("--out", help="the report's folder (default reports/<study>/)")
    report.add_argument("--quiet", action="store_true", help="print nothing but errors")
    _add_cache_option(report)
    report.set_defaults(run=_study_report)


def _add_ladder_commands(commands: argparse._SubParsersAction[_Parser]) -> None:
    ladder = commands.add_parser("ladder", help="the skill ladder: table strategies from weak to strong, every figure exact")
    actions = ladder.add_subparsers(title="ladder commands", required=True, metavar="ACTION")
    run = actions.add_parser("run", help="compute every pairing and exploitability of a ladder (cached: a second run reads them)")
    run.add_argument(
        "config",
        help=f"the ladder's TOML file, or a bundled ladder: {', '.join(bundled_ladders())} (e.g. modiar ladder run ladder)",
    )
    run.add_argument("--out", help="the ladder's folder (default data/<ladder name>)")
    run.add_argument(
        "--jobs", type=int, default=2, help="worker processes (default 2; the estimate printed first says their memory)"
    )
    run.add_argument("--quiet", action="store_true", help="no progress bar")
    _add_cache_option(run)
    _add_yes_option(run)
    run.set_defaults(run=_ladder_run)
    _add_report_command(actions, "ladder", _ladder_report)
    search = actions.add_parser("search", help="the search ladder: mcts from 1 to 4,096 playouts, sampled until precise")
    search.add_argument("config", help="the search ladder's TOML file, or the bundled one: search (modiar ladder search search)")
    search.add_argument("--out", help="its folder (default data/<its name>)")
    search.add_argument("--jobs", type=int, default=2, help="worker processes (default 2)")
    search.add_argument("--quiet", action="store_true", help="no progress bar")
    _add_cache_option(search)
    _add_yes_option(search)
    search.set_defaults(run=_search_ladder_run)
    _add_report_command(actions, "search ladder", _search_ladder_report, "search-report", "search-ladder")


def _add_report_command(
    actions: argparse._SubParsersAction[_Parser],
    kind: str,
    run: Callable[[argparse.Namespace], None],
    action: str = "report",
    folder: str | None = None,
) -> None:
    """``modiar KIND ACTION FOLDER [--out OUT] [--quiet]`` for a ladder, a search ladder or an
    atlas: ACTION is ``report``, or ``search-report`` for a search ladder."""
    pages = "HTML, Markdown" if action == "report" else "Markdown"  # the search ladder's report is one Markdown page
    report = actions.add_parser(action, help=f"write the {kind}'s report: {pages}, CSV tables and SVG/PDF/PNG figures")
    report.add_argument("folder", help=f"the {kind}'s folder, e.g. data/{folder or kind}")
    report.add_argument("--out", help=f"the report's folder (default reports/<{kind} name>/)")
    report.add_argument("--quiet", action="store_true", help="print nothing but errors")
    report.set_defaults(run=run)


def _add_atlas_commands(commands: argparse._SubParsersAction[_Parser]) -> None:
    atlas = commands.add_parser("atlas", help="the atlas of rule space: every rule set of a grid solved and analysed exactly")
    actions = atlas.add_subparsers(title="atlas commands", required=True, metavar="ACTION")
    run = actions.add_parser("run", help="analyse every rule set of an atlas not yet in its folder (resumes a stopped run)")
    bundled = ", ".join(bundled_atlases())
    run.add_argument("config", help=f"the atlas's TOML file, or a bundled one: {bundled} (e.g. modiar atlas run atlas)")
    run.add_argument("--out", help="the atlas's folder (default data/<atlas name>)")
    run.add_argument("--part", help="only the rule sets of this [parts.NAME] of the config")
    run.add_argument(
        "--jobs", type=int, default=2, help="worker processes (default 2; the estimate printed first says their memory)"
    )
    _add_backend_options(run)
    run.add_argument("--quiet", action="store_true", help="no progress bar")
    _add_cache_option(run, "the folder in whose scratch/ each rule set's tables and solution are built, then removed")
    _add_yes_option(run)
    run.set_defaults(run=_atlas_run)
    _add_report_command(actions, "atlas", _atlas_report)


def _add_cache_commands(commands: argparse._SubParsersAction[_Parser]) -> None:
    cache = commands.add_parser(
        "cache", help="the cache folder of tables, solutions, policy tables and exact outcomes: where, how big; clear it"
    )
    actions = cache.add_subparsers(title="cache commands", required=True, metavar="ACTION")
    show = actions.add_parser("show", help="the cache folder in use, and per kind its files and their size")
    _add_cache_option(show, "the cache folder to show")
    show.set_defaults(run=_cache_show)
    clear = actions.add_parser(
        "clear", help="remove what the cache folder holds (built again when needed); refuses a folder that is not a modiar cache"
    )
    _add_cache_option(clear, "the cache folder to clear")
    clear.add_argument("--yes", action="store_true", help="remove without asking (needed when there is no terminal to ask)")
    clear.set_defaults(run=_cache_clear)


def _add_backend_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--backend", default="loky", choices=["loky", "dask"], help="joblib backend (default loky)")
    parser.add_argument(
        "--scheduler", help="with --backend dask: the dask.distributed scheduler address (default a local cluster)"
    )


def _add_game_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--south", default="random", help="South's strategy (default random)")
    parser.add_argument("--north", default="random", help="North's strategy (default random)")
    _add_rule_options(parser)


def _add_yes_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--yes", action="store_true", help="run it even when its estimate is over an hour")


def _add_cache_option(
    parser: argparse.ArgumentParser, what: str = "the folder of position tables, solutions and policy tables"
) -> None:
    parser.add_argument("--cache", metavar="DIR", help=f"{what} (default $MODIAR_CACHE, else the user cache)")


def _add_rule_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--rules", default="modiar", help="a rule set name such as modiar or modiar-stones5 (default modiar)")
    parser.add_argument(
        "--rule", action="append", default=[], metavar="FIELD=VALUE", help="change one rule, e.g. --rule feeding=off (repeatable)"
    )


if __name__ == "__main__":
    sys.exit(main())
