"""Replaying recorded games through the position tables: every ply of many games at once.

``replay(rules, moves, offsets)`` takes the moves of n games as one flat array of absolute
pits (0-5, South's first; game g is ``moves[offsets[g]:offsets[g + 1]]``) and steps all the
games in lockstep, one ply number at a time, through ``engine.tables.positions``. What it returns is
laid out game-major, like the moves: entry ``offsets[g] + k`` describes ply k of game g, the
position before its move (in the mover's view) and what the move did.

    ply k of game g  ->  position[offsets[g] + k]   (index of engine.tables.index, mover's view)
                         pit, mover, options, captured, own_captured, capture_pits, flags
    game g           ->  final_position[g], end_code[g], forfeited[g]

Ply 0 is not in the tables (its capture is forfeited): its moves, children and events come
from ``engine.tables.first_move``, so that it captures nothing (with first_move_forfeit) and
the stones it would have taken are counted per game in ``forfeited``.

The games go CHUNK_GAMES at a time; within a chunk, one ply number at a time, every game still
playing makes its move by a few whole-array operations (a gather from the tables, scatters into
the per-ply arrays). The default study (1.56 M games, 28.5 M plies) replays in about 2 s.
"""

from __future__ import annotations

import weakref
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from engine.game import ROW, TURN_FLAGS, IllegalMoveError, Rules, unpack_events
from engine.store import per_rule_set
from engine.tables import END_MASK, END_SHIFT, FLAGS, PositionTables, first_moves, load_tables, table_rules


def _make_flag_bits() -> dict[str, int]:
    """The bit of each turn flag (engine.game.events.TURN_FLAGS) in Replay.flags: a position flag
    keeps its bit of engine.tables.positions' flags, a move flag takes the next bit free."""
    bits = dict(FLAGS)
    for name in TURN_FLAGS:
        bits.setdefault(name, 1 << len(bits))
    return {name: bits[name] for name in TURN_FLAGS}


# The bits of Replay.flags: the turn events of RULES.md that a single turn fires or not.
FLAG_BITS = _make_flag_bits()
_TABLE_FLAGS = sum(FLAGS.values())
OPTIONS_SHIFT = END_SHIFT  # _info packs a position's table flags and its number of legal moves
# What a first move did, from its packed events (engine.game.events): Replay's name -> the counter.
_FIRST_EVENTS = {
    "captured": "capture_stones",
    "own_captured": "capture_own_row_stones",
    "capture_pits": "capture_pits",
    "forfeited": "first_move_forfeit_stones",
}
CHUNK_GAMES = 1 << 14  # games replayed together: the plies they write stay in the L2 cache
_INFO: dict[int, np.ndarray] = {}  # _info's tables, by id() of the position tables (which do not hash)


@dataclass(frozen=True, eq=False)
class Replay:
    """Every ply of the replayed games (game-major, as the moves) and every game's end.

    Per ply (``len(self.position)`` entries):
        position       int32, the position before the move (engine.tables.index, mover's view)
        pit            uint8, the pit played in the mover's view (0, 1, 2)
        mover          uint8, 0 South, 1 North
        options        uint8, the number of legal moves in ``position``
        captured       uint8, stones captured (0 at ply 0: the first move forfeits them)
        own_captured   uint8, of those, stones from the mover's own row
        capture_pits   uint8, pits in the capture chain
        flags          uint8, the turn events (bits of FLAG_BITS; ``flag(name)`` unpacks one)
    Per game (``len(self)`` entries):
        final_position int64, the position after the last move (the start for a game without moves)
        end_code       uint8, the end event of the final position (engine.tables.positions.END_CODES), 0
                       when the game stopped at the ply cap or with moves left
        forfeited      uint8, the stones the first move's forfeited capture left on the board
    """

    rules: Rules
    offsets: np.ndarray
    position: np.ndarray
    pit: np.ndarray
    mover: np.ndarray
    options: np.ndarray
    captured: np.ndarray
    own_captured: np.ndarray
    capture_pits: np.ndarray
    flags: np.ndarray
    final_position: np.ndarray
    end_code: np.ndarray
    forfeited: np.ndarray

    def __len__(self) -> int:
        return len(self.offsets) - 1

    @property
    def plies(self) -> np.ndarray:
        """Moves per game (int64)."""
        return np.diff(self.offsets)

    def flag(self, name: str) -> np.ndarray:
        """One turn event of TURN_FLAGS per ply, as bool."""
        return (self.flags & FLAG_BITS[name]) != 0

    def ply(self) -> np.ndarray:
        """The ply number of every entry (int16): 0, 1, ... within each game."""
        plies = self.plies
        return (np.arange(len(self.position), dtype=np.int64) - np.repeat(self.offsets[:-1], plies)).astype(np.int16)

    def children(self) -> np.ndarray:
        """The position after every move (int64, the next mover's view): the next ply's
        position, or the game's final position after its last move."""
        after = np.empty(len(self.position), dtype=np.int64)
        after[:-1] = self.position[1:]
        played = self.plies > 0
        after[self.offsets[1:][played] - 1] = self.final_position[played]
        return after


