"""Ludii's state-evaluation metrics and their calibration (pipeline.analysis.calibration_ludii):
hand-worked trials as Ludii defines the metrics and as its code computes them, the exact
evaluator's lead changes beside pipeline.analysis.errors, the evaluators' values of a state, and
a small run end to end."""

from __future__ import annotations

import math

import numpy as np
import polars as pl
import pytest

import engine
from engine import Rules
from engine.tables import first_moves, kept_tables
from pipeline.analysis.calibration_ludii import (
    EXACT,
    EXACT_TANH,
    HEURISTIC,
    METRICS,
    MOBILITY_WEIGHT,
    MonteCarlo,
    Trials,
    calibration_table,
    evaluations,
    per_game_metrics,
    rank_agreement,
    trial_metrics,
)
from pipeline.analysis.errors import game_quality, judged_plies
from pipeline.runs.records import games_table

THREE = Rules(stones_per_pit=3)
NAN = math.nan

# Three trials (Player 1 = South): A, five states, South wins; B, two states, South wins; C, one
# state, a draw. Each state's legal moves are valued for their mover, in pit order.
TRIALS = Trials(
    evaluation=np.array([0.2, -0.4, -0.1, 0.5, 0.8, -0.5, 0.2, 0.3]),
    moves=np.array(
        [
            [0.5, -0.5, NAN],
            [0.2, 0.2, 0.2],
            [-1.0, 0.0, 1.0],
            [0.3, NAN, NAN],
            [0.9, 0.1, -0.5],
            [1.0, -1.0, NAN],
            [0.1, 0.1, NAN],
            [-0.2, 0.4, NAN],
        ]
    ),
    offsets=np.array([0, 5, 7, 8]),
    winner=np.array([1, 1, 0]),
)


def _games(strategy: str, count: int, rules: Rules, first_id: int = 0, seed: int = 5) -> pl.DataFrame:
    batch = engine.play_batch(count, strategy, strategy, rules=rules, seed=seed)
    return pl.from_arrow(games_table(batch, study="calibration", first_id=first_id))  # type: ignore[return-value]


def test_hand_worked_trials_as_ludii_defines_the_metrics() -> None:
    """Trial A, e = 0.2, -0.4, -0.1, 0.5, 0.8, South the winner:
    - Drama, |e| - e per state: 0, 0.8, 0.2, 0, 0; mean 0.2, maximum 0.8, minimum 0.
    - LeadChange: signs + - - + +, two changes over four pairs: 0.5.
    - Stability: mean 0.2, squared deviations 0, .36, .09, .09, .36: 0.9 / 5 = 0.18.
    - DecisivenessThreshold: North's values -e, at most 0.4; South first above it at state 3: 3/5.
    - ClarityNarrowness: above mean + 0.75 (max - mean): 1 of 2, 0 of 3, 1 of 3 (threshold 0.75),
      0 of 1, 1 of 3 (threshold 0.7167): (1/2 + 1/3 + 1/3) / 5 = 7/30.
    Trial B, e = -0.5, 0.2, South the winner: Drama 1, 0 (mean 0.5); one change over one pair;
    variance 0.35^2; threshold 0.5, never passed: 2/2; narrowness 1/2 then 0: 1/4.
    Trial C, e = 0.3, a draw: both players win, Drama |e| = 0.3; no pair: LeadChange 0; no
    non-winner: threshold -1, passed at once: 0; narrowness 1 of 2 (threshold 0.325)."""
    metrics = trial_metrics(TRIALS)
    expected = {
        "Drama": [0.2, 0.5, 0.3],
        "DramaMaximum": [0.8, 1.0, 0.3],
        "DramaMinimum": [0.0, 0.0, 0.3],
        "LeadChange": [0.5, 1.0, 0.0],
        "Stability": [0.18, 0.35**2, 0.0],
        "DecisivenessThreshold": [0.4, 0.5, -1.0],
        "DecisivenessMoves": [0.6, 1.0, 0.0],
        "ClarityNarrowness": [7 / 30, 0.25, 0.5],
    }
    for name, values in expected.items():
        assert metrics[name] == pytest.approx(values), name
    assert set(metrics) == set(METRICS)


