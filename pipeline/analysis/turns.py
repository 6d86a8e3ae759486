"""Per-ply metrics of a study, by replaying the recorded moves (engine.play.replays) of its games table.

The games table (pipeline.runs.records.scan_games) holds every game's moves; ``replay_games`` steps
them all through the position tables at once (about two seconds for a 1.5 M-game study) and
gives a ``Plies``: one entry per ply, the position before the move, its number of legal moves,
the move's capture and turn events, and each game's final position and end event. The
functions below take a Plies, or a LazyFrame/DataFrame of games (which they replay first), and
return polars DataFrames grouped by ``by`` (the columns of the games table; the ordered pairing
("south", "north") by default, as pipeline.analysis.metrics, ``by=()`` for every game together):

    replay_games(games)         the Plies; ``Plies.frame()`` is its polars DataFrame, one row per ply
    ludii_plies(games)          Ludii's BranchingFactor, DecisionMoves and PositionalRepetition, ours and
                                Ludii's to the letter (pipeline.analysis.ludii sets the latter beside Ludii's database)
    events_by_ply(games)        the share of the turns at each ply on which each rule event fires
    ply_tables(games)           both of these, from one replay

Given games rather than a Plies, ludii_plies, events_by_ply and ply_tables replay them a block
of BLOCK_PLIES plies at a time: memory holds the games' moves and one block's plies, not every
ply (the default study holds 116 million).

A study may hold several rule sets (column ``rules``): each is replayed with its own tables.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np
import polars as pl

from engine.game import END_EVENTS as ENGINE_END_EVENTS
from engine.game import GAME_EVENTS, Rules
from engine.game import TURN_FLAGS as ENGINE_TURN_FLAGS
from engine.play import FLAG_BITS, Replay, replay
from engine.tables import END_CODES, board_index, kept_tables
from pipeline.analysis.boards import as_it_lies, distinct_states
from pipeline.analysis.metrics import PAIRING, possible_only, wilson_columns
from pipeline.analysis.stats import Z95

GAME_COLUMNS = ("rules", "game_id", "south", "north", "plies")
LUDII_PLIES = ("BranchingFactor", "DecisionMoves", "PositionalRepetition")  # our reading of Ludii's metrics
# Every metric of ludii_plies' table, in its order: ours, then Ludii's to the letter and the per-turn mean.
LUDII_COLUMNS = (*LUDII_PLIES, "BranchingFactor_per_game", "BranchingFactor_per_turn", "PositionalRepetition_ludii")
MEANS_OVER_GAMES = (*LUDII_PLIES, "BranchingFactor_per_game")  # a value per game, averaged over the games
TURN_FLAGS = ENGINE_TURN_FLAGS  # the turn events a single ply fires or not
END_EVENTS = ENGINE_END_EVENTS
FLAG_VALUES = 1 << len(FLAG_BITS)  # the values a ply's flags (engine.play.FLAG_BITS) can take
REPETITION_CHUNK = 1 << 14  # games whose states are sorted together (a sort that stays in the cache)
# Plies replayed at once by ludii_plies and events_by_ply from a games table: ~50 bytes a ply
# while a block is measured (~200 MB), rather than every ply of the games at once.
BLOCK_PLIES = 1 << 22


@dataclass(frozen=True, eq=False)
class Plies:
    """Every ply of a set of games, replayed.

    ``games`` has one row per game (GAME_COLUMNS and any grouping columns asked for), in the
    order of the plies; the games of each rule set are consecutive. ``replays`` holds, for
    each rule set in turn, the engine.play.Replay of its games: game row ``first + g`` is
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
        """A per-ply array of engine.play.Replay (``position``, ``options``, ...) or, for a name
        of TURN_FLAGS, that flag as bool; the rule sets' arrays end to end."""
        parts = [run.flag(name) if name in TURN_FLAGS else getattr(run, name) for _, run in self.replays]
        return parts[0] if len(parts) == 1 else np.concatenate(parts)

    def per_game(self, name: str) -> np.ndarray:
        """A per-game array of engine.play.Replay (``final_position``, ``end_code``, ``forfeited``)."""
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
        (the mover's), pit (absolute, 0-5), position (engine.tables.index, mover's view), options (legal
        moves), captured (stones), and a bool column per turn event of TURN_FLAGS. The string
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
            *(pl.Series(name, self.column(name)) for name in TURN_FLAGS),
        )