def replay(rules: Rules, moves: np.ndarray, offsets: np.ndarray, tables: PositionTables | None = None) -> Replay:
    """Replay the games ``moves[offsets[g]:offsets[g + 1]]`` (absolute pits, South first) under
    ``rules``, all at once. ``tables`` are the position tables of ``rules`` (when not given,
    loaded from the cache and kept for the next call, as engine.play_batch does).

    Raises IllegalMoveError (a ValueError) naming the game's row and the ply of the first
    illegal move found, and ValueError for a game longer than the ply cap or bad offsets.
    """
    moves = np.ascontiguousarray(moves, dtype=np.uint8)
    offsets = np.ascontiguousarray(offsets, dtype=np.int64)
    _check_offsets(moves, offsets, rules)
    tables = _loaded_tables(table_rules(rules)) if tables is None else tables
    if tables.rules != rules.replace(ply_cap=tables.rules.ply_cap):
        raise ValueError(f"the tables are those of {tables.rules.name}, not of {rules.name}")
    first = _FirstMoves.of(tables)
    columns = _finish(tables, first, _walk(tables, first, moves, offsets), offsets)
    end_code = ((tables.flags[columns["final_position"]] & END_MASK) >> END_SHIFT).astype(np.uint8)
    end_code[np.diff(offsets) >= rules.ply_cap] = 0
    return Replay(rules, offsets, end_code=end_code, **columns)


# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _FirstMoves:
    """Ply 0 from engine.tables.first_move, indexed by the pit (mover's view): the child (-1
    when not legal), the turn flags, and the counters of _FIRST_EVENTS."""

    start: int
    options: int
    child: np.ndarray
    flags: np.ndarray
    events: dict[str, np.ndarray]  # the replay's per-ply name: the event counter

    @classmethod
    def of(cls, tables: PositionTables) -> _FirstMoves:
        first = first_moves(tables.rules)
        child, _ = first.by_pit()
        flags = np.zeros(ROW, dtype=np.uint8)
        events = {name: np.zeros(ROW, dtype=np.uint8) for name in _FIRST_EVENTS}
        for pit, packed in zip(first.pits.tolist(), first.events, strict=True):
            counts = unpack_events(packed)
            flags[pit] = sum(bit for name, bit in FLAG_BITS.items() if counts[name])
            for name, counter in _FIRST_EVENTS.items():
                events[name][pit] = counts[counter]
        return cls(first.start, len(first.pits), child, flags, events)


@per_rule_set
@lru_cache(maxsize=2)
def _loaded_tables(rules: Rules) -> PositionTables:
    return load_tables(rules, progress=False)


def _check_offsets(moves: np.ndarray, offsets: np.ndarray, rules: Rules) -> None:
    if offsets.ndim != 1 or len(offsets) < 1 or offsets[0] != 0 or offsets[-1] != len(moves):
        raise ValueError(f"offsets must run from 0 to len(moves) = {len(moves)}, one more entry than there are games")
    plies = np.diff(offsets)
    if len(plies) and plies.min() < 0:
        raise ValueError(f"offsets must not decrease (game row {int(np.argmin(plies))})")
    if len(plies) and plies.max() > rules.ply_cap:
        row = int(np.argmax(plies))
        raise ValueError(f"game row {row} has {int(plies[row])} moves, more than the ply cap of {rules.ply_cap}")


def _walk(tables: PositionTables, first: _FirstMoves, moves: np.ndarray, offsets: np.ndarray) -> dict[str, np.ndarray]:
    """Step every game through the tables: the position before each move, the pit (mover's
    view), the mover, the position's info (see _info), the stones captured (from the tables,
    ply 0 included), and each game's final position. Games go CHUNK_GAMES at a time, so that
    the plies being written stay in the cache."""
    total, games = len(moves), len(offsets) - 1
    walked: dict[str, np.ndarray] = {
        "position": np.empty(total, dtype=np.int32),
        "pit": np.empty(total, dtype=np.uint8),
        "mover": np.empty(total, dtype=np.uint8),
        "info": np.empty(total, dtype=np.uint8),
        "captured": np.empty(total, dtype=np.uint8),
        "final_position": np.full(games, first.start, dtype=np.int64),
    }
    lookups = (tables.child.reshape(-1), tables.captured.reshape(-1), _info(tables))
    for start in range(0, games, CHUNK_GAMES):
        _walk_chunk(tables, first, lookups, moves, offsets[start : start + CHUNK_GAMES + 1], walked, start)
    return walked


