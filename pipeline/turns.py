"""Per-ply metrics of a study, by replaying the recorded moves (engine.replay) of its games table.

The games table (pipeline.records.scan_games) holds every game's moves; ``replay_games`` steps
them all through the position tables at once (about two seconds for a 1.5 M-game study) and
gives a ``Plies``: one entry per ply, the position before the move, its number of legal moves,
the move's capture and turn events, and each game's final position and end event. The
functions below take a Plies, or a LazyFrame/DataFrame of games (which they replay first), and
return polars DataFrames grouped by ``by`` (the columns of the games table; the ordered pairing
("south", "north") by default, as pipeline.metrics, ``by=()`` for every game together):

    replay_games(games)         the Plies; ``Plies.frame()`` is its polars DataFrame, one row per ply
    ludii_plies(games)          Ludii's BranchingFactor, DecisionMoves and PositionalRepetition
    events_by_ply(games)        the share of the turns at each ply on which each rule event fires
    agreement(games, solution)  each strategy's moves against the strong solution

A study may hold several rule sets (column ``rules``): each is replayed with its own tables.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import polars as pl

from engine import events
from engine.replay import FLAG_BITS, Replay, replay
from engine.rules import Rules
from engine.solver import Solution
from engine.tables import END_CODES
from pipeline.metrics import PAIRING, _wilson
from pipeline.stats import Z95

GAME_COLUMNS = ("rules", "game_id", "south", "north", "plies")
LUDII_PLIES = ("BranchingFactor", "DecisionMoves", "PositionalRepetition")
TURN_EVENTS = events.TURN_FLAGS  # the turn events a single ply fires or not
END_EVENTS = events.END_EVENTS
FLAG_VALUES = 1 << len(FLAG_BITS)  # the values a ply's flags (engine.replay.FLAG_BITS) can take
REPETITION_CHUNK = 1 << 14  # games whose states are sorted together (a sort that stays in the cache)
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


@dataclass(frozen=True, eq=False)
class Plies:
    """Every ply of a set of games, replayed.

    ``games`` has one row per game (GAME_COLUMNS and any grouping columns asked for), in the
    order of the plies; the games of each rule set are consecutive. ``replays`` holds, for
    each rule set in turn, the engine.replay.Replay of its games: game row ``first + g`` is
    game g of that replay. ``offsets`` (int64, one more than the games) locates each game's
    plies in the concatenated per-ply columns that ``column`` returns.
    """

    games: pl.DataFrame
    replays: tuple[tuple[int, Replay], ...]  # (first game row, replay) per rule set
    offsets: np.ndarray

    def __len__(self) -> int:
        return len(self.games)

    @property
    def plies(self) -> np.ndarray:
        """Moves per game (int64)."""
        return np.diff(self.offsets)

    def column(self, name: str) -> np.ndarray:
        """A per-ply array of engine.replay.Replay (``position``, ``options``, ...) or, for a name
        of TURN_EVENTS, that flag as bool; the rule sets' arrays end to end."""
        parts = [run.flag(name) if name in TURN_EVENTS else getattr(run, name) for _, run in self.replays]
        return parts[0] if len(parts) == 1 else np.concatenate(parts)

    def per_game(self, name: str) -> np.ndarray:
        """A per-game array of engine.replay.Replay (``final_position``, ``end_code``, ``forfeited``)."""
        parts = [getattr(run, name) for _, run in self.replays]
        return parts[0] if len(parts) == 1 else np.concatenate(parts)

    def ply(self) -> np.ndarray:
        """The ply number of every entry (int16)."""
        return (np.arange(self.offsets[-1], dtype=np.int64) - np.repeat(self.offsets[:-1], self.plies)).astype(np.int16)

    def game_row(self) -> np.ndarray:
        """The game row of every entry (int64)."""
        return np.repeat(np.arange(len(self), dtype=np.int64), self.plies)

    def frame(self) -> pl.DataFrame:
        """One row per ply: game_id, rules, south, north, ply, mover (0 South, 1 North), strategy
        (the mover's), pit (absolute, 0-5), position (engine.index, mover's view), options (legal
        moves), captured (stones), and a bool column per turn event of TURN_EVENTS. The string
        columns are categorical."""
        rows = pl.Series(self.game_row())
        games = self.games.select(pl.col("game_id"), pl.col("rules", "south", "north").cast(pl.Categorical))
        frame = games[rows]
        mover = self.column("mover")
        strategy = pl.when(pl.Series(mover) == 0).then(frame["south"]).otherwise(frame["north"])
        return frame.with_columns(
            pl.Series("ply", self.ply()),
            pl.Series("mover", mover),
            strategy.cast(pl.Categorical).alias("strategy"),
            pl.Series("pit", self.column("pit") + np.uint8(3) * mover),
            pl.Series("position", self.column("position")),
            pl.Series("options", self.column("options")),
            pl.Series("captured", self.column("captured")),
            *(pl.Series(name, self.column(name)) for name in TURN_EVENTS),
        )