def replay_games(games: pl.LazyFrame | pl.DataFrame, by: Sequence[str] = ()) -> Plies:
    """Replay every game of a games table (pipeline.runs.records.scan_games), each rule set with its
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
        rules = Rules.from_name(name)
        try:
            # The tables engine.play_batch keeps too: one rule set's in memory, not two copies or two rule sets'.
            run = replay(rules, flat[offsets[first] : offsets[last]], local, tables=kept_tables(rules))
        except ValueError as error:
            raise type(error)(_with_game_id(str(error), frame["game_id"], first)) from None
        replays.append((first, run))
    return Plies(frame.drop("moves"), tuple(replays), offsets)


def ludii_plies(games: pl.LazyFrame | pl.DataFrame | Plies, by: Sequence[str] = PAIRING) -> pl.DataFrame:
    """Ludii's per-ply metrics (the Ludii "Evaluation" metrics, Digital Ludeme Project), per
    group: games, then each metric of LUDII_COLUMNS with its 95% interval as NAME, NAME_low,
    NAME_high. The Ludii files named are those of github.com/Ludeme/Ludii, under
    Evaluation/src/metrics unless a path says otherwise.

    Our reading (LUDII_PLIES): as in Ludii, each is computed per game, then averaged over the
    games; a normal interval over games (sample standard deviation; the mean itself for one game).

    - BranchingFactor: the mean number of legal moves over the positions where a move was
      played (games without a move left out).
    - DecisionMoves: the share of the moves played with more than one legal move (games
      without a move left out). single/complexity/DecisionMoves.java divides by the moves of
      each game, so that one game without a move would make Ludii's value NaN.
    - PositionalRepetition: 1 - distinct states / states, the states being the start and the
      position after every move, a state being (board, side to move). Ludii's Java keys a state
      by the board alone and divides two integers (see PositionalRepetition_ludii); we use real
      division, and our key is that of single/stateRepetition/SituationalRepetition.java
      (State.fullHash, which adds the mover to State.stateHash).

    Ludii's Java to the letter, and the mean per turn:

    - BranchingFactor_per_game: Ludii's BranchingFactorAverage (multiple/metrics/BranchingFactor.java
      averaged by multiple/MultiMetricFramework.metricAverage; registered in Evaluation.java):
      per game, the mean number of legal moves over the positions where a move was played;
      then the mean over every game, a game without a move counting 0. It equals
      BranchingFactor when every game has a move. Normal interval over games.
    - BranchingFactor_per_turn: the legal moves summed over every turn of the group, divided by
      its turns, so that each game weighs as much as its turns; the interval is that of a
      ratio of two sums over games (the delta method with the games as clusters).
    - PositionalRepetition_ludii: single/stateRepetition/PositionalRepetition.java adds, per
      game, 1.0 - (unique / total) over the State.stateHash() of the start and of the state
      after every move, unique and total being ints: the division truncates to 1 without a
      repeat and to 0 with one, so a game counts 1 if some board comes back, else 0.
      stateHash (Core/src/other/state/State.java) hashes the containers (the pits as they lie)
      without the side to move. The metric is the share of games with a repeated board, with
      its Wilson interval. Between two equal boards of one game no stone was captured (stones
      only leave the board), so the captured piles, which Ludii would hold too, are equal.
    """
    return _ludii_table([_ludii_per_game(plies, by) for plies in replayed_blocks(games, by).plies], by)


def events_by_ply(games: pl.LazyFrame | pl.DataFrame | Plies, by: Sequence[str] = PAIRING) -> pl.DataFrame:
    """When in the game each rule event fires, per group, long form: *by, event, ply, turns
    (games that play a move at that ply), positions (games that reach that ply: a move played
    or not), fired, and share with its 95% Wilson interval (share, share_low, share_high).

    - Turn events (TURN_FLAGS): fired counts the moves at that ply on which the event fires,
      share = fired / turns; rows for the plies where some game plays a move.
    - End events (END_EVENTS): a game counts at the ply of its terminal position (its number of
      moves), share = fired / positions, the share of the games reaching that ply that end
      there with that event; rows for the plies some game reaches. A game stopped by the ply
      cap fires none.

    Rows are sorted by group, then event (TURN_FLAGS then END_EVENTS), then ply. Summed over
    the plies, fired gives the per-game event counts of the games table, summed over games.
    Grouped by rules, an event the group's rule set rules out has no rows (as in
    pipeline.analysis.metrics.events).
    """
    blocks = replayed_blocks(games, by)
    counts = _PlyCounts.zero(_group_keys(blocks.games, by), blocks.longest + 1)
    for plies in blocks.plies:
        counts.add(plies, by)
    return _by_ply_table(counts, by)


def ply_tables(games: pl.LazyFrame | pl.DataFrame | Plies, by: Sequence[str] = PAIRING) -> tuple[pl.DataFrame, pl.DataFrame]:
    """ludii_plies(games, by) and events_by_ply(games, by), the games replayed once for both."""
    blocks = replayed_blocks(games, by)
    counts = _PlyCounts.zero(_group_keys(blocks.games, by), blocks.longest + 1)
    per_game = []
    for plies in blocks.plies:
        per_game.append(_ludii_per_game(plies, by))
        counts.add(plies, by)
    return _ludii_table(per_game, by), _by_ply_table(counts, by)


def _by_ply_table(counts: _PlyCounts, by: Sequence[str]) -> pl.DataFrame:
    table = counts.table()
    return possible_only(table) if "rules" in by else table


# ---------------------------------------------------------------------------------------------


class _Blocks(NamedTuple):
    """Games to replay block by block (replayed_blocks)."""

    games: pl.DataFrame  # a row per game: GAME_COLUMNS and the grouping columns, in replay_games' order
    longest: int  # the most moves of a game
    plies: Iterator[Plies]  # the Plies of each block in turn, replayed when it is reached


def replayed_blocks(games: pl.LazyFrame | pl.DataFrame | Plies, by: Sequence[str], block_plies: int | None = None) -> _Blocks:
    """The games cut into consecutive blocks of about ``block_plies`` plies (BLOCK_PLIES by
    default); Plies given are one block."""
    block_plies = BLOCK_PLIES if block_plies is None else block_plies
    if isinstance(games, Plies):
        missing = [name for name in by if name not in games.games.columns]
        if missing:
            raise ValueError(f"the plies were replayed without the columns {missing}: pass by={list(by)} to replay_games")
        return _Blocks(games.games, int(games.plies.max(initial=0)), iter([games]))
    frame = games.lazy().select(list(dict.fromkeys([*GAME_COLUMNS, *by, "moves"]))).collect()
    if frame["rules"].n_unique() > 1:
        frame = frame.sort("rules", maintain_order=True)  # as replay_games: every block then keeps the games' order
    lengths = frame["moves"].list.len().cast(pl.Int64).to_numpy()
    played = np.cumsum(lengths)
    cuts = np.searchsorted(played, np.arange(block_plies, played[-1] if len(played) else 0, block_plies), side="right")
    bounds = [0, *sorted(set(cuts.tolist()) - {0, len(frame)}), len(frame)]  # one block at least
    blocks = (replay_games(frame.slice(start, stop - start), by) for start, stop in itertools.pairwise(bounds))
    return _Blocks(frame.drop("moves"), int(lengths.max(initial=0)), blocks)


def _with_game_id(message: str, game_ids: pl.Series, first: int) -> str:
    """An engine.play.replays message names the game's row within its rule set; name its game_id instead."""
    found = re.match(r"game row (\d+)", message)
    if found is None:
        return message
    return f"game_id {game_ids[first + int(found.group(1))]}" + message[found.end() :]


