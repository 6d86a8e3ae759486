"""A study's metrics, computed in polars from the games table (pipeline.records.scan_games).

Every function takes a polars LazyFrame of games and returns a polars DataFrame with one row
per group (``by``: the ordered pairing ("south", "north") by default; ``by=()`` for the whole
frame), sorted by the group columns. The work is one group_by/agg over the games, so a
1,000,000-game study takes about a second; the Wilson bounds are polars expressions on the
small aggregated frame and give the numbers of pipeline.stats.wilson.

    outcomes(games)  South wins, draws, North wins and the first-player advantage
    ludii(games)     the Ludii game metrics of whole games under their own names (the per-ply
                     ones: pipeline.turns.ludii_plies)
    events(games)    every rule event of engine.EVENTS, long form (one row per group and event)
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import polars as pl

import engine
from pipeline.stats import Z95

PAIRING = ("south", "north")


def _aggregate(games: pl.LazyFrame, by: Sequence[str], exprs: list[pl.Expr]) -> pl.DataFrame:
    """exprs aggregated per group of ``by`` (or over the whole frame when ``by`` is empty)."""
    if by:
        return games.group_by(*by).agg(exprs).sort(*by).collect()
    return games.select(exprs).collect()


def _wilson(successes: str, trials: str, name: str, z: float = Z95) -> list[pl.Expr]:
    """The share successes / trials with its Wilson score interval, as name_share/_low/_high.

    The same formula as pipeline.stats.wilson (successes may be fractional)."""
    n = pl.col(trials).cast(pl.Float64)
    share = pl.col(successes).cast(pl.Float64) / n
    centre = (share + z * z / (2 * n)) / (1 + z * z / n)
    half = z / (1 + z * z / n) * (share * (1 - share) / n + z * z / (4 * n * n)).sqrt()
    return [
        share.alias(f"{name}_share"),
        (centre - half).clip(lower_bound=0.0).alias(f"{name}_low"),
        (centre + half).clip(upper_bound=1.0).alias(f"{name}_high"),
    ]


def _p_value(mean: float | None, sd: float | None, n: int, expected: float) -> float:
    """Two-sided p-value of a z test that the mean is ``expected`` (as pipeline.stats.p_value_against);
    NaN for fewer than two games."""
    if n < 2 or mean is None or sd is None:
        return math.nan
    spread = sd / math.sqrt(n)
    if spread == 0:
        return 1.0 if mean == expected else 0.0
    return math.erfc(abs((mean - expected) / spread) / math.sqrt(2))


def outcomes(games: pl.LazyFrame, by: Sequence[str] = PAIRING) -> pl.DataFrame:
    """Per group: games, south_wins, draws, north_wins; south/draw/north _share, _low, _high
    (two-sided 95% Wilson intervals); and the first-player advantage, South's score with a draw
    as one half (first_player_score/_low/_high, a Wilson interval with fractional successes) with
    first_player_p, the two-sided p-value of a test against one half (normal approximation with the
    sample variance of the per-game scores; 1 when every score is one half, NaN for one game)."""
    by = list(by)
    score = pl.when(pl.col("winner") == "south").then(1.0).when(pl.col("winner") == "draw").then(0.5).otherwise(0.0)
    table = _aggregate(
        games,
        by,
        [
            pl.len().cast(pl.Int64).alias("games"),
            (pl.col("winner") == "south").sum().cast(pl.Int64).alias("south_wins"),
            (pl.col("winner") == "draw").sum().cast(pl.Int64).alias("draws"),
            (pl.col("winner") == "north").sum().cast(pl.Int64).alias("north_wins"),
            score.mean().alias("_score_mean"),
            score.std(ddof=1).alias("_score_sd"),
        ],
    )
    table = table.with_columns((pl.col("south_wins") + pl.col("draws") / 2).alias("_score_sum")).with_columns(
        *_wilson("south_wins", "games", "south"),
        *_wilson("draws", "games", "draw"),
        *_wilson("north_wins", "games", "north"),
        *_wilson("_score_sum", "games", "advantage"),
    )
    p_values = [_p_value(mean, sd, n, 0.5) for mean, sd, n in table.select("_score_mean", "_score_sd", "games").iter_rows()]
    return table.with_columns(pl.Series("first_player_p", p_values, dtype=pl.Float64)).drop("_score_mean", "_score_sd", "_score_sum")


def ludii(games: pl.LazyFrame, by: Sequence[str] = PAIRING) -> pl.DataFrame:
    """The Ludii game metrics (Ludii metrics, Digital Ludeme Project; Stephenson, Piette, Soemers
    and Browne, the Ludii "Evaluation" metrics), per group, under their own names. Player 1 is
    South. The definitions used here:

    - AdvantageP1: share of games won by player 1 (South), a draw counting one half.
    - Balance: 1 - |South's win share - North's win share| (win shares without draws).
    - Completion: Ludii's "games which have a winner (not draw or timeout)": share of games that
      end before the ply cap (end_reason "no_moves") with a winner.
    - Drawishness: share of games drawn (winner "draw").
    - Timeouts: share of games ending at the ply cap.
    - Duration: plies per game: Duration (mean) with Duration_low/_high (95% normal interval,
      sample standard deviation; the mean itself for one game), Duration_median, Duration_p90
      (linear interpolation, as pandas' quantile) and Duration_max. Ludii's Duration is the mean.

    BranchingFactor, DecisionMoves and PositionalRepetition need per-ply data (the legal moves
    and the position of every turn), which the games table does not hold:
    pipeline.turns.ludii_plies computes them by replaying the recorded moves, and the report
    joins its table to this one.
    """
    by = list(by)
    table = _aggregate(
        games,
        by,
        [
            pl.len().cast(pl.Int64).alias("games"),
            (pl.col("winner") == "south").mean().alias("_south"),
            (pl.col("winner") == "draw").mean().alias("_draw"),
            (pl.col("winner") == "north").mean().alias("_north"),
            (pl.col("end_reason") == "ply_cap").mean().alias("_timeout"),
            ((pl.col("end_reason") == "no_moves") & (pl.col("winner") != "draw")).mean().alias("_complete"),
            pl.col("plies").cast(pl.Float64).mean().alias("Duration"),
            pl.col("plies").cast(pl.Float64).std(ddof=1).fill_null(0.0).alias("_duration_sd"),
            pl.col("plies").cast(pl.Float64).median().alias("Duration_median"),
            pl.col("plies").cast(pl.Float64).quantile(0.9, interpolation="linear").alias("Duration_p90"),
            pl.col("plies").cast(pl.Int64).max().alias("Duration_max"),
        ],
    )
    return table.select(
        *by,
        "games",
        (pl.col("_south") + pl.col("_draw") / 2).alias("AdvantageP1"),
        (1 - (pl.col("_south") - pl.col("_north")).abs()).alias("Balance"),
        pl.col("_complete").alias("Completion"),
        pl.col("_draw").alias("Drawishness"),
        pl.col("_timeout").alias("Timeouts"),
        "Duration",
        (pl.col("Duration") - Z95 * pl.col("_duration_sd") / pl.col("games").cast(pl.Float64).sqrt()).alias("Duration_low"),
        (pl.col("Duration") + Z95 * pl.col("_duration_sd") / pl.col("games").cast(pl.Float64).sqrt()).alias("Duration_high"),
        "Duration_median",
        "Duration_p90",
        "Duration_max",
    )


def events(games: pl.LazyFrame, by: Sequence[str] = PAIRING) -> pl.DataFrame:
    """For every rule event of engine.EVENTS, per group (long form: one row per group and event,
    events in engine.EVENTS order): games, turns (the sum of plies), fired (games where the count
    is above 0) with fired_share/_low/_high (95% Wilson interval), total, mean per game with
    mean_low/mean_high (95% normal interval, sample standard deviation; the mean itself for one
    game) and per_100_turns = 100 * total / turns with per_100_turns_low/_high (a 95% ratio
    interval over games; null without turns)."""
    by = list(by)
    wide = _aggregate(
        games,
        by,
        [
            pl.len().cast(pl.Int64).alias("games"),
            pl.col("plies").cast(pl.Int64).sum().alias("turns"),
            (pl.col("plies").cast(pl.Float64) ** 2).sum().alias("_turns_squared"),
            *[(pl.col(name) > 0).sum().cast(pl.Int64).alias(f"{name}:fired") for name in engine.EVENTS],
            *[(pl.col(name).cast(pl.Float64) ** 2).sum().alias(f"{name}:squared") for name in engine.EVENTS],
            *[(pl.col(name).cast(pl.Float64) * pl.col("plies")).sum().alias(f"{name}:by_turns") for name in engine.EVENTS],
            *[pl.col(name).cast(pl.Int64).sum().alias(f"{name}:total") for name in engine.EVENTS],
            *[pl.col(name).cast(pl.Float64).std(ddof=1).alias(f"{name}:sd") for name in engine.EVENTS],
        ],
    )
    parts = [
        wide.select(
            *by,
            pl.lit(name).alias("event"),
            "games",
            "turns",
            pl.col(f"{name}:fired").alias("fired"),
            pl.col(f"{name}:total").alias("total"),
            pl.col(f"{name}:sd").fill_null(0.0).alias("_sd"),
            pl.col(f"{name}:squared").alias("_squared"),
            pl.col(f"{name}:by_turns").alias("_by_turns"),
            "_turns_squared",
        )
        for name in engine.EVENTS
    ]
    table = pl.concat(parts).with_columns(order=pl.col("event").replace_strict(list(engine.EVENTS), range(len(engine.EVENTS))))
    table = table.sort(*by, "order").drop("order")
    mean = pl.col("total") / pl.col("games")
    spread = Z95 * pl.col("_sd") / pl.col("games").cast(pl.Float64).sqrt()
    return table.with_columns(
        *_wilson("fired", "games", "fired"),
        mean.alias("mean"),
        (mean - spread).alias("mean_low"),
        (mean + spread).alias("mean_high"),
        *_rate_per_100_turns(),
    ).drop("_sd", "_squared", "_by_turns", "_turns_squared")


def _rate_per_100_turns() -> list[pl.Expr]:
    """per_100_turns = 100 * total / turns, a ratio of two sums over games, with its 95% interval
    by the delta method with the games as clusters (Cochran, Sampling Techniques, ratio
    estimator): se = sqrt(sum((x - r t)^2) / (n - 1) / n) / mean(t), where x is a game's count
    and t its turns; the sum of squares comes from the sums of x^2, x t and t^2. The lower bound
    is clipped at 0."""
    rate = pl.col("total") / pl.col("turns")
    games = pl.col("games").cast(pl.Float64)
    spread = pl.col("_squared") - 2 * rate * pl.col("_by_turns") + rate**2 * pl.col("_turns_squared")
    se = (spread.clip(lower_bound=0.0) / (games - 1) / games).sqrt() / (pl.col("turns") / games)
    half = pl.when(pl.col("games") > 1).then(Z95 * se).otherwise(0.0)
    defined = pl.col("turns") > 0
    return [
        pl.when(defined).then(100 * rate).alias("per_100_turns"),
        pl.when(defined).then(100 * (rate - half).clip(lower_bound=0.0)).alias("per_100_turns_low"),
        pl.when(defined).then(100 * (rate + half)).alias("per_100_turns_high"),
    ]
