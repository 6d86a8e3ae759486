"""Sampled against exact: every figure a study samples that engine.exact_outcome also knows.

    exact_check(games, exact)   one row per pairing and quantity: sampled, exact, se, z, flagged

Exact before estimated: where a study has its exact outcomes (exact = true or "self-play",
pipeline.runs.records.scan_exact), the sampled figures are no longer the answer but a check of the
engine, the batch player, the records and the metrics together. A sampled figure that lies
far from its exact value is a possible bug, and the report says so at its top.

The quantities are named as the columns of exact.parquet (QUANTITIES): south_win, draw,
north_win, first_player_score, mean_plies, and for each event of engine.EVENTS fires_<event>
(the share of games in which it fires) and mean_<event> (its mean count per game).
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any

import polars as pl
from scipy.stats import binom

import engine
from engine.game import EVENT_BY_NAME
from pipeline.runs.records import PAIRING_COLUMNS

SHARES = ("south_win", "draw", "north_win")
QUANTITIES = (
    *SHARES,
    "first_player_score",
    "mean_plies",
    *(f"{kind}_{name}" for name in engine.EVENTS for kind in ("fires", "mean")),
)
FLAG_Z = 4.0  # a figure more than 4 standard errors from its exact value is flagged
FLAG_P = math.erfc(FLAG_Z / math.sqrt(2))  # 6.3e-5: the two-sided chance of |z| > 4 under the normal law
MIN_GAMES = 30  # fewer games in a pairing: its z is approximate
MIN_EXPECTED = 10  # fewer games expected away from a figure's most likely value: its z is approximate
# Exact values carry the rounding of float64 sums (engine.exact.outcome: far below 1e-12): a sampled
# figure that equals one up to this is equal, where the exact law leaves it no spread.
_ROUNDING = 1e-12


def exact_check(games: pl.LazyFrame, exact: pl.LazyFrame | pl.DataFrame) -> pl.DataFrame:
    """Every sampled figure of the study against its exact value: one row per pairing (rules,
    south, north) that is both in ``games`` (pipeline.runs.records.scan_games) and in ``exact``
    (pipeline.runs.records.scan_exact), and per quantity of QUANTITIES, in the exact table's order.

    Columns: rules, south, north, quantity, games, sampled, exact, se, se_from, z, p, approximate,
    flagged.

    The test is a one-sample z test of each sampled figure against its exact value,
    z = (sampled - exact) / se, flagged when |z| > 4 (FLAG_Z). The standard error is that of a
    mean of ``games`` independent games under the exact distribution wherever it is known
    (se_from "exact"):

    - a share p (South wins, draws, North wins, games in which an event fires): sqrt(p(1 - p) / n)
      with the exact p;
    - the first-player score (1, 1/2 or 0 a game): the exact variance from south_win, draw and
      north_win;
    - the mean length: the exact variance of the length distribution (plies);
    - an event's mean count: its exact variance is not stored, so the sample standard deviation
      (se_from "sample"), but never below the least a count with the exact mean and probability
      of firing can have (least_count_variance; se_from "exact bound"), so that a sample in which
      a rare event never fires, or every game counts the same, is not taken for a certain one.

    A standard error of 0 (the exact law leaves the figure no spread: p = 0 or 1, a count that
    never fires) gives z = 0 when the sampled figure equals the exact one and an infinite z,
    flagged, otherwise.

    The normal law behind z is approximate, and ``approximate`` is true, when the pairing has
    fewer than 30 games (MIN_GAMES) or fewer than 10 of its games (MIN_EXPECTED) are expected
    away from the figure's most likely value: n min(p, 1 - p) for a share, n (1 - the largest
    of south_win, draw, north_win) for the score, n (1 - the most likely length) for the mean
    length, n f for a count (only P(0) = 1 - f of its law is known). There a share is flagged by
    its exact binomial test instead (p below FLAG_P = P(|Z| > 4), the level of |z| > 4), and any
    other figure only when the exact law rules it out (an infinite z): a single game in which a
    rare event fires would otherwise lie many standard errors away.

    ``p`` is the two-sided chance under the exact distribution of a figure at least as far from
    its exact value: from the binomial law for a share (twice the smaller tail, at most 1), from
    the normal law otherwise."""
    sampled = _sampled(games)
    table = exact.lazy() if isinstance(exact, pl.DataFrame) else exact
    exact_rows = (
        table.select(*PAIRING_COLUMNS, *QUANTITIES, "plies")
        .unique(list(PAIRING_COLUMNS), keep="first", maintain_order=True)
        .collect()
    )
    joined = exact_rows.join(sampled, on=list(PAIRING_COLUMNS), how="inner", suffix="_sampled", maintain_order="left")
    rows = [check for row in joined.iter_rows(named=True) for check in _checks(row)]
    return pl.DataFrame(rows, schema=_SCHEMA)


def z_score(sampled: float, exact: float, se: float) -> float:
    """(sampled - exact) / se: 0 when the two are equal up to float rounding (an exact value
    such as 1 - 1e-16 whose spread is rounding too would otherwise give a huge z), and with
    se = 0 an infinity of the difference's sign otherwise."""
    difference = sampled - exact
    if abs(difference) <= _ROUNDING * max(1.0, abs(exact)):
        return 0.0
    if se > 0:
        return difference / se
    return math.copysign(math.inf, difference)


