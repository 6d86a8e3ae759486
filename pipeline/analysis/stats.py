"""Interval estimates and tests used by every summary and report.

wilson(successes, trials)           a share with its Wilson score interval
first_player(first, draws, second)  the first player's score with an exact interval and test
                                    that agree (the sign test on decisive games)
rate_interval(total, exposure, dispersion)  a rate with a score interval fit for rare events
holm(p)                             Holm's step-down adjustment of a family of p-values
mean_interval(values)               a mean with its normal interval (for large samples)
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any, NamedTuple

import numpy as np
from scipy import stats as _scipy

Z95 = 1.959963984540054  # the two-sided 95% quantile of the standard normal


class Estimate(NamedTuple):
    value: float
    low: float
    high: float

    def percent(self, digits: int = 2) -> str:
        return f"{100 * self.value:.{digits}f}% [{100 * self.low:.{digits}f}, {100 * self.high:.{digits}f}]"

    def plain(self, digits: int = 3) -> str:
        return f"{self.value:.{digits}f} [{self.low:.{digits}f}, {self.high:.{digits}f}]"


def wilson(successes: int | float, trials: int, z: float = Z95) -> Estimate:
    """A proportion with its Wilson score interval (Wilson 1927), sound near 0 and 1.

    ``successes`` may be fractional (a draw counting one half).
    """
    if trials <= 0:
        raise ValueError("a proportion needs at least one trial")
    low, high = _wilson_bounds(np.array([successes]), np.array([trials]), z)
    return Estimate(successes / trials, float(low[0]), float(high[0]))


def mean_interval(values: np.ndarray, z: float = Z95) -> Estimate:
    """A mean with its normal-approximation interval (fine for the thousands of games a study plays)."""
    values = np.asarray(values, dtype=float)
    if values.size == 0:
        raise ValueError("a mean needs at least one value")
    mean = float(values.mean())
    spread = z * float(values.std(ddof=1)) / math.sqrt(values.size) if values.size > 1 else 0.0
    return Estimate(mean, mean - spread, mean + spread)


def p_value_against(values: np.ndarray, expected: float) -> float:
    """Two-sided p-value of a z test that the mean of ``values`` is ``expected``."""
    values = np.asarray(values, dtype=float)
    if values.size < 2:
        raise ValueError("a test needs at least two values")
    spread = float(values.std(ddof=1)) / math.sqrt(values.size)
    if spread == 0:
        return 1.0 if float(values.mean()) == expected else 0.0
    z = (float(values.mean()) - expected) / spread
    return math.erfc(abs(z) / math.sqrt(2))


class FirstPlayer(NamedTuple):
    """The first player's score (a draw counting one half) per row, with its interval and p-value."""

    score: np.ndarray
    low: np.ndarray
    high: np.ndarray
    p: np.ndarray


def points(wins: Any, draws: Any) -> Any:
    """A player's points: 1 a win, 1/2 a draw (the score of RULES.md's players), of whole numbers,
    arrays or polars expressions alike; divided by the games, the score every table reports."""
    return wins + draws / 2


def first_player(first_wins: np.ndarray, draws: np.ndarray, second_wins: np.ndarray, level: float = 0.95) -> FirstPlayer:
    """The first player's score (first_wins + draws / 2) / games of each row, with an exact
    two-sided test against 1/2 and an interval that agree at any sample size.

    The test is the sign test (the exact McNemar test): conditional on the m decisive games, the
    first player's wins are binomial (m, pi), and a score of 1/2 is pi = 1/2; the p-value is the
    exact binomial test's, twice the smaller tail capped at 1 (5 wins out of 5 gives 0.0625).

    The score is 1/2 + d (pi - 1/2), d being the share of decisive games. The interval is the
    range of that expression over the box of the Clopper-Pearson interval of pi (Clopper &
    Pearson 1934) and the Wilson interval of d, each at ``level``: it holds 1/2 exactly when the
    interval of pi does, that is when p >= 1 - level, and it carries the draws' own uncertainty,
    which an interval of pi alone misses when the decisive games are lopsided (pipeline.analysis.coverage
    measures it). A row without a decisive game has score 1/2, p = 1 and the interval of d's
    upper bound either side; a row without games NaN throughout."""
    first, draw, second = (np.asarray(column, dtype=np.int64) for column in (first_wins, draws, second_wins))
    decisive, games = first + second, first + draw + second
    alpha = 1 - level
    z = float(_scipy.norm.ppf(1 - alpha / 2))
    with np.errstate(invalid="ignore", divide="ignore"):
        pi_low = np.where(first > 0, _scipy.beta.ppf(alpha / 2, first, second + 1), 0.0) - 0.5
        pi_high = np.where(second > 0, _scipy.beta.ppf(1 - alpha / 2, first + 1, second), 1.0) - 0.5
        d_low, d_high = _wilson_bounds(decisive, games, z)
        tails = np.minimum(_scipy.binom.cdf(first, decisive, 0.5), _scipy.binom.sf(first - 1, decisive, 0.5))
        p = np.where(decisive > 0, np.minimum(1.0, 2 * tails), 1.0)
        score = points(first, draw) / np.where(games > 0, games, np.nan)
    # the bounds hold the estimate: rounding in Wilson's bound at 0 or 1 can put one a hair past it
    low = np.minimum(0.5 + np.minimum(d_low * pi_low, d_high * pi_low), score)
    high = np.maximum(0.5 + np.maximum(d_low * pi_high, d_high * pi_high), score)
    p = np.where(games > 0, p, np.nan)
    return FirstPlayer(score, np.where(games > 0, low, np.nan), np.where(games > 0, high, np.nan), p)


