"""A study's headline figures, printed: ``modiar study summary DIR`` (the end of ``make study``).

Per ordered pairing (within its rule set when the study has variants), in the order of the
study's config (that of its games): South wins, draws and North wins, each share with its 95%
Wilson interval; the first player's score (a draw counting one half) with its 95% interval; and
the mean game length. Then how often each rule event fires in the pairing with the most games.
The figures are pipeline.analysis.metrics'; the full report is built from the same functions. The
summary of an unfinished study opens with a warning naming what is missing.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import polars as pl

from pipeline.analysis.metrics import PAIRING, events, ludii, outcomes
from pipeline.analysis.stats import Estimate
from pipeline.runs.records import scan_games
from pipeline.study.status import incomplete_warning

SHARES = (("south", "South wins"), ("draw", "draws"), ("north", "North wins"))  # outcomes' column prefix, heading
SHARE_WIDTH = 23  # "100.0% [100.0, 100.0]" and two spaces


def summary(directory: str | Path) -> str:
    """The summary; an unfinished study's opens with a line that says so and what is missing."""
    games = scan_games(directory)
    warning = incomplete_warning(Path(directory), verified=True)  # scan_games checked every file
    by = _groups(games)
    pairings = _in_study_order(games, outcomes(games, by).join(ludii(games, by).select(*by, "Duration"), on=by), by)
    lines = [warning, ""] if warning else []
    return "\n".join([*lines, *_pairing_lines(pairings, by), "", *_event_lines(games, pairings, by)])


def _in_study_order(games: pl.LazyFrame, table: pl.DataFrame, by: tuple[str, ...]) -> pl.DataFrame:
    """The rows of ``table`` (one per group of ``by``) in the order of the games: that of the
    study's config, whose pairings number their games one after the other."""
    first = games.group_by(*by).agg(pl.col("game_id").min().alias("_first_game")).collect()
    return table.join(first, on=list(by)).sort("_first_game").drop("_first_game")


def _pairing_lines(pairings: pl.DataFrame, by: tuple[str, ...]) -> list[str]:
    """The table of pairings: a heading, then a line each."""
    # Columns as wide as their longest name, and two spaces.
    side = max([len("South"), *(len(spec) for column in PAIRING for spec in pairings[column].to_list())]) + 2
    rules = max([len("rules"), *(len(name) for name in pairings["rules"].to_list())]) + 2 if "rules" in by else 0
    heading = (f"{'rules':<{rules}}" if rules else "") + f"{'South':<{side}}{'North':<{side}}{'games':>10}"
    heading += "".join(f"{title:>{SHARE_WIDTH}}" for _, title in SHARES) + f"{'first-player score':>25}{'plies':>8}"
    lines = [heading]
    for row in pairings.iter_rows(named=True):
        line = (f"{row['rules']:<{rules}}" if rules else "") + f"{row['south']:<{side}}{row['north']:<{side}}{row['games']:>10,}"
        line += "".join(f"{_share(row, name).percent(1):>{SHARE_WIDTH}}" for name, _ in SHARES)
        lines.append(line + f"{_first_player(row).plain(3):>25}{row['Duration']:>8.1f}")
    return lines


def _event_lines(games: pl.LazyFrame, pairings: pl.DataFrame, by: tuple[str, ...]) -> list[str]:
    """How often each rule event the rule set allows fires in the pairing with the most games (the
    first such in study order)."""
    largest = pairings.sort("games", descending=True, maintain_order=True).row(0, named=True)
    # by rules: an event the rule set rules out (feeding_forced without feeding) has no row, never a 0
    rates = events(games.filter(pl.all_horizontal(pl.col(name) == largest[name] for name in by)), by=("rules",))
    under = f" under {largest['rules']}" if "rules" in by else ""
    lines = [
        f"rule events in {largest['south']} (South) against {largest['north']} (North){under}, {largest['games']:,} games:",
        f"  {'event':<30}{'games where it fires':>28}{'per 100 turns':>16}",
    ]
    for row in rates.iter_rows(named=True):
        lines.append(f"  {row['event']:<30}{_share(row, 'fired').percent(2):>28}{row['per_100_turns'] or 0.0:>16.3f}")
    return lines


def _groups(games: pl.LazyFrame) -> tuple[str, ...]:
    """The ordered pairing, within its rule set when the study has several (variants)."""
    several = games.select(pl.col("rules").n_unique()).collect().item() > 1
    return ("rules", *PAIRING) if several else PAIRING


def _share(row: dict[str, Any], name: str) -> Estimate:
    return Estimate(row[f"{name}_share"], row[f"{name}_low"], row[f"{name}_high"])


def _first_player(row: dict[str, Any]) -> Estimate:
    return Estimate(row["first_player_score"], row["first_player_low"], row["first_player_high"])
