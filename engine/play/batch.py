"""Batched games: many complete games of table strategies played in lockstep on NumPy arrays.

Game i of ``play_batch(n, south, north, rules=rules, seed=s)`` has the seed
``engine.game.rng.game_seeds(s, n)[i]`` and is, move for move, the game
``engine.play_game(south, north, rules=rules, seed=int(game_seeds(s, n)[i]))``: same moves,
scores, plies, end reason and rule events. Table strategies take exactly one draw per turn,
so the draw of ply p is draw number p of the game's stream (engine.game.rng): the high half of
word p // 2 + 1 at even plies, its low half at odd plies.

Games are played in chunks of CHUNK_GAMES (engine.play.chunk). At each ply every unfinished
game of a chunk moves, by a few whole-array operations and four gathers from lookups derived
once per rule set from its position tables (engine.play.tables, whose docstring lays them
out); random and greedy pick from those lookups, every other table strategy by its policy
table (engine.players.policy). Ply 0, which the position tables do not hold, comes from
engine.tables.first_move. This module holds what the caller sees: ``play_batch``, its checks, and
how games are cut into chunks and put back in order.
"""

from __future__ import annotations

import dataclasses
import os
from functools import lru_cache

import numpy as np

from engine.game import EVENTS, Rules, check_rules, check_seed, game_seeds_between
from engine.play.chunk import BatchStrategy, Chunk, Player
from engine.play.columns import GameBatch
from engine.play.mcts import TREE_BYTES, search_games, tree_bytes
from engine.play.tables import (
    derived_tables,
    fits_counters,
)
from engine.players import GreedyStrategy, MctsStrategy, RandomStrategy, Strategy, is_table_strategy, make_strategy, policy_table
from engine.tables import PositionTables, kept_tables, table_rules

CHUNK_GAMES = 1 << 16  # games in lockstep: their working arrays stay in the L2 cache

DEFAULT_RULES = Rules()
ADDRESS_SPACE = 1 << 48  # bytes a 64-bit machine can address: the memory assumed when the system does not say


def play_batch(
    n_games: int,
    south: str | Strategy | BatchStrategy,
    north: str | Strategy | BatchStrategy,
    *,
    rules: Rules = DEFAULT_RULES,
    seed: int = 0,
    tables: PositionTables | None = None,
    start: int = 0,
) -> GameBatch:
    """Play ``n_games`` complete games. Game i has the seed ``engine.game.rng.game_seeds(seed, n_games)[i]``
    and is the game engine.play_game plays with that seed, move for move.

    Strategies: every engine strategy (spec strings or the engine's objects), each table
    strategy played from its policy table (engine.players.policy: loaded from the cache, or built there
    the first time) and mcts by searches in lockstep (engine.play.mcts), or any
    BatchStrategy. ``tables`` are the position tables of ``rules``;
    without them the cached ones are loaded (engine.tables.positions.load_tables) and kept for the next
    call. The first call with given tables derives the batch tables from them (about 2 s and
    170 MB for the default rules), kept as long as the position tables are, as are the
    policy tables. With ``start``, only games start .. n_games - 1 of the seed's are played
    (the rows from ``start`` of the whole batch).
    """
    if isinstance(n_games, bool) or not isinstance(n_games, int | np.integer) or n_games < 1:
        raise ValueError(f"n_games must be a whole number of at least 1, not {n_games!r}")
    if isinstance(start, bool) or not isinstance(start, int | np.integer) or not 0 <= start < n_games:
        raise ValueError(f"start must be a whole number from 0 to n_games - 1, not {start!r}")
    _check_memory(int(n_games))
    check_rules(rules)
    seed = check_seed(seed)
    players = (_player(south), _player(north))
    if _searches_against_a_policy(players):
        raise ValueError(
            f"{players[0].spec} vs {players[1].spec} has no batched version: play_batch plays mcts against the engine's "
            "strategies only; play it with engine.play_game"
        )
    tables = kept_tables(rules) if tables is None else tables
    if table_rules(tables.rules) != table_rules(rules):
        raise ValueError(f"the tables are those of {tables.rules.name}, not of the rules asked for, {rules.name}")
    players = (_with_tables(players[0], rules, tables), _with_tables(players[1], rules, tables))
    derived = derived_tables(tables)
    n_games, start = int(n_games), int(start)
    batch = _empty_batch(n_games - start, players, rules)
    moves = []
    chunk_games = _chunk_games(players)
    for first in range(start, n_games, chunk_games):
        seeds = game_seeds_between(seed, first, min(first + chunk_games, n_games))
        chunk = Chunk(derived, tables, rules.ply_cap, _searched(players, tables, rules, seeds), seeds)
        moves.append(chunk.play(batch, first - start))
    np.cumsum(batch.plies, out=batch.move_offsets[1:])
    return dataclasses.replace(batch, moves=np.concatenate(moves))


def batchable(south: str | Strategy | BatchStrategy, north: str | Strategy | BatchStrategy, rules: Rules = DEFAULT_RULES) -> bool:
    """Whether play_batch plays these two strategies under ``rules``: each is an engine strategy
    (a spec string or the engine's object) or a BatchStrategy (but not mcts against one), and
    the rule set's stones fit the batch's counters (every valid rule set does). engine.play_game
    plays the others. An unknown spec raises UnknownStrategyError and a bad rule set its error,
    as play_batch would: they are mistakes, not strategies without a batched version.
    """
    check_rules(rules)
    if not (fits_counters(rules) and _batched(south) and _batched(north)):
        return False
    return not _searches_against_a_policy((_player(south), _player(north)))


