"""Where players err: every move of recorded games judged by the strong solution, and each
game's quality measures (docs/quality.md), whose means estimate engine.exact_quality's.

A move's value to its mover is its capture minus the value of the position it leaves with one
ply fewer left; the position's value is its best move's, and the move's loss is that minus its
own. The forecast before a move is South's margin so far plus the position's value to South
(the margin the game ends with under perfect play from there); after it, the forecast less
the loss, to South's side. The forecast after a game's last move is its final margin.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import polars as pl

from engine.exact import MEASURES
from engine.play import Replay
from engine.solver import Solution
from engine.tables import first_moves, kept_tables
from pipeline.analysis.agreement import solution_for
from pipeline.analysis.metrics import PAIRING
from pipeline.analysis.stats import Z95
from pipeline.analysis.turns import Plies, replay_games

# The columns judged_plies adds to the per-ply frame (pipeline.analysis.turns.Plies.frame).
JUDGED_COLUMNS = (
    "margin",
    "forecast_before",
    "forecast_after",
    "loss",
    "mistake",
    "decision",
    "only_move",
    "free_choice",
    "stake",
)


def judged_plies(games: pl.LazyFrame | pl.DataFrame | Plies, solution: Solution | Mapping[str, Solution]) -> pl.DataFrame:
    """The per-ply frame of the games (Plies.frame: game_id, rules, south, north, ply, mover,
    strategy, pit, ...) with every move judged: South's ``margin`` so far, the forecast before
    and after the move (South's side), the stones the move gave away (``loss``, >= 0, to its
    mover) and whether that is a ``mistake``; whether the turn was a ``decision`` (two legal
    moves or more), with ``only_move`` (exactly one move keeps the forecast), ``free_choice``
    (every one does) and its ``stake`` (the best move's value minus the worst's; 0 if no
    decision). ``solution`` is the Solution of the games' rule set, or a mapping from rule-set
    name to Solution."""
    plies = games if isinstance(games, Plies) else replay_games(games)
    columns: dict[str, list[np.ndarray]] = {name: [] for name in JUDGED_COLUMNS}
    for _, run in plies.replays:
        for name, values in _judged(run, solution_for(solution, run.rules)).items():
            columns[name].append(values)
    joined = {name: np.concatenate(parts) if parts else np.empty(0) for name, parts in columns.items()}
    return plies.frame().with_columns(pl.Series(name, values) for name, values in joined.items())


def game_quality(games: pl.LazyFrame | pl.DataFrame | Plies, solution: Solution | Mapping[str, Solution]) -> pl.DataFrame:
    """One row per game (game_id, rules, south, north) with each measure of engine.exact_quality
    (MEASURES) computed on the game's forecasts (judged_plies), as docs/quality.md defines them."""
    plies = games if isinstance(games, Plies) else replay_games(games)
    judged = judged_plies(plies, solution)
    offsets = plies.offsets
    lengths = np.diff(offsets)
    count = len(lengths)
    game = np.repeat(np.arange(count), lengths)
    mover = judged["mover"].to_numpy()
    loss = judged["loss"].to_numpy()
    measures: dict[str, np.ndarray] = {"plies": lengths.astype(float)}
    for side, name in enumerate(("south", "north")):
        mine = mover == side
        measures[f"stones_lost_{name}"] = np.bincount(game[mine], weights=loss[mine], minlength=count)
        measures[f"mistakes_{name}"] = np.bincount(game[mine], weights=loss[mine] > 0, minlength=count)
    for name in ("decision", "only_move", "free_choice", "stake"):
        key = "decisions" if name == "decision" else name
        measures[key] = np.bincount(game, weights=judged[name].to_numpy().astype(float), minlength=count)
    measures.update(_path_measures(judged, offsets))
    frame = plies.games.select("game_id", "rules", "south", "north")
    return frame.with_columns(pl.Series(name, measures[name].astype(float)) for name in MEASURES)


def quality_estimates(per_game: pl.DataFrame, by: Sequence[str] = PAIRING) -> pl.DataFrame:
    """The mean of each measure over the games of each group (game_quality's rows), with its
    standard error and 95% normal interval (``<measure>_se``, ``_low``, ``_high``) and the
    number of ``games``."""
    keys = list(by)
    aggregations: list[pl.Expr] = [pl.len().alias("games")]
    for name in MEASURES:
        column = pl.col(name)
        se = (column.std(ddof=1) / pl.len().sqrt()).fill_null(0.0)
        aggregations += [column.mean().alias(name), se.alias(f"{name}_se")]
    table = per_game.group_by(keys, maintain_order=True).agg(aggregations)
    bounds = []
    for name in MEASURES:
        half = Z95 * pl.col(f"{name}_se")
        bounds += [(pl.col(name) - half).alias(f"{name}_low"), (pl.col(name) + half).alias(f"{name}_high")]
    return table.with_columns(bounds).sort(keys)


