"""Position tables: every position of a rule set, its legal moves and what each does.

A position is a board seen by the player to move (its row is pits 0, 1, 2), numbered by
``engine.tables.index``. For position i and pit p (0, 1, 2) of the mover:

    child[i, p]          index of the board after the move, turned by three pits so that
                         the next mover's row is again 0, 1, 2; -1 when p is not legal
    captured[i, p]       stones captured
    own_captured[i, p]   of those, stones from the mover's own row
    capture_pits[i, p]   pits in the capture chain
    flags[i]             the position's turn events (FEEDING_ACTIVE, ...) and, when the
                         mover has no legal move, its end event (END_MASK bits)

The tables hold the moves of every ply but the first: ply 0 forfeits its captures, and
its moves from the start are taken from the scalar engine (``engine.tables.first_move``). They
are built with NumPy, one rule set at a time, and cached in the caller's cache folder
(``engine.store.cache``: ``tables/`` in it), keyed by the rule set's name and the engine version,
and sealed with what they hold (``engine.store.integrity``): tables of another rule set copied over
them, or damaged, are rebuilt.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import numpy as np

from engine.game import END_EVENTS, OWN_ROW, PIT_LIMIT, PITS, POSITION_FLAGS, ROW, Rules, move_lookups, sowing_path
from engine.store import ENGINE_VERSION, TABLES, DamagedFileError, cache_folder, per_rule_set, read_arrays, write_arrays
from engine.tables.index import BoardIndex, board_index


def _make_flags() -> dict[str, int]:
    """The bit of each position flag of engine.game.events in flags[i]: bit k for POSITION_FLAGS[k]."""
    return {name: 1 << bit for bit, name in enumerate(POSITION_FLAGS)}


# flags[i], one uint8: the position flags, then the end code, 1 + the index of the end event in
# END_EVENTS (0 while the mover has a legal move). The cached files hold this layout, so a new
# position flag or end event in engine.game.events changes ENGINE_VERSION.
FLAGS = _make_flags()
FEEDING_ACTIVE = FLAGS["feeding_active"]
FEEDING_FORCED = FLAGS["feeding_forced"]
FEEDING_LAPSED = FLAGS["feeding_lapsed"]
GRAND_SLAM_BLOCKED = FLAGS["grand_slam_blocked"]
END_SHIFT = len(POSITION_FLAGS)
END_CODES = {name: code for code, name in enumerate(END_EVENTS, 1)}
END_MASK = ((1 << len(END_EVENTS).bit_length()) - 1) << END_SHIFT
ARRAYS = ("child", "captured", "own_captured", "capture_pits", "flags")
TABLES_PLY_CAP = Rules().ply_cap  # the cap of table_rules: the tables themselves ignore it
CONFIGURED = Path("<the folder of engine.store.cache.set_cache_folder>")  # the default of load_tables's cache
TABLE_BLOCK = 1 << 18  # positions build_tables takes at a time: about 30 MiB of temporaries
log = logging.getLogger(__name__)


@dataclass(frozen=True)
class PositionTables:
    rules: Rules
    index: BoardIndex
    child: np.ndarray  # (n, 3) int32
    captured: np.ndarray  # (n, 3) uint8
    own_captured: np.ndarray  # (n, 3) uint8
    capture_pits: np.ndarray  # (n, 3) uint8
    flags: np.ndarray  # (n,) uint8

    @property
    def size(self) -> int:
        return self.index.size

    @property
    def legal(self) -> np.ndarray:
        return self.child >= 0

    def end_codes(self) -> np.ndarray:
        return (self.flags & END_MASK) >> END_SHIFT

    def nbytes(self) -> int:
        return sum(getattr(self, name).nbytes for name in ARRAYS)


def build_tables(rules: Rules, *, block: int = TABLE_BLOCK) -> PositionTables:
    """Compute the tables of every position of ``rules`` (vectorised; seconds, not minutes).

    Every entry depends on its own position alone, so the positions are taken ``block`` at a
    time, their boards unranked from the index: the (block, 6) sowings and int64 bars stay
    small whatever the rule set, and the result does not depend on ``block``.
    """
    index = board_index(rules.total_stones)
    child = np.empty((index.size, ROW), dtype=np.int32)
    captured, own_captured, capture_pits = (np.empty((index.size, ROW), dtype=np.uint8) for _ in range(3))
    flags = np.empty(index.size, dtype=np.uint8)
    for start in range(0, index.size, block):
        stop = min(start + block, index.size)
        rows = slice(start, stop)
        child[rows], captured[rows], own_captured[rows], capture_pits[rows], flags[rows] = _block_tables(
            index, index.counts_between(start, stop), rules
        )
    return PositionTables(rules, index, child, captured, own_captured, capture_pits, flags)


def load_tables(rules: Rules, cache: Path | None = CONFIGURED, *, progress: bool = True) -> PositionTables:
    """The tables of ``rules``, from the cache when it holds a sound copy, else built and cached.

    ``cache`` is a folder of tables; by default the ``tables/`` folder of the engine's cache
    folder (``engine.store.cache``), and none when that is not set. ``cache=None`` builds the tables
    without touching the disk. A build is logged (at INFO, or DEBUG without ``progress``).
    """
    cache = tables_folder() if cache is CONFIGURED else cache
    if cache is None:
        return build_tables(rules)
    path = cache_path(rules, cache)
    found = _read(path, rules)
    if found is not None:
        return found
    start = time.perf_counter()
    built = build_tables(rules)
    _write(path, built)
    level = logging.INFO if progress else logging.DEBUG
    log.log(level, "built position tables of %s in %.1f s: %s", rules.name, time.perf_counter() - start, path)
    return built


def kept_tables(rules: Rules) -> PositionTables:
    """The tables that serve ``rules`` (``table_rules``) from the engine's cache folder, kept for
    the next call: what engine.play_batch and engine.players.policy use when given no tables. One rule
    set at a time, so that a process going through many holds one set of tables."""
    return _kept(table_rules(rules))


@per_rule_set
@lru_cache(maxsize=1)
def _kept(rules: Rules) -> PositionTables:
    return load_tables(rules)


def tables_folder() -> Path | None:
    """The folder of tables in the engine's cache folder, None when the engine builds in memory."""
    folder = cache_folder()
    return None if folder is None else folder / TABLES.folder


