"""Batched games: many complete games of table strategies played in lockstep on NumPy arrays.

Game i of ``play_batch(n, south, north, rules=rules, seed=s)`` has the seed
``engine.rng.game_seeds(s, n)[i]`` and is, move for move, the game
``engine.play_game(south, north, rules=rules, seed=int(game_seeds(s, n)[i]))``: same moves,
scores, plies, end reason and rule events. Table strategies take exactly one draw per turn,
so the draw of ply p is draw number p of the game's stream (engine.rng): the high half of
word p // 2 + 1 at even plies, its low half at odd plies.

Games are played in chunks of CHUNK_GAMES. At each ply every unfinished game of a chunk
moves, by a few whole-array operations and four gathers from tables derived once per rule
set (engine.tables gives the positions, each seen by its mover). random and greedy pick by
the first two; every other table strategy picks by its policy table instead (engine.policy:
the class of the mover's position, then the cuts of that class on the draw):

    info[position]            the position's class: its legal pits, the pits a greedy
                              player may take (the largest captures), its flags
    pick[8 * class + sixth]   the pit a strategy plays, given sixth = (6 * draw) >> 32
    step[3 * position + pit]  the child position | the move's capture code << 24: one
                              32-bit word, so one cache miss brings both
    events[code << 8 | class] what the turn adds to the game's packed event counter

A finished game picks the sentinel NO_MOVE, whose low bits are pit 0; in a position without
moves the step of pit 0 leads back to the position itself and adds nothing, so a finished
game stays put until the chunk drops it (once a third of its games have finished).
"""

from __future__ import annotations

import dataclasses
import os
import sys
import weakref
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Protocol, runtime_checkable

import numpy as np

from engine.board import whole_number
from engine.errors import IllegalMoveError
from engine.events import EVENTS, POSITION_FLAGS, unpack_events
from engine.game import GameRecord
from engine.index import row_stones
from engine.mcts_batch import TREE_BYTES, search_games, tree_bytes
from engine.moves import start_board
from engine.policy import PolicyTable, is_table_strategy, policy_table
from engine.registry import make_strategy
from engine.rng import GAMMA, MASK32, MIX1, MIX2, SEED_SALT, check_seed
from engine.rules import ROW, Rules, check_rules
from engine.scoring import WINNERS, final_score
from engine.search import MctsStrategy
from engine.strategies import GreedyStrategy, RandomStrategy
from engine.strategy_base import Strategy
from engine.tables import END_CODES, END_MASK, END_SHIFT, FLAGS, PositionTables, first_moves, kept_tables, table_rules

END_REASONS = ("no_moves", "ply_cap")  # GameBatch.end_reason holds the index of one of these
GAME_COLUMNS = ("seeds", "winner", "score_south", "score_north", "plies", "end_reason")  # one entry a game
CHUNK_GAMES = 1 << 16  # games in lockstep: their working arrays stay in the L2 cache

DEFAULT_RULES = Rules()
NO_MOVE = 4  # the pit a finished game picks; NO_MOVE & 3 is pit 0
STEP_CHILD_BITS = 24  # a step entry is 32 bits when the child fits these and the capture code the rest
DERIVE_BLOCK = 1 << 20  # positions derived at a time
CLASS_FLAGS_SHIFT = 2 * ROW  # a class key is legal pits | greedy pits << 3 | the position's flags << 6
CLASS_KEYS, CAPTURE_KEYS = 1 << (CLASS_FLAGS_SHIFT + END_MASK.bit_length()), 1 << 15  # see _keys
SEGMENT_PLIES = 64  # pits are kept in (plies, games) blocks of at most this many plies
DROP_WHEN = 3  # a chunk drops its finished games once they fill a third of its slots
ADDRESS_SPACE = 1 << 48  # bytes a 64-bit machine can address: the memory assumed when the system does not say

# The event counter of a game, one uint64:
#   bits  0-29  capture, capture_pits, capture_own_row_stones, South's and North's captured
#               stones, 6 bits each: a game has at most 60 stones to capture, at least one a pit
#   bits 30-53  the position flags of engine.events (FLAG_EVENTS, read from engine.tables'
#               flags), 6 bits each, the k-th from FLAG_SHIFT + 6 * k
#   bits 54-63  moves played after the first, from MOVES_SHIFT: a fifth position flag would
#               leave them too few bits (tests/test_event_layouts.py checks the fit)
# Every FLUSH_PLIES plies the chunk moves the flag and move fields out, before they can overflow.
CAPTURE_BITS = 6
FLAG_EVENTS = POSITION_FLAGS
FLAG_SHIFT, FLAG_BITS = 5 * CAPTURE_BITS, 6
MOVES_SHIFT = FLAG_SHIFT + len(FLAG_EVENTS) * FLAG_BITS
FLUSH_PLIES = (1 << FLAG_BITS) - 1
CAPTURE_MASK = (1 << FLAG_SHIFT) - 1
HIGH = 1 if sys.byteorder == "little" else 0  # the high half of a uint64 seen as two uint32

# numpy.random.SeedSequence.generate_state's constants (see _hashed_seeds).
_INIT_B, _MULT_B, _XSHIFT = 0x8B51F9DD, 0x58F38DED, 16


