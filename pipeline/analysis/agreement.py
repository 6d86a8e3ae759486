"""How often each strategy plays a best move: its moves in the first games of each pairing
replayed (pipeline.analysis.turns) and judged by the strong solution (engine.solver.solution), with the stones a
move loses against the best one; ``first_games`` picks the games judged."""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import polars as pl

from engine.game import Rules
from engine.play import Replay
from engine.solver import Solution
from pipeline.analysis.metrics import PAIRING, numbered, wilson_columns
from pipeline.analysis.stats import Z95
from pipeline.analysis.turns import GAME_COLUMNS, Plies, replayed_blocks

# Plies agreement replays and values at once: engine.Solution.values_of's binary search holds
# some ten int64 arrays as long as the positions it is given (0.8 GB for the 13 M moves judged
# in the default study at once).
AGREEMENT_PLIES = 1 << 20
MAX_GAMES_PER_PAIRING = 5_000  # agreement's default: about 2 s for the 36 pairings of the default study
AGREEMENT_COLUMNS = (
    "rules",
    "strategy",
    "moves",
    "kept",
    "kept_share",
    "kept_low",
    "kept_high",
    "loss",
    "loss_low",
    "loss_high",
    "start_value",
)


def agreement(
    games: pl.LazyFrame | pl.DataFrame,
    solution: Solution | Mapping[str, Solution],
    max_games_per_pairing: int | None = MAX_GAMES_PER_PAIRING,
) -> pl.DataFrame:
    """Each strategy's moves (in both seats) against the strong solution, per rule set: rules,
    strategy, moves, kept (moves that keep the position's value: their worth, the stones
    captured minus the child's value, equals the value) with kept_share/_low/_high (95% Wilson),
    loss (the mean value lost per move, value - worth >= 0, in stones of final margin) with
    loss_low/loss_high (95% normal interval over the moves), and start_value (the start's value
    under perfect play, solution.start_value()).

    ``solution`` is the Solution of the games' rule set, or a mapping from rule-set name to
    Solution when the games hold several. Only the moves played before the solution's cap
    count. Games replayed: the first ``max_games_per_pairing`` by game_id of each pairing
    (rules, south, north), MAX_GAMES_PER_PAIRING (5,000) by default to bound the time; None
    takes every game. They are replayed and valued AGREEMENT_PLIES plies at a time.
    """
    judged = games if max_games_per_pairing is None else first_games(games, max_games_per_pairing)
    parts = [
        _agreement_sums(plies, first, run, solution_for(solution, run.rules))
        for plies in replayed_blocks(judged, (), AGREEMENT_PLIES).plies
        for first, run in plies.replays
    ]
    table = _agreement_of_sums(pl.concat(parts)) if parts else _agreement_of_nothing()
    spread = Z95 * pl.col("_sd") / pl.col("moves").cast(pl.Float64).sqrt()
    return table.with_columns(
        *wilson_columns("kept", "moves", "kept"),
        (pl.col("loss") - spread).alias("loss_low"),
        (pl.col("loss") + spread).alias("loss_high"),
    ).select(AGREEMENT_COLUMNS)


def first_games(games: pl.LazyFrame | pl.DataFrame, most: int = MAX_GAMES_PER_PAIRING) -> pl.DataFrame:
    """The first ``most`` games by game_id of each pairing (rules, south, north), with the
    columns that replay_games reads (GAME_COLUMNS and moves), in the order of the games. Only
    the game_id of every game and its pairing's number are in memory at once, not its moves
    (pipeline.analysis.metrics.numbered)."""
    keys = ["rules", *PAIRING]
    frame = games.lazy()
    _, ids = numbered(frame, keys, ["game_id"])
    kept = ids.group_by("_group").agg(pl.col("game_id").bottom_k(most)).explode("game_id")["game_id"]
    # A game_id of another pairing may be among those kept: ranking the few games found again drops it.
    found = frame.filter(pl.col("game_id").is_in(kept.implode())).select(*GAME_COLUMNS, "moves").collect()
    return found.filter(pl.col("game_id").rank("ordinal").over(keys) <= most)


