"""pipeline.analysis.ratings: known parameters recovered, a closed form, symmetries, separation, interval widths, bad input."""

from __future__ import annotations

import math

import numpy as np
import polars as pl
import pytest
from scipy.stats import chi2

from pipeline.analysis.metrics import outcomes
from pipeline.analysis.ratings import ELO_PER_LOGIT, ratings
from pipeline.cli import main
from pipeline.runs.records import scan_games

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
    assert fitted.ladder.columns == ["strategy", "rating", "low", "high", "bounded", "games", "score", "self_games"]
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
        (_pairings([("a", "b", 3, 0, 1)]), {"first_move": "both"}, "first_move must be one of 'shared', 'per_strategy', not"),
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


# goodness of fit, widened intervals and per-strategy first-move terms

STRENGTH = {"a": 0.0, "b": 150.0, "c": 300.0, "d": 450.0, "e": 600.0, "f": 750.0}  # Elo
SHARED = dict.fromkeys(STRENGTH, -30.0)  # Elo: one first-move term for every strategy
DISTINCT = {"a": 60.0, "b": -20.0, "c": 0.0, "d": -120.0, "e": 150.0, "f": -60.0}  # Elo, South's own


def _simulated(first_moves: dict[str, float], games: int, rng: np.random.Generator) -> pl.DataFrame:
    """Every ordered pairing of STRENGTH (self-play too), South's wins drawn with the first-move
    term of the strategy in South's seat; no draws."""
    rows = []
    for south, south_rating in STRENGTH.items():
        for north, north_rating in STRENGTH.items():
            chance = 1 / (1 + math.exp(-(south_rating - north_rating + first_moves[south]) / ELO_PER_LOGIT))
            won = int(rng.binomial(games, chance))
            rows.append((south, north, won, 0, games - won))
    return _pairings(rows)


def _logit(share: float) -> float:
    return math.log(share / (1 - share))


def _width(estimate) -> float:
    return estimate.high - estimate.low


def test_a_saturated_fit_has_zero_deviance_undefined_dispersion_and_unwidened_intervals():
    # two pairings, two free parameters (theta_a - theta_b and h): the fit reproduces both scores,
    # h = (logit p1 + logit p2) / 2 and theta_a - theta_b = (logit p1 - logit p2) / 2
    fitted = ratings(_pairings([("a", "b", 700, 0, 300), ("b", "a", 450, 0, 550)]), anchor="b", prior_sd=VAGUE)
    assert (fitted.fit.pairings, fitted.fit.parameters, fitted.fit.df) == (2, 2, 0)
    assert fitted.fit.deviance == pytest.approx(0, abs=1e-9) and fitted.fit.pearson == pytest.approx(0, abs=1e-9)
    assert math.isnan(fitted.fit.dispersion) and math.isnan(fitted.fit.p) and fitted.fit.scale == 1.0
    assert fitted.first_move.value == pytest.approx((_logit(0.7) + _logit(0.45)) / 2 * ELO_PER_LOGIT, abs=1e-6)
    # the Wald variance of either parameter is (1 / w1 + 1 / w2) / 4, with w = n p (1 - p)
    half = 1.959963984540054 * math.sqrt((1 / (1000 * 0.7 * 0.3) + 1 / (1000 * 0.45 * 0.55)) / 4) * ELO_PER_LOGIT
    assert _width(fitted.first_move) == pytest.approx(2 * half, rel=1e-6)
    a = _by_name(fitted)["a"]
    assert a["rating"] == pytest.approx((_logit(0.7) - _logit(0.45)) / 2 * ELO_PER_LOGIT, abs=1e-6)
    assert a["high"] - a["low"] == pytest.approx(2 * half, rel=1e-6)


@pytest.mark.parametrize("first_move", ["shared", "per_strategy"])
def test_deviance_and_pearson_equal_a_hand_computation(first_move):
    rows = [("a", "b", 700, 0, 300), ("b", "a", 380, 40, 580), ("a", "a", 260, 0, 240), ("b", "b", 230, 20, 250)]
    fitted = ratings(_pairings(rows), anchor="b", first_move=first_move)
    gap = _by_name(fitted)["a"]["rating"] / ELO_PER_LOGIT
    terms = {row["strategy"]: row["elo"] / ELO_PER_LOGIT for row in fitted.first_moves.iter_rows(named=True)}
    home = {"a": terms.get("a", terms.get(None)), "b": terms.get("b", terms.get(None))}
    deviance = pearson = 0.0
    for south, north, won, drawn, lost in rows:
        games, score = won + drawn + lost, won + drawn / 2
        chance = 1 / (1 + math.exp(-({"a": gap, "b": 0.0}[south] - {"a": gap, "b": 0.0}[north] + home[south])))
        expected = games * chance
        deviance += 2 * (score * math.log(score / expected) + (games - score) * math.log((games - score) / (games - expected)))
        pearson += (score - expected) ** 2 / (games * chance * (1 - chance))
    assert fitted.fit.deviance == pytest.approx(deviance, rel=1e-9)
    assert fitted.fit.pearson == pytest.approx(pearson, rel=1e-9)
    assert fitted.fit.df == {"shared": 2, "per_strategy": 1}[first_move]
    assert fitted.fit.dispersion == pytest.approx(pearson / fitted.fit.df, rel=1e-9)
    assert fitted.fit.p == pytest.approx(chi2.sf(deviance, fitted.fit.df), rel=1e-9)
    assert fitted.fit.scale == pytest.approx(math.sqrt(max(1, pearson / fitted.fit.df)), rel=1e-9)


