"""How often the report's 95% intervals hold the true value, in small pairings: ``coverage``.

An interval is only as good as its coverage, and the normal approximation fails where a
pairing has few games or an event is rare (one game in which the event fires, or none, and
the normal interval of its rate collapses). Where the exact outcome of a pairing is known
(engine.exact_outcome), the true value of every figure is known, so the coverage can be
measured rather than assumed: play ``replications`` independent small pairings of ``games``
games each (engine.play_batch, seeded), compute each one's intervals with pipeline.analysis.metrics,
and count how many hold the exact value. Beside each interval of the report, the normal
interval it replaced is measured on the same games (mean +- z sd / sqrt(n), the delta-method
ratio interval, and the Wilson interval of the first player's score with fractional wins), so
that the gain is visible.

    coverage(south, north, exact)  a table: one row per figure and interval
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import polars as pl

import engine
from engine.game import END_EVENTS, POSITION_FLAGS
from pipeline.analysis.metrics import events, outcomes
from pipeline.analysis.stats import Z95, points, wilson
from pipeline.runs.records import games_table

COLUMNS = ("figure", "interval", "exact", "games", "replications", "covered", "coverage", "coverage_low", "coverage_high")
# The events measured by default: the position flags and the ends but singleton_end, the usual end
# where a single stone may not be moved (91% of random games at 4 stones a pit); intervals fail on rare events.
RARE_EVENTS = (*POSITION_FLAGS, *(name for name in END_EVENTS if name != "singleton_end"))


def coverage(
    south: str,
    north: str,
    exact: Mapping[str, float],
    *,
    rules: engine.Rules | None = None,
    games: int = 30,
    replications: int = 2000,
    seed: int = 0,
    names: tuple[str, ...] = RARE_EVENTS,
) -> pl.DataFrame:
    """The coverage of the 95% intervals of pipeline.analysis.metrics in ``replications`` pairings of
    ``games`` games of ``south`` against ``north`` (table strategies), against the exact values
    in ``exact`` (a row of the report's exact table, pipeline.study.report.data.EXACT_COLUMNS:
    first_player_score, mean_plies, fires_<event> and mean_<event>). Games are those of
    engine.play_batch with ``seed``, cut into consecutive pairings.

    One row per figure (the first player's score; for each event of ``names``, the share of
    games in which it fires, its mean count per game and its rate per 100 turns) and interval
    ("report": the one the report prints; "normal": the normal approximation it replaced):
    the exact value, covered (pairings whose interval holds it), coverage and its 95% Wilson
    interval (over the replications)."""
    if games < 2 or replications < 1:
        raise ValueError(f"coverage needs at least 2 games a pairing and 1 replication, not {games} and {replications}")
    batch = engine.play_batch(games * replications, south, north, rules=rules or engine.Rules(), seed=seed)
    played = pl.from_arrow(games_table(batch, study="coverage", first_id=0))
    assert isinstance(played, pl.DataFrame)
    played = played.with_columns((pl.col("game_id") // games).alias("replication"))
    rows = _first_player_rows(played, exact)
    counts = events(played.lazy(), by=["replication"]).filter(pl.col("event").is_in(list(names)))
    for (name,), part in counts.group_by("event", maintain_order=True):
        rows += _event_rows(str(name), part, played, exact)
    table = pl.DataFrame(rows, schema=["figure", "interval", "exact", "covered"], orient="row")
    table = table.with_columns(pl.lit(games).alias("games"), pl.lit(replications).alias("replications"))
    bounds = [wilson(covered, replications) for covered in table["covered"].to_list()]
    return table.with_columns(
        pl.Series("coverage", [bound.value for bound in bounds]),
        pl.Series("coverage_low", [bound.low for bound in bounds]),
        pl.Series("coverage_high", [bound.high for bound in bounds]),
    ).select(COLUMNS)


def _held(low: np.ndarray, high: np.ndarray, value: float) -> int:
    """How many intervals hold ``value`` (a hair of rounding allowed at the bounds)."""
    slack = 1e-12 * max(1.0, abs(value))
    return int(((low <= value + slack) & (value - slack <= high)).sum())


def _first_player_rows(played: pl.DataFrame, exact: Mapping[str, float]) -> list[tuple[str, str, float, int]]:
    table = outcomes(played.lazy(), by=["replication"])
    value = float(exact["first_player_score"])
    score = points(table["south_wins"], table["draws"]).to_numpy()
    normal = [wilson(points, games) for points, games in zip(score, table["games"].to_numpy(), strict=True)]
    return [
        (
            "first-player score",
            "report",
            value,
            _held(table["first_player_low"].to_numpy(), table["first_player_high"].to_numpy(), value),
        ),
        (
            "first-player score",
            "normal",
            value,
            _held(np.array([e.low for e in normal]), np.array([e.high for e in normal]), value),
        ),
    ]


def _event_rows(
    name: str, part: pl.DataFrame, played: pl.DataFrame, exact: Mapping[str, float]
) -> list[tuple[str, str, float, int]]:
    """The event's share of games, mean per game and rate per 100 turns: the report's interval
    and the normal one, per replication."""
    fires, mean = float(exact[f"fires_{name}"]), float(exact[f"mean_{name}"])
    per_turn = 100 * mean / float(exact["mean_plies"])
    normal_mean, normal_rate = _normal(played, name)
    return [
        (
            f"{name}: games where it fires",
            "report",
            fires,
            _held(part["fired_low"].to_numpy(), part["fired_high"].to_numpy(), fires),
        ),
        (f"{name}: mean per game", "report", mean, _held(part["mean_low"].to_numpy(), part["mean_high"].to_numpy(), mean)),
        (f"{name}: mean per game", "normal", mean, _held(*normal_mean, mean)),
        (
            f"{name}: per 100 turns",
            "report",
            per_turn,
            _held(part["per_100_turns_low"].to_numpy(), part["per_100_turns_high"].to_numpy(), per_turn),
        ),
        (f"{name}: per 100 turns", "normal", per_turn, _held(*normal_rate, per_turn)),
    ]


def _normal(played: pl.DataFrame, name: str) -> tuple[tuple[np.ndarray, np.ndarray], tuple[np.ndarray, np.ndarray]]:
    """Per replication, the normal interval of the event's mean per game (mean +- z sd / sqrt n)
    and the delta-method interval of its rate per 100 turns (games as clusters)."""
    count, turns = pl.col(name).cast(pl.Float64), pl.col("plies").cast(pl.Float64)
    table = (
        played.group_by("replication")
        .agg(count.mean().alias("mean"), count.std().alias("sd"), pl.len().alias("n"), (count.sum() / turns.sum()).alias("rate"))
        .sort("replication")
    )
    rate = played.join(table.select("replication", "rate"), on="replication")
    spread = (
        rate.group_by("replication")
        .agg(((count - pl.col("rate") * turns).std() / pl.len().sqrt() / turns.mean()).alias("se"))
        .sort("replication")
    )
    mean, half = table["mean"].to_numpy(), Z95 * table["sd"].to_numpy() / np.sqrt(table["n"].to_numpy())
    ratio, se = 100 * table["rate"].to_numpy(), 100 * Z95 * spread["se"].to_numpy()
    return (mean - half, mean + half), (np.maximum(ratio - se, 0.0), ratio + se)