def _check_memory(n_games: int) -> None:
    """Refuse a batch whose columns alone, its moves aside, need more bytes than the machine has."""
    needed, memory = n_games * _game_bytes(), _memory_bytes()
    if needed > memory:
        raise ValueError(
            f"n_games={n_games} needs at least {_size(needed)} of memory ({_game_bytes()} bytes a game, its moves aside), "
            f"more than the {_size(memory)} of this machine: play fewer games per call"
        )


@lru_cache(maxsize=1)
def _game_bytes() -> int:
    """The bytes one game adds to the columns of a GameBatch, its moves aside."""
    player = Player("", False, None)
    one, two = (_empty_batch(n_games, (player, player), DEFAULT_RULES) for n_games in (1, 2))
    return _column_bytes(two) - _column_bytes(one)


def _column_bytes(batch: GameBatch) -> int:
    columns = [getattr(batch, field.name) for field in dataclasses.fields(batch)]
    return sum(column.nbytes for column in [*columns, *batch.events.values()] if isinstance(column, np.ndarray))


def _memory_bytes() -> int:
    """The machine's physical memory in bytes, or ADDRESS_SPACE when the system does not say."""
    try:
        return os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (AttributeError, OSError, ValueError):
        return ADDRESS_SPACE


def _size(n_bytes: int) -> str:
    """A byte count for people, e.g. ``549.5 TiB``."""
    value, units = float(n_bytes), ["B", "KiB", "MiB", "GiB", "TiB"]
    while value >= 1024 and len(units) > 1:
        value, units = value / 1024, units[1:]
    return f"{value:,.1f} {units[0]}"


# ---------------------------------------------------------------------------------------------
# Strategies


_BUILT_IN = (RandomStrategy, GreedyStrategy)  # the engine's strategies play_batch plays by its own tables


def _player(strategy: str | Strategy | BatchStrategy) -> Player:
    """The player of a strategy; an engine table strategy gets its policy table in _with_tables."""
    if isinstance(strategy, BatchStrategy):
        return Player(strategy.spec, False, strategy)
    if not isinstance(strategy, str | Strategy):
        raise ValueError(f"a strategy is a spec string, an engine strategy or a BatchStrategy, not {strategy!r}")
    resolved = make_strategy(strategy)  # an unknown spec string raises UnknownStrategyError here
    if isinstance(resolved, MctsStrategy):
        return Player(resolved.spec, False, None, search=resolved)
    if type(resolved) in _BUILT_IN or is_table_strategy(resolved):
        return Player(resolved.spec, type(resolved) is GreedyStrategy, None)
    raise ValueError(
        f"strategy {resolved.spec!r} has no batched version: its choice is no function of the position and one draw; "
        "give play_batch an engine strategy or an object with .spec and .pick_batch(tables, positions, draws, "
        "legal), or play it with engine.play_game"
    )


def _with_tables(player: Player, rules: Rules, tables: PositionTables) -> Player:
    """An engine table strategy with its policy table loaded: every one but random and greedy,
    and those too when they face mcts (whose games engine.play.mcts plays by the tables)."""
    if player.policy is not None or player.search is not None or type(make_strategy(player.spec)) in _BUILT_IN:
        return player
    return dataclasses.replace(player, table=policy_table(player.spec, rules, tables=tables))


def _batched(strategy: str | Strategy | BatchStrategy) -> bool:
    """Whether _player takes the strategy (make_strategy raises for what is no strategy at all)."""
    return isinstance(strategy, BatchStrategy) or is_table_strategy(strategy) or isinstance(make_strategy(strategy), MctsStrategy)


def _searches_against_a_policy(players: tuple[Player, Player]) -> bool:
    """mcts against a caller's BatchStrategy: engine.play.mcts plays the engine's strategies only."""
    return any(player.search is not None for player in players) and any(player.policy is not None for player in players)


def _chunk_games(players: tuple[Player, Player]) -> int:
    """Games a chunk plays: CHUNK_GAMES, or as many as mcts's trees let fit in TREE_BYTES."""
    searches = [player.search for player in players if player.search is not None]
    return min([CHUNK_GAMES, *(max(1, TREE_BYTES // tree_bytes(search.playouts)) for search in searches)])


def _searched(players: tuple[Player, Player], tables: PositionTables, rules: Rules, seeds: np.ndarray) -> tuple[Player, Player]:
    """The players of a chunk: when mcts plays, both scripted with the pits engine.play.mcts finds."""
    if all(player.search is None for player in players):
        return players
    searchers = tuple(
        player.search if player.search is not None else player.table or policy_table(player.spec, rules, tables=tables)
        for player in players
    )
    pits = search_games(tables, rules, searchers, seeds)  # type: ignore[arg-type]
    return (dataclasses.replace(players[0], script=pits), dataclasses.replace(players[1], script=pits))


# ---------------------------------------------------------------------------------------------
# The tables a chunk plays from are engine.play.tables', its draws engine.game.rng's, its loop engine.play.chunk's.


def _empty_batch(n_games: int, players: tuple[Player, Player], rules: Rules) -> GameBatch:
    return GameBatch(
        np.empty(n_games, dtype=np.uint64),
        np.empty(n_games, dtype=np.uint8),
        np.empty(n_games, dtype=np.int16),
        np.empty(n_games, dtype=np.int16),
        np.empty(n_games, dtype=np.int16),
        np.empty(n_games, dtype=np.uint8),
        np.empty(0, dtype=np.uint8),
        np.zeros(n_games + 1, dtype=np.int64),
        {name: np.empty(n_games, dtype=np.uint16) for name in EVENTS},
        players[0].spec,
        players[1].spec,
        rules.name,
    )
