"""Reference intervals and tests for the report's figures, from scipy's own routines and root
finding rather than the closed forms of pipeline.analysis.stats: the tests compare the two."""

from __future__ import annotations

import numpy as np
from scipy.optimize import brentq
from scipy.stats import binomtest

Z95 = 1.959963984540054


def sign_test(first: int, draws: int, second: int) -> tuple[float, float, float, float]:
    """The first player's score 1/2 + d (pi - 1/2), its range over the box of scipy's exact
    (Clopper-Pearson) interval of pi, the decisive games' win share, and its Wilson interval of
    d, the share of decisive games; and scipy's exact two-sided binomial p of the decisive games."""
    decisive, games = first + second, first + draws + second
    if decisive == 0:
        raise ValueError("no decisive game")
    pi = binomtest(first, decisive).proportion_ci(method="exact")
    d = binomtest(decisive, games).proportion_ci(method="wilson")
    corners = [0.5 + share * (win - 0.5) for share in (d.low, d.high) for win in (pi.low, pi.high)]
    score = (first + draws / 2) / games
    return score, min(*corners, score), max(*corners, score), binomtest(first, decisive).pvalue


def score_rate(counts: np.ndarray, exposures: np.ndarray) -> tuple[float, float, float]:
    """The rate sum(counts) / sum(exposures) and the rates r where the score statistic
    (X - r T)^2 / (phi r T) is at most Z95^2, found by root-finding; phi is the ratio
    estimator's variance over games (residuals counts - rate * exposures) over the Poisson one."""
    total, time, n = counts.sum(), exposures.sum(), len(counts)
    rate = total / time
    if total == 0:
        return 0.0, 0.0, Z95**2 / time
    phi = (counts - rate * exposures).var(ddof=1) * n / total
    if phi == 0:
        return rate, rate, rate

    def score(r: float) -> float:
        return (total - r * time) ** 2 - Z95**2 * phi * r * time

    low = brentq(score, 0.0, rate) if score(0.0) > 0 else 0.0
    return rate, low, brentq(score, rate, 10 * rate + 10 * Z95**2 * phi / time)