def replay_games(games: pl.LazyFrame | pl.DataFrame, by: Sequence[str] = ()) -> Plies:
    """Replay every game of a games table (pipeline.records.scan_games), each rule set with its
    own position tables. ``by`` names extra game columns to keep in ``Plies.games`` for grouping.

    Raises engine.IllegalMoveError (a ValueError) naming the game_id and ply of a move the
    rules forbid."""
    columns = list(dict.fromkeys([*GAME_COLUMNS, *by, "moves"]))
    frame = games.lazy().select(columns).collect()
    if frame["rules"].n_unique() > 1:
        frame = frame.sort("rules", maintain_order=True)
    moves = frame["moves"]
    lengths = moves.list.len().cast(pl.Int64).to_numpy()
    offsets = np.zeros(len(frame) + 1, dtype=np.int64)
    np.cumsum(lengths, out=offsets[1:])
    flat = moves.explode().drop_nulls().cast(pl.UInt8).to_numpy()  # an empty list explodes to a null
    replays = []
    rule_sets = (
        frame.select("rules").with_row_index("_row").group_by("rules", maintain_order=True).agg(pl.len(), pl.first("_row"))
    )
    for name, count, first in rule_sets.iter_rows():
        last = first + count
        local = offsets[first : last + 1] - offsets[first]
        try:
            run = replay(Rules.from_name(name), flat[offsets[first] : offsets[last]], local)
        except ValueError as error:
            raise type(error)(_with_game_id(str(error), frame["game_id"], first)) from None
        replays.append((first, run))
    return Plies(frame.drop("moves"), tuple(replays), offsets)


def ludii_plies(games: pl.LazyFrame | pl.DataFrame | Plies, by: Sequence[str] = PAIRING) -> pl.DataFrame:
    """Ludii's per-ply metrics (the Ludii "Evaluation" metrics, Digital Ludeme Project), per
    group: games, then each metric with its 95% normal interval over games (sample standard
    deviation; the mean itself for one game) as NAME, NAME_low, NAME_high. As in Ludii, each
    is computed per game, then averaged over the games:

    - BranchingFactor: the mean number of legal moves over the positions where a move was
      played (games without a move left out).
    - DecisionMoves: the share of the moves played with more than one legal move (games
      without a move left out).
    - PositionalRepetition: 1 - distinct states / states, the states being the start and the
      position after every move, a state being (board, side to move). Ludii's own Java code
      divides two integers here, which truncates distinct / states to 1 (no repeat) or 0 (any
      repeat), a bug; we use real division.
    """
    plies = _plies(games, by)
    per_game = pl.DataFrame(
        {
            "BranchingFactor": _per_game_mean(plies, plies.column("options")),
            "DecisionMoves": _per_game_mean(plies, plies.column("options") > 1),
            "PositionalRepetition": _repetition(plies),
        }
    ).fill_nan(None)
    if by:
        per_game = plies.games.select(*by).hstack(per_game)
    exprs = [pl.len().cast(pl.Int64).alias("games")]
    for name in LUDII_PLIES:
        exprs += [pl.col(name).mean(), pl.col(name).std(ddof=1).alias(f"_{name}_sd"), pl.col(name).count().alias(f"_{name}_n")]
    table = per_game.group_by(*by).agg(exprs).sort(*by) if by else per_game.select(exprs)
    intervals = []
    for name in LUDII_PLIES:
        spread = Z95 * pl.col(f"_{name}_sd").fill_null(0.0) / pl.col(f"_{name}_n").cast(pl.Float64).sqrt()
        intervals += [(pl.col(name) - spread).alias(f"{name}_low"), (pl.col(name) + spread).alias(f"{name}_high")]
    table = table.with_columns(intervals)
    return table.select(*by, "games", *(f"{name}{end}" for name in LUDII_PLIES for end in ("", "_low", "_high")))


