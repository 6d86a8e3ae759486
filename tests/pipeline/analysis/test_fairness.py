"""The fairness search (pipeline.analysis.fairness, ``modiar fair``): starts, the pie rule and komi.

The pie rule and komi are derived from the first moves' values (pipeline.analysis.fairness's
docstring); here they are checked against a brute-force search over every game of two small
rule sets, written apart from the solver: the pie rule as a game in which North may swap after
South's first move, komi as a game won, drawn or lost on the final margin plus the komi.
"""

from __future__ import annotations

import functools
import math
import subprocess
import sys

import polars as pl
import pytest
from locations import ROOT

import engine
import pipeline.analysis.fairness
from engine import Rules, pack
from engine.game.board import NORTH, SOUTH, row_stones
from engine.game.options import positions
from engine.solver import verdict
from pipeline.analysis.fairness import balance, pareto_front, start_table, starts_within, stones_moved
from pipeline.report.folder import check_published

# Two small rule sets whose every game a brute force walks in a second: one drawn under perfect
# play, one the second player wins.
SMALL = [Rules(stones_per_pit=2, ply_cap=14), Rules(stones_per_pit=3, ply_cap=16, feeding=False)]


def _brute(rules: Rules):
    """Every game of ``rules`` walked through the scalar engine: the final margin (South's total
    minus North's) under a payoff South maximises and North minimises, from any board and ply."""
    memo = positions(rules)

    @functools.cache
    def best(board: int, ply: int, margin: int, payoff) -> float:
        options = memo.options(board, ply) if ply < rules.ply_cap else ()
        sign = 1 if ply % 2 == 0 else -1  # the board is seen by the mover: South at even plies
        if not options:
            return payoff(margin + sign * (row_stones(board, SOUTH) - row_stones(board, NORTH)))
        found = [best(option.child, ply + 1, margin + sign * option.captured, payoff) for option in options]
        return max(found) if ply % 2 == 0 else min(found)

    return memo, best


def _margin(final: int) -> float:
    return final


@pytest.mark.parametrize("rules", SMALL, ids=lambda rules: rules.name)
def test_komi_decides_the_game_as_the_value_plus_the_komi(rules):
    """A game won (1), drawn (1/2) or lost (0) on the final margin plus a komi k, searched over
    every game: its result is the sign of V + k, so k = -V draws and half-stone komi decides."""
    memo, best = _brute(rules)
    value = engine.solve(rules, cache=None, progress=False).start_value()
    assert best(memo.start, 0, 0, _margin) == value  # the brute force agrees with the solver
    komi = balance(value, []).komi
    assert komi == -value
    for shift in (-1.5, -1, -0.5, 0, 0.5, 1, 1.5):
        k = komi + shift
        result = best(memo.start, 0, 0, lambda final, k=k: 0.5 * (1 + math.copysign(1, final + k)) if final + k else 0.5)
        assert result == (1.0 if value + k > 0 else 0.5 if value + k == 0 else 0.0), k


@pytest.mark.parametrize("rules", SMALL, ids=lambda rules: rules.name)
def test_the_pie_rule_value_is_minus_the_least_first_move_value_in_size(rules):
    """The pie rule searched by hand: after each first move (built with apply_move at ply 0) North
    either plays on as North or takes South's side, then the game is played out perfectly."""
    memo, best = _brute(rules)
    start = memo.start
    values = []
    for option in memo.options(start, 0):
        # South's final margin if North plays on; if North swaps, North gets that margin.
        kept = best(option.child, 1, option.captured, _margin)
        values.append(kept)
        assert engine.apply_move(start, SOUTH, option.pit, 0, rules).board == engine.rotate(option.child)
    pie = max(min(v, -v) for v in values)  # North keeps the better seat for itself
    solution = engine.solve(rules, cache=None, progress=False)
    found = balance(solution.start_value(), list(solution.move_values(start, SOUTH, 0)))
    assert found.pie_value == pie
    assert list(solution.move_values(start, SOUTH, 0)) == values