def test_data_from_the_shared_model_fit_it_with_a_dispersion_near_one():
    pairings = _simulated(SHARED, 20_000, np.random.default_rng(21))
    shared, split = ratings(pairings), ratings(pairings, first_move="per_strategy")
    assert (shared.fit.pairings, shared.fit.parameters, shared.fit.df) == (36, 6, 30)
    assert (split.fit.parameters, split.fit.df) == (11, 25)
    for fitted in (shared, split):
        assert 0.5 <= fitted.fit.dispersion <= 1.6
        assert fitted.fit.p > 0.01
    assert shared.first_move.low < SHARED["a"] < shared.first_move.high
    for row in split.first_moves.iter_rows(named=True):
        assert row["low"] < SHARED[row["strategy"]] < row["high"]


def test_the_per_strategy_model_recovers_distinct_first_move_terms():
    pairings = _simulated(DISTINCT, 20_000, np.random.default_rng(22))
    split = ratings(pairings, anchor="a", first_move="per_strategy")
    assert 0.5 <= split.fit.dispersion <= 1.6
    assert split.first_moves["strategy"].to_list() == list(STRENGTH)
    for row in split.first_moves.iter_rows(named=True):
        assert row["low"] < DISTINCT[row["strategy"]] < row["high"] and row["high"] - row["low"] < 20
        assert row["expected_score"] == pytest.approx(1 / (1 + 10 ** (-row["elo"] / 400)), rel=1e-12)
    for name, row in _by_name(split).items():
        assert row["low"] <= STRENGTH[name] <= row["high"]
    # the mean of the per-strategy terms stands for them in first_move
    assert split.first_move.value == pytest.approx(split.first_moves["elo"].mean(), rel=1e-12)
    assert split.first_move.low < np.mean(list(DISTINCT.values())) < split.first_move.high


def test_the_shared_model_on_distinct_first_move_terms_is_overdispersed():
    shared = ratings(_simulated(DISTINCT, 20_000, np.random.default_rng(22)), anchor=None)
    assert shared.fit.dispersion > 20 and shared.fit.p < 1e-12
    assert shared.fit.scale == pytest.approx(math.sqrt(shared.fit.dispersion))


def test_overdispersed_intervals_are_widened_by_the_square_root_of_the_dispersion():
    # the same games with the scores the fitted model expects give the same estimate and
    # information but no excess spread, so their intervals are the unwidened ones
    misfit = ratings(_simulated(DISTINCT, 20_000, np.random.default_rng(23)), anchor=None, prior_sd=VAGUE)
    plain = ratings(_expected_scores(misfit, 20_000), anchor=None, prior_sd=VAGUE)
    assert plain.fit.dispersion < 1e-3 and plain.fit.scale == 1.0
    assert misfit.fit.dispersion > 20
    for name, row in _by_name(misfit).items():
        assert row["rating"] == pytest.approx(_by_name(plain)[name]["rating"], abs=0.01)
        assert (row["high"] - row["low"]) / (_by_name(plain)[name]["high"] - _by_name(plain)[name]["low"]) == pytest.approx(
            misfit.fit.scale, rel=1e-3
        )
    assert _width(misfit.first_move) / _width(plain.first_move) == pytest.approx(misfit.fit.scale, rel=1e-3)
    score = misfit.first_player_score
    assert score.low < plain.first_player_score.low < score.value < plain.first_player_score.high < score.high