def events_by_ply(games: pl.LazyFrame | pl.DataFrame | Plies, by: Sequence[str] = PAIRING) -> pl.DataFrame:
    """When in the game each rule event fires, per group, long form: *by, event, ply, turns
    (games that play a move at that ply), positions (games that reach that ply: a move played
    or not), fired, and share with its 95% Wilson interval (share, share_low, share_high).

    - Turn events (TURN_EVENTS): fired counts the moves at that ply on which the event fires,
      share = fired / turns; rows for the plies where some game plays a move.
    - End events (END_EVENTS): a game counts at the ply of its terminal position (its number of
      moves), share = fired / positions, the share of the games reaching that ply that end
      there with that event; rows for the plies some game reaches. A game stopped by the ply
      cap fires none.

    Rows are sorted by group, then event (TURN_EVENTS then END_EVENTS), then ply. Summed over
    the plies, fired gives the per-game event counts of the games table, summed over games.
    """
    plies = _plies(games, by)
    group, keys = _groups(plies.games, by)
    width = int(plies.plies.max(initial=0)) + 1
    groups = len(keys)
    turn_key = np.repeat(group * width - plies.offsets[:-1], plies.plies) + np.arange(plies.offsets[-1], dtype=np.int64)
    # One count per (group, ply, flag byte): every turn event's count is a sum over the bytes.
    counts = np.bincount(turn_key * FLAG_VALUES | plies.column("flags"), minlength=groups * width * FLAG_VALUES)
    counts = counts.reshape(-1, FLAG_VALUES)
    del turn_key
    turns = counts.sum(axis=1)
    game_key = group * width + plies.plies
    ended = np.bincount(game_key, minlength=groups * width).reshape(groups, width)
    positions = np.cumsum(ended[:, ::-1], axis=1)[:, ::-1].reshape(-1)  # games with at least that many moves
    end_code = plies.per_game("end_code")
    parts = []
    for name, bit in FLAG_BITS.items():
        fired = counts[:, [byte for byte in range(FLAG_VALUES) if byte & bit]].sum(axis=1)
        parts.append(_event_rows(name, turns, positions, fired, turns, width))
    for name, code in END_CODES.items():
        fired = np.bincount(game_key[end_code == code], minlength=groups * width)
        parts.append(_event_rows(name, turns, positions, fired, positions, width))
    table = pl.concat(parts)
    table = keys.join(table, on="_group").sort("_group", "_event", "ply").drop("_group", "_event")
    table = table.with_columns(_wilson("fired", "_trials", "_s")).drop("_trials")
    return table.rename({"_s_share": "share", "_s_low": "share_low", "_s_high": "share_high"})


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
    takes every game.
    """
    frame = games.lazy()
    if max_games_per_pairing is not None:
        rank = pl.col("game_id").rank("ordinal").over("rules", *PAIRING)
        frame = frame.filter(rank <= max_games_per_pairing)
    plies = replay_games(frame)
    parts = [_agreement_of(plies, first, run, _solution_for(solution, run.rules)) for first, run in plies.replays]
    table = pl.concat(parts).sort("rules", "strategy") if parts else _agreement_of_nothing()
    spread = Z95 * pl.col("_sd") / pl.col("moves").cast(pl.Float64).sqrt()
    return table.with_columns(
        *_wilson("kept", "moves", "kept"),
        (pl.col("loss") - spread).alias("loss_low"),
        (pl.col("loss") + spread).alias("loss_high"),
    ).select(AGREEMENT_COLUMNS)


# ---------------------------------------------------------------------------------------------


def _plies(games: pl.LazyFrame | pl.DataFrame | Plies, by: Sequence[str]) -> Plies:
    if isinstance(games, Plies):
        missing = [name for name in by if name not in games.games.columns]
        if missing:
            raise ValueError(f"the plies were replayed without the columns {missing}: pass by={list(by)} to replay_games")
        return games
    return replay_games(games, by)


def _with_game_id(message: str, game_ids: pl.Series, first: int) -> str:
    """An engine.replay message names the game's row within its rule set; name its game_id instead."""
    found = re.match(r"game row (\d+)", message)
    if found is None:
        return message
    return f"game_id {game_ids[first + int(found.group(1))]}" + message[found.end() :]


def _per_game_mean(plies: Plies, values: np.ndarray) -> np.ndarray:
    """The mean of a per-ply array over each game's plies; NaN for a game without moves."""
    lengths = plies.plies
    played = lengths > 0
    sums = np.zeros(len(lengths), dtype=np.float64)
    sums[played] = np.add.reduceat(values, plies.offsets[:-1][played], dtype=np.int64)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(played, sums / lengths, np.nan)


