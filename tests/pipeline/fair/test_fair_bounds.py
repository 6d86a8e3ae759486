"""The edges of ``modiar fair`` (pipeline.analysis.fairness, fair_run, fair_report): how many stones may be
moved, what a long search costs before it starts, a full disk, a rule set with no first move."""

from __future__ import annotations

import errno
import itertools

import polars as pl
import pytest
from matplotlib.figure import Figure
from polling import deadline

import pipeline.exact.cache
import pipeline.fair.run
from engine import Rules
from pipeline.analysis.fairness import starts_within, stones_moved
from pipeline.cli import main

THREE = Rules(stones_per_pit=3)


class Stopped(Exception):
    """Raised by a stand-in for run_fair: the command got as far as the work."""


def every_start(rules: Rules) -> list[tuple[int, ...]]:
    """Every board of the rule set's stones in the six pits, in lexicographic order, but its own
    start: stars and bars, apart from starts_within's walk."""
    stones, bars = rules.total_stones, 5
    boards = []
    for cuts in itertools.combinations(range(stones + bars), bars):
        edges = (-1, *cuts, stones + bars)
        boards.append(tuple(edges[pit + 1] - edges[pit] - 1 for pit in range(6)))
    return sorted(board for board in boards if stones_moved(board, rules.stones_per_pit) > 0)


@pytest.fixture
def stand_in(monkeypatch, capsys):
    """run_fair replaced by one that records its settings and what was printed before it, then stops."""
    seen: dict[str, object] = {}

    def run_fair(rules, *, moved, exact_within, jobs, quality, progress):
        seen.update(moved=moved, exact_within=exact_within, quality=quality, before=capsys.readouterr())
        raise Stopped

    monkeypatch.setattr(pipeline.fair.run, "run_fair", run_fair)
    return seen


@pytest.mark.parametrize("stones", [1, 2, 3])
def test_the_count_of_starts_is_the_list_of_starts_and_ends_at_the_most_stones_moved(stones):
    from pipeline.analysis.fairness import count_starts, most_moved

    rules = Rules(stones_per_pit=stones)
    every = every_start(rules)
    most = most_moved(rules)
    assert most == max(stones_moved(board, stones) for board in every) == 5 * stones  # all stones in one pit
    for moved in range(1, most + 2):
        expected = [board for board in every if stones_moved(board, stones) <= moved]
        assert starts_within(rules, moved) == expected, moved
        assert count_starts(rules, moved) == len(expected), moved


def test_starts_within_a_moved_count_beyond_the_stones_walks_only_the_starts():
    with deadline(30):
        found = starts_within(THREE, 10**20)
    assert found == every_start(THREE) and len(found) == 33_648


@pytest.mark.parametrize("moved", ["1000", "99999999999999999999"])
def test_fair_bounds_moved_by_the_stones_and_says_its_estimate_before_any_work(stand_in, tmp_path, moved):
    argv = ["fair", "--rules", THREE.name, "--moved", moved, "--out", str(tmp_path / "fair")]
    with pytest.raises(Stopped):
        main(argv)
    assert stand_in["moved"] == 15  # all 18 stones in one pit moves 15 of them
    before = stand_in["before"]
    assert f"--moved {moved} is more stones than {THREE.name} can move" in before.err and "using 15" in before.err
    assert before.err.count("\n") == 1
    assert before.out.startswith(f"fair {THREE.name}: 33,648 starts within 15 moved stones") and "about" in before.out


def test_fair_refuses_a_search_over_an_hour_without_yes(stand_in, tmp_path, capsys):
    argv = ["fair", "--rules", THREE.name, "--moved", "15", "--exact-within", "15", "--out", str(tmp_path / "fair")]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("modiar: error: fair modiar-stones3: ") and err.count("\n") == 1, err
    assert "over an hour; --yes runs it anyway" in err and "moved" not in stand_in
    with pytest.raises(Stopped):
        main([*argv, "--yes"])
    assert stand_in["exact_within"] == 15


@pytest.mark.parametrize("stones", [3, 4])
def test_fair_with_nine_or_more_stones_moved_writes_its_report(stones, tmp_path):
    out = tmp_path / "fair"
    rules = Rules(stones_per_pit=stones)
    assert main(["fair", "--rules", rules.name, "--moved", "9", "--quiet", "--out", str(out)]) == 0
    from pipeline.analysis.fairness import count_starts

    starts = pl.read_csv(out / "tables" / "starts.csv")
    assert starts.height == count_starts(rules, 9) and sorted(set(starts["moved"])) == list(range(1, 10))
    assert starts.filter(pl.col("pie_value").is_null()).height > 0  # starts where South cannot move
    assert (out / "figures" / "fair_values.svg").is_file()


def test_a_full_disk_while_fair_writes_its_report_names_the_report(tmp_path, monkeypatch, capsys):
    def disk_full(*args, **kwargs):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(Figure, "savefig", disk_full)
    out = tmp_path / "fair"
    assert main(["fair", "--rules", THREE.name, "--moved", "1", "--quiet", "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert err == f"modiar: error: cannot write the report to {out}: No space left on device\n"
    assert list(tmp_path.iterdir()) == []


def test_fair_without_a_first_move_says_why_there_is_no_pie_rule(tmp_path, capsys):
    out = tmp_path / "fair"
    assert main(["fair", "--rule", "stones_per_pit=1", "--moved", "1", "--quiet", "--out", str(out)]) == 0
    said = capsys.readouterr().out
    reason = "South has no legal first move (each pit holds 1 stone and a pit needs 2 to be played)"
    assert "None" not in said and f"no pie rule: {reason}" in said
    report = (out / "report.md").read_text()
    assert reason in report and "worth no first move" not in report


def test_the_fair_search_takes_as_many_exact_workers_as_the_memory_holds_not_a_refusal(monkeypatch, tmp_path):
    """The exact outcomes' workers are as many of --jobs as this machine's memory holds (at least
    one): on a small machine the default search runs with fewer, and its estimate says so."""
    rules = Rules()
    one = pipeline.exact.cache.worker_bytes(rules)
    monkeypatch.setattr(pipeline.exact.cache, "memory_bytes", lambda: one + one // 2)  # room for one worker
    monkeypatch.setattr(pipeline.fair.run, "exact_folder", lambda: tmp_path)  # every outcome to compute
    two = pipeline.fair.run.fair_estimate(rules, moved=2, exact_within=1, jobs=2)
    assert two.bytes < 2 * one and "give a smaller --moved" in two.smaller
    monkeypatch.setattr(pipeline.exact.cache, "memory_bytes", lambda: 4 * one)
    roomy = pipeline.fair.run.fair_estimate(rules, moved=2, exact_within=1, jobs=2)
    assert roomy.bytes >= 2 * one and roomy.seconds < two.seconds