def _ludii_per_game(plies: Plies, by: Sequence[str]) -> pl.DataFrame:
    """One row per game: its columns ``by``, the metrics of MEANS_OVER_GAMES (null where a game
    has none), and what the pooled metrics sum: _legal (legal moves over its turns), _plies and
    _repeated (a board comes back)."""
    lengths = plies.plies
    options = plies.column("options")
    legal = _per_game_sum(plies, options)
    with np.errstate(invalid="ignore", divide="ignore"):
        branching = legal / lengths
        decisions = _per_game_sum(plies, options > 1) / lengths
    repetition, repeated = _repetitions(plies)
    table = pl.DataFrame(
        {
            "BranchingFactor": branching,
            "DecisionMoves": decisions,
            "PositionalRepetition": repetition,
            "BranchingFactor_per_game": np.where(lengths > 0, branching, 0.0),
            "_legal": legal,
            "_plies": lengths,
            "_repeated": repeated,
        }
    ).fill_nan(None)
    return plies.games.select(*by).hstack(table) if by else table


def _ludii_table(per_game: list[pl.DataFrame], by: Sequence[str]) -> pl.DataFrame:
    """ludii_plies' table from the rows of _ludii_per_game, block by block in the games' order."""
    games = pl.concat(per_game, rechunk=True)
    sums = _ludii_sums()
    table = games.group_by(*by).agg(sums).sort(*by) if by else games.select(sums)
    table = table.with_columns(_ludii_intervals())
    return table.select(*by, "games", *(f"{name}{end}" for name in LUDII_COLUMNS for end in ("", "_low", "_high")))