def test_the_same_trials_as_ludiis_code_computes_them() -> None:
    """Every player counts as a winner (Drama |e|: A 0.4; the threshold -1 and DecisivenessMoves
    0); the minimum starts from 0; LeadChange counts the first state, over T: A 3/5, B 2/2, C 1/1;
    Stability sums both players' variances; the int divisions leave DecisivenessMoves 0 or 1 (B
    never passes: 1) and ClarityNarrowness 0, but Stats.measure keeps max at -inf where each
    value is a new minimum (A's states 0, 3, 4, B's state 0), where every move counts: A 3/5, B
    1/2, C 0."""
    metrics = trial_metrics(TRIALS)
    expected = {
        "Drama_code": [0.4, 0.35, 0.3],
        "DramaMaximum_code": [0.8, 0.5, 0.3],
        "DramaMinimum_code": [0.0, 0.0, 0.0],
        "LeadChange_code": [0.6, 1.0, 1.0],
        "Stability_code": [0.36, 2 * 0.35**2, 0.0],
        "DecisivenessThreshold_code": [-1.0, -1.0, -1.0],
        "DecisivenessMoves_intdiv": [0.0, 1.0, 0.0],
        "DecisivenessMoves_code": [0.0, 0.0, 0.0],
        "ClarityNarrowness_intdiv": [0.0, 0.0, 0.0],
        "ClarityNarrowness_code": [0.6, 0.5, 0.0],
    }
    for name, values in expected.items():
        assert metrics[name] == pytest.approx(values), name


def test_a_trial_without_a_move_is_refused() -> None:
    empty = Trials(np.array([0.1]), np.full((1, 3), 0.0), np.array([0, 1, 1]), np.array([1, 0]))
    with pytest.raises(ValueError, match="needs a move"):
        trial_metrics(empty)


def test_lead_changes_of_the_exact_evaluator_are_those_of_game_quality_but_the_last() -> None:
    """Ludii evaluates the states before each move; game_quality's lead changes also count the
    one into the final margin. So LeadChange (T - 1) = lead_changes - [the last forecast before a
    move and the final margin differ in sign], and LeadChange_code T = that + 1."""
    games = _games("random", 150, THREE)
    solution = engine.solve(THREE, progress=False)
    per_game = per_game_metrics(games, solution, playouts=()).filter(pl.col("evaluator") == EXACT)
    wide = per_game.pivot("metric", index=["game_id", "plies"], values="value").sort("game_id")
    judged = judged_plies(games, solution).group_by("game_id").agg(pl.col("forecast_before").last()).sort("game_id")
    finals = games.sort("game_id").select((pl.col("score_south").cast(pl.Int64) - pl.col("score_north")).alias("final"))
    last_change = np.sign(judged["forecast_before"].to_numpy()) != np.sign(finals["final"].to_numpy())
    quality = game_quality(games, solution).sort("game_id")
    changes = quality["lead_changes"].to_numpy() - last_change
    plies = wide["plies"].to_numpy()
    assert wide["LeadChange"].to_numpy() * (plies - 1) == pytest.approx(changes)
    assert wide["LeadChange_code"].to_numpy() * plies == pytest.approx(changes + 1)
    assert changes.sum() > 0


