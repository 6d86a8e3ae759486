"""The rule events have one list of names (engine.game.events) and many layouts derived from it.

Each layout covers exactly the names engine.game.events gives it, each name at its own bits, and a
game's events come out the same through every layout. The layouts written to disk (the
position tables' flags, the records' columns) are pinned per engine version.
"""

from __future__ import annotations

from itertools import combinations

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import engine
import engine.game.moves as moves_layout
import engine.play.replays as replay_layout
import engine.play.tables as batch_layout
import engine.tables.positions as tables_layout
import pipeline.analysis.turns as turns_layout
import pipeline.runs.records as records_layout
from engine.game.events import (
    END,
    END_EVENTS,
    EVENT_LIST,
    EVENTS,
    FIELD_BITS,
    KINDS,
    MEANING,
    POSITION_FLAG,
    POSITION_FLAGS,
    SHIFT,
    TURN_EVENTS,
    TURN_FLAGS,
    UNIT,
    field,
    unpack_events,
)
from engine.game.rng import game_seeds
from engine.tables.positions import PositionTables

# What the files of each engine version hold: the tables' flags (bits of the position flags,
# codes of the end events, the mask of the codes) and the records' event columns, in order (the
# games/ counts, the plies/ flags). A layout that changes under the same version would make the
# files of that version read wrongly: change ENGINE_VERSION and add its layout here.
TABLE_FLAGS_OF_VERSION = {
    "1": (
        {"feeding_active": 1, "feeding_forced": 2, "feeding_lapsed": 4, "grand_slam_blocked": 8},
        {"singleton_end": 1, "grand_slam_end": 2, "empty_row_end": 3},
        0b110000,
    ),
}
RECORD_COLUMNS_OF_VERSION = {
    "1": (
        (
            "feeding_active",
            "feeding_forced",
            "feeding_lapsed",
            "grand_slam_blocked",
            "first_move_forfeit",
            "first_move_forfeit_stones",
            "capture",
            "capture_stones",
            "capture_pits",
            "capture_own_row_stones",
            "capture_opponent_row_stones",
            "singleton_end",
            "grand_slam_end",
            "empty_row_end",
        ),
        ("feeding_active", "feeding_forced", "feeding_lapsed", "grand_slam_blocked", "first_move_forfeit", "capture"),
    ),
}
GAMES, SEED = 300, 7  # random v greedy under the default rules: every event fires in these games
PLY_COLUMNS = records_layout.PLY_FLAGS  # the plies/ records hold the turn flags only


def single_bits_apart(bits: list[int]) -> bool:
    """Each value is one bit, and no two share it."""
    return all(bit > 0 and bit & (bit - 1) == 0 for bit in bits) and len(set(bits)) == len(bits)


# ---------------------------------------------------------------------------------------------
# engine.game.events


def test_every_event_is_named_once_with_a_kind_and_a_meaning():
    names = [event.name for event in EVENT_LIST]
    assert len(set(names)) == len(names)
    assert set(EVENTS) == set(names) and len(EVENTS) == len(names)
    assert all(event.kind in KINDS and event.meaning for event in EVENT_LIST)
    assert set(MEANING) == set(EVENTS)
    assert EVENTS == TURN_EVENTS + END_EVENTS
    assert tuple(event.name for event in EVENT_LIST if event.kind == END) == END_EVENTS
    assert tuple(event.name for event in EVENT_LIST if event.kind == POSITION_FLAG) == POSITION_FLAGS
    assert set(POSITION_FLAGS) <= set(TURN_FLAGS) <= set(TURN_EVENTS)
    assert [name for name in TURN_EVENTS if name in TURN_FLAGS] == list(TURN_FLAGS)  # the subsets keep EVENTS' order


