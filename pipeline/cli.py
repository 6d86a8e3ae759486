"""The ``modiar`` command.

A user mistake (a bad option, an unknown strategy, an impossible rule set) ends with one
line on stderr that names it, and exit status 2; never a traceback.
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import NoReturn

from tqdm import tqdm

import engine
from pipeline import commands as do
from pipeline.analyse import BOARD_HELP
from pipeline.commands import UsageError
from pipeline.runs.paths import (
    bundled_atlases,
    bundled_ladders,
    bundled_studies,
    cache_folder,
)

USAGE_ERROR = 2


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


class _BarSafeHandler(logging.StreamHandler):  # type: ignore[type-arg]
    """A message on a line of its own while a progress bar is drawn on the same stream (an atlas
    run's refusals and its "time is up" come during its bar): tqdm clears the bars, the line is
    written, the bars are drawn again below it."""

    def emit(self, record: logging.LogRecord) -> None:
        try:
            tqdm.write(self.format(record), file=self.stream)
        except Exception:  # as logging.StreamHandler does: a message that cannot be written stops nothing
            self.handleError(record)


def _log_to_stderr() -> list[logging.Logger]:
    """The engine's and the pipeline's messages (a cache built, a corrupt file rebuilt) on
    stderr, one line each; other libraries' loggers are left as they are. Returns the loggers
    given the handler, which main() takes back when it returns: a program or a test that calls
    main() keeps the engine silent afterwards, as a library should be."""
    handler = _BarSafeHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("modiar: %(message)s"))
    added = []
    for name in ("engine", "pipeline"):
        logger = logging.getLogger(name)
        if not logger.handlers:
            logger.addHandler(handler)
            logger.setLevel(logging.INFO)
            added.append(logger)
    return added


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
    sample.set_defaults(run=do.sample)

    show = commands.add_parser(
        "show",
        help="play one seeded game and draw the board after every move",
        description="Play one seeded game of --south against --north (the same seed, the same game) and draw the board "
        "after every move, with the value the move loses against a best move under perfect play (0 for a best move; "
        "RULES.md: Perfect play) and the forecast, the final margin if both sides played perfectly from there "
        "(docs/quality.md); at the end, why the game ended, the score and what each side lost in all. "
        "Strategies: docs/studies.md#strategies; a position's every move: modiar analyse.",
    )
    _add_game_options(show)
    show.add_argument("--seed", type=int, default=0, help="the game's seed (default 0)")
    show.add_argument(
        "--figure",
        type=Path,
        metavar="FILE",
        help="also draw the game's value history (the forecast by ply, each mistake marked) to FILE: .svg, .pdf or .png",
    )
    _add_yes_option(show)
    _add_cache_option(show)
    show.set_defaults(run=do.show)

    analyse = commands.add_parser(
        "analyse",
        help="every legal move of a position: its value, the value it loses, its remoteness and what decides it",
        description="Every legal move of a position under perfect play (engine.analyse): its value to the mover "
        "(the margin still to come), the value it loses against a best move, its remoteness (the plies until play "
        "ends, the side ahead hurrying) and whether play or the ply cap decides it (docs/remoteness.md).",
    )
    analyse.add_argument("board", metavar="BOARD", help=f"the position: {BOARD_HELP}")
    analyse.add_argument("--mover", choices=("south", "north"), default="south", help="who moves (default south)")
    analyse.add_argument(
        "--ply", type=int, default=0, help="moves already played (default 0: the first move, whose capture is given up)"
    )
    _add_rule_options(analyse)
    _add_yes_option(analyse)
    _add_cache_option(analyse)
    analyse.set_defaults(run=do.analyse)

    bench = commands.add_parser("bench", help="measure the engine's speed")
    bench.add_argument("--seconds", type=float, default=10.0, help="length of each timed run (default 10)")
    bench.add_argument(
        "--write-costs", action="store_true", help="rewrite the rates and sizes it measures in pipeline/costs.toml"
    )
    _add_yes_option(bench)
    _add_cache_option(bench)
    bench.set_defaults(run=do.bench)

    solve = commands.add_parser("solve", help="solve the game: the value and best moves of every position under perfect play")
    _add_rule_options(solve)
    solve.add_argument("--stones", type=int, help="stones per pit, short for --rule stones_per_pit=N")
    solve.add_argument("--cap", type=int, help="the ply cap (default the rule set's, 400)")
    _add_yes_option(solve)
    _add_cache_option(solve)
    solve.set_defaults(run=do.solve)

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
    exact.set_defaults(run=do.exact)

    _add_study_commands(commands)
    _add_ladder_commands(commands)
    _add_atlas_commands(commands)
    _add_fair_command(commands)
    _add_cache_commands(commands)
    play = commands.add_parser(
        "play",
        help="play a game in the terminal: a person (human) against any strategy",
        description="Play a game in the terminal: a person (human) against any strategy, or two people. Type a pit "
        "for each move (South's row is pits 0 to 2, North's 3 to 5; q leaves); a pit that cannot be played is refused "
        "with the reason, and the game ends saying why it ended and who won. --hints shows, before each move, every "
        "legal move's value, the value it loses and its remoteness (docs/remoteness.md). Strategies: "
        "docs/studies.md#strategies; the rules: RULES.md.",
    )
    play.add_argument("--south", default="human", help="South's strategy, or human (default human)")
    play.add_argument("--north", default="greedy", help="North's strategy, or human (default greedy)")
    play.add_argument("--seed", type=int, default=0, help="the seed of the strategies' random choices (default 0)")
    play.add_argument("--hints", action="store_true", help="after each move, every legal move's value, value lost and remoteness")
    _add_rule_options(play)
    _add_yes_option(play)
    _add_cache_option(play)
    play.set_defaults(run=do.play)
    _describe(parser)
    return parser


def _describe(parser: argparse.ArgumentParser) -> None:
    """Every command's --help opens with what it does: its own description, else its line in the
    list of its parent's commands, as a sentence."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            lines = {choice.dest: choice.help or "" for choice in action._choices_actions}
            for name, child in action.choices.items():
                if child.description is None:
                    child.description = lines[name][:1].upper() + lines[name][1:] + "."
                _describe(child)


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
    run.set_defaults(run=do.study_run)
    status = actions.add_parser("status", help="chunks done, games and per-pairing counts of a study folder")
    status.add_argument("folder", help="the study's folder, e.g. data/smoke")
    status.set_defaults(run=do.study_status)
    summary = actions.add_parser("summary", help="first-player advantage per pairing and rule-event rates, with 95%% intervals")
    summary.add_argument("folder", help="the study's folder, e.g. data/default")
    summary.set_defaults(run=do.study_summary)
    report = actions.add_parser("report", help="write the study's report: HTML, Markdown, CSV tables and SVG/PDF/PNG figures")
    report.add_argument("folder", help="the study's folder, e.g. data/default")
    report.add_argument("--out", help="the report's folder (default reports/<study>/)")
    report.add_argument("--quiet", action="store_true", help="print nothing but errors")
    _add_cache_option(report)
    report.set_defaults(run=do.study_report)


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
    run.set_defaults(run=do.ladder_run)
    _add_report_command(actions, "ladder", do.ladder_report)
    search = actions.add_parser("search", help="the search ladder: mcts from 1 to 4,096 playouts, sampled until precise")
    search.add_argument("config", help="the search ladder's TOML file, or the bundled one: search (modiar ladder search search)")
    search.add_argument("--out", help="its folder (default data/<its name>)")
    search.add_argument("--jobs", type=int, default=2, help="worker processes (default 2)")
    search.add_argument("--quiet", action="store_true", help="no progress bar")
    _add_cache_option(search)
    _add_yes_option(search)
    search.set_defaults(run=do.search_ladder_run)
    _add_report_command(actions, "search ladder", do.search_ladder_report, "search-report", "search-ladder")


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
        "--jobs",
        type=int,
        default=2,
        help="worker processes (default 2; rule sets one of them cannot hold run after the others with fewer; "
        "the estimate printed first says their memory)",
    )
    _add_backend_options(run)
    run.add_argument(
        "--hours",
        type=float,
        help="start no rule set after this many hours (e.g. 2.5); those in flight are finished, and a later run goes on",
    )
    run.add_argument("--quiet", action="store_true", help="no progress bar")
    _add_cache_option(run, "the folder in whose scratch/ each rule set's tables and solution are built, then removed")
    _add_yes_option(run)
    run.set_defaults(run=do.atlas_run)
    quality = actions.add_parser(
        "quality",
        help="the exact quality of random and perfect(temperature=1.0) self-play for each distinct game of an atlas "
        "(resumes a stopped run; the atlas report's 'Is it a good game?' reads it)",
    )
    quality.add_argument("folder", nargs="?", help="the atlas's folder (default data/atlas)")
    quality.add_argument(
        "--jobs", type=int, default=2, help="worker processes (default 2; the games one cannot hold run alone, after)"
    )
    quality.add_argument("--hours", type=float, help="start no game after this many hours; a later run goes on")
    quality.add_argument("--quiet", action="store_true", help="no progress bar")
    _add_yes_option(quality)
    quality.set_defaults(run=do.atlas_quality)
    _add_report_command(actions, "atlas", do.atlas_report)