def _expected_scores(fitted, games: int) -> pl.DataFrame:
    """Every ordered pairing of STRENGTH with South's score the fitted shared model's expectation,
    to the nearest half game (as wins and at most one draw)."""
    rating = {row["strategy"]: row["rating"] for row in fitted.ladder.iter_rows(named=True)}
    rows = []
    for south in STRENGTH:
        for north in STRENGTH:
            chance = 1 / (1 + math.exp(-(rating[south] - rating[north] + fitted.first_move.value) / ELO_PER_LOGIT))
            halves = round(2 * games * chance)
            rows.append((south, north, halves // 2, halves % 2, games - halves // 2 - halves % 2))
    return _pairings(rows)


def test_self_play_alone_sets_a_first_move_term_and_a_strategy_never_south_has_none():
    # c plays South only against itself, so h_c = logit of its self-play score; d never plays South
    rows = [("a", "b", 600, 0, 400), ("b", "a", 450, 0, 550), ("c", "c", 550, 100, 350), ("a", "c", 500, 0, 500)]
    rows.append(("a", "d", 300, 0, 700))
    fitted = ratings(_pairings(rows), first_move="per_strategy", prior_sd=VAGUE)
    terms = {row["strategy"]: row for row in fitted.first_moves.iter_rows(named=True)}
    assert terms["c"]["elo"] == pytest.approx(_logit(0.6) * ELO_PER_LOGIT, abs=1e-6)
    assert terms["c"]["expected_score"] == pytest.approx(0.6, abs=1e-9)
    assert terms["c"]["games"] == 1000 and terms["a"]["games"] == 3000 and terms["d"]["games"] == 0
    assert all(terms["d"][column] is None for column in fitted.first_moves.columns if column not in ("strategy", "games"))
    # five pairings, five identified parameters (d's term is not one of them): a saturated fit
    assert (fitted.fit.parameters, fitted.fit.df, fitted.fit.scale) == (5, 0, 1.0)
    assert fitted.first_move.value == pytest.approx(np.mean([terms[name]["elo"] for name in "abc"]), abs=1e-9)


def test_the_shared_first_move_term_is_one_row_of_first_moves():
    fitted = ratings(_synthetic(5000, np.random.default_rng(5)))
    assert fitted.first_move_model == "shared"
    assert fitted.first_moves.columns == [
        "strategy",
        "elo",
        "low",
        "high",
        "expected_score",
        "expected_score_low",
        "expected_score_high",
        "games",
    ]
    (row,) = fitted.first_moves.iter_rows(named=True)
    assert row["strategy"] is None and row["games"] == 16 * 5000
    assert (row["elo"], row["low"], row["high"]) == tuple(fitted.first_move)
    assert (row["expected_score"], row["expected_score_low"], row["expected_score_high"]) == tuple(fitted.first_player_score)


def test_a_separated_strategy_keeps_finite_first_move_terms():
    rows = [("perfect", "random", 1000, 0, 0), ("random", "perfect", 0, 0, 1000), ("perfect", "perfect", 0, 0, 1000)]
    rows += [("greedy", "random", 700, 0, 300), ("random", "greedy", 300, 0, 700), ("greedy", "greedy", 480, 0, 520)]
    fitted = ratings(_pairings(rows), first_move="per_strategy")
    assert np.isfinite(fitted.first_moves.select("elo", "low", "high").to_numpy()).all()
    assert np.isfinite(fitted.ladder.select("rating", "low", "high").to_numpy()).all()
    assert np.isfinite([fitted.fit.deviance, fitted.fit.pearson, fitted.fit.dispersion]).all()
    perfect = fitted.first_moves.filter(pl.col("strategy") == "perfect")
    assert perfect["elo"].item() < -1000  # perfect, who never loses, lost every game against itself as South


def _separated(draw: bool = False) -> pl.DataFrame:
    """random, greedy and perfect: perfect wins every game it plays, in both seats (with ``draw``,
    greedy draws one game against it as North)."""
    rows = [
        ("random", "greedy", 100, 40, 10, 50),
        ("greedy", "random", 100, 55, 10, 35),
        ("random", "perfect", 100, 0, 0, 100),
        ("perfect", "random", 100, 100, 0, 0),
        ("greedy", "perfect", 100, 0, 0, 100),
        ("perfect", "greedy", 100, 99 if draw else 100, 1 if draw else 0, 0),
    ]
    return pl.DataFrame(rows, schema=["south", "north", "games", "south_wins", "draws", "north_wins"], orient="row")


def test_a_rating_no_game_bounds_is_flagged_by_fords_condition():
    """Ford (1957): the ratings are finite exactly when no group of strategies never scores
    against the rest. perfect never concedes a point, so its rating is the prior's."""
    bounded = dict(ratings(_separated()).ladder.select("strategy", "bounded").iter_rows())
    assert bounded == {"perfect": False, "greedy": True, "random": True}
    # one draw links perfect to the others: every rating is the games'
    assert ratings(_separated(draw=True)).ladder["bounded"].all()
    # anchored on perfect, the others' contrasts with it are the unbounded ones
    bounded = dict(ratings(_separated(), anchor="perfect").ladder.select("strategy", "bounded").iter_rows())
    assert bounded == {"perfect": True, "greedy": False, "random": False}
    # centred on the mean, every contrast involves perfect
    assert not ratings(_separated(), anchor=None).ladder["bounded"].any()
    assert ratings(_separated(draw=True), anchor=None).ladder["bounded"].all()


def test_the_prior_alone_sets_an_unbounded_rating():
    """What the flag means: doubling the prior's scale moves an unbounded rating's interval by
    hundreds of Elo and a bounded one's by almost nothing."""
    narrow, wide = (ratings(_separated(), prior_sd=sd).ladder for sd in (1000.0, 2000.0))
    width = {name: (high - low) for name, low, high in wide.select("strategy", "low", "high").iter_rows()}
    for name, low, high in narrow.select("strategy", "low", "high").iter_rows():
        change = width[name] - (high - low)
        assert change > 300 if name == "perfect" else abs(change) < 10, (name, change)