def test_the_packed_counters_give_every_event_its_own_field():
    assert list(SHIFT) == list(EVENTS) == list(UNIT)
    assert sorted(SHIFT.values()) == [FIELD_BITS * k for k in range(len(EVENTS))]
    assert all(UNIT[name] == 1 << SHIFT[name] for name in EVENTS)
    packed = sum((k + 1) * UNIT[name] for k, name in enumerate(EVENTS))
    assert unpack_events(packed) == {name: k + 1 for k, name in enumerate(EVENTS)}
    assert all(field(packed, name) == k + 1 for k, name in enumerate(EVENTS))


def test_the_move_generators_flags_are_the_packed_units_of_the_position_flags():
    assert {name: getattr(moves_layout, name.upper()) for name in POSITION_FLAGS} == {name: UNIT[name] for name in POSITION_FLAGS}


# ---------------------------------------------------------------------------------------------
# engine.tables.positions, engine.play.batch, engine.play.replays


def test_the_tables_flags_hold_the_position_flags_then_the_end_codes():
    flags, codes, mask = tables_layout.FLAGS, tables_layout.END_CODES, tables_layout.END_MASK
    assert tuple(flags) == POSITION_FLAGS and tuple(codes) == END_EVENTS
    assert {name: getattr(tables_layout, name.upper()) for name in POSITION_FLAGS} == flags
    assert single_bits_apart(list(flags.values())) and max(flags.values()) < 1 << tables_layout.END_SHIFT
    assert len(set(codes.values())) == len(codes) and 0 not in codes.values()
    assert all(code << tables_layout.END_SHIFT & ~mask == 0 for code in codes.values())
    assert sum(flags.values()) & mask == 0 and mask < 1 << 8  # flags[i] is a uint8


def test_the_table_files_of_this_engine_version_keep_their_layout():
    if engine.ENGINE_VERSION not in TABLE_FLAGS_OF_VERSION:
        pytest.fail(f"add the table layout of engine version {engine.ENGINE_VERSION} to TABLE_FLAGS_OF_VERSION")
    expected = TABLE_FLAGS_OF_VERSION[engine.ENGINE_VERSION]
    assert expected == (tables_layout.FLAGS, tables_layout.END_CODES, tables_layout.END_MASK)


