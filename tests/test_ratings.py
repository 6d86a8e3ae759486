"""pipeline.ratings: known parameters recovered, a closed form, symmetries, separation, interval widths, bad input."""

from __future__ import annotations

import math

import numpy as np
import polars as pl
import pytest

from pipeline.cli import main
from pipeline.metrics import outcomes
from pipeline.ratings import ELO_PER_LOGIT, ratings
from pipeline.records import scan_games

VAGUE = 1e6  # Elo: a prior sd large enough to give the maximum-likelihood fit
TRUE = {"random": 0.0, "greedy": 200.0, "heuristic": 450.0, "alphabeta": 700.0}
TRUE_FIRST_MOVE = -30.0


def _pairings(rows: list[tuple[str, str, int, int, int]]) -> pl.DataFrame:
    """A pairings table from (south, north, south_wins, draws, north_wins) rows."""
    return pl.DataFrame(
        [(south, north, won + drawn + lost, won, drawn, lost) for south, north, won, drawn, lost in rows],
        schema=["south", "north", "games", "south_wins", "draws", "north_wins"],
        orient="row",
    )


def _synthetic(games: int, rng: np.random.Generator | None = None) -> pl.DataFrame:
    """Every ordered pairing of TRUE (self-play too), South's wins drawn from the model (or their
    expected number, rounded, without an rng); no draws."""
    rows = []
    for south, south_rating in TRUE.items():
        for north, north_rating in TRUE.items():
            chance = 1 / (1 + math.exp(-(south_rating - north_rating + TRUE_FIRST_MOVE) / ELO_PER_LOGIT))
            won = int(rng.binomial(games, chance)) if rng else round(games * chance)
            rows.append((south, north, won, 0, games - won))
    return _pairings(rows)


def _by_name(fitted) -> dict[str, dict]:
    return {row["strategy"]: row for row in fitted.ladder.iter_rows(named=True)}


def test_expected_counts_give_back_the_parameters():
    fitted = ratings(_synthetic(1_000_000), prior_sd=VAGUE)
    found = _by_name(fitted)
    for name, rating in TRUE.items():
        assert found[name]["rating"] == pytest.approx(rating, abs=0.05)
    assert fitted.first_move.value == pytest.approx(TRUE_FIRST_MOVE, abs=0.05)
    assert fitted.first_player_score.value == pytest.approx(1 / (1 + 10 ** (-TRUE_FIRST_MOVE / 400)), abs=1e-5)
    assert fitted.ladder["strategy"].to_list() == ["alphabeta", "heuristic", "greedy", "random"]


def test_sampled_counts_give_back_the_parameters_within_a_few_elo():
    fitted = ratings(_synthetic(200_000, np.random.default_rng(7)))
    for name, row in _by_name(fitted).items():
        assert abs(row["rating"] - TRUE[name]) < 4
        assert row["low"] <= row["rating"] <= row["high"]
    assert abs(fitted.first_move.value - TRUE_FIRST_MOVE) < 2
    assert fitted.first_move.low < TRUE_FIRST_MOVE < fitted.first_move.high


def test_ladder_columns_and_bookkeeping():
    fitted = ratings(_synthetic(1000))
    assert fitted.ladder.columns == ["strategy", "rating", "low", "high", "games", "score", "self_games"]
    assert fitted.anchor == "random"
    row = _by_name(fitted)["random"]
    assert (row["rating"], row["low"], row["high"]) == (0.0, 0.0, 0.0)
    assert row["games"] == 6 * 1000 and row["self_games"] == 1000
    assert 0 < row["score"] < 0.5


def test_two_strategies_winning_three_in_four_is_400_log10_3():
    # no first-move advantage in the data (the same result in both seats), so h = 0 and
    # logistic(theta) = 3/4, theta = ln 3, which is 400 log10(3) Elo
    fitted = ratings(_pairings([("a", "b", 750, 0, 250), ("b", "a", 250, 0, 750)]), anchor="b", prior_sd=VAGUE)
    assert _by_name(fitted)["a"]["rating"] == pytest.approx(400 * math.log10(3), abs=1e-6)
    assert fitted.first_move.value == pytest.approx(0, abs=1e-9)
    assert fitted.first_player_score.value == pytest.approx(0.5, abs=1e-9)


def test_a_draw_counts_as_half_a_win_for_each_side():
    with_draws = ratings(_pairings([("a", "b", 700, 100, 200), ("b", "a", 200, 100, 700)]), anchor="b")
    halved = ratings(_pairings([("a", "b", 750, 0, 250), ("b", "a", 250, 0, 750)]), anchor="b")
    assert _by_name(with_draws)["a"]["rating"] == pytest.approx(_by_name(halved)["a"]["rating"], rel=1e-12)
    assert _by_name(with_draws)["a"]["score"] == pytest.approx(0.75)


def test_renaming_strategies_or_anchoring_elsewhere_only_relabels_or_shifts():
    pairings = _synthetic(5000, np.random.default_rng(3))
    fitted = _by_name(ratings(pairings))
    renamed = pairings.with_columns(pl.col("south", "north").str.to_uppercase())
    for name, row in _by_name(ratings(renamed, anchor="RANDOM")).items():
        assert row["rating"] == pytest.approx(fitted[name.lower()]["rating"], abs=1e-9)
        assert row["high"] - row["low"] == pytest.approx(fitted[name.lower()]["high"] - fitted[name.lower()]["low"], rel=1e-9)
    shifted = _by_name(ratings(pairings, anchor="greedy"))
    for name, row in shifted.items():
        assert row["rating"] == pytest.approx(fitted[name]["rating"] - fitted["greedy"]["rating"], abs=1e-9)


