"""Up-front estimates (pipeline.estimates, issue 26): a run says what it will compute and how long it
will take on this machine before it starts; what this machine cannot hold is refused, and what
would take over an hour waits for --yes. Small rule sets, tiny runs: the hour is a patched rate."""

from __future__ import annotations

import pytest

import engine
from engine import Rules
from pipeline import estimates
from pipeline.cli import main
from pipeline.exact import cache as exact_cache
from pipeline.runs import progress

STUDY = 'name = "small"\nseed = 3\ngames_per_seat = 40\nstrategies = ["random", "greedy"]\n[rules]\nstones_per_pit = 3\n'
LADDER = 'name = "small"\nrungs = ["random"]\nopponents = ["greedy"]\n[rules]\nstones_per_pit = 3\nply_cap = 40\n'
ATLAS = 'name = "small"\n[grid]\nstones_per_pit = [2]\nsow_origin = [true, false]\n'


def one_line_error(capsys) -> str:
    err = capsys.readouterr().err
    assert err.startswith("modiar: error: ") and err.count("\n") == 1, err
    return err


@pytest.fixture
def configs(tmp_path, cache, monkeypatch):
    """The three configs in a folder of their own, and a cache folder of the test's own for modiar
    (whose main sets the engine's; the cache fixture sets it back)."""
    monkeypatch.setenv("MODIAR_CACHE", str(cache))
    for name, text in (("study", STUDY), ("ladder", LADDER), ("atlas", ATLAS)):
        (tmp_path / f"{name}.toml").write_text(text)
    return tmp_path


def run(configs, command: str, *options: str) -> list[str]:
    return [command, "run", str(configs / f"{command}.toml"), "--out", str(configs / command), "--jobs", "1", *options]


@pytest.mark.parametrize(
    ("command", "line"),
    [
        ("study", "study small: 160 games to play, the caches of 1 rule set to build, 0 exact outcomes to compute: about "),
        ("ladder", "ladder small: 3 exact outcomes and 1 exploitability to compute: about "),
        ("atlas", "atlas small: 2 rule sets to analyse: about "),
    ],
)
def test_a_long_run_prints_one_line_of_what_it_computes_and_its_estimate_before_it_starts(configs, capsys, command, line):
    assert main(run(configs, command)) == 0
    first, *_ = capsys.readouterr().out.splitlines()
    assert first.startswith(line) and first.endswith(" of memory on this machine")


def test_what_is_already_done_is_free_in_the_estimate(configs, capsys):
    assert main(run(configs, "study", "--quiet")) == 0
    capsys.readouterr()
    assert main(run(configs, "study")) == 0
    first = capsys.readouterr().out.splitlines()[0]
    assert first.startswith("study small: 0 games to play of its 160, the caches of 0 rule sets to build")


@pytest.mark.parametrize(
    "arguments",
    [
        ["sample", "--rules", "modiar-stones3", "--games", "100", "--quiet"],
        ["show", "--rules", "modiar-stones3"],
        ["play", "--rules", "modiar-stones3", "--south", "greedy"],
        ["exact", "random", "random", "--rules", "modiar-stones3", "--quiet"],
        ["solve", "--stones", "3"],
        ["bench", "--seconds", "1"],
        ["study"],
        ["ladder"],
        ["atlas"],
    ],
    ids=lambda arguments: arguments[0],
)
def test_a_run_estimated_over_an_hour_needs_yes_and_starts_nothing_without_it(configs, capsys, monkeypatch, arguments):
    monkeypatch.setattr(estimates, "LONG_SECONDS", 0.0)  # every run is now "over an hour"
    if arguments[0] in ("study", "ladder", "atlas"):
        arguments = run(configs, arguments[0], "--quiet")
    assert main(arguments) == 2
    assert one_line_error(capsys).endswith(" on this machine, over an hour; --yes runs it anyway\n")
    assert sorted(path.name for path in configs.iterdir()) == ["atlas.toml", "ladder.toml", "study.toml"]  # nothing built