def share_se(p: float, games: int) -> float:
    """The standard error of a share of ``games`` games whose exact probability is ``p``."""
    p = min(max(p, 0.0), 1.0)
    return math.sqrt(p * (1 - p) / games)


def binomial_p(successes: int, games: int, p: float) -> float:
    """The two-sided chance of a count at least as far out as ``successes`` in ``games`` games
    of probability ``p``: twice the smaller binomial tail, at most 1."""
    p = min(max(p, 0.0), 1.0)
    below = float(binom.cdf(successes, games, p))
    above = float(binom.sf(successes - 1, games, p))
    return min(1.0, 2 * min(below, above))


def least_count_variance(mean: float, fires: float) -> float:
    """The least variance a count can have with this exact mean and probability of being above 0:
    it is a whole number, at least 1 when above 0, so given that it fires its mean is
    mean / fires and its variance at least that of the two whole numbers around it; the law of
    total variance adds the spread between 0 and mean / fires. 0 for a count that never fires."""
    if mean <= 0 or fires <= 0:
        return 0.0
    fired_mean = mean / fires
    fraction = fired_mean - math.floor(fired_mean)
    return max(fires * fraction * (1 - fraction) + fired_mean * fired_mean * fires * (1 - fires), 0.0)


def label(quantity: str) -> str:
    """A quantity of QUANTITIES in words: "South wins", "captures: share of games it fires in",
    "stones captured: mean per game", ... (an event by its short name, engine.game.Event.short)."""
    if quantity in _LABELS:
        return _LABELS[quantity]
    kind, name = quantity.split("_", 1)
    found = EVENT_BY_NAME.get(name)
    words = found.short if found is not None else name.replace("_", " ")
    return f"{words}: share of games it fires in" if kind == "fires" else f"{words}: mean per game"


_LABELS = {
    "south_win": "South wins",
    "draw": "draws",
    "north_win": "North wins",
    "first_player_score": "first-player score",
    "mean_plies": "mean length (plies)",
}
_SCHEMA: dict[str, type[pl.DataType]] = {
    "rules": pl.String,
    "south": pl.String,
    "north": pl.String,
    "quantity": pl.String,
    "games": pl.Int64,
    "sampled": pl.Float64,
    "exact": pl.Float64,
    "se": pl.Float64,
    "se_from": pl.String,
    "z": pl.Float64,
    "p": pl.Float64,
    "approximate": pl.Boolean,
    "flagged": pl.Boolean,
}


def _sampled(games: pl.LazyFrame) -> pl.DataFrame:
    """Per pairing: its games, the counts of each outcome and of the games in which each event
    fires, the mean score, length and counts, and the counts' sample standard deviations.

    Every figure is computed from exact sums, so that it does not depend on the order in which
    the games are read: the means are sums of whole numbers (or halves) in float64, exact below
    2**53, and a standard deviation comes from the whole-number sums of the counts and of their
    squares (a float's running variance would change in its last digit from one run to the next)."""
    score = pl.when(pl.col("winner") == "south").then(1.0).when(pl.col("winner") == "draw").then(0.5).otherwise(0.0)
    exprs = [
        pl.len().cast(pl.Int64).alias("games"),
        *[(pl.col("winner") == winner).sum().cast(pl.Int64).alias(share) for winner, share in zip(_WINNERS, SHARES, strict=True)],
        score.mean().alias("first_player_score"),
        pl.col("plies").cast(pl.Float64).mean().alias("mean_plies"),
    ]
    for name in engine.EVENTS:
        count = pl.col(name).cast(pl.Int64)
        exprs += [
            (count > 0).sum().cast(pl.Int64).alias(f"fires_{name}"),
            count.cast(pl.Float64).mean().alias(f"mean_{name}"),
            count.sum().alias(f"sum_{name}"),
            (count * count).sum().alias(f"squares_{name}"),
        ]
    sampled = games.group_by(list(PAIRING_COLUMNS)).agg(exprs).collect()
    games_ = sampled["games"].to_list()
    for name in engine.EVENTS:
        sums, squares = sampled[f"sum_{name}"].to_list(), sampled[f"squares_{name}"].to_list()
        sd = [_sample_sd(n, total, square) for n, total, square in zip(games_, sums, squares, strict=True)]
        column = pl.Series(f"sum_{name}", sd, dtype=pl.Float64)  # in place of the sums: the columns keep their order
        sampled = sampled.with_columns(column).rename({f"sum_{name}": f"sd_{name}"}).drop(f"squares_{name}")
    return sampled