def _ludii_sums() -> list[pl.Expr]:
    """The aggregates of ludii_plies' groups: games, each mean over games with its spread, and
    the sums of the pooled metrics."""
    exprs = [pl.len().cast(pl.Int64).alias("games")]
    for name in MEANS_OVER_GAMES:
        exprs += [pl.col(name).mean(), pl.col(name).std(ddof=1).alias(f"_{name}_sd"), pl.col(name).count().alias(f"_{name}_n")]
    legal, turns = pl.col("_legal").cast(pl.Float64), pl.col("_plies").cast(pl.Float64)
    return [
        *exprs,
        legal.sum().alias("_legal"),
        turns.sum().alias("_plies"),
        (legal * legal).sum().alias("_legal_squared"),
        (legal * turns).sum().alias("_legal_by_plies"),
        (turns * turns).sum().alias("_plies_squared"),
        pl.col("_repeated").sum().cast(pl.Int64).alias("_repeated"),
    ]


def _ludii_intervals() -> list[pl.Expr]:
    """Each metric of LUDII_COLUMNS and its 95% interval, from _ludii_sums' aggregates."""
    intervals = []
    for name in MEANS_OVER_GAMES:
        spread = Z95 * pl.col(f"_{name}_sd").fill_null(0.0) / pl.col(f"_{name}_n").cast(pl.Float64).sqrt()
        intervals += [(pl.col(name) - spread).alias(f"{name}_low"), (pl.col(name) + spread).alias(f"{name}_high")]
    share, low, high = wilson_columns("_repeated", "games", "_ludii")
    repeated = [share.alias("PositionalRepetition_ludii"), low.alias("PositionalRepetition_ludii_low")]
    return [*intervals, *_per_turn(), *repeated, high.alias("PositionalRepetition_ludii_high")]


def _per_turn() -> list[pl.Expr]:
    """BranchingFactor_per_turn = legal / plies summed over the games, with its 95% interval by the
    delta method with the games as clusters (Cochran, Sampling Techniques, ratio estimator; as
    pipeline.analysis.metrics' per_100_turns): se = sqrt(sum((x - r t)^2) / (n - 1) / n) / mean(t), x a
    game's legal moves and t its turns. Null without turns."""
    games = pl.col("games").cast(pl.Float64)
    ratio = pl.col("_legal") / pl.col("_plies")
    squares = pl.col("_legal_squared") - 2 * ratio * pl.col("_legal_by_plies") + ratio**2 * pl.col("_plies_squared")
    se = (squares.clip(lower_bound=0.0) / (games - 1) / games).sqrt() / (pl.col("_plies") / games)
    half = pl.when(pl.col("games") > 1).then(Z95 * se).otherwise(0.0)
    defined = pl.col("_plies") > 0
    name = "BranchingFactor_per_turn"
    return [
        pl.when(defined).then(ratio).alias(name),
        pl.when(defined).then(ratio - half).alias(f"{name}_low"),
        pl.when(defined).then(ratio + half).alias(f"{name}_high"),
    ]


def _per_game_sum(plies: Plies, values: np.ndarray) -> np.ndarray:
    """The sum of a per-ply array over each game's plies (int64; 0 for a game without moves)."""
    lengths = plies.plies
    played = lengths > 0
    sums = np.zeros(len(lengths), dtype=np.int64)
    sums[played] = np.add.reduceat(values, plies.offsets[:-1][played], dtype=np.int64)
    return sums


def _repetitions(plies: Plies) -> tuple[np.ndarray, np.ndarray]:
    """Each game's PositionalRepetition, 1 - distinct states / states, and whether a board comes
    back (bool). Its states are the positions before its moves and its final position, each
    with its side to move; its boards, the same without the side to move."""
    lengths = plies.plies
    state, final = _states(plies)
    bits = int(max(state.max(initial=0), final.max(initial=0))).bit_length()
    distinct = np.empty(len(plies), dtype=np.int64)
    boards = np.empty(len(plies), dtype=np.int64)
    for start in range(0, len(plies), REPETITION_CHUNK):
        games = slice(start, start + REPETITION_CHUNK)
        moves = slice(plies.offsets[start], plies.offsets[min(start + REPETITION_CHUNK, len(plies))])
        distinct[games], boards[games] = distinct_states(state[moves], final[games], lengths[games], bits)
    return 1 - distinct / (lengths + 1), boards < lengths + 1


