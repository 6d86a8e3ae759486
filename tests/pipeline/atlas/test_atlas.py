"""The atlas (pipeline.atlas.run, pipeline.atlas.analyse): a 4-rule-set atlas against values computed
independently, and the same bytes however it is run.

The independent values come from tests/reference.py, the plain implementation of RULES.md
that shares nothing with the engine: perfect play by a memoised negamax over (board, mover,
ply), random play's outcome by summing over every game with its probability, the reachable
positions by a breadth-first search; greedy and alphabeta(depth=4) are checked against the
games the batched engine samples, within 4 standard errors. The rule sets have 4 stones a pit
and a cap of 16 plies, so that all of this takes seconds.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow.parquet as pq
import pytest
import reference
from brute_remoteness import brute_force
from polling import wait_until
from stand_ins import Clock, Greedy

import engine
from engine.solver import AT_CAP
from engine.store import read_json, write_json
from engine.tables import positions_of
from engine.tables.positions import load_tables
from pipeline import estimates
from pipeline.atlas import config as atlas_config
from pipeline.atlas import run as atlas_module
from pipeline.atlas.analyse import SELF_PLAY_SPECS, Analysis, estimated_bytes, kept_schema
from pipeline.atlas.config import Atlas, load_atlas, parse_atlas
from pipeline.atlas.plan import KILLS_REFUSED, expected_seconds, run_order
from pipeline.atlas.rows import Cost, kept_costs, row_path
from pipeline.atlas.run import read_atlas, read_atlas_manifest, rows_done, rows_incomplete, run_atlas
from pipeline.cli import main
from pipeline.runs.config import ConfigError
from pipeline.runs.costs import COSTS
from pipeline.runs.lock import FolderBusyError, folder_lock
from pipeline.runs.records import parquet_bytes, sha256

CONFIG = """\
name = "four"
[grid]
stones_per_pit = [4]
ply_cap = [16]
feeding = [true, false]
grand_slam = ["prohibited", "allowed"]
"""
# The bytes tests run an atlas several times: rule sets of 3 stones a pit take a fraction of a second.
SMALL = CONFIG.replace('name = "four"', 'name = "small"').replace("stones_per_pit = [4]", "stones_per_pit = [3]")
TOLERANCE = 1e-8  # the engine's chances are multiples of 2**-32 (engine.players.choice)
SAMPLED_GAMES = 20_000


@pytest.fixture(scope="session")
def four(tmp_path_factory: pytest.TempPathFactory) -> tuple[Atlas, Path]:
    """The atlas of 4-stone rule sets computed once, in this process, and its folder."""
    return _computed(tmp_path_factory.mktemp("four"), CONFIG, jobs=1)


@pytest.fixture(scope="session")
def small(tmp_path_factory: pytest.TempPathFactory) -> tuple[Atlas, Path]:
    """The atlas of 3-stone rule sets computed once with one worker, its config file in its folder."""
    return _computed(tmp_path_factory.mktemp("small"), SMALL, jobs=1)


def _computed(folder: Path, text: str, *, jobs: int) -> tuple[Atlas, Path]:
    config = folder / "atlas.toml"
    config.write_text(text)
    atlas = load_atlas(config)
    run_atlas(atlas, folder / "reference", jobs=jobs, progress=False)
    return atlas, folder


def rows(directory: Path) -> dict[str, dict[str, object]]:
    table = pq.read_table(directory / "atlas.parquet")
    return {row["rules"]: row for row in table.to_pylist()}


# ---------------------------------------------------------------------------------------------
# The config


def test_rule_sets_come_in_the_order_of_the_grids_each_once() -> None:
    atlas = parse_atlas(
        {
            "name": "a",
            "grid": {"feeding": [True, False], "stones_per_pit": [3, 7]},
            "grids": {"stones": {"stones_per_pit": [3, 5, 7]}},
            "parts": {"small": {"stones_per_pit": [3]}},
        }
    )
    names = [rules.name for rules in atlas.rule_sets()]
    assert names == [
        "modiar-stones3",
        "modiar",
        "modiar-stones3-feedingoff",
        "modiar-feedingoff",
        "modiar-stones5",
    ]
    assert [rules.name for rules in atlas.rule_sets("small")] == ["modiar-stones3", "modiar-stones3-feedingoff"]


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({"name": "a", "grid": {"feedin": [True]}}, "unknown rule 'feedin' in [grid]"),
        ({"name": "a", "grid": {"feeding": True}}, "feeding must be a non-empty list"),
        ({"name": "a", "grid": {"feeding": []}}, "feeding must be a non-empty list"),
        ({"name": "a", "grid": {"stones_per_pit": [7, 7]}}, "[grid] stones_per_pit lists 7 twice"),
        ({"name": "a", "grid": {"grand_slam": ["banned"]}}, "grand_slam must be one of prohibited, allowed, no_capture"),
        ({"name": "a", "grid": {}, "parts": {"p": {"stones_per_pit": [4]}}}, "[parts.p] holds none of the atlas's rule sets"),
        ({"name": "a", "grid": {}, "extra": 1}, "unknown key 'extra'"),
        ({"grid": {}}, "missing key 'name'"),
    ],
)
def test_a_bad_config_is_refused_in_one_line(data: dict[str, object], message: str) -> None:
    with pytest.raises(ConfigError, match=None) as raised:
        parse_atlas(data)
    assert message in str(raised.value)
    assert "\n" not in str(raised.value)


@pytest.mark.parametrize(
    ("grid", "message"),
    [
        ({"feeding": [True, 1]}, "[grid] feeding: Rules.feeding must be True or False, not 1"),
        ({"stones_per_pit": [1, True]}, "[grid] stones_per_pit: Rules.stones_per_pit must be a whole number"),
        ({"capture_counts": [[2, 4], [2, 4]]}, "[grid] capture_counts lists [2, 4] twice"),
        ({"capture_counts": [[[2]]]}, "[grid] capture_counts: Rules.capture_counts holds [2]"),
    ],
)
def test_a_duplicate_in_an_atlas_grid_is_named_by_its_value_and_only_once_the_values_are_valid(
    grid: dict[str, object], message: str
) -> None:
    """[true, 1] was "lists a value twice" (true == 1 in Python), though 1 is no feeding
    rule, and a list inside a list was a TypeError (unhashable list)."""
    with pytest.raises(ConfigError) as raised:
        parse_atlas({"name": "a", "grid": grid})
    assert message in str(raised.value)


def test_an_atlas_grid_of_100000_rule_sets_is_refused_before_enumerating_them(monkeypatch) -> None:
    """Such a grid was enumerated for minutes before any check. Now its size is refused
    from the lengths of its lists: no value is checked and no combination made."""

    def never(*arguments: object) -> None:
        raise AssertionError("the grid was looked into before its size was refused")

    monkeypatch.setattr(atlas_config, "_check_values", never)
    monkeypatch.setattr(atlas_config.itertools, "product", never)
    huge = {"ply_cap": list(range(1, 10_001)), "stones_per_pit": list(range(1, 11)), "feeding": [True, False]}
    with pytest.raises(ConfigError, match=r"\[grid\] makes more than 10,000 rule sets; an atlas takes at most 10,000"):
        parse_atlas({"name": "a", "grid": huge})
    with pytest.raises(ConfigError, match=r"the grids make 12,000 rule sets; an atlas takes at most 10,000"):
        parse_atlas({"name": "a", "grid": {"ply_cap": list(range(1, 6001))}, "grids": {"b": {"ply_cap": list(range(1, 6001))}}})


def test_an_atlas_grid_that_makes_an_impossible_rule_set_is_refused_naming_it() -> None:
    """Each value alone is valid, their combination is not: it ended in a traceback at run time."""
    with pytest.raises(ConfigError, match=r"\[grid\] makes the rule set stones_per_pit = 1, min_stones_to_play = 7"):
        parse_atlas({"name": "a", "grid": {"stones_per_pit": [1, 3], "min_stones_to_play": [2, 7]}})


def test_the_command_names_a_config_mistake_and_an_unknown_part(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "bad.toml"
    bad.write_text('name = "bad"\n[grid]\nfeeding = ["maybe"]\n')
    assert main(["atlas", "run", str(bad), "--out", str(tmp_path / "out")]) == 2
    error = capsys.readouterr().err
    assert error.startswith(f"modiar: error: {bad}: [grid] feeding") and error.count("\n") == 1
    good = tmp_path / "good.toml"
    good.write_text(CONFIG)
    assert main(["atlas", "run", str(good), "--part", "nope", "--out", str(tmp_path / "out")]) == 2
    assert "has no part 'nope'" in capsys.readouterr().err


def test_the_command_builds_each_rule_set_in_a_scratch_folder_of_its_cache_folder(
    tmp_path: Path, cache: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """modiar atlas run takes --cache as every other command that computes; a task's
    tables and solution go to a folder of its own in the cache's scratch/, removed as it ends, and
    so is the folder a killed task of this machine left (but not a running task's, or another machine's)."""
    config = tmp_path / "atlas.toml"
    config.write_text('name = "two"\n[grid]\nstones_per_pit = [2]\n')
    ended = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True, check=True)
    host = socket.gethostname()
    kept = [cache / "scratch" / f"atlas-{host}-{os.getpid()}-running", cache / "scratch" / "atlas-elsewhere-1-x"]
    left = cache / "scratch" / f"atlas-{host}-{ended.stdout.strip()}-killed"
    for folder in [*kept, left]:
        (folder / "tables").mkdir(parents=True)
        (folder / "tables" / "modiar-stones2-engine1.npz").write_bytes(b"scratch")
    used = []

    def recorded(*arguments: Any, **options: Any) -> Any:
        used.append(engine.cache_folder())
        return load_tables(*arguments, **options)

    monkeypatch.setattr("pipeline.atlas.analyse.load_tables", recorded)
    argv = ["atlas", "run", str(config), "--out", str(tmp_path / "out"), "--jobs", "1", "--quiet", "--cache", str(cache)]
    assert main(argv) == 0, capsys.readouterr().err
    assert len(used) == 1 and used[0] is not None and used[0].parent == cache / "scratch", used
    assert used[0].name.startswith(f"atlas-{host}-{os.getpid()}-") and not used[0].exists()
    assert sorted((cache / "scratch").iterdir()) == sorted(kept)
    assert engine.cache_folder() == cache


def test_a_folder_of_another_atlas_is_refused(small: tuple[Atlas, Path]) -> None:
    _, folder = small
    other = parse_atlas({"name": "four", "grid": {"stones_per_pit": [3]}})
    with pytest.raises(atlas_module.RecordError, match="holds the atlas of another config"):
        run_atlas(other, folder / "reference", jobs=1, progress=False)


def test_a_second_run_into_a_folder_being_written_is_refused(small: tuple[Atlas, Path]) -> None:
    atlas, folder = small
    busy = pytest.raises(FolderBusyError, match="another 'modiar atlas run'")
    with folder_lock(folder / "reference", "modiar atlas run"), busy:
        run_atlas(atlas, folder / "reference", jobs=1, progress=False)


def test_a_rule_set_too_large_for_a_worker_is_refused_up_front(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    atlas = parse_atlas({"name": "big", "grid": {"stones_per_pit": [2, 10]}})
    monkeypatch.setattr(atlas_module, "memory_bytes", lambda: 2 * 8 << 30)  # two workers of 8 GB
    run_atlas(atlas, tmp_path / "big", jobs=2, progress=False)
    manifest = read_atlas_manifest(tmp_path / "big")
    assert manifest["done"] == 1 and list(manifest["refused"]) == ["modiar-stones10"]
    message = manifest["refused"]["modiar-stones10"]
    assert "90,858,768 positions" in message and "a worker has at most 16.0 GB here" in message
    assert message in caplog.text


def test_the_rule_sets_a_worker_of_two_cannot_hold_run_after_the_others_with_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """2026-12-04: `modiar atlas run --jobs 2` refused 19 rule sets that one worker holds, so the
    grid needed a second run, with --jobs 1, by hand. Here two workers hold the 2-stone rule sets
    only (pipeline.atlas.analyse.estimated_bytes), and one alone the 3-stone ones."""
    atlas = parse_atlas({"name": "fewer", "grid": {"stones_per_pit": [2, 3], "feeding": [True, False]}})
    sizes = [estimated_bytes(engine.Rules(stones_per_pit=stones)) for stones in (2, 3)]
    monkeypatch.setattr(atlas_module, "memory_bytes", lambda: sum(sizes))
    # A 3-stone rule set runs in this process, whose peak would count what earlier tests left in
    # it: unmeasured, the plan goes by the estimates alone, whatever ran before.
    monkeypatch.setattr("pipeline.atlas.analyse.peak_memory", lambda: contextlib.nullcontext(Unmeasured()))
    compute, calls = atlas_module._compute, []

    def watched(directory: Path, todo: list[engine.Rules], workers: tuple[Any, ...], *arguments: Any, **options: Any) -> None:
        calls.append((workers[0], [rules.stones_per_pit for rules in todo]))
        compute(directory, todo, workers, *arguments, **options)

    monkeypatch.setattr(atlas_module, "_compute", watched)
    run_atlas(atlas, tmp_path / "fewer", jobs=2, progress=False)
    manifest = read_atlas_manifest(tmp_path / "fewer")
    assert manifest["done"] == 4 and manifest["refused"] == {}
    assert calls == [(2, [2, 2]), (1, [3]), (1, [3])]  # planned again after each, with its row's cost
    assert "2 rule sets need more than the" in caplog.text and "1 at a time" in caplog.text


class Unmeasured:
    bytes = None  # as pipeline.atlas.analyse records a peak it could not measure


# A run whose one job (in the main process) is killed by the system while analysing the
# second rule set of SMALL, as the out-of-memory killer does: no Python cleanup runs.
KILLED_RUN = """
import os, signal, sys
from pathlib import Path
from pipeline.atlas import run as atlas_module
from pipeline.atlas.config import load_atlas
from pipeline.atlas.run import run_atlas
analyse = atlas_module._task
def dying(rules, *arguments):
    if rules.name == sys.argv[3]:
        os.kill(os.getpid(), signal.SIGKILL)
    return analyse(rules, *arguments)