def test_yes_runs_what_is_estimated_over_an_hour(configs, capsys, monkeypatch):
    monkeypatch.setattr(progress, "SCALAR_GAME", 3600.0)  # a game that takes an hour
    sample = ["sample", "--rules", "modiar-stones3", "--games", "100", "--quiet"]
    assert main(sample) == 2
    assert "100 games of random against random under modiar-stones3 would take about 4.2 days" in one_line_error(capsys)
    assert main([*sample, "--yes"]) == 0
    assert "100 games: random (South) against random (North)" in capsys.readouterr().out


def test_sample_of_a_trillion_games_is_refused_naming_the_memory_it_needs(capsys):
    """Issue 26: it died in numpy's ArrayMemoryError."""
    assert main(["sample", "--games", "1000000000000", "--quiet"]) == 2
    err = one_line_error(capsys)
    assert "1,000,000,000,000 games of random against random under modiar needs about 2.7 PiB of memory" in err
    assert err.rstrip().endswith("; play fewer --games")


def test_a_run_this_machine_cannot_hold_is_refused_before_anything_is_written(configs, capsys, monkeypatch):
    monkeypatch.setattr(estimates, "memory_bytes", lambda: 1 << 20)
    for command in ("study", "ladder"):
        assert main(run(configs, command, "--quiet")) == 2
        assert "of memory and this machine has 1.0 MiB" in one_line_error(capsys)
        assert not (configs / command).exists()
    assert main(["exact", "random", "random", "--rules", "modiar-stones3"]) == 2
    assert "the exact outcome of random against random under modiar-stones3 needs about" in one_line_error(capsys)


@pytest.mark.parametrize(
    "arguments",
    [
        ["sample", "--south", "alphabeta(depth=1000)"],
        ["show", "--rule", "ply_cap=10", "--north", "alphabeta(depth=11)"],
        ["exact", "alphabeta(depth=401)", "random"],
    ],
)
def test_a_search_deeper_than_the_ply_cap_is_refused_where_the_rules_are_known(capsys, arguments):
    assert main(arguments) == 2
    assert "already searches to the end of every game" in one_line_error(capsys)


def test_a_study_that_searches_deeper_than_its_ply_cap_is_refused(configs, capsys):
    (configs / "study.toml").write_text(STUDY.replace('"greedy"]', '"alphabeta(depth=50)"]') + "ply_cap = 40\n")
    assert main(run(configs, "study", "--quiet")) == 2
    assert "alphabeta(depth=50) searches deeper than the 40-ply cap of modiar-stones3-cap40" in one_line_error(capsys)


@pytest.mark.parametrize(
    ("seconds", "said"),
    [(0, "1 s"), (59, "59 s"), (150, "2.5 min"), (3600, "1.0 h"), (86400 * 40, "40 days"), (1e300, "more than a century")],
)
def test_durations_read_as_people_say_them(seconds, said):
    assert estimates.duration(seconds) == said


def test_the_cost_of_a_10000_ply_search_is_a_number_not_an_overflow():
    """1.8 ** 10_000 overflows a float: the progress bar and the estimate of a deep search did."""
    seconds = progress.scalar_game_seconds("alphabeta(depth=10000)", "random")
    assert 1e9 < seconds < float("inf")
    deep = estimates.sample("alphabeta(depth=10000)", "random", 2, engine.Rules(ply_cap=10_000))
    assert estimates.about(deep.seconds) == "more than a century"


def test_the_workers_exact_outcomes_may_use_follow_the_size_of_the_rule_set(monkeypatch):
    """Two of perfect's dials under RULES.md take up to 6.6 GB a worker, a 3-stone rule set a
    sliver of it: a machine of 8 GiB runs one worker for the first, two for the second."""
    monkeypatch.setattr(exact_cache, "memory_bytes", lambda: 8 << 30)
    assert exact_cache.exact_jobs(2) == 1
    assert exact_cache.exact_jobs(2, [Rules(stones_per_pit=3)]) == 2
    # 134,596 positions of 12.3 M
    assert exact_cache.worker_bytes(Rules(stones_per_pit=3)) < exact_cache.worker_bytes(Rules()) // 50
