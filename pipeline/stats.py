"""Interval estimates used by every summary and report."""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

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
    share = successes / trials
    centre = (share + z * z / (2 * trials)) / (1 + z * z / trials)
    half = z / (1 + z * z / trials) * math.sqrt(share * (1 - share) / trials + z * z / (4 * trials * trials))
    return Estimate(share, max(0.0, centre - half), min(1.0, centre + half))


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
