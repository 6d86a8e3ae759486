"""The lookups engine.play.batch plays from, derived once per rule set from its position tables
(engine.tables.positions), and the layout of a game's packed event counter.

    info[position]            the position's class: its legal pits, the pits a greedy
                              player may take (the largest captures), its flags
    pick[8 * class + sixth]   the pit random or greedy plays, given sixth = (6 * draw) >> 32
    step[3 * position + pit]  the child position | the move's capture code << 24: one
                              32-bit word, so one cache miss brings both
    events[code << 8 | class] what the turn adds to the game's packed event counter

A position without moves steps back to itself by pit 0 (NO_MOVE & 3) and adds nothing, so a
finished game stays put until its chunk drops it.
"""

from __future__ import annotations

import weakref
from dataclasses import dataclass

import numpy as np

from engine.game import EVENTS, POSITION_FLAGS, ROW, Rules, unpack_events
from engine.tables import END_MASK, END_SHIFT, FLAGS, PositionTables, first_moves, row_stones

NO_MOVE = 4  # the pit a finished game picks; NO_MOVE & 3 is pit 0
STEP_CHILD_BITS = 24  # a step entry is 32 bits when the child fits these and the capture code the rest
DERIVE_BLOCK = 1 << 20  # positions derived at a time
CLASS_FLAGS_SHIFT = 2 * ROW  # a class key is legal pits | greedy pits << 3 | the position's flags << 6
CLASS_KEYS, CAPTURE_KEYS = 1 << (CLASS_FLAGS_SHIFT + END_MASK.bit_length()), 1 << 15  # see _keys
# The event counter of a game, one uint64:
#   bits  0-29  capture, capture_pits, capture_own_row_stones, South's and North's captured
#               stones, 6 bits each: a game has at most 60 stones to capture, at least one a pit
#   bits 30-53  the position flags of engine.game.events (FLAG_EVENTS, read from engine.tables.positions'
#               flags), 6 bits each, the k-th from FLAG_SHIFT + 6 * k
#   bits 54-63  moves played after the first, from MOVES_SHIFT: a fifth position flag would
#               leave them too few bits (tests/engine/game/test_event_layouts.py checks the fit)
# Every FLUSH_PLIES plies the chunk moves the flag and move fields out, before they can overflow.
CAPTURE_BITS = 6
FLAG_EVENTS = POSITION_FLAGS
FLAG_SHIFT, FLAG_BITS = 5 * CAPTURE_BITS, 6
MOVES_SHIFT = FLAG_SHIFT + len(FLAG_EVENTS) * FLAG_BITS
FLUSH_PLIES = (1 << FLAG_BITS) - 1
CAPTURE_MASK = (1 << FLAG_SHIFT) - 1


def fits_counters(rules: Rules) -> bool:
    return rules.total_stones < 1 << CAPTURE_BITS


@dataclass(frozen=True)
class Derived:
    rules: Rules
    info: np.ndarray  # (positions,) uint8 class of each position
    step: np.ndarray  # (3 * positions,) child | capture code << code_shift
    code_shift: int
    class_legal: np.ndarray  # (classes, 3) bool
    class_end: np.ndarray  # (classes,) end code (engine.tables.positions.END_CODES), 0 with legal moves
    picks: tuple[np.ndarray, np.ndarray]  # uniform among the legal pits, among the greedy pits
    events: tuple[np.ndarray, np.ndarray]  # counter units of South's turns, of North's
    mover_row: np.ndarray  # (positions,) uint8 stones in the mover's row
    start: int  # the start position
    first_pits: np.ndarray  # the first move's options (engine.tables.first_move): pits,
    first_child: np.ndarray  # children,
    first_events: dict[str, np.ndarray]  # and events


# By id() of the position tables (which do not hash), dropped with them.
_DERIVED: dict[int, Derived] = {}


def derived_tables(tables: PositionTables) -> Derived:
    found = _DERIVED.get(id(tables))
    if found is None:
        found = _DERIVED[id(tables)] = _derive(tables)
        weakref.finalize(tables, _DERIVED.pop, id(tables), None)
    return found


def _derive(tables: PositionTables) -> Derived:
    if not fits_counters(tables.rules):
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
    first = first_moves(tables.rules)
    first_events = [unpack_events(events) for events in first.events]
    return Derived(
        tables.rules,
        info,
        step.reshape(-1),
        code_shift,
        (classes[:, None] >> np.arange(ROW)) & 1 == 1,
        ((classes >> CLASS_FLAGS_SHIFT) & END_MASK) >> END_SHIFT,
        (_pick_table(classes & 7), _pick_table((classes >> 3) & 7)),
        _event_tables(classes, captures),
        row_stones(tables.index)[0],
        first.start,
        first.pits.astype(np.uint8),
        first.children,
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

    A choice among n options is (draw * n) >> 32 (engine.game.rng). As n (1, 2 or 3) divides 6,
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