def test_starts_within_one_and_two_stones_of_the_standard_start():
    """One stone moved: from any of 6 pits to any of the 5 others, 30 starts. Two: a surplus of
    2 in one pit (6) with a deficit of 2 in another (5) or of 1 in two others (10), 90; or a
    surplus of 1 in two pits (15) with a deficit of 2 in one of the other 4 or 1 in two (10),
    150: 240 more."""
    assert len(starts_within(Rules(), 1)) == 30
    within_two = starts_within(Rules(), 2)
    assert len(within_two) == 270
    assert sum(stones_moved(counts, 7) == 2 for counts in within_two) == 240
    assert (7, 7, 7, 7, 7, 7) not in within_two and (6, 7, 8, 7, 7, 7) in within_two
    with pytest.raises(ValueError, match="1 or more"):
        starts_within(Rules(), 0)


def test_the_start_table_holds_the_solvers_values_and_ranks_the_fair_starts():
    rules = Rules(stones_per_pit=3)
    solution = engine.solve(rules, progress=False)
    table = start_table(rules, solution, engine.remoteness(rules, progress=False), moved=2)
    assert table.height == len(starts_within(rules, 2))
    for row in table.sample(20, seed=1).iter_rows(named=True):
        board = pack([row[f"pit_{pit}"] for pit in range(6)])
        assert row["value"] == solution.value(board, SOUTH, 0)
        assert row["komi"] == -row["value"]
        assert (row["natural_rank"] is not None) == (row["value"] == 0)
    fair = table.filter(pl.col("value") == 0).sort("natural_rank")
    assert fair["natural_rank"].to_list() == list(range(1, fair.height + 1))
    assert fair["moved"].is_sorted()  # fewest stones moved first
    assert (fair["pie_value"] == 0).all()  # a fair start has a first move worth 0


def test_the_pareto_front_keeps_the_rows_no_other_row_beats_on_every_column():
    frame = pl.DataFrame({"a": [1.0, 2.0, 0.5, 3.0, None], "b": [2.0, 1.0, 2.5, 3.0, 0.0]})
    # Distances from (1, 1): row 0 (0, 1), row 1 (1, 0), row 2 (0.5, 1.5) dominated by row 0,
    # row 3 (2, 2) dominated, row 4 has a null: off.
    assert pareto_front(frame, {"a": 1.0, "b": 1.0}, ["a", "b"]).to_list() == [True, True, False, False, False]


