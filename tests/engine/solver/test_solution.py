"""The strong solution (engine.solver.solution) against a plain minimax written from RULES.md, "Perfect play".

The minimax knows nothing of the tables or the change log: it recurses on (board, mover, ply)
through the checked API, ``engine.legal_moves`` and ``engine.apply_move``, with the cap as the
rule set's ply cap, and memoises. Small variants are solved in milliseconds, so every check
there runs at several caps; the default rules are solved once, at the full cap, from the
tests' cache folder (about 40 s the first time on a machine).
"""

from __future__ import annotations

import functools
import importlib
import os

import numpy as np
import pytest

import engine
from engine import Rules
from engine.solver import Solution, ValueLog, per_position, solve, sweep_values
from engine.solver.layers import row_differences
from engine.tables.index import board_index
from engine.tables.positions import build_tables
from pipeline.cli import main

solve_module = importlib.import_module("engine.solver.solution")
value_log = importlib.import_module("engine.solver.value_log")
layers_module = importlib.import_module("engine.solver.layers")  # the retrograde analysis the solver runs

SMALL_VARIANTS = [
    Rules(stones_per_pit=2),
    Rules(stones_per_pit=3),
    Rules(stones_per_pit=3, feeding=False),
    Rules(stones_per_pit=3, grand_slam="allowed"),
    Rules(stones_per_pit=3, grand_slam="no_capture"),
    Rules(stones_per_pit=3, sow_origin=False),
    Rules(stones_per_pit=3, capture_counts=(2, 3)),
    Rules(stones_per_pit=3, capture_rows="opponent", first_move_forfeit=False),
    Rules(stones_per_pit=2, min_stones_to_play=1),  # singletons playable: long capture-free cycles
    Rules(stones_per_pit=4),
]


def minimax_caps(rules: Rules) -> tuple[int, ...]:
    # Four stones a pit, or captures from the opponent's row only: trees ten times larger.
    return (1, 2, 7, 16) if rules.stones_per_pit >= 4 or rules.capture_rows == "opponent" else (1, 2, 7, 30)


# The default rules at the full cap, as this solver found them (a regression guard; the first
# caps are also checked against the minimax below).
DEFAULT_START_VALUES = [
    *(-6, 0, -2, -2, -8, -8, -8, 0, -2, 4),
    *(0, 0, -2, -2, -4, 0, 0, 0, 0, 0),
    *(-2, 0, -2, -2, -4, -2, -4, -2, -2, -2),
    *(-4, -2, -2, -2, -2, -2, -2, -2, -2, -2),
    *(-2, -2, -2, -2, -2, -2, -2, -2, -2, -2),
]


class Minimax:
    """RULES.md, "Perfect play", read literally: the mover's final total minus the opponent's,
    counting what is still to come, each side maximising its own difference, under the cap."""

    def __init__(self, rules: Rules, cap: int) -> None:
        self.rules = rules.replace(ply_cap=cap)
        self.memo: dict[tuple[int, int, int], int] = {}

    def value(self, board: int, mover: int, ply: int) -> int:
        key = (board, mover, ply)
        if key not in self.memo:
            moves = engine.legal_moves(board, mover, ply, self.rules)  # () at the cap, as at the end
            if not moves:
                self.memo[key] = own_row(board, mover) - own_row(board, 1 - mover)
            else:
                self.memo[key] = max(self.move_value(board, mover, ply, pit) for pit in moves)
        return self.memo[key]

    def move_value(self, board: int, mover: int, ply: int, pit: int) -> int:
        result = engine.apply_move(board, mover, pit, ply, self.rules)
        return result.captured - self.value(result.board, 1 - mover, ply + 1)


def own_row(board: int, player: int) -> int:
    return sum(engine.unpack(board)[3 * player : 3 * player + 3])


@functools.cache
def small_tables(rules: Rules) -> engine.tables.positions.PositionTables:
    return build_tables(rules)


def solved(rules: Rules, cap: int) -> Solution:
    return solve(rules, cap, tables=small_tables(rules), cache=None)


def sample_positions(rules: Rules, cap: int, count: int, seed: int) -> list[tuple[int, int, int]]:
    """Random (board, mover, ply): any board of at most the rule set's stones, reachable or
    not, at any ply from 0 to the cap and one past it, plus the start at ply 0."""
    rng = np.random.default_rng(seed)
    index = board_index(rules.total_stones)
    boards = index.codes(rng.integers(0, index.size, count)).tolist()
    movers = rng.integers(0, 2, count).tolist()
    plies = rng.integers(0, cap + 2, count).tolist()
    return [(engine.start_board(rules), 0, 0), *zip(boards, movers, plies, strict=True)]


