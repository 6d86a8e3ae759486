"""Bad input at every command of ``modiar`` and every callable of ``engine.__all__``: one
table each, driven through all of it.

A command's mistake ends in one line on stderr, ``modiar: error: ...``, and exit status 2, never a
traceback; a public function's in a ValueError or TypeError whose message is one line and names
the argument. Either way nothing is written outside the output the command names (the test runs
in a folder of its own, with MODIAR_DATA, MODIAR_REPORTS and MODIAR_CACHE under it, and compares
every file before and after), and no process is left behind. Two more tests check that the tables
cover every subcommand of the parser and every callable of engine.__all__: a new one cannot be
forgotten. Every case fails before any work: the whole table takes seconds.
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import io
import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import psutil
import pytest
from polling import wait_until
from sealing import edit_manifest
from servers import speaking_first
from study_configs import small_config, toml_text

import engine
import pipeline.cli
from engine.tables.positions import load_tables
from pipeline.cli import main
from pipeline.ladder.run import parse_ladder, run_ladder
from pipeline.study.report import compute

STUDY = toml_text(small_config())
FILES = {
    "study.toml": STUDY,
    "ladder.toml": 'name = "small"\nrungs = ["random"]\n[rules]\nstones_per_pit = 3\n',
    "atlas.toml": 'name = "small"\n[grid]\nstones_per_pit = [2]\n',
    "deep.toml": "a = " + "[" * 3000 + "]" * 3000 + "\n",
    "mcts-ladder.toml": 'name = "small"\nrungs = ["random", "mcts(playouts=5)"]\n',
    "search.toml": 'name = "small"\nseed = 1\nplayouts = [1, 2]\n[rules]\nstones_per_pit = 3\n',
    "bad-search.toml": 'name = "small"\nseed = 1\nplayouts = [1, 2.5]\n',
    "slow.toml": toml_text(small_config(strategies=["random", "mcts(playouts=30000000)"])),
    "huge-atlas.toml": 'name = "huge"\n[grid]\nply_cap = ['
    + ", ".join(map(str, range(1, 5001)))
    + "]\nfeeding = [true, false, true]\n",
    "nested-atlas.toml": 'name = "a"\n[grid]\ncapture_counts = [[[2]]]\n',
    "file.txt": "keep me\n",
    "budget/exact/budget-engine2024.json": '{"budget": 2024}\n',  # a user's file, named as modiar's
}
SPEAKS_FIRST = b"SSH-2.0-OpenSSH_9.0\r\n"

# (id, argv, what the one line says); {name} is a file of FILES (or folder, missing, edited_ladder,
# speaker) in the test's folder, {here} the test's folder itself. A case whose id ends in "/process" runs modiar in a process of
# its own: dask's threads would otherwise outlive the call.
COMMANDS: list[tuple[str, list[str], str]] = [
    ("no command", [], "the following arguments are required: COMMAND"),
    ("unknown command", ["nonsense"], "invalid choice: 'nonsense'"),
    ("sample/one game", ["sample", "--games", "1"], "--games must be at least 2"),
    ("sample/games not a number", ["sample", "--games", "abc"], "argument --games: invalid int value: 'abc'"),
    ("sample/a trillion games", ["sample", "--games", "1000000000000"], "needs about 2.7 PiB of memory"),
    ("sample/negative seed", ["sample", "--seed", "-1"], "--seed must be a whole number from 0"),
    ("sample/unknown strategy", ["sample", "--south", "nonsense"], "unknown strategy 'nonsense'; known strategies: alphabeta,"),
    ("sample/misspelt strategy", ["sample", "--south", "perfct(epsilon=0.1)"], "(did you mean 'perfect(epsilon=0.1)'?)"),
    ("sample/empty strategy", ["sample", "--north", ""], "unknown strategy ''"),
    ("sample/huge playouts", ["sample", "--south", "mcts(playouts=99999999999999999999)"], "playouts must be a whole number"),
    ("sample/NaN epsilon", ["sample", "--south", "perfect(epsilon=nan)"], "epsilon must be a number from 0 to 1"),
    ("sample/depth beyond the cap", ["sample", "--south", "alphabeta(depth=1000)"], "searches deeper than the 400-ply cap"),
    ("sample/unknown rule field", ["sample", "--rule", "colour=red"], "--rule takes FIELD=VALUE"),
    ("sample/rule field by its token", ["sample", "--rule", "stones=3"], "not 'stones=3' (did you mean 'stones_per_pit'?)"),
    ("sample/negative ply cap", ["sample", "--rule", "ply_cap=-4"], "ply_cap must be a whole number"),
    ("sample/unknown rule set", ["sample", "--rules", "modiar-stones99"], "stones_per_pit must be a whole number"),
    ("sample/cache is a file", ["sample", "--cache", "{file.txt}"], "is a file; name a folder with --cache"),
    ("sample/unknown option", ["sample", "--bogus"], "unrecognized arguments: --bogus"),
    ("show/huge seed", ["show", "--seed", "99999999999999999999"], "--seed must be a whole number"),
    ("show/a day's mcts", ["show", "--north", "mcts(playouts=30000000)"], "over an hour; --yes runs it anyway"),
    ("show/rule not on or off", ["show", "--rule", "feeding=maybe"], "--rule feeding takes on or off"),
    ("bench/negative seconds", ["bench", "--seconds", "-1"], "--seconds is the length of each timed run"),
    ("bench/zero seconds", ["bench", "--seconds", "0"], "--seconds is the length of each timed run"),
    ("bench/NaN seconds", ["bench", "--seconds", "nan"], "--seconds is the length of each timed run"),
    ("bench/infinite seconds", ["bench", "--seconds", "inf"], "--seconds is the length of each timed run"),
    ("bench/a billion seconds", ["bench", "--seconds", "1e9"], "over an hour; --yes runs it anyway"),
    ("solve/zero cap", ["solve", "--cap", "0"], "--cap must be a whole number from 1 to 10000"),
    ("analyse/five pits", ["analyse", "7 7 7 7 7"], "a board is six whole numbers"),
    ("analyse/a word", ["analyse", "7 7 7 / 7 7 x"], "a board is six whole numbers"),
    ("analyse/too many stones", ["analyse", "9 9 9 9 9 9"], "holds 54 stones; modiar has 42"),
    (
        "analyse/unknown rule set",
        ["analyse", "7 7 7 7 7 7", "--rules", "modiar-stone5"],
        "part 'stone5'; did you mean 'stones5'?",
    ),
    ("analyse/negative ply", ["analyse", "7 7 7 7 7 7", "--ply", "-1"], "--ply is the number of moves already played"),
    ("solve/eleven stones", ["solve", "--stones", "11"], "stones_per_pit must be a whole number from 1 to 10"),
    ("solve/cache below a file", ["solve", "--cache", "{file.txt}/below"], "is a file; name a folder with --cache"),
    ("exact/no strategies", ["exact"], "the following arguments are required: SOUTH, NORTH"),
    ("exact/mcts", ["exact", "mcts", "random"], "modiar exact takes table strategies only"),
    ("exact/depth beyond the cap", ["exact", "alphabeta(depth=401)", "random"], "searches deeper than the 400-ply cap"),
    ("study/no action", ["study"], "the following arguments are required: ACTION"),
    ("study run/missing config", ["study", "run", "{missing}"], "No such file or directory; bundled studies are named"),
    ("study run/misspelt bundled study", ["study", "run", "smok"], "did you mean smoke (modiar study run smoke)?"),
    (
        "study run/the bundled ladder",
        ["study", "run", "ladder"],
        "ladder is a bundled ladder, not a study: modiar ladder run ladder",
    ),
    ("study run/a folder for a config", ["study", "run", "{folder}"], "is not a regular file"),
    ("study run/nested 3000 deep", ["study", "run", "{deep.toml}"], "nests arrays or tables thousands deep"),
    ("study run/a ladder config", ["study", "run", "{ladder.toml}"], "unknown key 'rungs'"),
    ("study run/no jobs", ["study", "run", "{study.toml}", "--jobs", "0"], "--jobs must be at least 1"),
    ("study run/a million jobs", ["study", "run", "{study.toml}", "--jobs", "1000000"], "--jobs 1000000 needs about"),
    ("study run/out is a file", ["study", "run", "{study.toml}", "--out", "{file.txt}"], "is not a folder"),
    ("study run/unknown backend", ["study", "run", "{study.toml}", "--backend", "ray"], "invalid choice: 'ray'"),
    ("study run/no dask address", ["study", "run", "{study.toml}", "--backend", "dask", "--scheduler", "x"], "--scheduler takes"),
    (
        "study run/scheduler speaks first/process",
        ["study", "run", "{study.toml}", "--backend", "dask", "--scheduler", "{speaker}", "--out", "{out}"],
        "did not answer as a dask scheduler",
    ),
    ("study run/days of mcts", ["study", "run", "{slow.toml}"], "over an hour; --yes runs it anyway"),
    ("study status/missing folder", ["study", "status", "{missing}"], "manifest.json not found"),
    ("study status/a file for a folder", ["study", "status", "{file.txt}"], "is not a folder"),
    ("study summary/not a study folder", ["study", "summary", "{folder}"], "manifest.json not found"),
    ("study report/a file for a folder", ["study", "report", "{file.txt}", "--quiet"], "is not a folder"),
    ("ladder run/a study config", ["ladder", "run", "{study.toml}"], "unknown key 'seed'"),
    ("ladder run/a bundled study", ["ladder", "run", "smoke"], "smoke is a bundled study, not a ladder: modiar study run smoke"),
    ("ladder search/missing config", ["ladder", "search", "serch"], "did you mean search (modiar ladder search search)?"),
    ("ladder run/mcts rung", ["ladder", "run", "{mcts-ladder.toml}"], "rungs: mcts(playouts=5) has no policy table"),
    ("ladder run/no jobs", ["ladder", "run", "{ladder.toml}", "--jobs", "0"], "--jobs must be at least 1"),
    ("ladder run/out is a file", ["ladder", "run", "{ladder.toml}", "--out", "{file.txt}"], "is not a folder"),
    ("ladder report/missing folder", ["ladder", "report", "{missing}"], "manifest.json not found"),
    ("ladder search/no jobs", ["ladder", "search", "{search.toml}", "--jobs", "0"], "--jobs must be at least 1"),
    ("ladder search/fractional playouts", ["ladder", "search", "{bad-search.toml}"], "playouts must be a whole number"),
    ("ladder search/a ladder config", ["ladder", "search", "{ladder.toml}"], "unknown key 'rungs'"),
    ("ladder search-report/missing folder", ["ladder", "search-report", "{missing}"], "manifest.json not found"),
    ("ladder report/edited manifest", ["ladder", "report", "{edited_ladder}"], "has no row for greedy v greedy"),
    ("atlas run/missing config", ["atlas", "run", "{missing}"], "No such file or directory; bundled atlases are named"),
    ("atlas run/15000 rule sets", ["atlas", "run", "{huge-atlas.toml}"], "makes more than 10,000 rule sets"),
    ("atlas run/a list in a list", ["atlas", "run", "{nested-atlas.toml}"], "capture_counts: Rules.capture_counts holds [2]"),
    ("atlas run/unknown part", ["atlas", "run", "{atlas.toml}", "--part", "nope"], "has no part 'nope'"),
    ("atlas run/out is a file", ["atlas", "run", "{atlas.toml}", "--out", "{file.txt}"], "is not a folder"),
    ("atlas run/cache is a file", ["atlas", "run", "{atlas.toml}", "--cache", "{file.txt}"], "is a file; name a folder"),
    ("atlas run/no hours", ["atlas", "run", "{atlas.toml}", "--hours", "0"], "--hours must be more than 0, not 0"),
    (
        "atlas run/scheduler speaks first/process",
        ["atlas", "run", "{atlas.toml}", "--backend", "dask", "--scheduler", "{speaker}", "--out", "{out}"],
        "did not answer as a dask scheduler",
    ),
    ("atlas quality/a file for a folder", ["atlas", "quality", "{file.txt}"], "is not a folder"),
    ("atlas quality/not an atlas folder", ["atlas", "quality", "{folder}"], "manifest.json not found"),
    ("atlas quality/no workers", ["atlas", "quality", "{folder}", "--jobs", "0"], "--jobs must be at least 1, not 0"),
    ("atlas quality/no hours", ["atlas", "quality", "{folder}", "--hours", "0"], "--hours must be more than 0, not 0"),
    ("atlas report/a file for a folder", ["atlas", "report", "{file.txt}"], "is not a folder"),
    ("atlas report/not an atlas folder", ["atlas", "report", "{folder}"], "manifest.json not found"),
    ("fair/unknown rule field", ["fair", "--rule", "nonsense=1"], "nonsense"),
    ("fair/no stones moved", ["fair", "--rules", "modiar-stones3", "--moved", "0"], "--moved is 1 or more"),
    ("fair/exact beyond moved", ["fair", "--rules", "modiar-stones3", "--moved", "1", "--exact-within", "2"], "--exact-within"),
    ("fair/out is a file", ["fair", "--rules", "modiar-stones3", "--moved", "1", "--out", "{file.txt}"], "is not a folder"),
    ("fair/negative moved", ["fair", "--rules", "modiar-stones3", "--moved", "-3"], "--moved is 1 or more, not -3"),
    (
        "fair/moved not a whole number",
        ["fair", "--rules", "modiar-stones3", "--moved", "1.5"],
        "argument --moved: invalid int value: '1.5'",
    ),
    (
        "fair/search over an hour",
        ["fair", "--rules", "modiar-stones3", "--moved", "15", "--exact-within", "15"],
        "over an hour; --yes runs it anyway",
    ),
    ("cache/no action", ["cache"], "the following arguments are required: ACTION"),
    ("cache show/cache is a file", ["cache", "show", "--cache", "{file.txt}"], "is a file; name a folder with --cache"),
    ("cache clear/not a cache", ["cache", "clear", "--cache", "{here}", "--yes"], "does not look like a modiar cache"),
    (
        "cache clear/a user's file named as a cache file",
        ["cache", "clear", "--cache", "{budget}", "--yes"],
        "carries no seal of modiar's",
    ),
    ("cache clear/a user's file, without --yes", ["cache", "clear", "--cache", "{budget}"], "does not look like a modiar cache"),
    ("play/unknown strategy", ["play", "--north", "nonsense"], "unknown strategy 'nonsense'"),
    ("play/negative seed", ["play", "--seed", "-1"], "--seed must be a whole number"),
    ("play/depth beyond the cap", ["play", "--north", "alphabeta(depth=1000)"], "searches deeper than the 400-ply cap"),
]

STONES3 = engine.Rules(stones_per_pit=3)
START = engine.start_board()

# (id, call, the argument the message names); every call must raise ValueError or TypeError.
CALLS: list[tuple[str, Callable[[], object], str]] = [
    ("apply_move/float pit", lambda: engine.apply_move(START, 0, 1.5, 1), "pit"),
    ("cache_folder/an argument", lambda: engine.cache_folder("x"), "cache_folder()"),
    ("canonical_spec/an int", lambda: engine.canonical_spec(5), "spec"),
    ("end_event/mover 2", lambda: engine.end_event(START, 2, 0), "mover"),
    ("exact_outcome/tolerance 2", lambda: engine.exact_outcome("random", "random", rules=STONES3, tolerance=2), "tolerance"),
    (
        "exact_outcome/NaN tolerance",
        lambda: engine.exact_outcome("random", "random", rules=STONES3, tolerance=float("nan")),
        "tolerance",
    ),
    ("exact_outcome/a rule set's name", lambda: engine.exact_outcome("random", "random", rules="modiar-stones3"), "rules"),
    ("exact_quality/tolerance 2", lambda: engine.exact_quality("random", "random", rules=STONES3, tolerance=2), "tolerance"),
    ("exact_quality/a rule set's name", lambda: engine.exact_quality("random", "random", rules="modiar-stones3"), "rules"),
    ("exact_lengths/tolerance 2", lambda: engine.exact_lengths("random", "random", rules=STONES3, tolerance=2), "tolerance"),
    ("exact_lengths/a rule set's name", lambda: engine.exact_lengths("random", "random", rules="modiar-stones3"), "rules"),
    ("exploitability/a rule set's name", lambda: engine.exploitability("random", rules="modiar-stones3"), "rules"),
    ("exploitability/mcts", lambda: engine.exploitability("mcts", rules=STONES3), "mcts(playouts=400)"),
    ("is_table_strategy/None", lambda: engine.is_table_strategy(None), "spec"),
    ("legal_moves/a string board", lambda: engine.legal_moves("x", 0, 0), "board code"),
    ("make_strategy/huge playouts", lambda: engine.make_strategy("mcts(playouts=99999999999999999999)"), "playouts"),
    ("make_strategy/huge depth", lambda: engine.make_strategy("alphabeta(depth=100000000)"), "depth"),
    ("pack/seven pits", lambda: engine.pack([1] * 7), "counts"),
    ("parse_board/an int", lambda: engine.parse_board(5), "picture"),
    ("perft/negative depth", lambda: engine.perft(-1), "depth"),
    ("perft_counts/a string depth", lambda: engine.perft_counts("3"), "depth"),
    ("play_batch/ten trillion games", lambda: engine.play_batch(10**13, "random", "random"), "n_games"),
    ("play_batch/negative seed", lambda: engine.play_batch(4, "random", "random", rules=STONES3, seed=-1), "seed"),
    ("play_game/float seed", lambda: engine.play_game("random", "random", seed=1.5), "seed"),
    ("play_game/a rule set's name", lambda: engine.play_game("random", "random", rules="modiar"), "rules"),
    ("policy_table/a rule set's name", lambda: engine.policy_table("random", "modiar-stones3"), "rules"),
    ("position/float mover", lambda: engine.position(START, 1.0, 0), "mover"),
    ("possible_events/a rule set's name", lambda: engine.possible_events("modiar-feedingoff"), "rules"),
    ("release_caches/an argument", lambda: engine.release_caches(1), "release_caches()"),
    ("render/negative board", lambda: engine.render(-1), "board code"),
    ("rotate/huge board", lambda: engine.rotate(2**200), "board code"),
    ("set_cache_folder/an int", lambda: engine.set_cache_folder(123), "folder"),
    ("solve/negative cap", lambda: engine.solve(STONES3, -1), "cap"),
    ("remoteness/negative cap", lambda: engine.remoteness(STONES3, -1), "cap"),
    ("remoteness/a rule set's name", lambda: engine.remoteness("modiar"), "rules"),
    ("analyse/negative board", lambda: engine.analyse(-1, rules=STONES3), "board"),
    ("analyse/mover 2", lambda: engine.analyse(engine.start_board(STONES3), 2, rules=STONES3), "mover"),
    ("solve/a rule set's name", lambda: engine.solve("modiar"), "rules"),
    ("start_board/a rule set's name", lambda: engine.start_board("modiar"), "rules"),
    ("unpack/float board", lambda: engine.unpack(1.5), "board code"),
    ("Rules/no stones", lambda: engine.Rules(stones_per_pit=0), "stones_per_pit"),
    ("Rules/unknown field", lambda: engine.Rules(colour=1), "colour"),
    ("Rng/a string state", lambda: engine.Rng("x"), "state"),
    ("Rng/negative state", lambda: engine.Rng(-1), "state"),
    ("GameBatch.record/game 99 of 4", lambda: _four_games().record(99), "i"),
    ("pipeline.study.report.compute/no games", lambda: compute(_no_games()), "games"),
    ("pipeline.study.report.compute/a list", lambda: compute([]), "games"),
]
# The callables of engine.__all__ that take no user input to check: the engine's results and
# records (built by the engine, fields unchecked), its errors, a protocol, and a type alias.
NOT_CALLED_WITH_INPUT = {
    "Board": "an alias of int",
    "ExactLengths": "exact_lengths's result",
    "ExactOutcome": "exact_outcome's result",
    "ExactProgress": "what exact_outcome passes to its progress callback",
    "ExactQuality": "exact_quality's result",
    "Exploitability": "exploitability's result",
    "GameRecord": "play_game's result",
    "MoveResult": "apply_move's result",
    "PolicyTable": "policy_table's result",
    "Position": "what a strategy is shown (position's result)",
    "Solution": "solve's result",
    "Remoteness": "remoteness's result",
    "IllegalMoveError": "an error the engine raises",
    "UnknownStrategyError": "an error the engine raises",
    "Strategy": "a protocol",
    "OneDrawStrategy": "a base class of the engine's strategies",
}


# ---------------------------------------------------------------------------------------------
# The folder, its snapshot and the processes


@pytest.fixture(scope="module")
def edited_ladder(tmp_path_factory) -> Path:
    """A ladder folder whose manifest's config lists a rung (greedy) its files have no rows for."""
    small = parse_ladder({"name": "edited", "rungs": ["random"], "opponents": ["random"], "rules": {"stones_per_pit": 2}})
    folder = run_ladder(small, tmp_path_factory.mktemp("ladder") / "edited", progress=False)
    edit_manifest(folder, lambda manifest: manifest["config"].update(rungs=["random", "greedy"]))  # sealed anew
    return folder


