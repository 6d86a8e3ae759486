"""A study's headline figures, printed: ``modiar study summary DIR`` (the end of ``make study``).

Per ordered pairing (within its rule set when the study has variants): South/draw/North shares
and the first player's score (a draw counting one half), each with its 95% Wilson interval, and
the mean game length; then how often each rule event fires in the pairing with the most games.
The figures are pipeline.metrics'; the full report is built from the same functions. The
summary of an unfinished study opens with a warning naming what is missing.
"""

from __future__ import annotations

from pathlib import Path

import polars as pl

from pipeline.metrics import PAIRING, events, ludii, outcomes
from pipeline.records import scan_games
from pipeline.stats import Estimate
from pipeline.status import incomplete_warning


def summary(directory: str | Path) -> str:
    """The summary; an unfinished study's opens with a line that says so and what is missing."""
    games = scan_games(directory)
    warning = incomplete_warning(Path(directory), verified=True)  # scan_games checked every file
    by = _groups(games)
    pairings = outcomes(games, by).join(ludii(games, by).select(*by, "Duration"), on=by).sort(by)
    rules = "rules" in by
    lines = [warning, ""] if warning else []
    # Columns as wide as their longest name, and two spaces.
    side = max([len("South"), *(len(spec) for column in ("south", "north") for spec in pairings[column].to_list())]) + 2
    rules_width = max([len("rules"), *(len(name) for name in pairings["rules"].to_list())]) + 2 if rules else 0
    lines += [
        (f"{'rules':<{rules_width}}" if rules else "")
        + f"{'South':<{side}}{'North':<{side}}{'games':>10}{'South wins':>23}{'draws':>23}{'first-player score':>25}{'plies':>8}",
    ]
    for row in pairings.iter_rows(named=True):
        lines.append(
            (f"{row['rules']:<{rules_width}}" if rules else "")
            + f"{row['south']:<{side}}{row['north']:<{side}}{row['games']:>10,}{_estimate(row, 'south').percent(1):>23}"
            f"{_estimate(row, 'draw').percent(1):>23}{_estimate(row, 'advantage').plain(3):>25}{row['Duration']:>8.1f}"
        )
    largest = pairings.sort("games", descending=True).row(0, named=True)
    rates = events(games.filter(pl.all_horizontal(pl.col(name) == largest[name] for name in by)), by=())
    under = f" under {largest['rules']}" if rules else ""
    lines += [
        "",
        f"rule events in {largest['south']} (South) against {largest['north']} (North){under}, {largest['games']:,} games:",
    ]
    lines.append(f"  {'event':<30}{'games where it fires':>28}{'per 100 turns':>16}")
    for row in rates.iter_rows(named=True):
        lines.append(f"  {row['event']:<30}{_estimate(row, 'fired').percent(2):>28}{row['per_100_turns'] or 0.0:>16.3f}")
    return "\n".join(lines)


def _groups(games: pl.LazyFrame) -> tuple[str, ...]:
    """The ordered pairing, within its rule set when the study has several (variants)."""
    several = games.select(pl.col("rules").n_unique()).collect().item() > 1
    return ("rules", *PAIRING) if several else PAIRING


def _estimate(row: dict[str, float], name: str) -> Estimate:
    return Estimate(row[f"{name}_share"], row[f"{name}_low"], row[f"{name}_high"])
