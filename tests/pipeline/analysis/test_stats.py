"""pipeline.analysis.stats: the exact first-player test and interval, Wilson's interval of a share, a
mean's interval and test, the rate's score interval and Holm's adjustment, on hand-worked values
and as properties."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from pipeline.analysis.stats import Z95, first_player, game_rate, holm, mean_interval, p_value_against, rate_interval, wilson
from pipeline.report.prose import p_words as p_text


def _one(first: int, draws: int, second: int) -> tuple[float, float, float, float]:
    result = first_player(np.array([first]), np.array([draws]), np.array([second]))
    return tuple(float(column[0]) for column in result)  # type: ignore[return-value]


def test_five_wins_in_five_games_is_not_significant():
    # The exact two-sided value: 2 * (1/2)^5 = 0.0625 (a normal test on five 1s prints ~0).
    score, low, high, p = _one(5, 0, 0)
    assert (score, high, p) == (1.0, 1.0, 0.0625)
    assert low == pytest.approx(0.025 ** (1 / 5))  # Clopper-Pearson: the p with p^5 = 0.025
    assert low < 0.5  # and so the interval holds 1/2, as the test says


def test_draws_count_one_half_and_leave_the_test_to_the_decisive_games():
    # 3 wins, 1 draw, 1 loss: score 3.5 / 5; the sign test sees 3 of 4: 2 * 5/16.
    score, _, _, p = _one(3, 1, 1)
    assert score == pytest.approx(0.7) and p == pytest.approx(0.625)
    score, low, high, p = _one(0, 4, 0)  # no decisive game: nothing to test, and d is below 0.49
    assert (score, p) == (0.5, 1.0) and low == pytest.approx(1 - high) and 0.25 < low < 0.5


def test_many_draws_narrow_the_interval_as_the_test_sees_them():
    # 60 wins and 40 losses with 900 draws: the same test as without draws (p = 0.057), and
    # an interval about ten times narrower around 0.51 that still holds 1/2.
    with_draws, without = _one(60, 900, 40), _one(60, 0, 40)
    assert with_draws[3] == without[3] == pytest.approx(0.056887, abs=1e-6)
    assert with_draws[1] < 0.5 < with_draws[2]
    assert 8 < (without[2] - without[1]) / (with_draws[2] - with_draws[1]) < 10


def test_lopsided_decisive_games_with_draws_keep_the_draws_uncertainty():
    # 0 wins, 5 draws, 25 losses: the score is 5 / 60; an interval of pi alone would start at
    # exactly the sample's draws / 2n and miss the true score whenever the sample has too few draws.
    score, low, high, _ = _one(0, 5, 25)
    assert score == pytest.approx(1 / 12)
    assert low < 0.04 and high > 0.14


@given(st.integers(0, 300), st.integers(0, 300), st.integers(0, 300))
def test_interval_and_test_agree(first, draws, second):
    score, low, high, p = _one(first, draws, second)
    if first + draws + second == 0:
        assert np.isnan(p)
        return
    assert low <= score <= high
    assert (p < 0.05) == (not low <= 0.5 <= high) or min(abs(low - 0.5), abs(high - 0.5)) < 1e-9


def test_holm_on_a_hand_worked_family():
    # sorted 0.005, 0.01, 0.03, 0.04 times 4, 3, 2, 1: 0.02, 0.03, 0.06, 0.04; then running maxima
    adjusted = holm(np.array([0.01, 0.04, 0.03, 0.005, np.nan]))
    assert adjusted[:4] == pytest.approx([0.03, 0.06, 0.06, 0.02]) and np.isnan(adjusted[4])
    assert holm(np.array([0.5, 0.9])).tolist() == [1.0, 1.0]


def test_a_rate_without_events_keeps_an_upper_bound():
    # none in 30 games: the Poisson score interval [0, z^2 / 30], where a normal one is [0, 0]
    rate = game_rate(np.zeros(30))
    assert (rate.value, rate.low) == (0.0, 0.0) and rate.high == pytest.approx(Z95**2 / 30)
    one = game_rate(np.array([1] + [0] * 29))
    assert one.low > 0 and one.high > 0.1  # one event in 30 games: well short of 1 in 10 ruled out


def test_rate_interval_is_the_poisson_score_interval_at_dispersion_one():
    # (x - r t)^2 = z^2 r t at both bounds
    value, low, high = rate_interval(np.array([7.0]), np.array([50.0]), np.array([1.0]))
    for bound in (low[0], high[0]):
        assert (7 - bound * 50) ** 2 == pytest.approx(Z95**2 * bound * 50)
    assert value[0] == pytest.approx(7 / 50)


def test_p_values_print_as_a_paper_prints_them():
    assert [p_text(p) for p in (0.0625, 0.0004, 1e-300, 0.0, float("nan"))] == ["= 0.062", "< 0.001", "< 0.001", "< 0.001", "n/a"]


def test_wilson_interval_matches_published_values():
    # Newcombe (1998), Statistics in Medicine 17:857, table I: 0/10 and 5/10 at 95%.
    low, high = wilson(0, 10)[1:]
    assert (round(low, 4), round(high, 4)) == (0.0, 0.2775)
    low, high = wilson(5, 10)[1:]
    assert (round(low, 4), round(high, 4)) == (0.2366, 0.7634)


def test_wilson_interval_holds_its_estimate_and_narrows_with_more_games():
    small, large = wilson(30, 100), wilson(3000, 10000)
    assert small.low < small.value == 0.3 < small.high
    assert large.high - large.low < (small.high - small.low) / 5


def test_mean_interval_and_test_against_one_half():
    values = np.array([0.0, 1.0] * 500)
    estimate = mean_interval(values)
    assert estimate.value == 0.5
    assert estimate.low == pytest.approx(0.5 - 1.96 * 0.5 / np.sqrt(1000), rel=1e-3)
    assert p_value_against(values, 0.5) == 1.0
    assert p_value_against(np.array([1.0] * 60 + [0.0] * 40), 0.5) < 0.05
