"""Up-front estimates (pipeline.estimates): a run says what it will compute and how long it will
take on this machine before it starts; what this machine cannot hold is refused, and what would
take over an hour waits for --yes. Small rule sets, tiny runs: the hour is a patched rate.

Every rate and size comes from one file, pipeline/costs.toml (pipeline.runs.costs): read whole or
refused in one line, each entry read by some estimate, and rewritten by bench entry by entry."""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

import pytest

import engine
from engine import Rules
from engine.players import engine_strategy
from pipeline import estimates
from pipeline.cli import main
from pipeline.exact import cache as exact_cache
from pipeline.runs import calibration, costs, progress
from pipeline.runs.costs import COSTS, COSTS_FILE, CostError, read_costs, rewrite_costs
from pipeline.runs.estimate import about, duration
from pipeline.runs.paths import ROOT, STUDIES
from pipeline.study.config import load_study

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
    monkeypatch.setattr(progress, "COSTS", dataclasses.replace(COSTS, scalar_game_seconds=3600.0))  # a game that takes an hour
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
    assert duration(seconds) == said


def test_the_cost_of_a_10000_ply_search_is_a_number_not_an_overflow():
    """1.8 ** 10_000 overflows a float: the progress bar and the estimate of a deep search did."""
    seconds = progress.scalar_game_seconds("alphabeta(depth=10000)", "random")
    assert 1e9 < seconds < float("inf")
    deep = estimates.sample("alphabeta(depth=10000)", "random", 2, engine.Rules(ply_cap=10_000))
    assert about(deep.seconds) == "more than a century"


def test_the_workers_exact_outcomes_may_use_follow_the_size_of_the_rule_set(monkeypatch):
    """Two of perfect's dials under RULES.md take up to 6.6 GB a worker, a 3-stone rule set a
    sliver of it: a machine of 8 GiB runs one worker for the first, two for the second."""
    monkeypatch.setattr(exact_cache, "memory_bytes", lambda: 8 << 30)
    assert exact_cache.exact_jobs(2) == 1
    assert exact_cache.exact_jobs(2, [Rules(stones_per_pit=3)]) == 2
    # 134,596 positions of 12.3 M
    assert exact_cache.worker_bytes(Rules(stones_per_pit=3)) < exact_cache.worker_bytes(Rules()) // 50


@pytest.mark.parametrize("spec", ["random", "greedy", "heuristic", "alphabeta(depth=4)", "mcts(playouts=100)", "perfect"])
def test_a_strategy_costs_what_its_work_does_at_the_files_rates(spec):
    """The engine says a strategy's work (mcts's playouts, alphabeta's depth), the cost file its
    rate: in a batch only a search adds to a game; through engine.play_game every search does."""
    searches = engine_strategy(spec).searches
    assert (progress.strategy_seconds(spec, batched=True) > 0) is searches
    assert progress.strategy_seconds(spec) >= 0
    assert progress.strategy_seconds("alphabeta(depth=6)") > progress.strategy_seconds("alphabeta(depth=2)")


def test_the_default_study_from_an_empty_cache_is_estimated_near_what_make_study_took(cache):
    """make study from an empty cache on the 2-core development machine: 13 min 20 s (caches 32 to
    46 s, the games 2 min 53 s, the exact outcomes 8 min 46 s, the report 31 s, which study run
    leaves out); its exact outcomes begin with two dials' self-play at once, which held 10.1 GiB
    of the machine together (5.1 and 5.6 GiB each). Each within 30 %."""
    estimate = estimates.study(load_study(STUDIES / "default.toml"), cache / "default", jobs=2, remote=False)
    assert 0.7 * 800 <= estimate.seconds <= 1.3 * 800, estimate.line()
    assert 0.7 * 10.1 * 2**30 <= estimate.bytes <= 1.3 * 10.1 * 2**30, estimate.line()


def test_the_cost_file_is_read_whole_and_every_entry_is_used():
    assert read_costs() == COSTS
    names = [field.name for field in dataclasses.fields(COSTS)]
    assert set(re.findall(r"^([a-z_0-9]+)\s*=", COSTS_FILE.read_text(), re.MULTILINE)) == set(names)
    code = "\n".join(
        path.read_text()
        for folder in ("engine", "pipeline")
        for path in (ROOT / folder).rglob("*.py")
        if path != Path(costs.__file__)
    )
    unused = [name for name in names if not re.search(rf"\bCOSTS\.{name}\b", code)]
    assert unused == []