def wilson_centre(share: Any, n: Any, z: float, sqrt: Callable[[Any], Any]) -> tuple[Any, Any]:
    """The centre and half-width of the Wilson score interval of ``share`` over ``n`` trials,
    before clipping to [0, 1]: the one formula for NumPy arrays (``wilson``) and for polars
    expressions (pipeline.analysis.metrics.wilson_columns), given the ``sqrt`` of either."""
    centre = (share + z * z / (2 * n)) / (1 + z * z / n)
    half = z / (1 + z * z / n) * sqrt(share * (1 - share) / n + z * z / (4 * n * n))
    return centre, half


def _wilson_bounds(successes: np.ndarray, trials: np.ndarray, z: float) -> tuple[np.ndarray, np.ndarray]:
    """wilson's bounds, row by row (NaN for no trials)."""
    n = np.where(trials > 0, trials, np.nan).astype(float)
    centre, half = wilson_centre(successes / n, n, z, np.sqrt)
    return np.maximum(0.0, centre - half), np.minimum(1.0, centre + half)


def rate_interval(
    total: np.ndarray, exposure: np.ndarray, dispersion: np.ndarray, z: float = Z95
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """A rate total / exposure (events per game, or per turn) with a score interval that keeps
    its coverage when the events are rare: (rate, low, high) per row.

    The interval is the set of rates r with (total - r exposure)^2 <= z^2 phi r exposure, the
    Poisson score interval (Wilson's construction for a count; see Barker 2002, "A comparison
    of nine confidence intervals for a Poisson parameter") with a dispersion phi:

        r = (total + z^2 phi / 2 -/+ z sqrt(phi total + z^2 phi^2 / 4)) / exposure

    ``dispersion`` is phi estimated from the games: the variance of the rate's ratio estimator
    (games as clusters) divided by the Poisson one, so that the interval is the usual normal one
    when events are many and the Poisson score interval when they are rare (a rare event fires
    at most once in a game: phi is then near 1). With no event (total 0) phi is 1 and the
    interval [0, z^2 / exposure], where a normal interval would collapse to [0, 0]."""
    total, exposure = np.asarray(total, dtype=float), np.asarray(exposure, dtype=float)
    phi = np.where((total > 0) & np.isfinite(dispersion), np.asarray(dispersion, dtype=float), 1.0)
    with np.errstate(invalid="ignore", divide="ignore"):
        centre = total + z * z * phi / 2
        half = z * np.sqrt(phi * total + (z * phi) ** 2 / 4)
        return total / exposure, np.maximum(centre - half, 0.0) / exposure, (centre + half) / exposure


def holm(p: np.ndarray) -> np.ndarray:
    """Holm's step-down adjustment (Holm 1979) of a family of p-values: reject those with an
    adjusted value below the level and the chance of any false rejection in the family is at
    most the level, whatever the dependence between the tests. NaN values are not part of the
    family and stay NaN."""
    p = np.asarray(p, dtype=float)
    adjusted = np.full(p.shape, np.nan)
    present = np.flatnonzero(~np.isnan(p))
    order = present[np.argsort(p[present], kind="stable")]
    steps = (len(order) - np.arange(len(order))) * p[order]
    adjusted[order] = np.minimum(1.0, np.maximum.accumulate(steps))
    return adjusted


def rate_from_sums(
    games: np.ndarray,
    total: np.ndarray,
    exposure: np.ndarray,
    total_squared: np.ndarray,
    cross: np.ndarray,
    exposure_squared: np.ndarray,
    z: float = Z95,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """rate_interval of total / exposure per row, from the sums over a row's games of the count
    x, its exposure t (1 for a rate per game, its turns for a rate per turn), x^2 (total_squared),
    x t (cross) and t^2 (exposure_squared). The dispersion is n sum((x - r t)^2) / ((n - 1) total),
    the ratio estimator's variance (games as clusters) over the Poisson one; NaN (so 1) for a
    row of one game."""
    games, total, exposure = (np.asarray(column, dtype=float) for column in (games, total, exposure))
    with np.errstate(invalid="ignore", divide="ignore"):
        rate = total / exposure
        spread = np.asarray(total_squared) - 2 * rate * np.asarray(cross) + rate**2 * np.asarray(exposure_squared)
        dispersion = games * np.maximum(spread, 0.0) / ((games - 1) * total)
    return rate_interval(total, exposure, np.where(games > 1, dispersion, np.nan), z)


def game_rate(counts: np.ndarray, exposures: np.ndarray | None = None, z: float = Z95) -> Estimate:
    """The rate sum(counts) / sum(exposures) of per-game counts (per game when ``exposures`` is
    None) with its score interval, as metrics.events computes it (rate_from_sums)."""
    x = np.asarray(counts, dtype=float)
    t = np.ones_like(x) if exposures is None else np.asarray(exposures, dtype=float)
    if len(x) == 0 or t.sum() <= 0:
        raise ValueError("a rate needs at least one game with a positive exposure")
    n, total, time, squared, cross, time_squared = (
        np.array([value]) for value in (len(x), x.sum(), t.sum(), x @ x, x @ t, t @ t)
    )
    value, low, high = rate_from_sums(n, total, time, squared, cross, time_squared, z)
    return Estimate(float(value[0]), float(low[0]), float(high[0]))