def _states(plies: Plies) -> tuple[np.ndarray, np.ndarray]:
    """Every state as board * 2 + side to move (int64), the board being the engine.tables.index of the
    six pits as they lie: per ply the position before the move, per game its final position."""
    per_ply, per_game = [], []
    for _, run in plies.replays:
        index = board_index(run.rules.total_stones)
        per_ply.append(as_it_lies(index, run.position, run.mover))
        per_game.append(as_it_lies(index, run.final_position, (run.plies % 2).astype(np.uint8)))
    if len(per_ply) == 1:
        return per_ply[0], per_game[0]
    return np.concatenate(per_ply), np.concatenate(per_game)


def _group_keys(games: pl.DataFrame, by: Sequence[str]) -> pl.DataFrame:
    """The groups of the games: their keys, sorted, with their number (column _group)."""
    if not by:
        return pl.DataFrame({"_group": [0]}, schema={"_group": pl.UInt32})
    return games.select(*by).unique().sort(*by).with_row_index("_group")


def _group_numbers(games: pl.DataFrame, by: Sequence[str], keys: pl.DataFrame) -> np.ndarray:
    """Each game's group number (int64) among ``keys`` (_group_keys)."""
    if not by:
        return np.zeros(len(games), dtype=np.int64)
    numbered = games.select(*by).join(keys, on=list(by), how="left", maintain_order="left")
    return numbered["_group"].cast(pl.Int64).to_numpy()


@dataclass(eq=False)
class _PlyCounts:
    """What events_by_ply counts, summed over blocks of plies, indexed by group * width + ply
    (``keys``: the groups, _group_keys; ``width``: one more than the most moves of a game):
    flags[key, byte] the turns at that ply with that flag byte (every turn event's count is a
    sum over the bytes), ended the games of that many moves, end_codes[code] those of them
    whose final position has that end code."""

    keys: pl.DataFrame
    width: int
    flags: np.ndarray
    ended: np.ndarray
    end_codes: dict[int, np.ndarray]

    @classmethod
    def zero(cls, keys: pl.DataFrame, width: int) -> _PlyCounts:
        size = len(keys) * width
        codes = {code: np.zeros(size, dtype=np.int64) for code in END_CODES.values()}
        return cls(keys, width, np.zeros((size, FLAG_VALUES), dtype=np.int64), np.zeros(size, dtype=np.int64), codes)

    def add(self, plies: Plies, by: Sequence[str]) -> None:
        """Count the turns and the ends of the games of ``plies``, grouped by ``by``."""
        size, group = len(self.ended), _group_numbers(plies.games, by, self.keys)
        turn_key = np.repeat(group * self.width - plies.offsets[:-1], plies.plies)
        turn_key += np.arange(plies.offsets[-1], dtype=np.int64)
        turn_key *= FLAG_VALUES
        turn_key |= plies.column("flags")
        self.flags += np.bincount(turn_key, minlength=size * FLAG_VALUES).reshape(-1, FLAG_VALUES)
        del turn_key
        game_key = group * self.width + plies.plies
        self.ended += np.bincount(game_key, minlength=size)
        end_code = plies.per_game("end_code")
        for code, fired in self.end_codes.items():
            fired += np.bincount(game_key[end_code == code], minlength=size)

    def table(self) -> pl.DataFrame:
        """events_by_ply's table of these counts."""
        turns = self.flags.sum(axis=1)
        ended = self.ended.reshape(len(self.keys), self.width)
        positions = np.cumsum(ended[:, ::-1], axis=1)[:, ::-1].reshape(-1)  # games with at least that many moves
        parts = []
        for name, bit in FLAG_BITS.items():
            fired = self.flags[:, [byte for byte in range(FLAG_VALUES) if byte & bit]].sum(axis=1)
            parts.append(_event_rows(name, turns, positions, fired, turns, self.width))
        for name, code in END_CODES.items():
            parts.append(_event_rows(name, turns, positions, self.end_codes[code], positions, self.width))
        table = pl.concat(parts)
        table = self.keys.join(table, on="_group").sort("_group", "_event", "ply").drop("_group", "_event")
        table = table.with_columns(wilson_columns("fired", "_trials", "_s")).drop("_trials")
        return table.rename({"_s_share": "share", "_s_low": "share_low", "_s_high": "share_high"})


def _event_rows(
    name: str, turns: np.ndarray, positions: np.ndarray, fired: np.ndarray, trials: np.ndarray, width: int
) -> pl.DataFrame:
    """One event's rows: those (group, ply) with trials."""
    kept = np.flatnonzero(trials > 0)
    order = GAME_EVENTS.index(name)
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