@pytest.mark.parametrize("rules", SMALL_VARIANTS, ids=lambda rules: rules.name)
def test_the_solution_equals_the_minimax(rules):
    for cap in minimax_caps(rules):
        solution = solved(rules, cap)
        minimax = Minimax(rules, cap)
        for board, mover, ply in sample_positions(rules, cap, 40, seed=cap):
            assert solution.value(board, mover, ply) == minimax.value(board, mover, ply), (engine.unpack(board), mover, ply, cap)
    for cap in range(1, 13):
        assert solution.start_value(cap) == Minimax(rules, cap).value(engine.start_board(rules), 0, 0), cap


@pytest.mark.parametrize("rules", SMALL_VARIANTS, ids=lambda rules: rules.name)
def test_best_moves_achieve_the_value_and_no_other_move_does(rules):
    cap = 30
    solution = solved(rules, cap)
    game = rules.replace(ply_cap=cap)
    for board, mover, ply in sample_positions(rules, cap, 300, seed=1):
        value, best = solution.value(board, mover, ply), solution.best_moves(board, mover, ply)
        legal = engine.legal_moves(board, mover, ply, game)
        assert set(best) <= set(legal) and list(best) == sorted(best)
        assert bool(best) == bool(legal)
        for pit in legal:
            result = engine.apply_move(board, mover, pit, ply, game)
            score = result.captured - solution.value(result.board, 1 - mover, ply + 1)
            assert score == value if pit in best else score < value, (engine.unpack(board), mover, ply, pit)
        if not legal:
            assert value == own_row(board, mover) - own_row(board, 1 - mover)


@pytest.mark.parametrize("rules", SMALL_VARIANTS[:3] + SMALL_VARIANTS[-2:], ids=lambda rules: rules.name)
def test_every_position_at_every_k_equals_a_full_iteration_over_the_tables(rules):
    # The change log against the plain recurrence, one whole table per k.
    cap = 60
    solution, tables = solved(rules, cap), small_tables(rules)
    values = row_differences(rules.total_stones).astype(np.int16)
    live = tables.legal.any(axis=1)
    for plies_left in range(cap + 1):
        if plies_left:
            scores = np.where(tables.legal, tables.captured - values[np.maximum(tables.child, 0)], -999)
            values = np.where(live, scores.max(axis=1), values)
        assert np.array_equal(solution.values(plies_left), values), plies_left
    changed = np.count_nonzero(solution.values(cap) != solution.values(cap - 1))
    assert solution.changes_per_ply()[cap] == changed


@pytest.mark.parametrize(("first", "scan"), [(0, 1 << 25), (7, 1 << 25), (33, 1 << 25), (7, 1000)])
def test_walking_the_log_gives_each_ks_values_in_turn(monkeypatch, first, scan):
    # Singletons playable at 3 stones: values change at every k, up to the cap (> 16 plies: the
    # walk's windows), so the walk applies changes at each step; the buffer's last entry stays 0.
    # With a scan of 1,000 changes, each window's changes are found in many pieces of the log.
    monkeypatch.setattr(value_log, "_SCAN_ENTRIES", scan)
    solution = solved(Rules(stones_per_pit=3, min_stones_to_play=1), 60)
    assert np.all(solution.changes_per_ply()[1:] > 0)
    walked = [values.copy() for values in solution.walk_values(first, 60)]
    assert len(walked) == 61 - first
    for plies_left, values in enumerate(walked, start=first):
        assert np.array_equal(values[:-1], solution.values(plies_left)), plies_left
        assert values[-1] == 0


def test_positions_that_never_settle_keep_changing():
    # Singletons playable: stones can go round for ever without a capture.
    solution = solved(Rules(stones_per_pit=2, min_stones_to_play=1), 60)
    assert solution.never_settled > 0
    assert solution.never_settled == solution.still_changing(30, 60) == solution.still_changing(30)
    assert solution.still_changing(0) >= solution.still_changing(10) >= solution.never_settled
    assert solution.still_changing(60) == 0
    assert solved(Rules(stones_per_pit=2), 60).never_settled == 0