def _judged(run: Replay, solution: Solution) -> dict[str, np.ndarray]:
    """JUDGED_COLUMNS for one rule set's replay: every legal move of each position valued."""
    rules, cap = run.rules, solution.cap
    tables = kept_tables(rules)
    ply = run.ply().astype(np.int64)
    position = run.position.astype(np.int64)
    child = tables.child[position].astype(np.int64)
    captured = tables.captured[position].astype(np.int64)
    first = ply == 0  # the first move: its captures are forfeited, its children its own
    if first.any():
        first_child, first_captured = first_moves(rules).by_pit()
        child[first], captured[first] = first_child, first_captured
    legal = child >= 0
    plies_left = np.maximum(cap - ply, 1)
    after = np.zeros(child.shape, dtype=np.int64)
    rows, pits = np.nonzero(legal)
    after[rows, pits] = solution.values_of(child[rows, pits], plies_left[rows] - 1)
    values = np.where(legal, captured - after, np.iinfo(np.int64).min)
    best = values.max(axis=1)
    played = values[np.arange(len(position)), run.pit.astype(np.int64)]
    loss = best - played
    losses = np.where(legal, best[:, None] - values, 0)
    south = run.mover == 0
    signed = np.where(south, 1, -1)
    taken = np.where(south, run.captured.astype(np.int64), -run.captured.astype(np.int64))
    starts = np.repeat(run.offsets[:-1], run.plies)
    total = np.cumsum(taken)
    margin = total - taken - np.where(starts > 0, total[np.maximum(starts - 1, 0)], 0)
    forecast = margin + signed * best
    options = legal.sum(axis=1)
    keeps = (legal & (losses == 0)).sum(axis=1)
    decision = options >= 2
    return {
        "margin": margin,
        "forecast_before": forecast,
        "forecast_after": forecast - signed * loss,
        "loss": loss,
        "mistake": loss > 0,
        "decision": decision,
        "only_move": decision & (keeps == 1),
        "free_choice": decision & (keeps == options),
        "stake": np.where(decision, losses.max(axis=1), 0),
    }


def _path_measures(judged: pl.DataFrame, offsets: np.ndarray) -> dict[str, np.ndarray]:
    """The measures of each game's sequence of forecasts: before each move, then the final
    margin (the forecast after the last move; 0 moves: none, the game had no turn)."""
    lengths = np.diff(offsets)
    count = len(lengths)
    before = judged["forecast_before"].to_numpy()
    after = judged["forecast_after"].to_numpy()
    # Each game's forecasts F_0 .. F_T: its T plies' forecasts before, then the last one after.
    size = lengths + 1
    starts = np.cumsum(size) - size
    forecasts = np.zeros(int(size.sum()), dtype=np.int64)
    inner = np.repeat(starts, lengths) + (np.arange(len(before)) - np.repeat(offsets[:-1], lengths))
    forecasts[inner] = before
    played = lengths > 0
    forecasts[(starts + lengths)[played]] = after[offsets[1:][played] - 1]
    sign = np.sign(forecasts)
    game = np.repeat(np.arange(count), size)
    w = sign[starts + lengths]
    local = np.arange(len(forecasts)) - np.repeat(starts, size)
    changed = np.zeros(len(forecasts), dtype=bool)
    changed[1:] = sign[1:] != sign[:-1]
    changed[starts] = False  # no change into a game's first forecast
    behind = (w[game] != 0) & (sign == -w[game])
    off = np.where(sign != w[game], local + 1, 0)
    decided = np.maximum.reduceat(off, starts) if count else off
    return {
        "lead_changes": np.bincount(game, weights=changed, minlength=count),
        "comeback": (np.bincount(game, weights=behind, minlength=count) > 0).astype(float),
        "drama_plies": np.bincount(game, weights=behind, minlength=count),
        "drama_severity": np.bincount(game, weights=behind * np.abs(forecasts), minlength=count),
        "decided_ply": decided.astype(float),
    }