def test_modiar_fair_writes_its_report_and_refuses_bad_input_in_one_line(tmp_path):
    out = tmp_path / "fair"
    command = [sys.executable, "-m", "pipeline.cli", "fair", "--rules", "modiar-stones3", "--moved", "1", "--quiet"]
    done = subprocess.run([*command, "--out", str(out)], capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    assert "of 30 starts with 1 stone moved are fair under perfect play" in done.stdout
    starts = pl.read_csv(out / "tables" / "starts.csv")
    assert starts.height == 30
    assert (out / "index.html").is_file() and (out / "figures" / "fair_one_stone.svg").is_file()
    for bad, words in [(["--moved", "0"], "--moved is 1 or more"), (["--exact-within", "3"], "--exact-within is from 0")]:
        done = subprocess.run([*command[:-3], *bad, "--out", str(tmp_path / "bad")], capture_output=True, text=True, check=False)
        assert done.returncode == 2 and words in done.stderr and "Traceback" not in done.stderr


def test_the_atlas_balance_and_fair_front_come_from_its_columns():
    frame = pl.DataFrame(
        {
            "rules": ["a", "b", "c", "d"],
            "start_value": [-2, 0, 0, 4],
            "first_move_0_value": [-2, 0, -6, 4],
            "first_move_1_value": [-4, -2, 0, None],
            "first_move_2_value": [-8, None, -2, 6],
            "perfect_mean_plies": [22.0, 30.0, 25.0, 18.0],
            "random_feeding_forced_fires": [0.04, 0.05, 0.04, 0.1],
            "random_grand_slam_blocked_fires": [0.4, 0.4, 0.39, 0.2],
            "never_settled": [100, 100, 120, 0],
        }
    )
    balances = pipeline.analysis.fairness.balance_table(frame)
    assert balances["pie_value"].to_list() == [-2, 0, 0, -4]  # -min |v| over the legal first moves
    assert balances["komi"].to_list() == [2, 0, 0, -4]
    front = pipeline.analysis.fairness.fair_rule_set_front(frame, "a")
    assert front["rules"].to_list() == ["b", "c"]
    # b: (8, 0.01, 0, 0) from a; c: (3, 0, 0.01, 20): neither beats the other on every column
    assert front["pareto"].to_list() == [True, True]
    # Once verdicts are known, a rule set fair only at the cap (c), or not known yet, is no fair rule set of the front.
    decided = frame.with_columns(pl.Series("decided_by", ["play", "play", "cap", None]))
    front = pipeline.analysis.fairness.fair_rule_set_front(decided, "a")
    assert front["rules"].to_list() == ["b"] and front["pareto"].to_list() == [True]


# ---------------------------------------------------------------------------------------------
# The published fairness search (reports/fair/, committed): it cannot drift from the code.

PUBLISHED = ROOT / "reports" / "fair"


@pytest.mark.parametrize("folder", ["modiar", "modiar-exact-within-1", "modiar-exact-within-1-quality"])
def test_the_published_fair_search_is_the_engines(folder):
    published = PUBLISHED / folder
    manifest = check_published(published)  # every file as it was published
    assert manifest["engine"] == engine.ENGINE_VERSION, "the engine changed: run make fair and make fair-exact again"
    rules = Rules.from_name(manifest["rules"])
    solution = engine.solve(rules, progress=False)
    starts = pl.read_csv(published / "tables" / "starts.csv")
    assert starts.height == len(starts_within(rules, manifest["moved"]))
    for row in starts.sample(30, seed=7).iter_rows(named=True):
        board = pack([row[f"pit_{pit}"] for pit in range(6)])
        assert row["value"] == solution.value(board, SOUTH, 0), row["start"]
    own = pl.read_csv(published / "tables" / "balance.csv").row(0, named=True)
    start = engine.start_board(rules)
    expected = balance(solution.start_value(), list(solution.move_values(start, SOUTH, 0)))
    assert (own["value"], own["pie_value"], own["komi"]) == (expected.value, expected.pie_value, expected.komi)


@pytest.mark.slow  # the remoteness of RULES.md's rules takes 75 s to build the first time
@pytest.mark.parametrize("folder", ["modiar", "modiar-exact-within-1", "modiar-exact-within-1-quality"])
def test_the_published_fair_starts_verdicts_are_the_engines(folder):
    published = PUBLISHED / folder
    rules = Rules.from_name(check_published(published)["rules"])
    solution, lines = engine.solve(rules, progress=False), engine.remoteness(rules, progress=False)
    starts = pl.read_csv(published / "tables" / "starts.csv")
    for row in starts.sample(30, seed=7).iter_rows(named=True):
        board = pack([row[f"pit_{pit}"] for pit in range(6)])
        found = verdict(solution, lines, board)  # what decides it, and how long perfect play lasts
        assert (row["remoteness"], row["longest_line"], row["decided_by"]) == (found.remoteness, found.longest, found.decided_by)
        assert (row["stable_from_cap"], row["value_cap_one_less"], row["value_cap_one_more"]) == (
            found.stable_from,
            found.value_one_less,
            found.value_one_more,
        )


@pytest.mark.slow
def test_the_published_exact_play_from_the_most_natural_fair_start_is_the_engines():
    published = PUBLISHED / "modiar-exact-within-1"
    starts = pl.read_csv(published / "tables" / "starts.csv").filter(pl.col("natural_rank") == 1).row(0, named=True)
    board = pack([starts[f"pit_{pit}"] for pit in range(6)])
    outcome = engine.exact_outcome("random", "random", start=board)
    assert starts["random_first_player_score"] == pytest.approx(outcome.first_player_score, abs=1e-12)
    assert starts["random_mean_plies"] == pytest.approx(outcome.mean_plies, abs=1e-9)