def cache_path(rules: Rules, cache: Path) -> Path:
    """Where load_tables keeps the tables of ``rules`` in a folder of tables."""
    return cache / f"{rules.name}-engine{ENGINE_VERSION}.npz"


def table_rules(rules: Rules) -> Rules:
    """The rule set whose tables serve ``rules``: the same with the default ply cap. The tables
    do not depend on the cap, so the solver and the replay load one cache file for every cap."""
    return rules.replace(ply_cap=TABLES_PLY_CAP)


def _block_tables(index: BoardIndex, counts: np.ndarray, rules: Rules) -> tuple[np.ndarray, ...]:
    """child, captured, own_captured, capture_pits and flags of the positions whose pit counts are ``counts``."""
    moves = [_move_columns(counts, pit, rules) for pit in OWN_ROW]
    legal = np.column_stack([move.playable & ~(move.grand_slam & (rules.grand_slam == "prohibited")) for move in moves])
    starving = counts[:, ROW:].sum(axis=1, dtype=np.int16) == 0
    flags = np.where(starving, FEEDING_ACTIVE, 0).astype(np.uint8)
    blocked = np.column_stack([move.playable & move.grand_slam for move in moves]).any(axis=1)
    if rules.grand_slam == "prohibited":
        flags |= np.where(blocked, GRAND_SLAM_BLOCKED, 0).astype(np.uint8)
    if rules.feeding:
        feeds = np.column_stack([move.feeds for move in moves])
        can_feed = (legal & feeds).any(axis=1)
        forced = starving & can_feed & (legal & ~feeds).any(axis=1)
        lapsed = starving & ~can_feed & legal.any(axis=1)
        legal &= ~(starving & can_feed)[:, None] | feeds
        flags |= np.where(forced, FEEDING_FORCED, 0).astype(np.uint8) | np.where(lapsed, FEEDING_LAPSED, 0).astype(np.uint8)
    flags |= (_end_codes(counts, legal, rules) << END_SHIFT).astype(np.uint8)
    child = np.full((len(counts), ROW), -1, dtype=np.int32)
    for pit, move in enumerate(moves):
        rows = np.flatnonzero(legal[:, pit])
        turned = np.concatenate([move.after[rows, ROW:], move.after[rows, :ROW]], axis=1)
        child[rows, pit] = index.rank_counts(turned)
    return (
        child,
        np.column_stack([np.where(legal[:, p], m.captured, 0) for p, m in enumerate(moves)]).astype(np.uint8),
        np.column_stack([np.where(legal[:, p], m.own_captured, 0) for p, m in enumerate(moves)]).astype(np.uint8),
        np.column_stack([np.where(legal[:, p], m.capture_pits, 0) for p, m in enumerate(moves)]).astype(np.uint8),
        flags,
    )


