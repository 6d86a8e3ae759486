"""A study's metrics, computed in polars from the games table (pipeline.runs.records.scan_games).

Every function takes a polars LazyFrame of games and returns a polars DataFrame with one row
per group (``by``: the ordered pairing ("south", "north") by default; ``by=()`` for the whole
frame), sorted by the group columns. The work is one group_by/agg over the games, so a
1,000,000-game study takes about a second; the Wilson bounds are polars expressions on the
small aggregated frame and give the numbers of pipeline.analysis.stats.wilson.

    outcomes(games)  South wins, draws, North wins and the first player's score
    ludii(games)     the Ludii game metrics of whole games under their own names (the per-ply
                     ones: pipeline.analysis.turns.ludii_plies)
    events(games)    every rule event of engine.EVENTS, long form (one row per group and event)
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import polars as pl

import engine
from engine.game import Rules
from pipeline.analysis.stats import Z95, first_player, points, rate_from_sums, wilson_centre

PAIRING = ("south", "north")


def _aggregate(games: pl.LazyFrame, by: Sequence[str], exprs: list[pl.Expr]) -> pl.DataFrame:
    """exprs aggregated per group of ``by`` (or over the whole frame when ``by`` is empty)."""
    if by:
        return games.group_by(*by).agg(exprs).sort(*by).collect()
    return games.select(exprs).collect()


def wilson_columns(successes: str, trials: str, name: str, z: float = Z95) -> list[pl.Expr]:
    """The share successes / trials with its Wilson score interval, as name_share/_low/_high:
    pipeline.analysis.stats.wilson on columns (successes may be fractional)."""
    n = pl.col(trials).cast(pl.Float64)
    share = pl.col(successes).cast(pl.Float64) / n
    centre, half = wilson_centre(share, n, z, pl.Expr.sqrt)
    return [
        share.alias(f"{name}_share"),
        (centre - half).clip(lower_bound=0.0).alias(f"{name}_low"),
        (centre + half).clip(upper_bound=1.0).alias(f"{name}_high"),
    ]


def outcomes(games: pl.LazyFrame, by: Sequence[str] = PAIRING) -> pl.DataFrame:
    """Per group: games, south_wins, draws, north_wins; south/draw/north _share, _low, _high
    (two-sided 95% Wilson intervals); and the first player's score, South's with a draw as one
    half: first_player_score with first_player_low/_high and first_player_p, an exact interval
    and the exact two-sided test against one half that agree (pipeline.analysis.stats.first_player: the
    sign test on the decisive games and its Clopper-Pearson interval)."""
    by = list(by)
    table = _aggregate(
        games,
        by,
        [
            pl.len().cast(pl.Int64).alias("games"),
            (pl.col("winner") == "south").sum().cast(pl.Int64).alias("south_wins"),
            (pl.col("winner") == "draw").sum().cast(pl.Int64).alias("draws"),
            (pl.col("winner") == "north").sum().cast(pl.Int64).alias("north_wins"),
        ],
    )
    table = table.with_columns(
        *wilson_columns("south_wins", "games", "south"),
        *wilson_columns("draws", "games", "draw"),
        *wilson_columns("north_wins", "games", "north"),
    )
    counts = (table["south_wins"], table["draws"], table["north_wins"])
    return table.with_columns(*first_player_columns(*counts, "first_player_score", "first_player"))


def first_player_columns(
    first: pl.Series, draws: pl.Series, second: pl.Series, value: str, stem: str, *, shift: float = 0.0
) -> list[pl.Series]:
    """pipeline.analysis.stats.first_player as the columns ``value`` (the score less ``shift``),
    stem_low, stem_high and stem_p."""
    estimate = first_player(first.to_numpy(), draws.to_numpy(), second.to_numpy())
    return [
        pl.Series(value, estimate.score - shift, dtype=pl.Float64),
        pl.Series(f"{stem}_low", estimate.low - shift, dtype=pl.Float64),
        pl.Series(f"{stem}_high", estimate.high - shift, dtype=pl.Float64),
        pl.Series(f"{stem}_p", estimate.p, dtype=pl.Float64),
    ]


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
      sample standard deviation; the mean itself for one game), Duration_median, Duration_p90,
      Duration_p99 (linear interpolation, as pandas' quantile) and Duration_max. Ludii's Duration is the mean.

    BranchingFactor, DecisionMoves and PositionalRepetition need per-ply data (the legal moves
    and the position of every turn), which the games table does not hold:
    pipeline.analysis.turns.ludii_plies computes them by replaying the recorded moves, and the report
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
            pl.col("plies").cast(pl.Int64).max().alias("Duration_max"),
        ],
    )
    table = table.join(_length_spread(games, by), on=by, maintain_order="left") if by else table.hstack(_length_spread(games, by))
    return table.select(
        *by,
        "games",
        points(pl.col("_south"), pl.col("_draw")).alias("AdvantageP1"),
        (1 - (pl.col("_south") - pl.col("_north")).abs()).alias("Balance"),
        pl.col("_complete").alias("Completion"),
        pl.col("_draw").alias("Drawishness"),
        pl.col("_timeout").alias("Timeouts"),
        "Duration",
        (pl.col("Duration") - Z95 * pl.col("_duration_sd") / pl.col("games").cast(pl.Float64).sqrt()).alias("Duration_low"),
        (pl.col("Duration") + Z95 * pl.col("_duration_sd") / pl.col("games").cast(pl.Float64).sqrt()).alias("Duration_high"),
        "Duration_median",
        "Duration_p90",
        "Duration_p99",
        "Duration_max",
    )


def _length_spread(games: pl.LazyFrame, by: list[str]) -> pl.DataFrame:
    """Per group of ``by``: the standard deviation of the plies (_duration_sd) and their median,
    90th and 99th percentiles. A quantile keeps every row of the query in memory, the key
    strings with it (1.4 GB for 6 million games), and polars' streaming engine, which the other
    aggregates take, sums the variance in another order (its last bits differ): so the lengths
    are read as (group number, plies), 6 bytes a game in the order of the games (``numbered``),
    and aggregated in memory."""
    spread = [
        pl.col("plies").cast(pl.Float64).std(ddof=1).fill_null(0.0).alias("_duration_sd"),
        pl.col("plies").cast(pl.Float64).median().alias("Duration_median"),
        pl.col("plies").cast(pl.Float64).quantile(0.9, interpolation="linear").alias("Duration_p90"),
        pl.col("plies").cast(pl.Float64).quantile(0.99, interpolation="linear").alias("Duration_p99"),
    ]
    if not by:
        return games.select(spread).collect()
    groups, lengths = numbered(games, by, ["plies"])
    return groups.join(lengths.group_by("_group").agg(spread), on="_group").drop("_group")


def numbered(games: pl.LazyFrame, by: Sequence[str], columns: Sequence[str]) -> tuple[pl.DataFrame, pl.DataFrame]:
    """The groups of ``by`` numbered (a row each: ``by`` and _group, a UInt32), and ``columns``
    of every game beside its group's number (_group), in the order of the games: a table light
    enough to hold whole (a quantile or a rank needs every row of a group at once), without the
    strings of the group's keys (16 bytes or more each, a game)."""
    groups = games.select(by).unique().with_row_index("_group").collect()
    rows = games.join(groups.lazy(), on=list(by), how="left", maintain_order="left").select("_group", *columns)
    return groups, rows.collect()