def test_the_evaluators_values_of_each_state() -> None:
    """exact is the sign of the forecast and exact_tanh its tanh; the heuristic is tanh of the
    stones captured minus the opponent's plus 0.001 a legal move for the mover (South's view),
    tanh(0.003) at the start; a move's value is its mover's and a move that ends the game gets
    the utility of the final margin under every evaluator."""
    games = _games("random", 40, THREE)
    solution = engine.solve(THREE, progress=False)
    found = evaluations(games, solution, playouts=(4,), mc_games=10)
    judged = judged_plies(games, solution)
    forecast = judged["forecast_before"].to_numpy()
    assert np.array_equal(found[EXACT].trials.evaluation, np.sign(forecast))
    assert np.allclose(found[EXACT_TANH].trials.evaluation, np.tanh(forecast))
    side = np.where(judged["mover"].to_numpy() == 0, 1, -1)
    options = judged["options"].to_numpy()
    heuristic = side * np.tanh(side * judged["margin"].to_numpy() + MOBILITY_WEIGHT * options)
    assert np.allclose(found[HEURISTIC].trials.evaluation, heuristic)
    assert np.allclose(heuristic[judged["ply"].to_numpy() == 0], math.tanh(3 * MOBILITY_WEIGHT))
    legal = ~np.isnan(found[EXACT].trials.moves)
    assert np.array_equal(legal.sum(axis=1), options)
    ends = np.isin(found[HEURISTIC].trials.moves, (-1.0, 0.0, 1.0)) & legal
    assert ends.any()
    assert np.array_equal(found[HEURISTIC].trials.moves[ends], found[EXACT].trials.moves[ends])
    mc = found["mc(playouts=4)"]
    assert mc.games["game_id"].to_list() == found[EXACT].games["game_id"].to_list()[:10]
    assert len(mc.trials.evaluation) == mc.trials.offsets[-1] == mc.games["plies"].sum()


def test_monte_carlo_from_the_start_is_random_self_plays_outcome() -> None:
    """The mean utility of random playouts from the start is South's mean result (win 1, draw 0,
    loss -1) in random self-play, within 4.5 standard errors of the two estimates."""
    solution = engine.solve(THREE, progress=False)
    start = np.array([first_moves(THREE).start])
    runner = MonteCarlo(kept_tables(THREE), solution, 20_000, np.random.default_rng(1))
    value = runner.values(start, np.array([0]), np.array([0]))[0]
    games = _games("random", 20_000, THREE)
    result = np.sign((games["score_south"].cast(pl.Int64) - games["score_north"]).to_numpy())
    se = math.hypot(result.std() / math.sqrt(len(result)), result.std() / math.sqrt(20_000))
    assert abs(value - result.mean()) <= 4.5 * se


def test_a_small_calibration_end_to_end() -> None:
    """Random and perfect(temperature=1.0) self-play of the 3-stone variant: a row for every
    strategy, metric and evaluator; the Monte-Carlo evaluator on its subset of games; the paired
    bias null on the reference's own rows; the code's constant metrics constant; the rank agreement
    of every other evaluator."""
    strategies = ("random", "perfect(temperature=1.0)")
    games = pl.concat([_games(name, 60, THREE, first_id=1000 * i) for i, name in enumerate(strategies)])
    per_game = per_game_metrics(games, engine.solve(THREE, progress=False), playouts=(8,), mc_games=20, seed=3)
    table = calibration_table(per_game)
    evaluators = {EXACT, EXACT_TANH, HEURISTIC, "mc(playouts=8)"}
    assert table.height == len(strategies) * len(METRICS) * len(evaluators)
    assert set(table["evaluator"]) == evaluators
    assert table["mean"].is_finite().all() and (table["se"] >= 0).all()
    games_by_evaluator = dict(table.group_by("evaluator").agg(pl.col("games").max()).iter_rows())
    assert games_by_evaluator == {EXACT: 60, EXACT_TANH: 60, HEURISTIC: 60, "mc(playouts=8)": 20}
    assert table.filter(pl.col("evaluator") == EXACT)["bias_exact"].is_null().all()
    assert table.filter(pl.col("evaluator") != EXACT)["bias_exact"].is_not_null().all()
    constant = table.filter(pl.col("metric").is_in(["DecisivenessMoves_code", "DramaMinimum_code"]))
    assert (constant["mean"] == 0).all()
    agreement = rank_agreement(table, method="kendall")
    assert agreement.height == len(METRICS) * (len(evaluators) - 1)
    assert (agreement["strategies"] == len(strategies)).all()
    with pytest.raises(ValueError, match="spearman"):
        rank_agreement(table, method="pearson")


def test_games_of_another_rule_set_are_refused() -> None:
    games = _games("random", 5, THREE)
    with pytest.raises(ValueError, match="rule set"):
        evaluations(games, engine.solve(Rules(stones_per_pit=4), progress=False), playouts=())