def _sample_sd(n: int, total: int, squares: int) -> float | None:
    """The sample standard deviation (n - 1 in the denominator) of n whole numbers with this sum
    and sum of squares, from exact integer arithmetic; None for fewer than two."""
    if n < 2:
        return None
    return math.sqrt(Fraction(n * squares - total * total, n * (n - 1)))


_WINNERS = ("south", "draw", "north")


def _checks(row: dict[str, Any]) -> list[dict[str, Any]]:
    """The rows of one pairing: ``row`` holds its exact values (QUANTITIES, plies) and, with the
    suffix _sampled, its sampled counts and means (_sampled's columns)."""
    n = int(row["games"])
    checks = [_share(row, quantity, n) for quantity in SHARES]
    checks += [_score(row, n), _length(row, n)]
    for name in engine.EVENTS:
        checks += [_share(row, f"fires_{name}", n), _count(row, name, n)]
    return [{key: row[key] for key in PAIRING_COLUMNS} | {"games": n} | check for check in checks]


def _share(row: dict[str, Any], quantity: str, n: int) -> dict[str, Any]:
    p, successes = float(row[quantity]), int(row[f"{quantity}_sampled"])
    se = share_se(p, n)
    z = z_score(successes / n, p, se)
    probability = binomial_p(successes, n, p)
    approximate = _approximate(n, min(p, 1 - p))
    return {
        "quantity": quantity,
        "sampled": successes / n,
        "exact": p,
        "se": se,
        "se_from": "exact",
        "z": z,
        "p": probability,
        "approximate": approximate,
        "flagged": probability < FLAG_P if approximate else abs(z) > FLAG_Z,
    }


def _score(row: dict[str, Any], n: int) -> dict[str, Any]:
    exact = float(row["first_player_score"])
    masses = (float(row["south_win"]), float(row["draw"]), float(row["north_win"]))
    variance = sum(mass * (score - exact) ** 2 for mass, score in zip(masses, (1.0, 0.5, 0.0), strict=True))
    return _normal(row, "first_player_score", n, exact, math.sqrt(variance / n), "exact", 1 - max(masses))


def _length(row: dict[str, Any], n: int) -> dict[str, Any]:
    exact, plies = float(row["mean_plies"]), [float(mass) for mass in row["plies"]]
    variance = sum(mass * (length - exact) ** 2 for length, mass in enumerate(plies))
    return _normal(row, "mean_plies", n, exact, math.sqrt(variance / n), "exact", 1 - max(plies, default=1.0))


def _count(row: dict[str, Any], name: str, n: int) -> dict[str, Any]:
    mean, fires = float(row[f"mean_{name}"]), float(row[f"fires_{name}"])
    least = math.sqrt(least_count_variance(mean, fires))
    sd = row[f"sd_{name}"]
    if mean > 0 and sd is not None and sd >= least:
        return _normal(row, f"mean_{name}", n, mean, sd / math.sqrt(n), "sample", fires)
    return _normal(row, f"mean_{name}", n, mean, least / math.sqrt(n), "exact bound" if mean > 0 else "exact", fires)


def _normal(row: dict[str, Any], quantity: str, n: int, exact: float, se: float, source: str, spread: float) -> dict[str, Any]:
    """A figure tested against the normal law: flagged by |z| > 4 or, where that law is
    approximate, only when the exact law rules the figure out."""
    sampled = float(row[f"{quantity}_sampled"])
    z = z_score(sampled, exact, se)
    approximate = _approximate(n, spread)
    return {
        "quantity": quantity,
        "sampled": sampled,
        "exact": exact,
        "se": se,
        "se_from": source,
        "z": z,
        "p": math.erfc(abs(z) / math.sqrt(2)),
        "approximate": approximate,
        "flagged": math.isinf(z) if approximate else abs(z) > FLAG_Z,
    }


def _approximate(n: int, spread: float) -> bool:
    """Whether the normal law is a poor guide: few games, or few expected away from the figure's
    most likely value (``spread``: the exact probability of being elsewhere)."""
    return n < MIN_GAMES or n * spread < MIN_EXPECTED