atlas_module._task = dying
atlas_module.memory_bytes = lambda: 8 << 30
run_atlas(load_atlas(Path(sys.argv[1])), Path(sys.argv[2]), jobs=1, progress=False)
"""


def test_a_rule_set_whose_run_was_killed_is_refused_where_a_worker_has_no_more_memory(
    small: tuple[Atlas, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """2026-12-03: modiar-originoff-rowsown passed 23 GB with --jobs 1 and the system killed the
    run, which left nothing to say why; the next run started on the same rule set and was killed
    again. Its STARTED mark now says the next run what did not fit, and with what memory."""
    atlas, folder = small
    names = [rules.name for rules in atlas.rule_sets()]
    out = tmp_path / "killed"
    started = out / "rows" / f"{names[1]}.started"
    for kill in range(KILLS_REFUSED):  # once may be the user's kill -9: the next run tries again
        done = subprocess.run([sys.executable, "-c", KILLED_RUN, str(folder / "atlas.toml"), str(out), names[1]], check=False)
        assert done.returncode == -signal.SIGKILL
        assert started.exists() and (out / "rows" / f"{names[0]}.json").exists()
        assert not (out / "rows" / f"{names[0]}.started").exists()  # removed once its row was written
        # The first run was killed at the second rule set; the second took it last, after the others.
        assert sorted(path.stem for path in (out / "rows").glob("*.json")) == sorted(
            names[:1] if kill == 0 else set(names) - {names[1]}
        )

    monkeypatch.setattr(atlas_module, "memory_bytes", lambda: 8 << 30)  # the same room: refused
    run_atlas(atlas, out, jobs=1, progress=False)
    manifest = read_atlas_manifest(out)
    assert list(manifest["refused"]) == [names[1]] and manifest["done"] == len(names) - 1
    message = manifest["refused"][names[1]]
    assert "killed before it ended in the last 2 runs" in message and "8.0 GB" in message and str(started) in message
    assert message in caplog.text and "\n" not in message
    assert started.exists()

    monkeypatch.setattr(atlas_module, "memory_bytes", lambda: 16 << 30)  # more room: tried again
    run_atlas(atlas, out, jobs=1, progress=False)
    assert read_atlas_manifest(out)["done"] == len(names) and not started.exists()
    assert rows(out) == rows(folder / "reference")


# Two workers: the first rule set's task ends at once, and joblib then takes two more tasks
# (one a worker starts, one it keeps for later); the second's worker is killed a few seconds on.
KILLED_AHEAD = """
import os, signal, sys, time
from pathlib import Path
from pipeline.atlas import run as atlas_module
from pipeline.atlas.config import load_atlas
from pipeline.atlas.run import run_atlas
from pipeline.runs.records import RecordError
analyse = atlas_module._task
first, dying = sys.argv[3], sys.argv[4]
def task(rules, *arguments):
    if rules.name == dying:
        time.sleep(4)
        os.kill(os.getpid(), signal.SIGKILL)
    if rules.name != first:
        time.sleep(8)
    return analyse(rules, *arguments)