@pytest.mark.parametrize(
    ("change", "said"),
    [
        (lambda text: re.sub(r"^chunk_bytes = .*\n", "", text, flags=re.MULTILINE), "lacks the entry chunk_bytes"),
        (lambda text: text + "warp_factor = 9\n", "has an entry no estimate reads: warp_factor"),
        (
            lambda text: text.replace("chunk_bytes = 1_200", 'chunk_bytes = "big"'),
            "chunk_bytes = 'big': a cost is a number above 0",
        ),
        (lambda text: text.replace("chunk_bytes = 1_200", "chunk_bytes = -1"), "chunk_bytes = -1: a cost is a number above 0"),
        (lambda text: text.replace("chunk_bytes = 1_200", "chunk_bytes = 1.5"), "chunk_bytes = 1.5: bytes are a whole number"),
        (
            lambda text: text.replace("chunk_bytes = 1_200", "chunk_bytes = true"),
            "chunk_bytes = True: a cost is a number above 0",
        ),
        (lambda text: text.replace("chunk_bytes = 1_200", "chunk_bytes ="), "is not TOML"),
    ],
    ids=["missing", "unknown", "text", "negative", "fraction", "bool", "broken"],
)
def test_a_missing_or_bad_entry_is_one_line_that_names_it(tmp_path, change, said):
    path = tmp_path / "costs.toml"
    path.write_text(change(COSTS_FILE.read_text()))
    with pytest.raises(CostError) as raised:
        read_costs(path)
    assert said in str(raised.value) and str(path) in str(raised.value) and "\n" not in str(raised.value)


def test_bench_rewrites_what_it_measured_and_keeps_every_other_line(tmp_path):
    path = tmp_path / "costs.toml"
    path.write_text(COSTS_FILE.read_text())
    before = path.read_text().splitlines()
    changed = rewrite_costs({"table_seconds_per_position": 1.234567e-6, "exact_worker_bytes": 6e9}, path)
    assert {name: new for name, (_, new) in changed.items()} == {
        "table_seconds_per_position": "1.23e-06",
        "exact_worker_bytes": "6_000_000_000",
    }
    after = path.read_text().splitlines()
    rewritten = [k for k, (old, new) in enumerate(zip(before, after, strict=True)) if old != new]
    assert [after[k].split(" = ")[0] for k in rewritten] == ["table_seconds_per_position", "exact_worker_bytes"]
    assert all(after[k].split("  #")[1:] == before[k].split("  #")[1:] for k in rewritten)  # their comments kept
    written = read_costs(path)
    assert (written.table_seconds_per_position, written.exact_worker_bytes) == (1.23e-6, 6_000_000_000)
    kept = {"table_seconds_per_position": COSTS.table_seconds_per_position, "exact_worker_bytes": COSTS.exact_worker_bytes}
    assert dataclasses.replace(written, **kept) == COSTS


@pytest.mark.parametrize("measured", [{"warp_factor": 1.0}, {"chunk_bytes": 0.0}, {"table_growth": float("nan")}])
def test_a_rewrite_that_would_not_read_back_writes_nothing(tmp_path, measured):
    path = tmp_path / "costs.toml"
    path.write_text(COSTS_FILE.read_text())
    with pytest.raises(CostError):
        rewrite_costs(measured, path)
    assert path.read_text() == COSTS_FILE.read_text()


def test_bench_rewrites_the_entries_the_file_says_it_measures():
    marked = re.findall(r"^([a-z_0-9]+) = [^#\n]*# bench", COSTS_FILE.read_text(), re.MULTILINE)
    assert sorted(calibration.WRITTEN) == sorted(marked)


def test_bench_makes_each_entry_from_its_lines_figures():
    """mcts against random: its games a second times 8 searched moves of its playouts; the slowdown
    is the exponent that takes mcts(playouts=100)'s rate a playout to mcts(playouts=1000)'s."""
    measured = calibration.mcts_costs({100: (1000.0, 5.0), 1000: (50.0, 0.5)})
    assert measured["mcts_batched_playouts_per_second"] == pytest.approx(800_000)
    assert measured["mcts_playouts_per_second"] == pytest.approx(4_000)
    assert 800_000 / 10 ** measured["mcts_batched_slowdown"] == pytest.approx(50.0 * 8 * 1000)
    exact = {"random": (45.0, 3e9), "perfect(epsilon=0.1)": (100.0, 5e9), "perfect(temperature=1.0)": (140.0, 6e9)}
    exact |= {
        spec: (seconds, 1e9)
        for spec, seconds in (("greedy", 0.4), ("heuristic", 0.1), ("alphabeta(depth=4)", 0.4), ("perfect", 0.5))
    }
    assert calibration.exact_costs(exact) == {
        "exact_cycling_seconds": 120.0,
        "exact_wide_pair_seconds": 45.0,
        "exact_narrow_seconds": 0.5,
        "exact_worker_bytes": 6e9,
    }