def _walk_chunk(
    tables: PositionTables,
    first: _FirstMoves,
    lookups: tuple[np.ndarray, np.ndarray, np.ndarray],
    moves: np.ndarray,
    offsets: np.ndarray,
    walked: dict[str, np.ndarray],
    first_game: int,
) -> None:
    """The games of one chunk, one ply number at a time. They are taken longest first, so that
    those still playing at ply k are a prefix of them."""
    child, captured, info = lookups
    plies = np.diff(offsets)
    order = np.argsort(-plies, kind="stable")
    starts = offsets[order]
    playing = len(plies) - np.cumsum(np.bincount(plies, minlength=1))  # games with more than k moves
    final = walked["final_position"][first_game : first_game + len(plies)]
    current = np.full(int(playing[0]), first.start, dtype=np.int64)
    for ply in range(len(playing) - 1):
        m = int(playing[ply])
        final[order[m : len(current)]] = current[m:]
        current = current[:m]
        at = starts[:m] + ply
        seen = np.take(moves, at) - np.uint8(ROW * (ply % 2))  # wraps above 2 for the other row's pits
        clipped = np.minimum(seen, ROW - 1)
        move = current * ROW + clipped
        after = first.child[clipped] if ply == 0 else np.take(child, move)
        illegal = (seen >= ROW) | (after < 0)
        if illegal.any():
            raise IllegalMoveError(_illegal(first_game + order[:m], at, ply, moves, tables, current, illegal))
        walked["position"][at] = current
        walked["pit"][at] = seen
        walked["mover"][at] = ply % 2
        walked["info"][at] = np.take(info, current)
        walked["captured"][at] = np.take(captured, move)
        current = after.astype(np.int64)
    final[order[: len(current)]] = current


def _illegal(
    ids: np.ndarray, at: np.ndarray, ply: int, moves: np.ndarray, tables: PositionTables, current: np.ndarray, illegal: np.ndarray
) -> str:
    """The message for the first illegal move of a ply: the game's row, the ply, the pit, the board."""
    k = int(np.flatnonzero(illegal)[0])
    board = tables.index.counts(current[k : k + 1])[0].tolist()
    side = ("South", "North")[ply % 2]
    return (
        f"game row {int(ids[k])}, ply {ply}: {side} cannot play pit {int(moves[at[k]])} "
        f"(board {board} in {side}'s view, own row first; the move is not legal under {tables.rules.name})"
    )


def _info(tables: PositionTables) -> np.ndarray:
    """info[position]: its table flags (engine.tables.positions' FLAGS) | its number of legal moves << OPTIONS_SHIFT,
    derived once per tables and kept as long as they are."""
    found = _INFO.get(id(tables))
    if found is None:
        options = np.zeros(tables.size, dtype=np.uint8)
        for pit in range(ROW):
            options += tables.child[:, pit] >= 0
        found = _INFO[id(tables)] = (tables.flags & np.uint8(_TABLE_FLAGS)) | (options << np.uint8(OPTIONS_SHIFT))
        weakref.finalize(tables, _INFO.pop, id(tables), None)
    return found


def _finish(
    tables: PositionTables, first: _FirstMoves, walked: dict[str, np.ndarray], offsets: np.ndarray
) -> dict[str, np.ndarray]:
    """The per-ply columns of Replay from the walk: options and flags unpacked from the info,
    the capture details of the moves that captured, and ply 0's own options and events."""
    info, captured, position, pit = walked.pop("info"), walked["captured"], walked["position"], walked["pit"]
    played = np.flatnonzero(np.diff(offsets) > 0)
    first_rows = offsets[played]
    first_pits = pit[first_rows]
    captured[first_rows] = first.events["captured"][first_pits]
    walked["options"] = info >> np.uint8(OPTIONS_SHIFT)
    info &= np.uint8(_TABLE_FLAGS)
    captures = (captured > 0).view(np.uint8)
    captures *= np.uint8(FLAG_BITS["capture"])
    info |= captures
    info[first_rows] = first.flags[first_pits]
    walked["flags"] = info
    walked["options"][first_rows] = first.options
    rows = np.flatnonzero(captured)
    move = position[rows].astype(np.int64) * ROW + pit[rows]
    for name in ("own_captured", "capture_pits"):
        walked[name] = np.zeros(len(captured), dtype=np.uint8)
        walked[name][rows] = getattr(tables, name).reshape(-1)[move]
        walked[name][first_rows] = first.events[name][first_pits]
    walked["forfeited"] = np.zeros(len(offsets) - 1, dtype=np.uint8)
    walked["forfeited"][played] = first.events["forfeited"][first_pits]
    return walked