atlas_module._task = task
atlas_module.memory_bytes = lambda: 16 << 30
try:
    run_atlas(load_atlas(Path(sys.argv[1])), Path(sys.argv[2]), jobs=2, progress=False)
except RecordError as error:
    sys.exit(str(error))
"""


def test_a_killed_worker_leaves_marks_on_the_tasks_in_flight_only(small: tuple[Atlas, Path], tmp_path: Path) -> None:
    """2026-12-04: a worker of `--jobs 2` was killed for memory, and four rule sets kept a STARTED
    mark, two of them never started (joblib had taken them ahead): each then counted a kill. With
    pre_dispatch n_jobs joblib still takes two tasks when one of two workers is free, and keeps
    one for later (three marks for two workers); a loky worker now marks its own task."""
    atlas, folder = small
    names = [rules.name for rules in run_order(atlas.rule_sets(), {})]
    out = tmp_path / "ahead"
    done = subprocess.run(
        [sys.executable, "-c", KILLED_AHEAD, str(folder / "atlas.toml"), str(out), names[0], names[1]],
        check=False,
        capture_output=True,
        text=True,
    )
    assert "killed by the system" in done.stderr and done.returncode == 1
    assert (out / "rows" / f"{names[0]}.json").exists()
    assert sorted(path.stem for path in (out / "rows").glob("*.started")) == sorted(names[1:3])


# ---------------------------------------------------------------------------------------------
# The figures, against independent computations


@cache
def negamax(rules: engine.Rules, board: tuple[int, ...], mover: int, ply: int) -> int:
    """The mover's final total minus the opponent's still to come, under perfect play."""
    moves = reference.move_results(list(board), mover, ply, rules) if ply < rules.ply_cap else {}
    if not moves:
        return reference.row_stones(list(board), mover) - reference.row_stones(list(board), 1 - mover)
    return max(result.captured - negamax(rules, tuple(result.board), 1 - mover, ply + 1) for result in moves.values())


@cache
def random_play(rules: engine.Rules, board: tuple[int, ...], mover: int, ply: int) -> dict[tuple[int, int, int, int], float]:
    """Under uniformly random play from here: the probability of each (margin still to come for
    South, plies still to come, feeding forced fired, grand slam blocked fired)."""
    moves = reference.move_results(list(board), mover, ply, rules) if ply < rules.ply_cap else {}
    if not moves:
        rows = reference.row_stones(list(board), 0) - reference.row_stones(list(board), 1)
        return {(rows, 0, 0, 0): 1.0}
    found: dict[tuple[int, int, int, int], float] = {}
    for result in moves.values():
        sign = 1 if mover == 0 else -1
        forced, blocked = result.events["feeding_forced"], result.events["grand_slam_blocked"]
        for (margin, plies, fed, slam), chance in random_play(rules, tuple(result.board), 1 - mover, ply + 1).items():
            key = (margin + sign * result.captured, plies + 1, fed | forced, slam | blocked)
            found[key] = found.get(key, 0.0) + chance / len(moves)
    return found


def reachable(rules: engine.Rules) -> tuple[int, int, float]:
    """Positions reachable from the start, as their mover sees them (the mover's row first), those
    without a move, and the mean number of moves of the others: a breadth-first search of the
    reference. A view is played as South at ply 1 (later plies differ only by the cap)."""
    start = reference.start_board(rules)
    moves_of = {tuple(start): len(reference.move_results(start, 0, 1, rules))}
    frontier = [tuple(result.board[3:] + result.board[:3]) for result in reference.move_results(start, 0, 0, rules).values()]
    while frontier:
        view = frontier.pop()
        if view in moves_of:
            continue
        results = reference.move_results(list(view), 0, 1, rules)
        moves_of[view] = len(results)
        frontier += [tuple(result.board[3:] + result.board[:3]) for result in results.values()]
    counts = list(moves_of.values())
    live = [count for count in counts if count]
    return len(counts), counts.count(0), sum(live) / len(live)


def test_perfect_play_matches_a_plain_negamax(four: tuple[Atlas, Path]) -> None:
    atlas, folder = four
    found = rows(folder / "reference")
    for rules in atlas.rule_sets():
        row = found[rules.name]
        start = tuple(reference.start_board(rules))
        assert row["start_value"] == negamax(rules, start, 0, 0), rules.name
        values = {
            pit: result.captured - negamax(rules, tuple(result.board), 1, 1)
            for pit, result in reference.move_results(list(start), 0, 0, rules).items()
        }
        for pit in range(3):
            assert row[f"first_move_{pit}_value"] == values.get(pit), (rules.name, pit)
        assert row["best_first_moves"] == sorted(pit for pit, value in values.items() if value == max(values.values()))


def test_the_verdict_matches_the_brute_force_at_every_cap(four: tuple[Atlas, Path]) -> None:
    """Each row's remoteness, longest line and what decides its value are the brute force's
    (tests/brute_remoteness.py) at the rule set's cap; the least cap from which the value no
    longer changes, and the values one ply either side, are the brute force's under each cap."""
    atlas, folder = four
    found = rows(folder / "reference")
    for rules in atlas.rule_sets():
        row, cap = found[rules.name], rules.ply_cap
        start = (reference.board_code(reference.start_board(rules)), 0, 0)
        truth = brute_force(rules, cap)
        hurry, longest = (None if lines == AT_CAP else lines for lines in (truth.hurry[start], truth.longest[start]))
        assert (row["remoteness"], row["longest_line"]) == (hurry, longest), rules.name
        value = truth.value[start]
        assert row["decided_by"] == ("play" if (hurry if value else longest) is not None else "cap"), rules.name
        by_cap = {c: brute_force(rules, c).value[start] for c in range(1, cap + 2)}
        assert (row["value_cap_one_less"], row["value_cap_one_more"]) == (by_cap[cap - 1], by_cap[cap + 1]), rules.name
        assert row["stable_from_cap"] == min(c for c in range(1, cap + 1) if all(by_cap[d] == value for d in range(c, cap + 1)))
    assert {row["decided_by"] for row in found.values()} == {"play"}  # 4 stones, 16 plies: every game ends
    assert len({row["game_fingerprint"] for row in found.values()}) == len(found)


def test_random_play_matches_the_sum_over_every_game(four: tuple[Atlas, Path]) -> None:
    atlas, folder = four
    found = rows(folder / "reference")
    for rules in atlas.rule_sets():
        row = found[rules.name]
        games = random_play(rules, tuple(reference.start_board(rules)), 0, 0)
        south = sum(chance for (margin, *_), chance in games.items() if margin > 0)
        draw = sum(chance for (margin, *_), chance in games.items() if margin == 0)
        plies = sum(chance * length for (_, length, _, _), chance in games.items())
        forced = sum(chance for (*_, fed, _), chance in games.items() if fed)
        blocked = sum(chance for (*_, slam), chance in games.items() if slam)
        assert row["random_first_player_score"] == pytest.approx(south + draw / 2, abs=TOLERANCE), rules.name
        assert row["random_draw"] == pytest.approx(draw, abs=TOLERANCE)
        assert row["random_mean_plies"] == pytest.approx(plies, abs=TOLERANCE)
        assert row["random_feeding_forced_fires"] == pytest.approx(forced, abs=TOLERANCE)
        assert row["random_grand_slam_blocked_fires"] == pytest.approx(blocked, abs=TOLERANCE)
    # The rules change the figures: feeding off never forces a feed, and a grand slam allowed is never blocked.
    assert all(found[name]["random_feeding_forced_fires"] == 0 for name in found if "feedingoff" in name)
    assert all(found[name]["random_grand_slam_blocked_fires"] == 0 for name in found if "slamallowed" in name)


def test_the_size_of_the_game_matches_a_breadth_first_search(four: tuple[Atlas, Path]) -> None:
    atlas, folder = four
    found = rows(folder / "reference")
    for rules in atlas.rule_sets()[::3]:  # RULES.md's, and feeding off with grand slams allowed
        positions, terminal, branching = reachable(rules)
        row = found[rules.name]
        assert (row["reachable_positions"], row["terminal_positions"]) == (positions, terminal), rules.name
        assert row["mean_branching"] == pytest.approx(branching, rel=1e-12)


@pytest.mark.parametrize("prefix", ["random", "greedy", "alphabeta4"])
def test_self_play_agrees_with_sampled_games_within_four_standard_errors(four: tuple[Atlas, Path], prefix: str) -> None:
    atlas, folder = four
    spec = SELF_PLAY_SPECS[prefix]
    found = rows(folder / "reference")
    for rules in atlas.rule_sets()[::3]:  # RULES.md's, and feeding off with grand slams allowed
        row = found[rules.name]
        games = engine.play_batch(
            SAMPLED_GAMES, spec, spec, rules=rules, seed=11, tables=engine.tables.positions.load_tables(rules, None)
        )
        score = np.where(games.score_south > games.score_north, 1.0, np.where(games.score_south == games.score_north, 0.5, 0.0))
        for sampled, exact in (
            (score, row[f"{prefix}_first_player_score"]),
            (games.plies.astype(float), row[f"{prefix}_mean_plies"]),
        ):
            error = sampled.std(ddof=1) / np.sqrt(len(sampled))
            assert abs(sampled.mean() - float(exact)) <= 4 * error + 1e-12, (rules.name, prefix, sampled.mean(), exact)


# ---------------------------------------------------------------------------------------------
# The same bytes, however it is run


def test_two_workers_give_the_bytes_of_one(small: tuple[Atlas, Path]) -> None:
    atlas, folder = small
    run_atlas(atlas, folder / "two-jobs", jobs=2, progress=False)
    assert (folder / "two-jobs" / "atlas.parquet").read_bytes() == (folder / "reference" / "atlas.parquet").read_bytes()


def test_a_killed_and_resumed_atlas_equals_an_uninterrupted_one(small: tuple[Atlas, Path]) -> None:
    atlas, folder = small
    out = folder / "killed"
    command = [sys.executable, "-m", "pipeline.cli", "atlas", "run", str(folder / "atlas.toml"), "--out", str(out), "--jobs", "1"]
    process = subprocess.Popen([*command, "--quiet"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    first = _first_row(out, process)
    process.send_signal(signal.SIGKILL)
    process.wait()
    # A row counts as done once its record is there; a row the kill caught before its record is
    # rightly computed again.
    done = [path.with_suffix(".parquet") for path in (out / "rows").glob("*.json")]
    written = {path.name: path.stat().st_mtime_ns for path in done}
    assert 1 <= len(written) < len(atlas.rule_sets()), "the run ended before it was killed"
    assert first.name in written
    run_atlas(atlas, out, jobs=1, progress=False)
    assert (out / "atlas.parquet").read_bytes() == (folder / "reference" / "atlas.parquet").read_bytes()
    assert {name: (out / "rows" / name).stat().st_mtime_ns for name in written} == written  # none computed twice


def _an_hour_a_row(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each rule set of a run takes an hour of its (hand-moved) clock."""
    clock, write = Clock(), atlas_module.write_row

    def written(directory: Path, analysis: Any) -> None:
        write(directory, analysis)
        clock.now += 3600

    monkeypatch.setattr(atlas_module, "time", clock)
    monkeypatch.setattr(atlas_module, "write_row", written)


def test_a_run_given_hours_starts_no_rule_set_after_them_and_the_next_run_goes_on(
    small: tuple[Atlas, Path], monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """`modiar atlas run --hours 1.5`, each rule set taking an hour: the first two start (at 0
    and 1 h) and are finished, the third would start at 2 h and does not. The run ends as a
    finished one does (manifest written, no STARTED mark left), and the next run completes it
    to the bytes of an uninterrupted one."""
    atlas, folder = small
    out = folder / "hours"
    _an_hour_a_row(monkeypatch)
    run_atlas(atlas, out, jobs=1, hours=1.5, progress=False)
    assert read_atlas_manifest(out)["done"] == 2 and len(atlas.rule_sets()) == 4
    assert "the run's time (--hours) is up with 2 rule sets left; run it again to go on" in caplog.text
    assert not list((out / "rows").glob("*.started"))
    monkeypatch.undo()
    run_atlas(atlas, out, jobs=1, progress=False)
    assert (out / "atlas.parquet").read_bytes() == (folder / "reference" / "atlas.parquet").read_bytes()


def test_a_task_taken_ahead_by_joblib_does_not_start_after_the_hours(
    small: tuple[Atlas, Path], monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """The same run when joblib takes all four tasks at the start, before the time is up: the
    task checks the time as it starts, so the third and fourth still do not run."""
    atlas, folder = small
    out = folder / "greedy"
    _an_hour_a_row(monkeypatch)
    monkeypatch.setattr(atlas_module, "Parallel", Greedy)
    run_atlas(atlas, out, jobs=1, hours=1.5, progress=False)
    assert read_atlas_manifest(out)["done"] == 2
    assert "the run's time (--hours) is up with 2 rule sets left; run it again to go on" in caplog.text
    assert not list((out / "rows").glob("*.started"))


def test_a_damaged_row_is_computed_again(small: tuple[Atlas, Path], caplog: pytest.LogCaptureFixture) -> None:
    atlas, folder = small
    out = folder / "damaged"
    shutil.copytree(folder / "reference", out)
    damaged = out / "rows" / f"{atlas.rule_sets()[1].name}.parquet"
    damaged.write_bytes(damaged.read_bytes()[:100])
    run_atlas(atlas, out, jobs=1, progress=False)
    assert f"the row {damaged} is missing or does not match its record" in caplog.text
    assert (out / "atlas.parquet").read_bytes() == (folder / "reference" / "atlas.parquet").read_bytes()


def test_a_row_kept_without_the_verdict_columns_is_completed_not_computed_again(
    small: tuple[Atlas, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A row written before the verdict columns (sealed, of this engine) still counts as done and
    shows in atlas.parquet with them null; the next run adds them, playing none of its games
    again, to the bytes of a row computed whole, its record keeping what the first analysis cost."""
    atlas, folder = small
    out = folder / "kept"
    shutil.copytree(folder / "reference", out)
    name = atlas.rule_sets()[2].name
    path = row_path(out, name)
    whole = pq.read_table(path)
    _keep_without_verdict(out, name, {"random": 5.0, "tables": 1.0, "solve": 2.0, "total": 8.0})
    assert rows_done(out) == [rules.name for rules in atlas.rule_sets()] and rows_incomplete(out) == [name]

    line = estimates.atlas(atlas, out, part=None, jobs=1, remote=False).line()
    assert line.startswith("atlas small: 1 kept rule set to complete with the verdict columns:")
    monkeypatch.setattr(atlas_module, "analyse", _never_called)
    run_atlas(atlas, out, jobs=1, progress=False)
    assert rows_incomplete(out) == []
    assert pq.read_table(path) == whole
    assert (out / "atlas.parquet").read_bytes() == (folder / "reference" / "atlas.parquet").read_bytes()
    seconds = read_json(row_path(out, name, ".json"), _identity(name))["costs"]["seconds"]
    assert seconds["random"] == 5.0 and {"supplement_tables", "verdict"} <= set(seconds)
    added = seconds["supplement_tables"] + seconds["verdict"]
    assert seconds["total"] == pytest.approx(8.0 + added)
    assert Analysis(name, {}, seconds).task_seconds == pytest.approx(added)  # what the bar says the task took
    costs = read_json(row_path(out, name, ".json"), _identity(name))["costs"]
    assert (costs["peak_bytes"], costs["peak_measure"]) == (1 << 30, None)  # the analysis's peak, as measured then


def test_a_kept_row_without_its_verdict_reads_back_with_it_null(small: tuple[Atlas, Path]) -> None:
    atlas, folder = small
    out = folder / "kept-null"
    shutil.copytree(folder / "reference", out)
    _keep_without_verdict(out, atlas.rule_sets()[0].name)
    atlas_module.gather_rows(out)  # as modiar atlas report does first
    atlas_module._write_manifest(out, atlas)
    table = read_atlas(out).to_pylist()
    assert [row["rules"] for row in table] == [rules.name for rules in atlas.rule_sets()]
    assert table[0]["decided_by"] is None and table[0]["game_fingerprint"] is None
    assert all(row["decided_by"] == "play" for row in table[1:])
    # A run completes the row and is killed before it writes atlas.parquet: the report gathers the verdict.
    name = atlas.rule_sets()[0].name
    for suffix in (".parquet", ".json"):
        shutil.copy(row_path(folder / "reference", name, suffix), row_path(out, name, suffix))
    atlas_module.gather_rows(out)
    assert read_atlas(out).to_pylist()[0]["decided_by"] == "play"


def _keep_without_verdict(directory: Path, name: str, seconds: dict[str, float] | None = None) -> None:
    """Rewrite the row of ``name`` as a run before the verdict columns wrote it, sealed, its
    record's seconds ``seconds`` if given."""
    path = row_path(directory, name)
    kept = parquet_bytes(pq.read_table(path).select(kept_schema().names))
    path.write_bytes(kept)
    record = read_json(row_path(directory, name, ".json"), _identity(name))
    record["row"] |= {"bytes": len(kept), "sha256": sha256(kept)}
    if seconds is not None:  # as an older record: its seconds, and a resident peak that does not say so
        record["costs"] |= {"seconds": seconds, "peak_bytes": 1 << 30, "peak_measure": None}
    write_json(row_path(directory, name, ".json"), record, _identity(name), indent=1)


def _identity(name: str) -> dict[str, str]:
    return {"kind": "atlas row", "rules": name, "engine": engine.ENGINE_VERSION}


def _never_called(*arguments: Any) -> None:
    raise AssertionError("a kept row was analysed again")


def test_a_dask_cluster_that_loses_a_worker_gives_the_bytes_of_a_local_run(small: tuple[Atlas, Path], tmp_path: Path) -> None:
    atlas, folder = small
    with _dask_cluster(tmp_path) as (address, workers):
        out = tmp_path / "dask"
        killer = threading.Thread(target=_kill_after_first_row, args=(out, workers[0]), daemon=True)
        killer.start()
        run_atlas(atlas, out, jobs=2, backend_name="dask", scheduler=address, progress=False)
        killer.join(timeout=60)
        assert workers[0].poll() is not None, "the worker was not killed"
    assert (out / "atlas.parquet").read_bytes() == (folder / "reference" / "atlas.parquet").read_bytes()


def _first_row(out: Path, process: subprocess.Popen[bytes], seconds: float = 120) -> Path:
    """The first row the run writes (its record is written after it: the row is done), waited for
    as an event: the file's appearance, or the run's end, which fails the test at once."""

    def rows() -> list[Path]:
        return sorted((out / "rows").glob("*.json")) if (out / "rows").exists() else []

    if not wait_until(lambda: bool(rows()) or process.poll() is not None, seconds):
        raise AssertionError(f"no row written within {seconds:.0f} s")
    if not rows():
        raise AssertionError(f"the run ended with status {process.returncode} before writing a row")
    return rows()[0].with_suffix(".parquet")


def _kill_after_first_row(out: Path, worker: subprocess.Popen[bytes]) -> None:
    _first_row(out, worker)
    worker.send_signal(signal.SIGKILL)
    worker.wait()


@contextlib.contextmanager
def _dask_cluster(folder: Path) -> Iterator[tuple[str, list[subprocess.Popen[bytes]]]]:
    """A real dask scheduler and two workers (no nanny: killing one kills the worker itself), on
    loopback, started with the dask command of this environment."""
    from distributed import Client

    dask = str(Path(sys.executable).parent / "dask")
    file = folder / "scheduler.json"
    quiet = {"stdout": subprocess.DEVNULL, "stderr": subprocess.DEVNULL}
    scheduler = ["scheduler", "--host", "127.0.0.1", "--port", "0", "--no-dashboard", "--scheduler-file", str(file)]
    processes = [subprocess.Popen([dask, *scheduler], **quiet)]  # type: ignore[call-overload]
    try:
        wait_until(file.exists, 60)
        address = json.loads(file.read_text())["address"]
        worker = [
            "worker",
            address,
            "--nthreads",
            "1",
            "--no-nanny",
            "--no-dashboard",
            "--host",
            "127.0.0.1",
            "--memory-limit",
            "2GB",
        ]
        workers = [subprocess.Popen([dask, *worker], **quiet) for _ in range(2)]  # type: ignore[call-overload]
        processes += workers
        with Client(address, timeout=30) as client:
            client.wait_for_workers(2, timeout=60)
        yield address, workers
    finally:
        for process in processes:
            process.kill()
            process.wait()


def test_a_rule_sets_estimate_is_what_the_kept_rows_alike_in_game_length_took(small: tuple[Atlas, Path], tmp_path: Path) -> None:
    """The first estimate of the whole grid assumed 170 s for every 7-stone rule set; the rule
    sets whose games run to the cap took 5 to 8 times that. Now a kept row's record says what a
    rule set like it costs: the same stones, sowing, capture rows and singletons."""
    atlas, folder = small
    kept = kept_costs(folder / "reference")
    assert sorted(kept) == sorted(rules.name for rules in atlas.rule_sets())
    assert all(cost.seconds > 0 and cost.peak_bytes and cost.unshared for cost in kept.values())
    seconds = {"modiar-min1": 1400.0, "modiar-min1-feedingoff": 1000.0, "modiar-min1-slamallowed": 900.0, "modiar": 300.0}
    recorded = {name: Cost(value) for name, value in seconds.items()}
    assert expected_seconds(engine.Rules(min_stones_to_play=1, grand_slam="no_capture"), recorded) == 1000.0
    assert expected_seconds(engine.Rules(feeding=False), recorded) == 300.0
    unlike = engine.Rules(capture_rows="own")  # nothing like it kept: the cost a position
    expected = COSTS.atlas_seconds_per_position * positions_of(unlike)
    assert expected_seconds(unlike, recorded) == pytest.approx(expected)
    copy = tmp_path / "copy"
    shutil.copytree(folder / "reference", copy)
    damaged = next(iter(sorted(kept)))
    (copy / "rows" / f"{damaged}.json").write_text("{}")  # not a sealed record: passed over
    assert sorted(kept_costs(copy)) == sorted(set(kept) - {damaged})


def test_a_worker_killed_for_memory_ends_the_run_in_one_line_keeping_what_came_before() -> None:
    """2026-12-03: a rule set sowing past the origin with one-row captures grew past 13 GB in a
    worker, the system killed it, and `modiar atlas run` ended in joblib's traceback."""
    from joblib.externals.loky.process_executor import TerminatedWorkerError

    from pipeline.runs.records import RecordError

    def results() -> Iterator[str]:
        yield "first row"
        raise TerminatedWorkerError("A worker process managed by the executor was unexpectedly terminated.")

    came = []
    with pytest.raises(RecordError, match=r"killed by the system, most likely for lack of memory.*fewer --jobs than 2$"):
        for result in atlas_module._surviving(results(), 2):  # type: ignore[arg-type]
            came.append(result)
    assert came == ["first row"]


@pytest.mark.skipif(not os.path.exists("/proc/self/statm"), reason="the peak is sampled from /proc")
def test_a_rule_sets_peak_counts_the_memory_the_system_cannot_take_back(tmp_path: Path) -> None:
    """2026-12-04: the solver's log went to files (engine.solver.layers._GrowingArray), whose pages
    the system writes out rather than kill the worker: the peak that rule sets alike are refused
    by counts the anonymous memory a worker holds, not those pages."""
    import mmap
    import time

    from pipeline.atlas import analyse

    size = 256 << 20
    with analyse.peak_memory(interval=0.01) as baseline:
        time.sleep(0.05)
    with open(tmp_path / "log", "wb+") as file, analyse.peak_memory(interval=0.01) as in_file:
        file.truncate(size)
        with mmap.mmap(file.fileno(), size, flags=mmap.MAP_SHARED) as shared:
            np.frombuffer(shared, np.uint8)[:] = 1  # every page resident
            time.sleep(0.1)
    with analyse.peak_memory(interval=0.01) as anonymous:
        held = np.ones(size, np.uint8)
        time.sleep(0.1)
    del held
    assert in_file.bytes - baseline.bytes < size // 4
    assert anonymous.bytes - baseline.bytes > size * 3 // 4
