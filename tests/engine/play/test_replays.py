"""engine.play.replays: the batched replay against the scalar engine, and against the batch's own event counts."""

from __future__ import annotations

import numpy as np
import pytest
from variants import SMALL_VARIANTS

import engine
from engine.play.columns import GameBatch
from engine.play.replays import FLAG_BITS, TURN_FLAGS, Replay, replay
from engine.tables.positions import END_CODES, PositionTables, load_tables

# The small variants of tests/variants.py, and captures of 6 alone, whose games repeat positions
# and some reach the cap.
VARIANTS = {rules.name: rules for rules in SMALL_VARIANTS}
VARIANTS["stones3-captures6"] = engine.Rules(stones_per_pit=3, capture_counts=(6,), ply_cap=30)
CAPTURE_COUNTERS = {"captured": "capture_stones", "own_captured": "capture_own_row_stones", "capture_pits": "capture_pits"}


@pytest.fixture(scope="module", params=sorted(VARIANTS))
def played(request) -> tuple[GameBatch, Replay, PositionTables]:
    """Seeded games of a small variant (random v greedy), and their replay; the tables are built in memory."""
    rules = VARIANTS[request.param]
    tables = load_tables(rules, cache=None)
    batch = engine.play_batch(300, "random", "greedy", rules=rules, seed=11, tables=tables)
    return batch, replay(rules, batch.moves, batch.move_offsets, tables), tables


@pytest.fixture(scope="module")
def played_default(default_tables) -> tuple[GameBatch, Replay, PositionTables]:
    rules = engine.Rules()
    batch = engine.play_batch(2000, "random", "random", rules=rules, seed=3, tables=default_tables)
    return batch, replay(rules, batch.moves, batch.move_offsets, default_tables), default_tables


def _scalar_check(batch: GameBatch, run: Replay, tables: PositionTables, games: range) -> None:
    """Every ply of ``games`` replayed with engine.apply_move / engine.legal_moves, field by field."""
    rules = run.rules
    for game in games:
        board, begin = engine.start_board(rules), int(batch.move_offsets[game])
        for ply, pit in enumerate(batch.moves[begin : batch.move_offsets[game + 1]].tolist()):
            i, mover = begin + ply, ply % 2
            seen = board if mover == 0 else engine.rotate(board)
            legal = engine.legal_moves(board, mover, ply, rules)
            result = engine.apply_move(board, mover, pit, ply, rules)
            assert run.position[i] == tables.index.rank(seen)
            assert (run.mover[i], run.pit[i] + 3 * mover, run.options[i]) == (mover, pit, len(legal))
            assert run.captured[i] == result.captured == result.events["capture_stones"]
            assert run.own_captured[i] == result.events["capture_own_row_stones"]
            assert run.capture_pits[i] == result.events["capture_pits"]
            assert {name: bool(run.flag(name)[i]) for name in TURN_FLAGS} == {n: result.events[n] > 0 for n in TURN_FLAGS}
            board = result.board
        plies = int(batch.plies[game])
        final = board if plies % 2 == 0 else engine.rotate(board)
        assert run.final_position[game] == tables.index.rank(final)
        ended = engine.end_event(board, plies % 2, plies, rules)
        assert run.end_code[game] == (END_CODES[ended] if ended else 0)


def test_replay_matches_the_scalar_engine_on_small_variants(played):
    batch, run, tables = played
    _scalar_check(batch, run, tables, range(40))


def test_replay_matches_the_scalar_engine_on_the_default_rules(played_default):
    batch, run, tables = played_default
    _scalar_check(batch, run, tables, range(25))


def _per_game(run: Replay, values: np.ndarray) -> np.ndarray:
    return np.bincount(np.repeat(np.arange(len(run)), run.plies), weights=values, minlength=len(run)).astype(np.int64)


def test_flags_summed_per_game_are_the_batch_event_counts(played):
    _events_check(*played[:2])