def test_swapping_seats_negates_the_first_move_term_and_keeps_the_ratings():
    pairings = _synthetic(5000, np.random.default_rng(4))
    swapped = pairings.select(
        pl.col("north").alias("south"),
        pl.col("south").alias("north"),
        "games",
        pl.col("north_wins").alias("south_wins"),
        "draws",
        pl.col("south_wins").alias("north_wins"),
    )
    fitted, mirrored = ratings(pairings), ratings(swapped)
    assert mirrored.first_move.value == pytest.approx(-fitted.first_move.value, abs=1e-9)
    assert mirrored.first_move.high == pytest.approx(-fitted.first_move.low, abs=1e-9)
    assert mirrored.ladder["rating"].to_list() == pytest.approx(fitted.ladder["rating"].to_list(), abs=1e-9)


def test_without_an_anchor_the_ratings_are_centred_on_their_mean():
    fitted = ratings(_synthetic(5000), anchor=None)
    assert fitted.anchor is None
    assert fitted.ladder["rating"].sum() == pytest.approx(0, abs=1e-9)
    assert (fitted.ladder["high"] > fitted.ladder["low"]).all()
    assert ratings(_pairings([("a", "b", 3, 0, 1)])).anchor is None  # the default anchor did not play


def test_a_strategy_that_never_loses_gets_a_finite_rating_set_by_the_prior():
    # "perfect" wins every game in both seats: the maximum-likelihood rating is infinite
    rows = [("perfect", "random", 1000, 0, 0), ("random", "perfect", 0, 0, 1000), ("perfect", "perfect", 0, 0, 1000)]
    rows += [("greedy", "random", 700, 0, 300), ("random", "greedy", 300, 0, 700)]
    weak, weaker = ratings(_pairings(rows)), ratings(_pairings(rows), prior_sd=300)
    for fitted in (weak, weaker):
        assert fitted.ladder["strategy"].to_list() == ["perfect", "greedy", "random"]
        assert np.isfinite(fitted.ladder.select("rating", "low", "high").to_numpy()).all()
    assert _by_name(weak)["perfect"]["rating"] > _by_name(weaker)["perfect"]["rating"] > 1000
    # the prior hardly moves a strategy that both wins and loses
    assert _by_name(weak)["greedy"]["rating"] == pytest.approx(_by_name(weaker)["greedy"]["rating"], abs=1)


def test_intervals_shrink_as_one_over_the_square_root_of_the_games():
    small, large = ratings(_synthetic(10_000)), ratings(_synthetic(40_000))
    for name in ("greedy", "heuristic", "alphabeta"):
        ratio = (_by_name(small)[name]["high"] - _by_name(small)[name]["low"]) / (
            _by_name(large)[name]["high"] - _by_name(large)[name]["low"]
        )
        assert ratio == pytest.approx(2, rel=0.01)
    assert (small.first_move.high - small.first_move.low) / (large.first_move.high - large.first_move.low) == pytest.approx(
        2, rel=0.01
    )


def test_intervals_cover_the_true_ratings_about_95_percent_of_the_time():
    rng = np.random.default_rng(11)
    covered = []
    for _ in range(200):
        row = _by_name(ratings(_synthetic(400, rng)))["alphabeta"]
        covered.append(row["low"] <= TRUE["alphabeta"] <= row["high"])
    assert 0.89 <= np.mean(covered) <= 0.99


@pytest.mark.parametrize(
    ("pairings", "arguments", "message"),
    [
        (_pairings([]), {}, "at least one game"),
        (_pairings([("a", "b", 0, 0, 0)]), {}, "at least one game"),
        (_pairings([("a", "b", 3, 0, 1), ("c", "d", 1, 1, 1)]), {}, "connected pairings: a, b never met c, d"),
        (_pairings([("a", "b", 3, 0, 1)]), {"anchor": "random"}, "anchor 'random' is not among the strategies (a, b)"),
        (_pairings([("a", "b", 3, 0, 1)]).drop("draws"), {}, "missing: draws"),
        (_pairings([("a", "b", 3, 0, 1)]).with_columns(games=5), {}, "south_wins + draws + north_wins == games"),
        (_pairings([("a", "b", -3, 0, 1)]), {}, "non-negative"),
        (_pairings([("a", "b", 3, 0, 1)]), {"prior_sd": 0.0}, "prior_sd must be a positive, finite"),
        (_pairings([("a", "b", 3, 0, 1)]), {"prior_sd": math.inf}, "prior_sd must be a positive, finite"),
    ],
)
def test_bad_input_raises_one_line_value_error(pairings, arguments, message):
    with pytest.raises(ValueError, match=r"^[^\n]+$") as error:
        ratings(pairings, **arguments)
    assert message in str(error.value)


def test_greedy_rates_above_random_in_a_small_real_study(tmp_path):
    config = tmp_path / "tiny.toml"
    config.write_text('name = "tiny"\nseed = 5\ngames_per_seat = 200\nstrategies = ["random", "greedy"]\n')
    assert main(["study", "run", str(config), "--out", str(tmp_path / "tiny"), "--quiet", "--jobs", "1"]) == 0
    fitted = ratings(outcomes(scan_games(tmp_path / "tiny")))
    assert fitted.ladder["strategy"].to_list() == ["greedy", "random"]
    greedy = _by_name(fitted)["greedy"]
    assert greedy["low"] > 0
    assert greedy["games"] == 400


def test_several_rule_sets_are_refused():
    table = pl.DataFrame(
        {
            "rules": ["modiar", "modiar-feedingoff"],
            "south": ["a", "a"],
            "north": ["b", "b"],
            "games": [10, 10],
            "south_wins": [5, 5],
            "draws": [0, 0],
            "north_wins": [5, 5],
        }
    )
    with pytest.raises(ValueError, match="one rule set at a time"):
        ratings(table)