@pytest.mark.parametrize("scan", [1 << 25, 1000, 1])
def test_reductions_over_each_positions_changes_take_the_log_in_blocks(monkeypatch, scan):
    # A block of the log holds whole slices, so a position whose slice straddles a block's
    # nominal end (or, with a scan of 1 change, every position) is reduced whole, once.
    monkeypatch.setattr(value_log, "_SCAN_ENTRIES", scan)
    solution = solved(Rules(stones_per_pit=2, min_stones_to_play=1), 60)
    offsets, plies = solution.offsets, solution.change_plies
    slices = [plies[offsets[i] : offsets[i + 1]] for i in range(solution.size)]
    last = per_position(np.maximum, lambda chunk: np.where(chunk <= 40, chunk, 0), plies, offsets, 0)
    assert last.tolist() == [int(np.where(own <= 40, own, 0).max(initial=0)) for own in slices]
    changing = [bool(np.any((own > 30) & (own <= 50))) for own in slices]
    assert solution.still_changing(30, 50) == sum(changing) > 0


@pytest.mark.parametrize("total", [0, 1, 6, 12, 18, 42])
def test_row_differences_are_own_row_minus_opponent_row_in_index_order(total):
    counts = board_index(total).all_counts.astype(np.int16)
    assert np.array_equal(row_differences(total), counts[:, :3].sum(axis=1) - counts[:, 3:].sum(axis=1))


def test_the_default_rules_at_the_full_cap():
    # One test, so that the workers of pytest-xdist do not both build the solution.
    solution = solve(Rules(), progress=False)
    start = engine.start_board()
    assert solution.cap == 400 and solution.size == 12_271_512
    assert solution.start_value() == solution.value(start, 0, 0) == -2  # North wins 22-20
    assert solution.best_moves(start, 0, 0) == (2,)
    assert [solution.start_value(cap) for cap in range(1, 51)] == DEFAULT_START_VALUES
    assert all(solution.start_value(cap) == -2 for cap in range(32, 401))
    for cap in range(1, 9):
        assert solution.start_value(cap) == Minimax(Rules(), cap).value(start, 0, 0), cap
    assert solution.never_settled == 7_477
    assert solution.still_changing(100) == 7_477
    # The value and the best moves agree with the moves, at every depth of the cap.
    rng = np.random.default_rng(5)
    settling = np.flatnonzero(np.diff(solution.offsets) > 8)  # positions with many changes
    indices = np.concatenate([rng.integers(0, solution.size, 150), rng.choice(settling, 50)])
    for board, ply in zip(solution.index.codes(indices).tolist(), rng.integers(0, 402, len(indices)).tolist(), strict=True):
        mover = ply % 2
        board = board if mover == 0 else engine.rotate(board)
        value, best = solution.value(board, mover, ply), solution.best_moves(board, mover, ply)
        scores = {
            pit: (result := engine.apply_move(board, mover, pit, ply)).captured - solution.value(result.board, 1 - mover, ply + 1)
            for pit in engine.legal_moves(board, mover, ply)
        }
        assert best == tuple(pit for pit, score in scores.items() if score == value)
        assert value == max(scores.values(), default=own_row(board, mover) - own_row(board, 1 - mover))


