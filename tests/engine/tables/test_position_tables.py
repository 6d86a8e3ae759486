"""The position tables and the board index agree with the scalar engine."""

from __future__ import annotations

import numpy as np
import pytest
from variants import EVERY_FIELD_ALONE, OWARE_LIKE

import engine
from engine import Rules
from engine.game.events import field
from engine.game.options import positions
from engine.tables.first_move import first_moves
from engine.tables.index import board_index, codes_to_counts, counts_to_codes
from engine.tables.positions import (
    ARRAYS,
    END_CODES,
    FEEDING_ACTIVE,
    FEEDING_FORCED,
    FEEDING_LAPSED,
    GRAND_SLAM_BLOCKED,
    build_tables,
    load_tables,
)

FLAG_EVENTS = {
    "feeding_active": FEEDING_ACTIVE,
    "feeding_forced": FEEDING_FORCED,
    "feeding_lapsed": FEEDING_LAPSED,
    "grand_slam_blocked": GRAND_SLAM_BLOCKED,
}


def check_positions(tables: engine.tables.positions.PositionTables, indices: np.ndarray) -> None:
    """Every table entry of these positions equals what the scalar engine says."""
    rules = tables.rules
    memo = positions(rules)
    codes = tables.index.codes(indices)
    end_codes = tables.end_codes()[indices]
    for row, (i, code) in enumerate(zip(indices.tolist(), codes.tolist(), strict=True)):
        options = memo.options(code, 1)
        legal = {pit: (child, events, captured) for pit, child, events, captured in options}
        for pit in range(3):
            if pit not in legal:
                assert tables.child[i, pit] == -1, (i, pit)
                continue
            child, events, captured = legal[pit]
            assert tables.child[i, pit] == tables.index.rank(child), (i, pit)
            assert tables.captured[i, pit] == captured
            assert tables.own_captured[i, pit] == field(events, "capture_own_row_stones")
            assert tables.capture_pits[i, pit] == field(events, "capture_pits")
            for name, bit in FLAG_EVENTS.items():
                assert bool(tables.flags[i] & bit) == bool(field(events, name)), (i, name)
        end = engine.game.moves.end_event(code, rules) if not options else None
        assert end_codes[row] == (END_CODES[end] if end else 0), i


@pytest.mark.parametrize("total", [0, 1, 6, 18, 24, pytest.param(42, marks=pytest.mark.slow)])  # 42: 12 M boards, ~30 s
def test_the_index_numbers_every_board_once(total):
    index = board_index(total)
    counts = index.all_counts
    # Every row a different board of at most ``total`` stones, and row i has index i.
    assert len(counts) == index.size == len(np.unique(counts_to_codes(counts)))
    assert counts.sum(axis=1).max() == total
    assert np.array_equal(index.rank_counts(counts), np.arange(index.size))
    sample = np.linspace(0, index.size - 1, 50).astype(np.int64)
    assert np.array_equal(index.rank_counts(counts[sample]), sample)
    codes = counts_to_codes(counts[sample])
    assert np.array_equal(codes_to_counts(codes), counts[sample])
    assert [index.rank(int(code)) for code in codes] == sample.tolist()


def test_the_default_index_has_c48_6_boards():
    assert board_index(42).size == 12_271_512


def test_a_board_over_the_index_total_is_refused():
    with pytest.raises(ValueError, match="more than"):
        board_index(6).rank(engine.pack([7, 0, 0, 0, 0, 0]))


@pytest.mark.parametrize(
    "rules",
    [
        Rules(stones_per_pit=2),
        Rules(stones_per_pit=3),
        *[r.replace(stones_per_pit=3) for r in EVERY_FIELD_ALONE if r.stones_per_pit == 7],
        OWARE_LIKE.replace(stones_per_pit=2),
    ],
    ids=lambda rules: rules.name,
)
def test_small_tables_agree_with_the_scalar_engine_everywhere(rules):
    tables = build_tables(rules)
    check_positions(tables, np.arange(tables.size))


def test_default_tables_agree_on_a_sample_of_all_positions(default_tables):
    rng = np.random.default_rng(3)
    check_positions(default_tables, rng.choice(default_tables.size, 20_000, replace=False))


def test_default_tables_agree_on_every_position_of_seeded_games(default_tables):
    index = default_tables.index
    seen = set()
    for seed in range(2000):
        record = engine.play_game(*(("random", "greedy") if seed % 2 else ("greedy", "random")), seed=seed)
        board = engine.start_board()
        for ply, pit in enumerate(record.moves):
            mover = ply % 2
            if ply:
                seen.add(index.rank(board if mover == 0 else engine.rotate(board)))
            board = engine.apply_move(board, mover, pit, ply).board
    check_positions(default_tables, np.array(sorted(seen)))


def test_first_moves_are_the_forfeiting_moves_of_the_start():
    moves = first_moves(Rules())
    index = board_index(42)
    assert moves.pits.tolist() == [0, 1, 2]
    for pit, child in zip(moves.pits.tolist(), moves.children.tolist(), strict=True):
        after = engine.apply_move(engine.start_board(), 0, pit, 0).board
        assert child == index.rank(engine.rotate(after))


def test_the_cache_is_reused_and_rebuilt_when_corrupt(tmp_path):
    rules = Rules(stones_per_pit=2)
    built = load_tables(rules, tmp_path, progress=False)
    (path,) = tmp_path.iterdir()
    again = load_tables(rules, tmp_path, progress=False)
    assert np.array_equal(again.child, built.child)
    path.write_bytes(path.read_bytes()[:-100])  # truncated
    rebuilt = load_tables(rules, tmp_path, progress=False)
    assert np.array_equal(rebuilt.child, built.child)
    assert np.array_equal(load_tables(rules, tmp_path, progress=False).flags, built.flags)


@pytest.mark.parametrize(
    "rules",
    [
        Rules(stones_per_pit=3),
        Rules(stones_per_pit=3, min_stones_to_play=1, grand_slam="allowed"),
        OWARE_LIKE.replace(stones_per_pit=2),
    ],
    ids=lambda rules: rules.name,
)
def test_tables_built_in_blocks_equal_those_built_at_once(rules):
    whole = build_tables(rules, block=board_index(rules.total_stones).size)
    for block in (997, 1 << 12):
        blocked = build_tables(rules, block=block)
        for name in ARRAYS:
            assert np.array_equal(getattr(blocked, name), getattr(whole, name)), (block, name)
            assert getattr(blocked, name).dtype == getattr(whole, name).dtype, (block, name)


@pytest.mark.parametrize("total", [0, 5, 18])
def test_boards_unranked_in_blocks_are_the_boards_of_those_ranks(total):
    index = board_index(total)
    counts = index.counts_between(0, index.size)
    assert np.array_equal(index.rank_counts(counts), np.arange(index.size))
    assert counts.dtype == np.uint8 and np.all(counts.sum(axis=1) <= total)
    for start, stop in [(0, 1), (3, 3), (index.size // 3, index.size // 2 + 1), (index.size - 1, index.size)]:
        assert np.array_equal(index.counts_between(start, stop), counts[start:stop])