def events(games: pl.LazyFrame, by: Sequence[str] = PAIRING) -> pl.DataFrame:
    """For every rule event of engine.EVENTS, per group (long form: one row per group and event,
    events in engine.EVENTS order): games, turns (the sum of plies), fired (games where the count
    is above 0) with fired_share/_low/_high (95% Wilson interval), total, mean per game with
    mean_low/mean_high, and per_100_turns = 100 * total / turns with per_100_turns_low/_high
    (null without turns). The intervals of the mean and the rate are 95% score intervals
    (pipeline.analysis.stats.rate_interval), whose dispersion comes from the games as clusters (the
    ratio estimator's variance, Cochran, Sampling Techniques): they match the normal interval
    for a frequent event and keep their coverage for a rare one, where a normal interval
    collapses onto the few games in which it fired. Grouped by rules, a group has no row for an
    event its rule set rules out (engine.possible_events: feeding_forced without the feeding
    rule, say), which is not there rather than 0."""
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
            pl.col(f"{name}:squared").alias("_squared"),
            pl.col(f"{name}:by_turns").alias("_by_turns"),
            "_turns_squared",
        )
        for name in engine.EVENTS
    ]
    table = pl.concat(parts).with_columns(order=pl.col("event").replace_strict(list(engine.EVENTS), range(len(engine.EVENTS))))
    table = table.sort(*by, "order").drop("order").with_columns(*wilson_columns("fired", "games", "fired"))
    ones = table["games"].cast(pl.Float64)  # a rate per game: each game's exposure is 1
    per_game = _rate(table, ones, ones, table["total"].cast(pl.Float64), "mean", 1.0)
    per_turn = _rate(table, table["turns"], table["_turns_squared"], table["_by_turns"], "per_100_turns", 100.0)
    table = table.with_columns(*per_game, *per_turn).drop("_squared", "_by_turns", "_turns_squared")
    return possible_only(table) if "rules" in by else table


def possible_only(table: pl.DataFrame) -> pl.DataFrame:
    """The rows of ``table`` (columns rules and event) whose event its rule set can fire
    (engine.possible_events), in their order."""
    possible = [
        (rules, name) for rules in table["rules"].unique().to_list() for name in engine.possible_events(Rules.from_name(rules))
    ]
    keep = pl.DataFrame(possible, schema={"rules": table.schema["rules"], "event": pl.String}, orient="row")
    return table.join(keep, on=["rules", "event"], how="semi", maintain_order="left")


def _rate(
    table: pl.DataFrame, exposure: pl.Series, squared: pl.Series, cross: pl.Series, name: str, scale: float
) -> list[pl.Series]:
    """scale * total / exposure with its 95% score interval (pipeline.analysis.stats.rate_from_sums), as
    name, name_low and name_high; null where the exposure is 0. ``squared`` and ``cross`` are the
    sums over games of the exposure squared and of the count times the exposure."""
    time = exposure.to_numpy().astype(float)
    value, low, high = rate_from_sums(
        table["games"].to_numpy(),
        table["total"].to_numpy(),
        time,
        table["_squared"].to_numpy(),
        cross.to_numpy(),
        squared.to_numpy(),
    )
    return [
        pl.Series(column, np.where(time > 0, scale * values, np.nan), dtype=pl.Float64).fill_nan(None)
        for column, values in ((name, value), (f"{name}_low", low), (f"{name}_high", high))
    ]