def _add_fair_command(commands: argparse._SubParsersAction[_Parser]) -> None:
    fair = commands.add_parser(
        "fair",
        help="the fairness search of a rule set: every start within a few moved stones, its value, the pie rule and komi",
    )
    _add_rule_options(fair)
    fair.add_argument(
        "--moved",
        type=int,
        default=2,
        help="starts with up to this many stones moved between pits (default 2; at most what the rule set's stones allow)",
    )
    fair.add_argument(
        "--exact-within",
        type=int,
        default=0,
        metavar="N",
        help="play random and perfect self-play exactly from the fair starts with up to N stones moved "
        "(default 0: from the rule set's own start only; 1 takes about half an hour on two cores, cached)",
    )
    fair.add_argument(
        "--quality",
        action="store_true",
        help="measure the exact quality (lead changes, comebacks, drama) of random and perfect(temperature=1.0) self-play "
        "from the same starts too (about 3 times the exact outcomes' time; cached): reports/fair/<rule set>-...-quality/",
    )
    fair.add_argument("--jobs", type=int, default=2, help="worker processes for the exact outcomes (default 2)")
    fair.add_argument("--out", help="the report's folder (default reports/fair/<rule set>/)")
    fair.add_argument("--quiet", action="store_true", help="no progress")
    _add_yes_option(fair)
    _add_cache_option(fair)
    fair.set_defaults(run=do.fair)


def _add_cache_commands(commands: argparse._SubParsersAction[_Parser]) -> None:
    cache = commands.add_parser(
        "cache", help="the cache folder of tables, solutions, policy tables and exact outcomes: where, how big; clear it"
    )
    actions = cache.add_subparsers(title="cache commands", required=True, metavar="ACTION")
    show = actions.add_parser("show", help="the cache folder in use, and per kind its files and their size")
    _add_cache_option(show, "the cache folder to show")
    show.set_defaults(run=do.cache_show)
    clear = actions.add_parser(
        "clear", help="remove what the cache folder holds (built again when needed); refuses a folder that is not a modiar cache"
    )
    _add_cache_option(clear, "the cache folder to clear")
    clear.add_argument("--yes", action="store_true", help="remove without asking (needed when there is no terminal to ask)")
    clear.set_defaults(run=do.cache_clear)


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