def test_the_batch_counter_holds_the_position_flags_in_fields_apart():
    b = batch_layout
    assert b.FLAG_EVENTS == POSITION_FLAGS
    capture_fields = [(b.CAPTURE_BITS * k, b.CAPTURE_BITS) for k in range(b.FLAG_SHIFT // b.CAPTURE_BITS)]
    flag_fields = [(b.FLAG_SHIFT + b.FLAG_BITS * k, b.FLAG_BITS) for k in range(len(b.FLAG_EVENTS))]
    moves_field = (b.MOVES_SHIFT, b.FLAG_BITS)  # the moves between two flushes
    masks = [((1 << bits) - 1) << shift for shift, bits in [*capture_fields, *flag_fields, moves_field]]
    assert all(a & b == 0 for a, b in combinations(masks, 2)) and max(masks) < 1 << 64  # apart, in one uint64
    assert sum(masks[: len(capture_fields)]) == b.CAPTURE_MASK
    assert b.FLUSH_PLIES < 1 << b.FLAG_BITS
    class_keys = 0b111111 | (sum(tables_layout.FLAGS.values()) | tables_layout.END_MASK) << b.CLASS_FLAGS_SHIFT
    assert class_keys < b.CLASS_KEYS


def test_the_replay_flags_are_the_turn_flags_with_the_tables_bits_kept():
    bits = replay_layout.FLAG_BITS
    assert tuple(bits) == TURN_FLAGS == replay_layout.TURN_FLAGS
    assert single_bits_apart(list(bits.values())) and max(bits.values()) < 1 << 8  # Replay.flags is a uint8
    assert {name: bits[name] for name in POSITION_FLAGS} == tables_layout.FLAGS
    options = 0b11 << replay_layout.OPTIONS_SHIFT  # up to 3 legal moves, beside the table flags
    assert options & sum(tables_layout.FLAGS.values()) == 0 and options < 1 << 8
    assert set(replay_layout._FIRST_EVENTS.values()) <= set(TURN_EVENTS) - set(TURN_FLAGS)  # counts


# ---------------------------------------------------------------------------------------------
# pipeline


def test_the_pipelines_lists_are_those_of_engine_events():
    assert records_layout.PLY_FLAGS == TURN_FLAGS
    assert (turns_layout.TURN_FLAGS, turns_layout.END_EVENTS) == (TURN_FLAGS, END_EVENTS)
    assert sum(replay_layout.FLAG_BITS.values()) < turns_layout.FLAG_VALUES


def test_the_records_of_this_engine_version_keep_their_columns():
    if engine.ENGINE_VERSION not in RECORD_COLUMNS_OF_VERSION:
        pytest.fail(f"add the record columns of engine version {engine.ENGINE_VERSION} to RECORD_COLUMNS_OF_VERSION")
    assert RECORD_COLUMNS_OF_VERSION[engine.ENGINE_VERSION] == (EVENTS, records_layout.PLY_FLAGS)


# ---------------------------------------------------------------------------------------------
# A round trip


def test_the_games_events_are_the_same_through_every_layout(default_tables: PositionTables):
    """play_game's packed counters, play_batch's counter fields, the replay's flags and columns,
    and the records' games/ and plies/ columns give the same counts, game by game."""
    rules = engine.Rules()
    records = [engine.play_game("random", "greedy", rules=rules, seed=int(seed)) for seed in game_seeds(SEED, GAMES)]
    expected = {name: np.array([record.events[name] for record in records]) for name in EVENTS}
    assert [name for name in EVENTS if not expected[name].any()] == []  # or the comparisons prove less
    batch = engine.play_batch(GAMES, "random", "greedy", rules=rules, seed=SEED, tables=default_tables)
    layouts = {
        "play_batch": batch.events,
        "replay": _replay_counts(replay_layout.replay(rules, batch.moves, batch.move_offsets, default_tables)),
        "games/": _games_columns(batch),
        "plies/": _plies_columns(batch, rules),
    }
    for layout, counts in layouts.items():
        names = PLY_COLUMNS if layout == "plies/" else EVENTS
        assert set(counts) == set(names), layout
        for name in names:
            assert np.array_equal(counts[name], expected[name]), (layout, name)


def _replay_counts(run: replay_layout.Replay) -> dict[str, np.ndarray]:
    game = np.repeat(np.arange(len(run)), run.plies)

    def per_game(values: np.ndarray) -> np.ndarray:
        return np.bincount(game, weights=values, minlength=len(run)).astype(np.int64)

    counts = {name: per_game(run.flag(name)) for name in TURN_FLAGS}
    counts |= {name: (run.end_code == code).astype(np.int64) for name, code in tables_layout.END_CODES.items()}
    counts["capture_stones"] = per_game(run.captured)
    counts["capture_own_row_stones"] = per_game(run.own_captured)
    counts["capture_pits"] = per_game(run.capture_pits)
    counts["capture_opponent_row_stones"] = counts["capture_stones"] - counts["capture_own_row_stones"]
    counts["first_move_forfeit_stones"] = run.forfeited.astype(np.int64)
    return counts


def _games_columns(batch: engine.GameBatch) -> dict[str, np.ndarray]:
    """The event columns of the games/ records, written as Parquet and read back."""
    data = records_layout.parquet_bytes(records_layout.games_table(batch, study="layouts", first_id=0))
    table = pq.read_table(pa.BufferReader(data))
    return {name: table[name].to_numpy() for name in table.column_names if name in MEANING}


def _plies_columns(batch: engine.GameBatch, rules: engine.Rules) -> dict[str, np.ndarray]:
    """The flag columns of the plies/ records, summed per game."""
    table = records_layout.plies_table(batch, rules, first_id=0)
    game = table["game_id"].to_numpy()
    flags = [name for name in table.column_names if name in MEANING]
    return {name: np.bincount(game, weights=table[name].to_numpy(), minlength=len(batch)).astype(np.int64) for name in flags}
