"""Where players err (pipeline.analysis.errors): each recorded move judged by the solution, and
each game's quality measures, whose means over sampled games agree with engine.exact_quality."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest

import engine
from engine import Rules
from engine.exact import MEASURES, exact_quality
from pipeline.analysis.errors import JUDGED_COLUMNS, game_quality, judged_plies, quality_estimates
from pipeline.runs.records import games_table

FOUR = Rules(stones_per_pit=4)


def _games(south: str, north: str, count: int, rules: Rules, seed: int = 7) -> pl.DataFrame:
    batch = engine.play_batch(count, south, north, rules=rules, seed=seed)
    return pl.from_arrow(games_table(batch, study="quality", first_id=0))  # type: ignore[return-value]


def test_every_judged_move_chains_from_the_start_value_to_the_final_margin() -> None:
    """In random games of the 3-stone variant: the first forecast is the start's value, the
    forecast after a move is the next move's before, a loss is never negative and a mistake is
    a loss, and the forecast after the last move is the recorded final margin."""
    rules = Rules(stones_per_pit=3)
    games = _games("random", "random", 200, rules)
    judged = judged_plies(games, engine.solve(rules, progress=False))
    assert set(JUDGED_COLUMNS) <= set(judged.columns)
    assert (judged["loss"] >= 0).all()
    assert (judged["mistake"] == (judged["loss"] > 0)).all()
    following = judged.with_columns(pl.col("forecast_before").shift(-1).over("game_id").alias("next"))
    inner = following.filter(pl.col("next").is_not_null())
    assert (inner["forecast_after"] == inner["next"]).all()
    start = judged.filter(pl.col("ply") == 0)
    assert (start["forecast_before"] == engine.solve(rules, progress=False).start_value()).all()
    last = judged.group_by("game_id").agg(pl.col("forecast_after").last()).sort("game_id")
    finals = games.sort("game_id").select((pl.col("score_south") - pl.col("score_north")).cast(pl.Int64).alias("final"))
    assert last["forecast_after"].to_list() == finals["final"].to_list()


def test_perfect_self_play_games_measure_what_the_exact_quality_says() -> None:
    """Perfect self-play of the 3-stone variant: every game's measures average to the exact ones
    (a game's forecast never moves: no lead change, no stone lost)."""
    rules = Rules(stones_per_pit=3)
    games = _games("perfect", "perfect", 20, rules)
    per_game = game_quality(games, engine.solve(rules, progress=False))
    exact = exact_quality("perfect", "perfect", rules=rules).as_dict()
    for name in MEASURES:
        assert per_game[name].mean() == pytest.approx(exact[name]), name
    assert exact["lead_changes"] == 0 and exact["stones_lost_south"] == 0


PAIRS = [("random", "random"), ("perfect(temperature=1.0)", "random"), ("greedy", "heuristic")]


@pytest.mark.parametrize(("south", "north"), PAIRS)
def test_sampled_quality_agrees_with_the_exact_quality(south: str, north: str) -> None:
    games = _games(south, north, 20_000, FOUR)
    estimates = quality_estimates(game_quality(games, engine.solve(FOUR, progress=False))).row(0, named=True)
    exact = exact_quality(south, north, rules=FOUR).as_dict()
    _within(estimates, exact, 4.5)


def _within(estimates: dict[str, float], exact: dict[str, float], z: float) -> None:
    for name in MEASURES:
        se = estimates[f"{name}_se"]
        if se == 0:
            assert estimates[name] == pytest.approx(exact[name], abs=1e-9), name
        else:
            assert abs(estimates[name] - exact[name]) <= z * se, (name, estimates[name], exact[name], se)


@pytest.mark.slow
@pytest.mark.parametrize("strategy", ["random", "perfect(temperature=1.0)"])
def test_200000_games_under_the_rules_agree_with_the_exact_quality(strategy: str) -> None:
    """The issue's check: 200,000 self-play games under RULES.md, every measure within 4.5
    standard errors of engine.exact_quality."""
    rules = Rules()
    games = _games(strategy, strategy, 200_000, rules, seed=2026)
    estimates = quality_estimates(game_quality(games, engine.solve(rules, progress=False))).row(0, named=True)
    _within(estimates, exact_quality(strategy, strategy, rules=rules).as_dict(), 4.5)
    assert np.isfinite(estimates["lead_changes"])