@runtime_checkable
class BatchStrategy(Protocol):
    """A vectorised strategy: one pit per game from the mover's position and one 32-bit draw.

    ``pick_batch(tables, positions, draws, legal)`` gets the movers' position indices (int64,
    each in its mover's view: the row is pits 0, 1, 2), the games' draws of this ply (uint32:
    one per turn, as a table strategy of engine.strategies takes) and the (n, 3) bool mask of
    the legal pits (on the first move, those of engine.tables.first_moves); it returns one
    legal pit (0, 1 or 2, the mover's view) per game.
    """

    spec: str

    def pick_batch(self, tables: PositionTables, positions: np.ndarray, draws: np.ndarray, legal: np.ndarray) -> np.ndarray: ...


@dataclass(frozen=True, eq=False)
class GameBatch:
    """Finished games as columns, one entry per game.

    ``winner`` and ``end_reason`` hold indices into engine.scoring.WINNERS and END_REASONS; the moves of game
    i are ``moves[move_offsets[i]:move_offsets[i + 1]]`` (absolute pits, South's first);
    ``events`` holds a count array per name of engine.EVENTS.
    """

    seeds: np.ndarray  # uint64
    winner: np.ndarray  # uint8
    score_south: np.ndarray  # int16
    score_north: np.ndarray  # int16
    plies: np.ndarray  # int16
    end_reason: np.ndarray  # uint8
    moves: np.ndarray  # uint8
    move_offsets: np.ndarray  # int64, len(self) + 1 entries
    events: dict[str, np.ndarray]  # uint16
    south: str  # strategy specs
    north: str
    rules: str  # the rule set's name

    def __len__(self) -> int:
        return len(self.seeds)

    def record(self, i: int) -> GameRecord:
        """Game i as the GameRecord that engine.play_game makes of it."""
        game = whole_number(i)
        if game is None or not 0 <= game < len(self):
            raise ValueError(f"i is a game of the batch, a whole number from 0 to {len(self) - 1}, not {i!r}")
        start, stop = self.move_offsets[game : game + 2].tolist()
        return GameRecord(
            tuple(self.moves[start:stop].tolist()),
            WINNERS[self.winner[game]],
            int(self.score_south[game]),
            int(self.score_north[game]),
            int(self.plies[game]),
            END_REASONS[self.end_reason[game]],
            {name: int(counts[game]) for name, counts in self.events.items()},
            int(self.seeds[game]),
            self.south,
            self.north,
            self.rules,
        )

    def records(self) -> Iterator[GameRecord]:
        return (self.record(i) for i in range(len(self)))

    def rows(self, start: int = 0, stop: int | None = None) -> GameBatch:
        """Games start .. stop - 1 (as ``range(len(self))[start:stop]``), as a batch of their
        own whose columns are views of these."""
        start, stop, _ = slice(start, stop).indices(len(self))
        stop = max(start, stop)
        if (start, stop) == (0, len(self)):
            return self
        offsets = self.move_offsets[start : stop + 1]
        return dataclasses.replace(
            self,
            **{name: getattr(self, name)[start:stop] for name in GAME_COLUMNS},
            moves=self.moves[offsets[0] : offsets[-1]],
            move_offsets=offsets - offsets[0],
            events={name: counts[start:stop] for name, counts in self.events.items()},
        )


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
    """Play ``n_games`` complete games. Game i has the seed ``engine.rng.game_seeds(seed, n_games)[i]``
    and is the game engine.play_game plays with that seed, move for move.

    Strategies: every engine strategy (spec strings or the engine's objects), each table
    strategy played from its policy table (engine.policy: loaded from the cache, or built there
    the first time) and mcts by searches in lockstep (engine.mcts_batch), or any
    BatchStrategy. ``tables`` are the position tables of ``rules``;
    without them the cached ones are loaded (engine.tables.load_tables) and kept for the next
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
    derived = _derived(tables)
    n_games, start = int(n_games), int(start)
    batch = _empty_batch(n_games - start, players, rules)
    moves = []
    chunk_games = _chunk_games(players)
    for first in range(start, n_games, chunk_games):
        seeds = _game_seeds(seed, first, min(first + chunk_games, n_games))
        chunk = _Chunk(derived, tables, rules.ply_cap, _searched(players, tables, rules, seeds), seeds)
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
    if not (_fits_counters(rules) and _batched(south) and _batched(north)):
        return False
    return not _searches_against_a_policy((_player(south), _player(north)))


def concatenate(batches: Sequence[GameBatch]) -> GameBatch:
    """The games of ``batches`` one after the other, as one batch; they must be games of one
    pairing (the same specs and rule set)."""
    if not batches:
        raise ValueError("concatenate needs at least one GameBatch")
    first = batches[0]
    for batch in batches[1:]:
        if (batch.south, batch.north, batch.rules) != (first.south, first.north, first.rules):
            raise ValueError(
                f"cannot concatenate games of {batch.south} vs {batch.north} ({batch.rules}) to games of "
                f"{first.south} vs {first.north} ({first.rules}): a GameBatch holds one pairing"
            )
    if len(batches) == 1:
        return first
    offsets, moves_before = [np.zeros(1, dtype=np.int64)], 0
    for batch in batches:
        offsets.append(batch.move_offsets[1:] + moves_before)
        moves_before += int(batch.move_offsets[-1])
    columns: dict[str, Any] = {name: np.concatenate([getattr(batch, name) for batch in batches]) for name in GAME_COLUMNS}
    return dataclasses.replace(
        first,
        **columns,
        moves=np.concatenate([batch.moves for batch in batches]),
        move_offsets=np.concatenate(offsets),
        events={name: np.concatenate([batch.events[name] for batch in batches]) for name in first.events},
    )


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
    player = _Player("", False, None)
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


@dataclass(frozen=True)
class _Player:
    spec: str
    greedy: bool  # built in: uniform among the greedy pits (True) or among the legal pits
    policy: BatchStrategy | None  # a vectorised strategy of the caller's
    table: PolicyTable | None = None  # or one of the engine's table strategies (engine.policy)
    search: MctsStrategy | None = None  # or mcts, whose moves engine.mcts_batch finds first
    script: np.ndarray | None = None  # then the pits of a chunk's games, (games, plies), mover's view


def _player(strategy: str | Strategy | BatchStrategy) -> _Player:
    """The player of a strategy; an engine table strategy gets its policy table in _with_tables."""
    if isinstance(strategy, BatchStrategy):
        return _Player(strategy.spec, False, strategy)
    if not isinstance(strategy, str | Strategy):
        raise ValueError(f"a strategy is a spec string, an engine strategy or a BatchStrategy, not {strategy!r}")
    resolved = make_strategy(strategy)  # an unknown spec string raises UnknownStrategyError here
    if isinstance(resolved, MctsStrategy):
        return _Player(resolved.spec, False, None, search=resolved)
    if type(resolved) in _BUILT_IN or is_table_strategy(resolved):
        return _Player(resolved.spec, type(resolved) is GreedyStrategy, None)
    raise ValueError(
        f"strategy {resolved.spec!r} has no batched version: its choice is no function of the position and one draw; "
        "give play_batch an engine strategy or an object with .spec and .pick_batch(tables, positions, draws, "
        "legal), or play it with engine.play_game"
    )


def _with_tables(player: _Player, rules: Rules, tables: PositionTables) -> _Player:
    """An engine table strategy with its policy table loaded: every one but random and greedy,
    and those too when they face mcts (whose games engine.mcts_batch plays by the tables)."""
    if player.policy is not None or player.search is not None or type(make_strategy(player.spec)) in _BUILT_IN:
        return player
    return dataclasses.replace(player, table=policy_table(player.spec, rules, tables=tables))


def _batched(strategy: str | Strategy | BatchStrategy) -> bool:
    """Whether _player takes the strategy (make_strategy raises for what is no strategy at all)."""
    return isinstance(strategy, BatchStrategy) or is_table_strategy(strategy) or isinstance(make_strategy(strategy), MctsStrategy)


def _searches_against_a_policy(players: tuple[_Player, _Player]) -> bool:
    """mcts against a caller's BatchStrategy: engine.mcts_batch plays the engine's strategies only."""
    return any(player.search is not None for player in players) and any(player.policy is not None for player in players)


def _chunk_games(players: tuple[_Player, _Player]) -> int:
    """Games a chunk plays: CHUNK_GAMES, or as many as mcts's trees let fit in TREE_BYTES."""
    searches = [player.search for player in players if player.search is not None]
    return min([CHUNK_GAMES, *(max(1, TREE_BYTES // tree_bytes(search.playouts)) for search in searches)])


def _searched(
    players: tuple[_Player, _Player], tables: PositionTables, rules: Rules, seeds: np.ndarray
) -> tuple[_Player, _Player]:
    """The players of a chunk: when mcts plays, both scripted with the pits engine.mcts_batch finds."""
    if all(player.search is None for player in players):
        return players
    searchers = tuple(
        player.search if player.search is not None else player.table or policy_table(player.spec, rules, tables=tables)
        for player in players
    )
    pits = search_games(tables, rules, searchers, seeds)  # type: ignore[arg-type]
    return (dataclasses.replace(players[0], script=pits), dataclasses.replace(players[1], script=pits))


def _fits_counters(rules: Rules) -> bool:
    return rules.total_stones < 1 << CAPTURE_BITS


# ---------------------------------------------------------------------------------------------
# Tables derived from the position tables, once per rule set


@dataclass(frozen=True)
class _Derived:
    rules: Rules
    info: np.ndarray  # (positions,) uint8 class of each position
    step: np.ndarray  # (3 * positions,) child | capture code << code_shift
    code_shift: int
    class_legal: np.ndarray  # (classes, 3) bool
    class_end: np.ndarray  # (classes,) end code (engine.tables.END_CODES), 0 with legal moves
    picks: tuple[np.ndarray, np.ndarray]  # uniform among the legal pits, among the greedy pits
    events: tuple[np.ndarray, np.ndarray]  # counter units of South's turns, of North's
    mover_row: np.ndarray  # (positions,) uint8 stones in the mover's row
    start: int  # the start position
    first_pits: np.ndarray  # the first move's options (engine.tables.first_moves): pits,
    first_child: np.ndarray  # children,
    first_events: dict[str, np.ndarray]  # and events


# By id() of the position tables (which do not hash), dropped with them.
_DERIVED: dict[int, _Derived] = {}


def _derived(tables: PositionTables) -> _Derived:
    found = _DERIVED.get(id(tables))
    if found is None:
        found = _DERIVED[id(tables)] = _derive(tables)
        weakref.finalize(tables, _DERIVED.pop, id(tables), None)
    return found


def _derive(tables: PositionTables) -> _Derived:
    if not _fits_counters(tables.rules):
        raise ValueError(f"play_batch counts captured stones in {CAPTURE_BITS} bits, not {tables.rules.total_stones}")
    # Two passes over blocks of positions, so that the temporary arrays stay small: the first
    # finds the classes and captures that occur, the second numbers them densely.
    blocks = [slice(start, min(start + DERIVE_BLOCK, tables.size)) for start in range(0, tables.size, DERIVE_BLOCK)]
    class_seen, capture_seen = np.zeros(CLASS_KEYS, dtype=bool), np.zeros(CAPTURE_KEYS, dtype=bool)
    for block in blocks:
        class_keys, capture_keys = _keys(tables, block)
        class_seen[class_keys] = capture_seen[capture_keys] = True
    classes, class_number = _numbering(class_seen)
    captures, capture_number = _numbering(capture_seen)
    if len(classes) > 1 << 8:
        raise ValueError(f"play_batch numbers the position classes in 8 bits; {tables.rules.name} has {len(classes)}")
    small = tables.size <= 1 << STEP_CHILD_BITS and len(captures) <= 1 << (32 - STEP_CHILD_BITS)
    code_shift = STEP_CHILD_BITS if small else 32
    info = np.empty(tables.size, dtype=np.uint8)
    step = np.empty((tables.size, ROW), dtype=np.uint32 if small else np.uint64)
    for block in blocks:
        class_keys, capture_keys = _keys(tables, block)
        info[block] = class_number[class_keys]
        step[block] = _steps(tables, block, capture_number[capture_keys], step.dtype, code_shift)
    options = first_moves(tables.rules)
    first_events = [unpack_events(events) for _, _, events in options]
    return _Derived(
        tables.rules,
        info,
        step.reshape(-1),
        code_shift,
        (classes[:, None] >> np.arange(ROW)) & 1 == 1,
        ((classes >> CLASS_FLAGS_SHIFT) & END_MASK) >> END_SHIFT,
        (_pick_table(classes & 7), _pick_table((classes >> 3) & 7)),
        _event_tables(classes, captures),
        row_stones(tables.index)[0],
        tables.index.rank(start_board(tables.rules)),
        np.array([pit for pit, _, _ in options], dtype=np.uint8),
        np.array([child for _, child, _ in options], dtype=np.int64),
        {name: np.array([events[name] for events in first_events], dtype=np.int64) for name in EVENTS},
    )


def _keys(tables: PositionTables, block: slice) -> tuple[np.ndarray, np.ndarray]:
    """The class key of each position of the block (legal pits | greedy pits << 3 | flags << 6)
    and the capture key of each of its moves (stones << 9 | own row stones << 3 | pits; 0 if
    the pit is not legal)."""
    legal = tables.child[block] >= 0
    captured = tables.captured[block].astype(np.uint16)
    pit_bits = np.array([1, 2, 4], dtype=np.uint16)
    most = np.where(legal, captured, 0).max(axis=1, keepdims=True)
    greedy = legal & (captured == most)
    class_keys = (legal @ pit_bits) | (greedy @ pit_bits) << 3 | tables.flags[block].astype(np.uint16) << CLASS_FLAGS_SHIFT
    capture_keys = captured << 9 | tables.own_captured[block].astype(np.uint16) << 3 | tables.capture_pits[block]
    return class_keys, np.where(legal, capture_keys, 0)


def _numbering(seen: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The keys seen, ascending (key 0 always, numbered 0), and each key's number among them."""
    seen[0] = True
    keys = np.flatnonzero(seen)
    number = np.zeros(len(seen), dtype=np.uint8 if len(keys) <= 1 << 8 else np.uint16)
    number[keys] = np.arange(len(keys))
    return keys, number


def _steps(tables: PositionTables, block: slice, capture_code: np.ndarray, step_type: np.dtype, code_shift: int) -> np.ndarray:
    step = tables.child[block].astype(step_type)
    # An illegal pit leads back to the position itself: a finished game plays pit 0 in place.
    np.copyto(step, np.arange(block.start, block.stop, dtype=step_type)[:, None], where=tables.child[block] < 0)
    step |= capture_code.astype(step_type) << step_type.type(code_shift)
    return step


def _pick_table(masks: np.ndarray) -> np.ndarray:
    """pick[8 * class + sixth]: the pit of a uniform choice among the class's pits in ``masks``.

    A choice among n options is (draw * n) >> 32 (engine.rng). As n (1, 2 or 3) divides 6,
    that is sixth // (6 // n) for sixth = (6 * draw) >> 32, so one sixth serves every n.
    A class without pits gives NO_MOVE.
    """
    table = np.full((len(masks), 8), NO_MOVE, dtype=np.uint8)
    for number, mask in enumerate(masks.tolist()):
        pits = [pit for pit in range(ROW) if mask >> pit & 1]
        if pits:
            table[number, :6] = [pits[sixth // (6 // len(pits))] for sixth in range(6)]
    return table.reshape(-1)


def _event_tables(classes: np.ndarray, captures: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """events[code << 8 | class]: what a move with that capture code from a position of that class
    adds to the game's counter, at South's turns and at North's."""
    captured, own, pits = captures >> 9, (captures >> 3) & 63, captures & 7
    capture_units = np.zeros(len(captures), dtype=np.uint64)
    for k, column in enumerate([captured > 0, pits, own]):
        capture_units += column.astype(np.uint64) << np.uint64(CAPTURE_BITS * k)
    # A position without moves ends the game: its flags are no turn's, and it plays no move.
    playing = (classes & 7) > 0
    turn_units = playing.astype(np.uint64) << np.uint64(MOVES_SHIFT)
    flags = classes >> CLASS_FLAGS_SHIFT
    for k, name in enumerate(FLAG_EVENTS):
        fired = ((flags & FLAGS[name]) > 0) & playing
        turn_units += fired.astype(np.uint64) << np.uint64(FLAG_SHIFT + FLAG_BITS * k)
    tables = []
    for side in range(2):
        stones = captured.astype(np.uint64) << np.uint64(CAPTURE_BITS * (3 + side))
        table = np.zeros((len(captures), 1 << 8), dtype=np.uint64)
        table[:, : len(classes)] = (capture_units + stones)[:, None] + turn_units[None, :]
        tables.append(table.reshape(-1))
    return tables[0], tables[1]


# ---------------------------------------------------------------------------------------------
# Seeds and draws


def _game_seeds(seed: int, start: int, stop: int) -> np.ndarray:
    """engine.rng.game_seeds(seed, n)[start:stop], for any n >= stop."""
    sequence = np.random.SeedSequence(seed)
    if _numpy_agrees():
        return _hashed_seeds(sequence.pool, start, stop)
    return sequence.generate_state(stop, dtype=np.uint64)[start:]  # NumPy's own way, at Python speed


def _hashed_seeds(pool: np.ndarray, start: int, stop: int) -> np.ndarray:
    """SeedSequence.generate_state on arrays (NumPy loops in Python, 3 million seeds a second).

    Word i of its output is (pool[i % 4] ^ h_i) * h_(i+1) mod 2**32, folded by a shift, with
    h_i = INIT_B * MULT_B**i mod 2**32; a uint64 seed is two words, the low one first.
    """
    words = 2 * (stop - start)
    powers = np.full(words + 1, _MULT_B, dtype=np.uint64)
    powers[0] = pow(_MULT_B, 2 * start, 1 << 32)
    hashes = (np.cumprod(powers) * np.uint64(_INIT_B)) & np.uint64(MASK32)  # cumprod wraps mod 2**64
    pool = np.roll(np.asarray(pool, dtype=np.uint64), -(2 * start) % len(pool))
    mixed = np.tile(pool, words // len(pool) + 1)[:words]
    mixed = ((mixed ^ hashes[:-1]) * hashes[1:]) & np.uint64(MASK32)
    mixed ^= mixed >> np.uint64(_XSHIFT)
    return mixed[0::2] | mixed[1::2] << np.uint64(32)


@lru_cache(maxsize=1)
def _numpy_agrees() -> bool:
    """Whether NumPy's SeedSequence still hashes as _hashed_seeds does (checked once)."""
    sequences = [np.random.SeedSequence(seed) for seed in (0, 7, 2**64 - 1)]
    return all(np.array_equal(_hashed_seeds(s.pool, 0, 9), s.generate_state(9, dtype=np.uint64)) for s in sequences)


def _mix64(z: np.ndarray, out: np.ndarray, scratch: np.ndarray) -> np.ndarray:
    """engine.rng.mix64 on an array of uint64 words (multiplication wraps mod 2**64)."""
    np.right_shift(z, 30, out=scratch)
    np.bitwise_xor(z, scratch, out=out)
    np.multiply(out, MIX1, out=out)
    np.right_shift(out, 27, out=scratch)
    np.bitwise_xor(out, scratch, out=out)
    np.multiply(out, MIX2, out=out)
    np.right_shift(out, 31, out=scratch)
    np.bitwise_xor(out, scratch, out=out)
    return out


def _sixths(words: np.ndarray, out: np.ndarray, scratch: np.ndarray) -> np.ndarray:
    """(6 * draw) >> 32 of both 32-bit halves of each word, in the words' memory order."""
    np.multiply(words.view(np.uint32), 6, out=scratch, dtype=np.uint64)
    return np.right_shift(scratch, 32, out=out, casting="unsafe")


# ---------------------------------------------------------------------------------------------
# One chunk of games


class _Slots:
    """The working arrays of a chunk's games in play: slot j holds game ids[j].

    ``state`` is each game's SplitMix64 state, ``word`` its last 64-bit word and ``sixths``
    the sixths of that word's two draws (see _pick_table), in memory order. The scratch
    arrays are made once per chunk and sliced as slots are dropped.
    """

    def __init__(self, derived: _Derived, state: np.ndarray, word: np.ndarray, position: np.ndarray) -> None:
        n = len(state)
        self.derived = derived
        self.ids = np.arange(n, dtype=np.int64)
        self.state, self.word, self.position = state, word, position
        self.counters = np.zeros(n, dtype=np.uint64)
        self.scratch = np.empty(2 * n, dtype=np.uint64)
        self.sixths = _sixths(word, np.empty(2 * n, dtype=np.uint8), self.scratch)
        self.info = np.empty(n, dtype=np.uint8)
        self.key = np.empty(n, dtype=np.uint16)
        self.pit = np.empty(n, dtype=np.uint8)
        self.index = np.empty(n, dtype=np.int64)
        self.step = np.empty(n, dtype=derived.step.dtype)
        self.code = np.empty(n, dtype=derived.step.dtype)
        self.units = np.empty(n, dtype=np.uint64)

    def __len__(self) -> int:
        return len(self.ids)

    def look(self) -> np.ndarray:
        """The class of each slot's position (NumPy's clip mode skips the index checks: the
        indices are in range)."""
        info = self.info[: len(self)]
        return np.take(self.derived.info, self.position, out=info, mode="clip")

    def draw(self) -> None:
        """The next word of every game's stream, and the sixths of its two draws."""
        m = len(self)
        self.state += np.uint64(GAMMA)
        _mix64(self.state, self.word[:m], self.scratch[:m])
        _sixths(self.word[:m], self.sixths[: 2 * m], self.scratch[: 2 * m])

    def pick(self, greedy: bool, half: int, out: np.ndarray) -> None:
        """The built-in strategies' pits: one lookup by class and sixth."""
        m = len(self)
        np.left_shift(self.info[:m], 3, out=self.key[:m], dtype=np.uint16)
        np.bitwise_or(self.key[:m], self.sixths[half : 2 * m : 2], out=self.key[:m])
        np.take(self.derived.picks[greedy], self.key[:m], out=out, mode="clip")

    def draws(self, half: int) -> np.ndarray:
        """The 32-bit draws of this ply (``half`` of each word)."""
        return np.ascontiguousarray(self.word[: len(self)].view(np.uint32)[half::2])

    def move(self, picked: np.ndarray, side: int) -> None:
        """Play the picked pits: the child and the capture code come in one gather, then the
        turn's events as counter units looked up by (capture code, class)."""
        m, d = len(self), self.derived
        np.bitwise_and(picked, 3, out=self.pit[:m])  # a finished game plays NO_MOVE & 3, in place
        np.multiply(self.position, 3, out=self.index[:m])
        np.add(self.index[:m], self.pit[:m], out=self.index[:m])
        np.take(d.step, self.index[:m], out=self.step[:m], mode="clip")
        np.bitwise_and(self.step[:m], (1 << d.code_shift) - 1, out=self.position, casting="unsafe")
        np.right_shift(self.step[:m], d.code_shift, out=self.code[:m])
        np.left_shift(self.code[:m], 8, out=self.code[:m])
        np.bitwise_or(self.code[:m], self.info[:m], out=self.code[:m])
        np.take(d.events[side], self.code[:m], out=self.units[:m], mode="clip")
        np.add(self.counters, self.units[:m], out=self.counters)

    def keep(self, kept: np.ndarray) -> None:
        """Drop every slot but ``kept``."""
        m = len(self)
        self.ids, self.position, self.counters, self.state = (
            a[kept] for a in (self.ids, self.position, self.counters, self.state)
        )
        self.word[: len(kept)] = self.word[:m][kept]
        # A word's two sixths go together, as one uint16.
        self.sixths.view(np.uint16)[: len(kept)] = self.sixths.view(np.uint16)[:m][kept]
        self.info[: len(kept)] = self.info[:m][kept]


class _Chunk:
    """Up to CHUNK_GAMES games played in lockstep, one ply at a time. The pits played
    between two drops of finished games form a segment: a (plies, slots) block, kept with
    the slots' game ids and its first ply."""

    def __init__(
        self, derived: _Derived, tables: PositionTables, ply_cap: int, players: tuple[_Player, _Player], seeds: np.ndarray
    ) -> None:
        self.derived = derived
        self.tables = tables
        self.ply_cap = ply_cap  # the game's: the tables serve every cap
        self.players = players
        self.seeds = seeds
        n = len(seeds)
        self.final = np.full(n, derived.start, dtype=np.int64)  # the last position
        self.counters = np.zeros(n, dtype=np.uint64)
        self.flushed = np.zeros((n, len(FLAG_EVENTS) + 1), dtype=np.int64)  # flags and moves moved out
        self.first = np.zeros(n, dtype=np.int64)  # the index of the first move among the options
        self.flushes = 0
        self.segments: list[tuple[int, np.ndarray, np.ndarray]] = []

    def play(self, batch: GameBatch, offset: int) -> np.ndarray:
        """Play the games, write their columns into ``batch`` from ``offset``; return their moves."""
        if len(self.derived.first_pits):
            self._play(self._first_ply())
        plies = self._plies()
        self._write(batch, slice(offset, offset + len(self.seeds)), plies)
        return self._moves(plies)

    def _first_ply(self) -> _Slots:
        """Ply 0, from the options of the first move: the high half of every game's first word."""
        state = self.seeds ^ np.uint64(SEED_SALT)
        _mix64(state.copy(), state, np.empty_like(state))
        state += np.uint64(GAMMA)
        word = _mix64(state, np.empty_like(state), np.empty_like(state))
        self.first = self._first_choice(np.ascontiguousarray(word.view(np.uint32)[HIGH::2]))
        return _Slots(self.derived, state, word, self.derived.first_child[self.first])

    def _play(self, slots: _Slots) -> None:
        """Every later ply. A game that has finished picks NO_MOVE; once they are a third of the
        slots (or a segment is full), their results are kept and their slots dropped."""
        ply_cap = self.ply_cap
        segment = np.empty((SEGMENT_PLIES, len(slots)), dtype=np.uint8)
        segment_start = ply = 1
        while ply < ply_cap:
            m = len(slots)
            row = ply - segment_start
            half = HIGH if ply % 2 == 0 else 1 - HIGH
            slots.look()
            if ply % 2 == 0:
                slots.draw()
            picked = segment[row, :m]
            self._pick(slots, ply, half, picked)
            finished = m - np.count_nonzero(picked != NO_MOVE)
            if DROP_WHEN * finished >= m or row == SEGMENT_PLIES - 1:
                self.segments.append((segment_start, slots.ids, segment[: row + 1, :m].copy()))
                kept = self._drop_finished(slots, picked)
                if not len(kept):
                    return
                slots.keep(kept)
                segment[0, : len(kept)] = picked[kept]
                segment_start, picked = ply, segment[0, : len(kept)]
            slots.move(picked, ply % 2)
            ply += 1
            if ply % FLUSH_PLIES == 0:
                self._flush(slots)
        self.segments.append((segment_start, slots.ids, segment[: ply - segment_start, : len(slots)].copy()))
        self._drop_finished(slots, np.full(len(slots), NO_MOVE, dtype=np.uint8))

    def _pick(self, slots: _Slots, ply: int, half: int, out: np.ndarray) -> None:
        player = self.players[ply % 2]
        if player.script is not None:
            out[:] = player.script[slots.ids, ply]
            return
        if player.table is not None:
            classes = player.table.classes_at(slots.position, self.ply_cap - ply)
            out[:] = player.table.pits(classes, slots.draws(half))
            return
        if player.policy is None:
            slots.pick(player.greedy, half, out)
            return
        legal = self.derived.class_legal[slots.info[: len(slots)]]
        playing = np.flatnonzero(legal.any(axis=1))
        out[:] = NO_MOVE
        draws = slots.draws(half)[playing]
        out[playing] = _checked_pits(player, self.tables, slots.position[playing], draws, legal[playing])

    def _first_choice(self, draws: np.ndarray) -> np.ndarray:
        """Each game's first move, as an index among the options, from the draws of ply 0."""
        d = self.derived
        player = self.players[0]
        option = np.zeros(ROW, dtype=np.int64)
        option[d.first_pits] = np.arange(len(d.first_pits))
        if player.script is not None:
            return option[player.script[:, 0]]
        if player.table is not None:
            return option[player.table.pits(np.full(len(draws), player.table.first), draws)]
        if player.policy is not None:
            legal = np.zeros((len(draws), ROW), dtype=bool)
            legal[:, d.first_pits] = True
            positions = np.full(len(draws), d.start, dtype=np.int64)
            return option[_checked_pits(player, self.tables, positions, np.ascontiguousarray(draws), legal)]
        options = np.arange(len(d.first_pits))
        if player.greedy:
            captured = d.first_events["capture_stones"]
            options = np.flatnonzero(captured == captured.max())
        return options[(draws.astype(np.uint64) * np.uint64(len(options))) >> np.uint64(32)]

    def _drop_finished(self, slots: _Slots, picked: np.ndarray) -> np.ndarray:
        """Keep the last position and the counter of the games that picked NO_MOVE; return the
        other slots."""
        done = np.flatnonzero(picked == NO_MOVE)
        self.final[slots.ids[done]] = slots.position[done]
        self.counters[slots.ids[done]] = slots.counters[done]
        return np.flatnonzero(picked != NO_MOVE)

    def _flush(self, slots: _Slots) -> None:
        """Move the flag and move counts out of the counters before they can overflow."""
        self.flushes += 1
        for k in range(len(FLAG_EVENTS) + 1):
            self.flushed[slots.ids, k] += _field(slots.counters, FLAG_SHIFT + FLAG_BITS * k, FLAG_BITS)
        slots.counters &= np.uint64(CAPTURE_MASK)

    def _plies(self) -> np.ndarray:
        if not len(self.derived.first_pits):
            return np.zeros(len(self.seeds), dtype=np.int64)
        return 1 + (self.counters >> np.uint64(MOVES_SHIFT)).astype(np.int64) + self.flushed[:, -1]

    def _write(self, batch: GameBatch, games: slice, plies: np.ndarray) -> None:
        """The chunk's columns: events, scores, winner, end reason."""
        ended = plies < self.ply_cap
        for name, counts in self._events(ended).items():
            batch.events[name][games] = counts
        winner, score_south, score_north = self._scores(plies)
        batch.seeds[games] = self.seeds
        batch.score_south[games] = score_south
        batch.score_north[games] = score_north
        batch.winner[games] = winner
        batch.plies[games] = plies
        batch.end_reason[games] = ~ended

    def _events(self, ended: np.ndarray) -> dict[str, np.ndarray]:
        """Each event's counts (uint16): the counters, the flushed flags, the first move, the end."""
        d = self.derived
        capture, pits, own, south, north = (_field(self.counters, CAPTURE_BITS * k, CAPTURE_BITS) for k in range(5))
        counts = {"capture": capture, "capture_pits": pits, "capture_own_row_stones": own, "capture_stones": south + north}
        counts["capture_opponent_row_stones"] = counts["capture_stones"] - own
        for k, name in enumerate(FLAG_EVENTS):
            counts[name] = _field(self.counters, FLAG_SHIFT + FLAG_BITS * k, FLAG_BITS)
            if self.flushes:
                counts[name] += self.flushed[:, k].astype(np.uint16)
        end_code = np.where(ended, d.class_end[d.info[self.final]], 0)
        for name, code in END_CODES.items():
            counts[name] = (end_code == code).astype(np.uint16)
        for name, options in d.first_events.items():
            column = counts.setdefault(name, np.zeros(len(ended), dtype=np.uint16))
            if len(options) and options.any():
                column += options[self.first].astype(np.uint16) if np.ptp(options) else np.uint16(options[0])
        return counts

    def _scores(self, plies: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Each game's engine.scoring.final_score, from its captures and the rows of its last
        position; South is the mover at the end after an even number of plies."""
        d = self.derived
        south = _field(self.counters, CAPTURE_BITS * 3, CAPTURE_BITS).astype(np.int16)
        north = _field(self.counters, CAPTURE_BITS * 4, CAPTURE_BITS).astype(np.int16)
        if len(d.first_pits):
            south += d.first_events["capture_stones"][self.first].astype(np.int16)
        on_board = d.rules.total_stones - south - north
        mover_row = d.mover_row[self.final].astype(np.int16)
        south_row = np.where(plies % 2 == 0, mover_row, on_board - mover_row)
        return final_score(south, north, south_row, on_board - south_row)

    def _moves(self, plies: np.ndarray) -> np.ndarray:
        """The pits played, game after game, as absolute pits (North's are the mover's pit + 3).

        Segments go from the last ply to the first: the pit a finished game picked at ply p
        lands in a later game's moves, at a ply below p, which is written afterwards.
        """
        offsets = np.zeros(len(plies) + 1, dtype=np.int64)
        np.cumsum(plies, out=offsets[1:])
        moves = np.zeros(offsets[-1] + self.ply_cap + 1, dtype=np.uint8)
        index = np.empty(len(plies), dtype=np.int64)
        for start, ids, pits in reversed(self.segments):
            base = offsets[ids]
            pits[1 - start % 2 :: 2] += ROW  # North's rows
            for row in range(len(pits) - 1, -1, -1):
                np.add(base, start + row, out=index[: len(ids)])
                moves[index[: len(ids)]] = pits[row]
        played = plies > 0
        moves[offsets[:-1][played]] = self.derived.first_pits[self.first[played]]
        return moves[: offsets[-1]]


def _field(counters: np.ndarray, shift: int, bits: int) -> np.ndarray:
    """One field of the packed counters, as uint16."""
    return (counters >> np.uint64(shift)).astype(np.uint16) & np.uint16((1 << bits) - 1)


def _checked_pits(
    player: _Player, tables: PositionTables, positions: np.ndarray, draws: np.ndarray, legal: np.ndarray
) -> np.ndarray:
    """The pits a BatchStrategy picks, each checked against the legal ones."""
    assert player.policy is not None
    pits = np.asarray(player.policy.pick_batch(tables, positions, draws, legal))
    if pits.shape != positions.shape or not np.issubdtype(pits.dtype, np.integer):
        raise ValueError(
            f"strategy {player.spec!r} must return one integer pit per game, not a {pits.dtype} array of shape {pits.shape}"
        )
    bad = np.flatnonzero((pits < 0) | (pits >= ROW) | ~legal[np.arange(len(pits)), np.clip(pits, 0, ROW - 1)])
    if len(bad):
        i = bad[0]
        raise IllegalMoveError(
            f"strategy {player.spec!r} played pit {pits[i]} (the mover's view) in position {positions[i]}, "
            f"not one of the legal pits {np.flatnonzero(legal[i]).tolist()}"
        )
    return pits.astype(np.uint8)


def _empty_batch(n_games: int, players: tuple[_Player, _Player], rules: Rules) -> GameBatch:
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