@dataclass
class _Move:
    playable: np.ndarray
    after: np.ndarray  # (n, 6) board after sowing and captures
    captured: np.ndarray
    own_captured: np.ndarray
    capture_pits: np.ndarray
    grand_slam: np.ndarray
    feeds: np.ndarray


def _move_columns(counts: np.ndarray, pit: int, rules: Rules) -> _Move:
    """Sow ``pit`` in every position at once and make its captures (RULES.md, steps 1-3)."""
    hand = counts[:, pit]
    playable = hand >= rules.min_stones_to_play
    increments, chains, feeds = _sowing_arrays(pit, rules)
    sown = counts.astype(np.int16) + increments[hand]
    capturable = np.zeros(PIT_LIMIT + 1, dtype=bool)
    capturable[list(rules.capture_counts)] = True
    n = len(counts)
    captured = np.zeros(n, dtype=np.int16)
    own = np.zeros(n, dtype=np.int16)
    taken = np.zeros(n, dtype=np.int16)
    after = sown.copy()
    live = np.flatnonzero(playable)  # rows whose chain is still going
    chain = chains[hand]
    for step in range(PITS):
        chain_pit = chain[live, step]
        stones = sown[live, np.maximum(chain_pit, 0)]
        takes = (chain_pit >= 0) & capturable[stones]
        live, chain_pit, stones = live[takes], chain_pit[takes], stones[takes]
        captured[live] += stones
        own[live] += np.where(chain_pit < ROW, stones, 0).astype(np.int16)
        taken[live] += 1
        after[live, chain_pit] = 0
    grand_slam = (captured > own) & (after[:, ROW:].sum(axis=1) == 0)
    if rules.grand_slam == "no_capture":
        after[grand_slam] = sown[grand_slam]
        for column in (captured, own, taken):
            column[grand_slam] = 0
        grand_slam = np.zeros(n, dtype=bool)
    return _Move(playable, after.astype(np.uint8), captured, own, taken, grand_slam, feeds[hand])


def _sowing_arrays(pit: int, rules: Rules) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The scalar engine's sowing of one pit as arrays indexed by the hand: each pit's
    change, the capture chain (padded with -1), and whether the hand feeds."""
    increments = np.zeros((PIT_LIMIT + 1, PITS), dtype=np.int16)
    chains = np.full((PIT_LIMIT + 1, PITS), -1, dtype=np.int8)
    for hand, entry in enumerate(move_lookups(rules).sowing[pit]):
        increments[hand, pit] -= hand
        for target in sowing_path(pit, hand, rules.sow_origin):
            increments[hand, target] += 1
        chains[hand, : len(entry.chain)] = entry.chain
    feeds = np.array([entry.feeds for entry in move_lookups(rules).sowing[pit]], dtype=bool)
    return increments, chains, feeds


def _end_codes(counts: np.ndarray, legal: np.ndarray, rules: Rules) -> np.ndarray:
    over = ~legal.any(axis=1)
    playable = (counts[:, :ROW] >= rules.min_stones_to_play).any(axis=1)
    row_empty = counts[:, :ROW].sum(axis=1, dtype=np.int16) == 0
    singleton_or_empty = np.where(row_empty, END_CODES["empty_row_end"], END_CODES["singleton_end"])
    codes = np.where(playable, END_CODES["grand_slam_end"], singleton_or_empty)
    return np.where(over, codes, 0).astype(np.uint8)


def identity(rules: Rules) -> dict[str, str]:
    """What a file of position tables says it holds (engine.store.integrity)."""
    return {"kind": "position tables", "rules": rules.name, "engine": ENGINE_VERSION}


def _read(path: Path, rules: Rules) -> PositionTables | None:
    try:
        arrays = read_arrays(path, identity(rules), ARRAYS)
    except DamagedFileError as error:
        log.warning("%s; rebuilding the position tables", error)
        return None
    if arrays is None:
        return None
    index = board_index(rules.total_stones)
    if any(len(arrays[name]) != index.size for name in ARRAYS):  # sealed, so only a bug of ours could do this
        log.warning("%s holds tables of another size than %s's %d positions; rebuilding them", path, rules.name, index.size)
        return None
    return PositionTables(rules, index, **{name: arrays[name] for name in ARRAYS})


def _write(path: Path, built: PositionTables) -> None:
    write_arrays(path, {name: getattr(built, name) for name in ARRAYS}, identity(built.rules))