def _repetition(plies: Plies) -> np.ndarray:
    """1 - distinct states / states of each game. Its states are the positions before its moves
    and its final position, each with its mover: a position is seen by its mover, so (index,
    mover) is (board, side to move)."""
    lengths = plies.plies
    state = plies.column("position").astype(np.int64) * 2 + plies.column("mover")
    final = plies.per_game("final_position") * 2 + lengths % 2
    bits = int(max(state.max(initial=0), final.max(initial=0))).bit_length()
    distinct = np.empty(len(plies), dtype=np.int64)
    for start in range(0, len(plies), REPETITION_CHUNK):
        games = slice(start, start + REPETITION_CHUNK)
        moves = slice(plies.offsets[start], plies.offsets[min(start + REPETITION_CHUNK, len(plies))])
        distinct[games] = _distinct_states(state[moves], final[games], lengths[games], bits)
    return 1 - distinct / (lengths + 1)


def _distinct_states(state: np.ndarray, final: np.ndarray, lengths: np.ndarray, bits: int) -> np.ndarray:
    """The number of distinct states of each game of a chunk: keyed by (game, state), one sort
    puts each game's repeats side by side."""
    games = np.arange(len(lengths), dtype=np.int64) << bits
    keys = np.concatenate([np.repeat(games, lengths) | state, games | final])
    keys.sort()
    new = np.ones(len(keys), dtype=bool)
    new[1:] = keys[1:] != keys[:-1]
    return np.bincount(keys[new] >> bits, minlength=len(lengths))


def _groups(games: pl.DataFrame, by: Sequence[str]) -> tuple[np.ndarray, pl.DataFrame]:
    """Each game's group number (int64) and the groups: their keys, sorted, with their number
    (column _group)."""
    if not by:
        return np.zeros(len(games), dtype=np.int64), pl.DataFrame({"_group": [0]}, schema={"_group": pl.UInt32})
    keys = games.select(*by).unique().sort(*by).with_row_index("_group")
    numbered = games.select(*by).join(keys, on=list(by), how="left", maintain_order="left")
    return numbered["_group"].cast(pl.Int64).to_numpy(), keys


def _event_rows(
    name: str, turns: np.ndarray, positions: np.ndarray, fired: np.ndarray, trials: np.ndarray, width: int
) -> pl.DataFrame:
    """One event's rows: those (group, ply) with trials."""
    kept = np.flatnonzero(trials > 0)
    order = (TURN_EVENTS + END_EVENTS).index(name)
    return pl.DataFrame(
        {
            "_group": (kept // width).astype(np.uint32),
            "_event": np.full(len(kept), order, dtype=np.int8),
            "event": np.full(len(kept), name, dtype=object),
            "ply": (kept % width).astype(np.int16),
            "turns": turns[kept].astype(np.int64),
            "positions": positions[kept].astype(np.int64),
            "fired": fired[kept].astype(np.int64),
            "_trials": trials[kept].astype(np.int64),
        },
        schema_overrides={"event": pl.String},
    )


def _solution_for(solution: Solution | Mapping[str, Solution], rules: Rules) -> Solution:
    found = solution if isinstance(solution, Solution) else solution.get(rules.name)
    if found is None:
        raise ValueError(f"no solution given for the rule set {rules.name}; pass a mapping from rule-set name to Solution")
    if found.rules.replace(ply_cap=rules.ply_cap) != rules:
        raise ValueError(f"the solution is that of {found.rules.name}, not of the games' rule set {rules.name}")
    return found


def _agreement_of_nothing() -> pl.DataFrame:
    schema = {"rules": pl.String, "strategy": pl.String, "moves": pl.Int64, "kept": pl.Int64, "loss": pl.Float64}
    return pl.DataFrame(schema={**schema, "_sd": pl.Float64, "start_value": pl.Int64})


def _agreement_of(plies: Plies, first: int, run: Replay, solution: Solution) -> pl.DataFrame:
    """The agreement sums of one rule set's replay, per strategy of the mover."""
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
    moves = np.bincount(strategy, minlength=len(strategies))
    total = np.bincount(strategy, weights=loss, minlength=len(strategies))
    squares = np.bincount(strategy, weights=loss * loss, minlength=len(strategies))
    mean = total / np.maximum(moves, 1)
    with np.errstate(invalid="ignore"):
        sd = np.sqrt(np.maximum(squares - moves * mean * mean, 0) / np.maximum(moves - 1, 1))
    table = pl.DataFrame(
        {
            "rules": [run.rules.name] * len(strategies),
            "strategy": strategies,
            "moves": moves.astype(np.int64),
            "kept": np.bincount(strategy[loss == 0], minlength=len(strategies)).astype(np.int64),
            "loss": mean,
            "_sd": sd,
            "start_value": [solution.start_value()] * len(strategies),
        }
    )
    return table.filter(pl.col("moves") > 0)