@pytest.fixture
def speaker() -> Iterator[str]:
    """A server on this machine that writes first, as SSH does."""
    with speaking_first(SPEAKS_FIRST) as address:
        yield address


@pytest.fixture
def ground(tmp_path, monkeypatch, cache, edited_ladder, speaker) -> dict[str, str]:
    """The test's folder (the current one, with MODIAR_DATA, MODIAR_REPORTS and MODIAR_CACHE in it),
    its files, and the words of the placeholders of COMMANDS."""
    for name, text in FILES.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    (tmp_path / "folder").mkdir()
    monkeypatch.chdir(tmp_path)
    for variable, folder in (("MODIAR_DATA", "data"), ("MODIAR_REPORTS", "reports"), ("MODIAR_CACHE", "cache")):
        monkeypatch.setenv(variable, str(tmp_path / folder))
    monkeypatch.setattr("sys.stdin", io.StringIO(""))
    words = {name: str(tmp_path / name) for name in (*FILES, "folder", "missing", "out", "budget")}
    return words | {"edited_ladder": str(edited_ladder), "speaker": speaker, "here": str(tmp_path)}


def snapshot(*folders: Path, but: Path | None = None) -> dict[Path, tuple[int, int]]:
    """Every file under ``folders`` with its size and modification time, and every folder;
    ``but`` and what it holds left out (the output a command names)."""
    found = {}
    for folder in folders:
        for path in [folder, *folder.rglob("*")]:
            if but is None or not path.is_relative_to(but):
                found[path] = (path.stat().st_size, path.stat().st_mtime_ns) if path.is_file() else (-1, 0)
    return found


