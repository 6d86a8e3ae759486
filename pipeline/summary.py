"""A study's headline figures, printed: ``modiar study summary DIR`` (the end of ``make study``).

Per ordered pairing: South/draw/North shares and the first player's score (a draw counting
one half), each with its 95% Wilson interval, and the mean game length; then how often each
rule event fires in the pairing with the most games. The full report is issue 5's.
"""

from __future__ import annotations

from pathlib import Path

import polars as pl

import engine
from pipeline.records import scan_games
from pipeline.stats import wilson


def pairing_table(directory: str | Path) -> pl.DataFrame:
    """One row per ordered pairing: games, wins of each side, draws and plies."""
    return (
        scan_games(directory)
        .group_by("south", "north")
        .agg(
            pl.len().alias("games"),
            (pl.col("winner") == "south").sum().alias("south_wins"),
            (pl.col("winner") == "draw").sum().alias("draws"),
            (pl.col("winner") == "north").sum().alias("north_wins"),
            pl.col("plies").mean().alias("mean_plies"),
            pl.col("plies").max().alias("max_plies"),
        )
        .sort("south", "north")
        .collect()
    )


def event_table(directory: str | Path, south: str, north: str) -> pl.DataFrame:
    """For one pairing: per rule event, the games where it fired, its total and the turns."""
    games = scan_games(directory).filter((pl.col("south") == south) & (pl.col("north") == north))
    return games.select(
        pl.len().alias("games"),
        pl.col("plies").sum().alias("turns"),
        *[(pl.col(name) > 0).sum().alias(f"{name}:fired") for name in engine.EVENTS],
        *[pl.col(name).sum().alias(f"{name}:total") for name in engine.EVENTS],
    ).collect()


def summary(directory: str | Path) -> str:
    pairings = pairing_table(directory)
    lines = [
        f"{'South':<20}{'North':<20}{'games':>10}{'South wins':>23}{'draws':>23}{'first-player score':>25}{'plies':>8}",
    ]
    for row in pairings.iter_rows(named=True):
        n = row["games"]
        score = wilson(row["south_wins"] + row["draws"] / 2, n)
        lines.append(
            f"{row['south']:<20}{row['north']:<20}{n:>10,}{wilson(row['south_wins'], n).percent(1):>23}"
            f"{wilson(row['draws'], n).percent(1):>23}{score.plain(3):>25}{row['mean_plies']:>8.1f}"
        )
    largest = pairings.sort("games", descending=True).row(0, named=True)
    events = event_table(directory, largest["south"], largest["north"]).row(0, named=True)
    n, turns = events["games"], events["turns"]
    lines += ["", f"rule events in {largest['south']} (South) against {largest['north']} (North), {n:,} games:"]
    lines.append(f"  {'event':<30}{'games where it fires':>28}{'per 100 turns':>16}")
    for name in engine.EVENTS:
        fired = wilson(events[f"{name}:fired"], n).percent(2)
        lines.append(f"  {name:<30}{fired:>28}{100 * events[f'{name}:total'] / max(turns, 1):>16.3f}")
    return "\n".join(lines)