def test_flags_summed_per_game_are_the_batch_event_counts_on_the_default_rules(played_default):
    _events_check(*played_default[:2])


def _events_check(batch: GameBatch, run: Replay) -> None:
    for name in TURN_FLAGS:
        assert np.array_equal(_per_game(run, run.flag(name)), batch.events[name]), name
    for column, counter in CAPTURE_COUNTERS.items():
        assert np.array_equal(_per_game(run, getattr(run, column)), batch.events[counter]), counter
    assert np.array_equal(run.forfeited, batch.events["first_move_forfeit_stones"])
    for name, code in END_CODES.items():
        assert np.array_equal(run.end_code == code, batch.events[name] == 1), name
    assert np.array_equal(run.plies, batch.plies)


def test_ply_zero_forfeits_its_capture_and_uses_the_first_moves(played_default):
    run = played_default[1]
    first = run.offsets[:-1]
    assert (run.captured[first] == 0).all() and run.flag("first_move_forfeit")[first].all()
    assert not run.flag("first_move_forfeit")[np.setdiff1d(np.arange(len(run.position)), first)].any()
    assert (run.options[first] == 3).all() and (run.ply()[first] == 0).all()


def test_children_and_ply_numbers(played):
    run = played[1]
    children, ply = run.children(), run.ply()
    for game in range(10):
        begin, end = run.offsets[game : game + 2]
        assert ply[begin:end].tolist() == list(range(end - begin))
        assert children[begin : end - 1].tolist() == run.position[begin + 1 : end].tolist()
        assert children[end - 1] == run.final_position[game]


def test_an_illegal_move_names_the_game_row_and_the_ply(played):
    batch, run, tables = played
    moves = batch.moves.copy()
    ply = min(3, int(batch.plies.max()) - 1)
    game = int(np.flatnonzero(batch.plies > ply)[0])
    at = int(batch.move_offsets[game]) + ply
    moves[at] = (moves[at] + 3) % 6  # a pit of the other player's row
    with pytest.raises(
        engine.IllegalMoveError, match=rf"game row {game}, ply {ply}: {('South', 'North')[ply % 2]} cannot play pit"
    ):
        replay(run.rules, moves, batch.move_offsets, tables)
    empty = [pit for pit in range(3) if tables.child[run.position[at], pit] < 0]
    if empty:  # a pit of the right row that the rules forbid
        moves[at] = empty[0] + 3
        with pytest.raises(ValueError, match=rf"game row {game}, ply {ply}"):
            replay(run.rules, moves, batch.move_offsets, tables)


def test_bad_offsets_and_games_past_the_cap_are_refused(played):
    batch, run, tables = played
    with pytest.raises(ValueError, match="offsets must run from 0"):
        replay(run.rules, batch.moves, batch.move_offsets[:-1], tables)
    long = np.zeros(run.rules.ply_cap + 1, dtype=np.uint8)
    with pytest.raises(ValueError, match=f"game row 0 has {len(long)} moves, more than the ply cap"):
        replay(run.rules, long, np.array([0, len(long)]), tables)


def test_no_games_and_games_without_moves():
    rules = engine.Rules(stones_per_pit=3)
    tables = load_tables(rules, cache=None)
    nothing = replay(rules, np.zeros(0, dtype=np.uint8), np.zeros(1, dtype=np.int64), tables)
    assert len(nothing) == 0 and len(nothing.position) == 0
    idle = replay(rules, np.array([1], dtype=np.uint8), np.array([0, 0, 1]), tables)
    start = tables.index.rank(engine.start_board(rules))
    assert idle.final_position[0] == start and idle.end_code[0] == 0 and idle.plies.tolist() == [0, 1]


def test_flag_bits_are_distinct_and_fit_a_byte():
    bits = list(FLAG_BITS.values())
    assert len(set(bits)) == len(bits) and sum(bits) < 1 << 8