def solution_for(solution: Solution | Mapping[str, Solution], rules: Rules) -> Solution:
    """The Solution of ``rules`` among those given (one, or a mapping from rule-set name), any cap;
    ValueError for none or another rule set's."""
    found = solution if isinstance(solution, Solution) else solution.get(rules.name)
    if found is None:
        raise ValueError(f"no solution given for the rule set {rules.name}; pass a mapping from rule-set name to Solution")
    if found.rules.replace(ply_cap=rules.ply_cap) != rules:
        raise ValueError(f"the solution is that of {found.rules.name}, not of the games' rule set {rules.name}")
    return found


def _agreement_of_nothing() -> pl.DataFrame:
    schema = {"rules": pl.String, "strategy": pl.String, "moves": pl.Int64, "kept": pl.Int64, "loss": pl.Float64}
    return pl.DataFrame(schema={**schema, "_sd": pl.Float64, "start_value": pl.Int64})


def _agreement_sums(plies: Plies, first: int, run: Replay, solution: Solution) -> pl.DataFrame:
    """The agreement sums of one rule set's replay, per strategy of the mover: moves, kept, and
    the sum of the losses and of their squares (_total, _squares: whole numbers, so that the
    sums of several blocks are exact)."""
    cap = solution.cap
    ply = run.ply().astype(np.int64)
    counted = np.flatnonzero(ply < cap)
    ply, position, mover = ply[counted], run.position[counted], run.mover[counted]
    plies_left = cap - ply
    value = solution.values_of(position, plies_left).astype(np.int16)
    value[ply == 0] = solution.start_value()  # ply 0's moves forfeit their capture: not the tables' value
    worth = run.captured[counted] - solution.values_of(run.children()[counted], plies_left - 1).astype(np.int16)
    loss = (value - worth).astype(np.float64)
    games = plies.games.slice(first, len(run))
    strategies = sorted(set(games["south"].to_list()) | set(games["north"].to_list()))
    code = {name: k for k, name in enumerate(strategies)}
    seats = np.stack([games[seat].replace_strict(code, return_dtype=pl.Int64).to_numpy() for seat in ("south", "north")])
    strategy = seats[mover, np.repeat(np.arange(len(run)), run.plies)[counted]]
    return pl.DataFrame(
        {
            "rules": [run.rules.name] * len(strategies),
            "strategy": strategies,
            "moves": np.bincount(strategy, minlength=len(strategies)).astype(np.int64),
            "kept": np.bincount(strategy[loss == 0], minlength=len(strategies)).astype(np.int64),
            "_total": np.bincount(strategy, weights=loss, minlength=len(strategies)),
            "_squares": np.bincount(strategy, weights=loss * loss, minlength=len(strategies)),
            "start_value": [solution.start_value()] * len(strategies),
        }
    )


def _agreement_of_sums(sums: pl.DataFrame) -> pl.DataFrame:
    """Per rule set and strategy with a move (sorted): the sums of _agreement_sums over the
    blocks, and loss (the mean) with _sd (the moves' standard deviation)."""
    table = sums.group_by("rules", "strategy").agg(pl.col("moves", "kept", "_total", "_squares").sum(), pl.first("start_value"))
    table = table.filter(pl.col("moves") > 0).sort("rules", "strategy")
    moves, total, squares = (table[name].to_numpy() for name in ("moves", "_total", "_squares"))
    mean = total / np.maximum(moves, 1)
    with np.errstate(invalid="ignore"):
        sd = np.sqrt(np.maximum(squares - moves * mean * mean, 0) / np.maximum(moves - 1, 1))
    return table.with_columns(pl.Series("loss", mean), pl.Series("_sd", sd)).drop("_total", "_squares")