def test_the_cache_is_reused_and_rebuilt_when_corrupt(tmp_path, caplog):
    rules, tables = Rules(stones_per_pit=3), small_tables(Rules(stones_per_pit=3))
    built = solve(rules, 20, tables=tables, cache=tmp_path, progress=False)
    (path,) = tmp_path.iterdir()
    assert path.name == f"modiar-stones3-cap20-engine{engine.ENGINE_VERSION}.npz"
    again = solve(rules, 20, cache=tmp_path)
    assert "read" in again.timings and "read" not in built.timings
    assert_same(again, built)
    path.write_bytes(path.read_bytes()[:-100])  # truncated
    assert_same(solve(rules, 20, tables=tables, cache=tmp_path, progress=False), built)
    assert "unreadable" in caplog.text  # logged by the engine, which prints nothing
    with np.load(path) as stored:
        arrays = dict(stored)
    arrays["change_values"][len(arrays["change_values"]) // 2] += 1  # a sound file, a wrong value
    with open(path, "wb") as handle:
        np.savez(handle, **arrays)
    assert_same(solve(rules, 20, tables=tables, cache=tmp_path, progress=False), built)
    assert "checksum" in caplog.text
    assert "read" in solve(rules, 20, cache=tmp_path).timings


def assert_same(solution: Solution, expected: Solution) -> None:
    assert solution.rules == expected.rules
    for name in solve_module.ARRAYS:
        assert np.array_equal(getattr(solution, name), getattr(expected, name)), name


def test_the_cap_comes_from_the_rules_or_the_argument():
    rules = Rules(stones_per_pit=2, ply_cap=12)
    assert solve(rules, tables=small_tables(Rules(stones_per_pit=2)), cache=None).cap == 12
    assert solve(rules, 5, tables=small_tables(Rules(stones_per_pit=2)), cache=None).rules == rules.replace(ply_cap=5)
    with pytest.raises(ValueError, match=r"^cap is the ply cap to solve at"):
        solve(rules, 0, cache=None)
    with pytest.raises(ValueError, match="cannot solve"):
        solve(Rules(stones_per_pit=3), 5, tables=small_tables(Rules(stones_per_pit=2)), cache=None)


def test_bad_queries_are_refused():
    solution = solved(Rules(stones_per_pit=2), 10)
    with pytest.raises(ValueError, match="at most 12"):
        solution.value(engine.pack([7, 6, 0, 0, 0, 0]), 0, 3)
    with pytest.raises(ValueError, match="mover"):
        solution.best_moves(engine.start_board(Rules(stones_per_pit=2)), 2, 3)
    with pytest.raises(ValueError, match="ply"):
        solution.value(engine.start_board(Rules(stones_per_pit=2)), 0, -1)
    with pytest.raises(ValueError, match="caps 0 to 10"):
        solution.start_value(11)
    board = engine.pack([2, 0, 3, 1, 1, 0])
    assert solution.value(board, 0, 10) == solution.value(board, 0, 99) == 5 - 2
    assert solution.best_moves(board, 0, 10) == ()


def test_modiar_solve_prints_the_value_the_score_and_the_caps(capsys, monkeypatch, tmp_path):
    # Into a cache folder of its own, tables included: --cache.
    assert main(["solve", "--stones", "3", "--cap", "20", "--cache", str(tmp_path)]) == 0
    engine.set_cache_folder(os.environ["MODIAR_CACHE"])  # main set the folder of this process
    out = capsys.readouterr().out
    solution = solved(Rules(stones_per_pit=3), 20)
    assert solution.start_value() == -8
    assert "rules modiar-stones3-cap20, 18 stones, cap 20 plies, 134,596 positions" in out
    assert "start value (South's final total minus North's, perfect play): -8" in out
    assert "final score under perfect play: South 5 - North 13 (North wins)" in out
    assert "best first move(s): pit 0\n" in out
    assert "caps  1-10  +0  -2  -8  -8 -10 -10  -8  -8  -8  -8\n" in out
    assert "caps 11-20  -8  -8  -8  -8  -8  -8  -8  -8  -8  -8\n" in out
    assert "start value at the full cap 20: -8" in out
    assert f"positions that never settle: {solution.never_settled:,} of 134,596" in out
    assert "time: tables" in out
    assert sorted(path.name for path in tmp_path.iterdir()) == ["solutions", "tables"]


@pytest.mark.parametrize(
    "arguments, message",
    [
        (["solve", "--cap", "0"], "--cap must be a whole number from 1 to 10000, not 0"),
        (["solve", "--stones", "11"], "stones_per_pit must be a whole number from 1 to 10"),
        (["solve", "--rule", "colour=red"], "--rule takes FIELD=VALUE"),
        (["solve", "--rules", "modiar-xx"], "unknown part 'xx'"),
    ],
)
def test_a_solve_mistake_is_one_line_and_exit_status_2(capsys, arguments, message):
    assert main(arguments) == 2
    err = capsys.readouterr().err
    assert message in err
    assert err.count("\n") == 1 and err.startswith("modiar: error: ")


# Small rule sets whose layers settle, cycle with a period the solver finds (singletons playable),
# or cycle beyond what it can prove (captures from the opponent's row only).
LAYERED_VARIANTS = [
    (Rules(stones_per_pit=2, min_stones_to_play=1), 80),
    (Rules(stones_per_pit=3, min_stones_to_play=1, sow_origin=False), 100),
    (Rules(stones_per_pit=3, capture_rows="opponent", min_stones_to_play=1, first_move_forfeit=False), 90),
    (Rules(stones_per_pit=3, capture_rows="opponent", grand_slam="no_capture"), 70),
    (Rules(stones_per_pit=3, grand_slam="allowed", feeding=False, capture_counts=(2, 3)), 50),
]
# (_SWEEP_FRACTION, _SORT_FRACTION): the solver's defaults, then every ply a sweep of the whole
# layer, and every ply (but the first) through the reverse edges, their parents sorted or flagged.
PARENT_PATHS = [(8, 64), (10**9, 64), (0, 0), (0, 10**9)]


@pytest.mark.parametrize("rules, cap", LAYERED_VARIANTS, ids=lambda value: getattr(value, "name", str(value)))
@pytest.mark.parametrize("sweep, sort", PARENT_PATHS)
def test_the_layered_solver_equals_a_plain_sweep_over_every_position(monkeypatch, rules, cap, sweep, sort):
    # sweep_values knows no layers, reverse edges, replays or periods: V_k of every position, k by k.
    monkeypatch.setattr(layers_module, "_SWEEP_FRACTION", sweep)
    monkeypatch.setattr(layers_module, "_SORT_FRACTION", sort)
    monkeypatch.setattr(layers_module, "_LOG_BLOCK_CHANGES", 1000)  # many blocks of the log in a layer
    periods = []
    iterate_layer = layers_module._iterate_layer

    def recording(*arguments):
        changes, period = iterate_layer(*arguments)
        periods.append(period)
        return changes, period

    monkeypatch.setattr(layers_module, "_iterate_layer", recording)
    solution, swept = solved(rules, cap), full_sweeps(rules, cap)
    for name in ("offsets", "change_plies", "change_values"):
        assert np.array_equal(getattr(solution, name), getattr(swept, name)), name
        assert getattr(solution, name).dtype == getattr(swept, name).dtype, name
    assert len(periods) == rules.total_stones + 1  # one layer per number of stones on the board
    if rules.min_stones_to_play == 1:
        assert any(period.period > 1 and period.onset < cap for period in periods)  # the shortcut was taken


@functools.cache
def full_sweeps(rules: Rules, cap: int) -> ValueLog:
    return sweep_values(small_tables(rules), cap)


def test_the_layers_are_the_boards_of_each_number_of_stones():
    index = board_index(12)
    stones = index.all_counts.sum(axis=1)
    for count in range(13):
        start, stop = index.layer(count)
        assert np.all(stones[start:stop] == count) and stop - start == np.count_nonzero(stones == count)


@pytest.mark.parametrize("in_file", [False, True], ids=["in memory", "in a file"])
def test_the_log_grows_while_a_view_of_it_is_still_held(tmp_path, in_file) -> None:
    """A dask worker's profiler holds the frames it samples, and with them the solver's views of
    its growing log: growing it then must copy, not fail (mmap's resize refuses while a buffer is
    exported)."""
    log = layers_module._GrowingArray(np.int16, tmp_path if in_file else None)
    held = log.extend(3)
    held[:] = [1, 2, 3]
    more = log.extend(100_000)  # past the first page while `held` is alive
    more[:] = 7
    assert log.view()[:3].tolist() == [1, 2, 3]
    assert int(log.finish().sum(dtype=np.int64)) == 6 + 700_000  # `more` still alive too


@pytest.mark.skipif(not os.path.exists("/proc/self/maps"), reason="the memory maps are read from /proc")
def test_a_solve_into_a_cache_keeps_its_log_in_files_the_system_can_take_back(tmp_path) -> None:
    """2026-12-04: the log of modiar-originoff-rowsown (games that cycle, hundreds of changes a
    position) is larger than the rest of its analysis, and in anonymous memory it had the worker
    killed. Solved into a cache folder, it is kept in unnamed files there (shared maps: pages the
    system writes out and takes back), the same arrays as in memory, and nothing is left on disk."""
    rules, cap = LAYERED_VARIANTS[2]
    in_memory = solved(rules, cap)
    spilled = solve_module.build_solution(rules.replace(ply_cap=cap), small_tables(rules), tmp_path)
    for name in ("offsets", "change_plies", "change_values"):
        assert np.array_equal(getattr(spilled, name), getattr(in_memory, name)), name
    with open("/proc/self/maps") as maps:
        backed = [line for line in maps if str(tmp_path) in line]
    assert len(backed) == 2 and all("(deleted)" in line for line in backed), backed  # the plies and the values
    assert list(tmp_path.iterdir()) == []