def filled(word: str, ground: dict[str, str]) -> str:
    """A word of COMMANDS with its {placeholder}, if any, replaced."""
    for name, value in ground.items():
        word = word.replace(f"{{{name}}}", value)
    return word


def children() -> set[int]:
    return {child.pid for child in psutil.Process().children(recursive=True)}


def survivors(session: int) -> list[int]:
    """The processes still alive in a session (a modiar process started in a session of its own)."""
    alive = []
    for process in psutil.process_iter():
        with contextlib.suppress(psutil.Error, OSError):
            if os.getsid(process.pid) == session and process.status() != psutil.STATUS_ZOMBIE:
                alive.append(process.pid)
    return alive


def run_in_process(argv: list[str], capsys) -> tuple[int, str]:
    code = main(argv)
    return code, capsys.readouterr().err


def run_as_process(argv: list[str], folder: Path) -> tuple[int, str]:
    command = [sys.executable, "-m", "pipeline.cli", *argv]
    started = subprocess.Popen(command, cwd=folder, stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
    try:
        _, err = started.communicate(timeout=60)
    finally:
        started.kill()
    assert wait_until(lambda: not survivors(started.pid), 10), f"processes left behind: {survivors(started.pid)}"
    return started.returncode, err.decode()


# ---------------------------------------------------------------------------------------------
# The tables


@pytest.mark.parametrize(("argv", "message"), [case[1:] for case in COMMANDS], ids=[case[0] for case in COMMANDS])
def test_a_bad_command_is_one_line_exit_2_nothing_written_nothing_left_running(ground, tmp_path, capsys, argv, message):
    words = [filled(word, ground) for word in argv]
    named = Path(words[words.index("--out") + 1]) if "--out" in words else None
    watched = [tmp_path, Path(ground["edited_ladder"])]
    before, running = snapshot(*watched, but=named), children()
    in_process = ground["speaker"] not in words
    code, err = run_in_process(words, capsys) if in_process else run_as_process(words, tmp_path)
    assert code == 2, err
    assert err.startswith("modiar: error: ") and err.count("\n") == 1 and err.endswith("\n"), err
    assert message in err, err
    assert snapshot(*watched, but=named) == before, "something was written outside the named output"
    assert wait_until(lambda: children() <= running, 10), "a process was left behind"


@pytest.mark.parametrize(("call", "argument"), [case[1:] for case in CALLS], ids=[case[0] for case in CALLS])
def test_a_bad_call_is_a_one_line_value_or_type_error_naming_the_argument(tmp_path, cache, call, argument):
    before, running = snapshot(tmp_path), children()
    with pytest.raises((ValueError, TypeError)) as raised:
        call()
    message = str(raised.value)
    assert "\n" not in message and argument in message, message
    assert snapshot(tmp_path) == before
    assert wait_until(lambda: children() <= running, 10)


# ---------------------------------------------------------------------------------------------
# The tables cover everything


def commands(parser: argparse.ArgumentParser, words: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    """Every command of the parser that runs something (those without subcommands), as its words."""
    nested = [action for action in parser._actions if isinstance(action, argparse._SubParsersAction)]
    if not nested:
        return [words]
    return [found for action in nested for name, child in action.choices.items() for found in commands(child, (*words, name))]


def test_the_table_has_a_bad_input_for_every_command_of_modiar():
    every = set(commands(pipeline.cli._parser()))
    covered = {tuple(argv[:2]) if tuple(argv[:2]) in every else tuple(argv[:1]) for _, argv, _ in COMMANDS}
    assert every - covered == set(), f"no bad input for: {sorted(every - covered)}"


def test_the_table_has_a_bad_call_of_every_callable_of_engine_all():
    called = {identifier.split("/")[0].split(".")[0] for identifier, _, _ in CALLS}
    every = {name for name in engine.__all__ if callable(getattr(engine, name))}
    missing = every - called - set(NOT_CALLED_WITH_INPUT)
    assert missing == set(), f"no bad call for: {sorted(missing)}; add one to CALLS (or say why not in NOT_CALLED_WITH_INPUT)"
    assert set(NOT_CALLED_WITH_INPUT) <= every and not set(NOT_CALLED_WITH_INPUT) & called


@functools.cache
def _four_games() -> engine.GameBatch:
    """Four games, played on tables built in memory: the cache folder is left as it was."""
    return engine.play_batch(4, "random", "random", rules=STONES3, tables=load_tables(STONES3, None, progress=False))


def _no_games() -> object:
    """A frame of games with the report's columns and no game."""
    import polars as pl

    from pipeline.study.report.data import PAIRING_COLUMNS

    return pl.LazyFrame({key: [] for key in PAIRING_COLUMNS}, schema=dict.fromkeys(PAIRING_COLUMNS, pl.String))
