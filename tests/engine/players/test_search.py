"""The search strategies (engine.players.search) against solved facts and hand-worked positions.

Boards are drawn as in tests/engine/game/test_rules_examples.py: North's row on top read 5 4 3, South's
row below read 0 1 2; sowing runs counter-clockwise. Small variants are solved in
milliseconds without touching the disk; ``perfect`` is pointed at those solutions by the
``small_solutions`` fixture, so no test here needs the default solution.
"""

from __future__ import annotations

import functools
import itertools

import numpy as np
import pytest

import engine
from engine import Rng, Rules, UnknownStrategyError, make_strategy, pack, play_game, position
from engine.players.search import alphabeta_scores
from engine.solver.solution import Solution, solve
from engine.tables.index import board_index
from engine.tables.positions import build_tables

SOUTH, NORTH = 0, 1
SMALL_VARIANTS = [
    Rules(stones_per_pit=2),
    Rules(stones_per_pit=3),
    Rules(stones_per_pit=3, feeding=False),
    Rules(stones_per_pit=3, grand_slam="allowed"),
    Rules(stones_per_pit=3, sow_origin=False),
    Rules(stones_per_pit=2, min_stones_to_play=1),  # singletons playable: long capture-free cycles
]
SPECS = ["random", "greedy", "heuristic", "alphabeta(depth=3)", "mcts(playouts=30)", "perfect"]


@functools.cache
def small_tables(rules: Rules) -> engine.tables.positions.PositionTables:
    return build_tables(rules.replace(ply_cap=Rules().ply_cap))  # tables do not depend on the cap


@functools.cache
def solved(rules: Rules) -> Solution:
    """The solution of ``rules`` at its own cap, built in memory."""
    return solve(rules, tables=small_tables(rules), cache=None, progress=False)


@pytest.fixture
def small_solutions(monkeypatch):
    """``perfect`` plays from solutions built in memory instead of the cache folder."""
    monkeypatch.setattr("engine.players.search.solution", solved)


def own_row(board: int, player: int) -> int:
    return sum(engine.unpack(board)[3 * player : 3 * player + 3])


def sample_positions(rules: Rules, count: int, seed: int) -> list[tuple[int, int, int]]:
    """Random (board, mover, ply) with at least one legal move: any board of at most the rule
    set's stones, reachable or not, at any ply before the cap, plus the start."""
    rng = np.random.default_rng(seed)
    index = board_index(rules.total_stones)
    boards = index.codes(rng.integers(0, index.size, count)).tolist()
    movers = rng.integers(0, 2, count).tolist()
    plies = rng.integers(0, rules.ply_cap, count).tolist()
    found = [(engine.start_board(rules), SOUTH, 0), *zip(boards, movers, plies, strict=True)]
    return [(board, mover, ply) for board, mover, ply in found if engine.legal_moves(board, mover, ply, rules)]


def game_positions(rules: Rules, games: int) -> list[tuple[int, int, int]]:
    """Every position before a move of some seeded random games."""
    found = []
    for seed in range(games):
        board, mover = engine.start_board(rules), SOUTH
        for ply, pit in enumerate(play_game("random", "random", rules=rules, seed=seed).moves):
            found.append((board, mover, ply))
            board, mover = engine.apply_move(board, mover, pit, ply, rules).board, 1 - mover
    return found


def depth_limited(board: int, mover: int, ply: int, depth: int, rules: Rules) -> int:
    """Plain negamax on the checked API, no pruning: what alpha-beta must equal. At the depth
    horizon, as at the end and the cap, a position is worth own row minus opponent row."""
    moves = engine.legal_moves(board, mover, ply, rules)
    if depth == 0 or not moves:
        return own_row(board, mover) - own_row(board, 1 - mover)
    scores = []
    for pit in moves:
        result = engine.apply_move(board, mover, pit, ply, rules)
        scores.append(result.captured - depth_limited(result.board, 1 - mover, ply + 1, depth - 1, rules))
    return max(scores)


def choices(spec: str, here: engine.Position, seeds: int = 40) -> set[int]:
    strategy = make_strategy(spec)
    return {strategy.choose(here, Rng.for_game(seed)) for seed in range(seeds)}


# --- alpha-beta ----------------------------------------------------------------------------


@pytest.mark.parametrize("rules", SMALL_VARIANTS, ids=lambda rules: rules.name)
@pytest.mark.parametrize("cap", [6, 16])
def test_alphabeta_at_full_depth_is_the_solution(rules, cap):
    rules = rules.replace(ply_cap=cap)
    solution = solved(rules)
    for board, mover, ply in sample_positions(rules, 150, seed=cap) + game_positions(rules, 10):
        here = position(board, mover, ply, rules)
        scores = alphabeta_scores(here, depth=cap - ply)
        value, best = solution.value(board, mover, ply), solution.best_moves(board, mover, ply)
        assert max(scores) == value, (engine.unpack(board), mover, ply)
        assert tuple(pit for pit, score in zip(here.moves, scores, strict=True) if score == value) == best
        assert choices(f"alphabeta(depth={cap})", here, seeds=3) <= set(best)


def test_alphabeta_at_full_depth_is_the_solution_on_the_default_rules_at_small_caps():
    # The default start at caps 1-10 (tests/engine/solver/test_solution.py's DEFAULT_START_VALUES), at ply 0,
    # where every capture is forfeited.
    expected = [-6, 0, -2, -2, -8, -8, -8, 0, -2, 4]
    for cap, value in enumerate(expected, start=1):
        rules = Rules(ply_cap=cap)
        assert max(alphabeta_scores(position(engine.start_board(), SOUTH, 0, rules), depth=cap)) == value, cap


def test_alphabeta_below_full_depth_equals_a_plain_depth_limited_negamax():
    rules = Rules(ply_cap=60)  # some searches reach the cap, most stop at the horizon
    for depth in (1, 2, 3, 4, 5):
        for board, mover, ply in game_positions(rules, 3)[::3]:
            here = position(board, mover, ply, rules)
            assert max(alphabeta_scores(here, depth)) == depth_limited(board, mover, ply, depth, rules), (depth, ply)


def test_alphabeta_takes_a_capture_two_plies_away():
    #      5  4  3
    # N  [ 0  0  2]      pit 2: 2 and 3 then hold 1 and 3; North's only move, pit 3,
    # S  [ 0  4  2]      leaves 1 1 1 on its row, and South's pit 1 then makes 2 in
    #      0  1  2       pits 2, 3 and 4: a capture of 6. Pit 1 instead is worth -4.
    here = position(pack([0, 4, 2, 2, 0, 0]), SOUTH, 10)
    assert choices("alphabeta(depth=3)", here, seeds=10) == {2}
    assert choices("greedy", here) == {1, 2}  # no capture now: greedy cannot tell


# --- greedy and the heuristic -------------------------------------------------------------


def test_the_heuristic_declines_a_capture_that_hands_over_a_bigger_one():
    #      5  4  3
    # N  [ 3  0  1]      pit 2: one stone back into 2, one into 3, which holds 2: captures 2,
    # S  [ 3  1  2]      but North's pit 5 then sows 5, 0, 1 and takes 2 + 4 = 6.
    #      0  1  2       pit 0: sows 0, 1, 2 (1, 2, 3): no capture, and North then has none.
    here = position(pack([3, 1, 2, 1, 0, 3]), SOUTH, 10)
    assert here.moves == (0, 2)
    assert choices("greedy", here) == {2}
    assert choices("heuristic", here) == {0}
    after = engine.apply_move(here.board, SOUTH, 2, 10)
    assert after.captured == 2 and engine.apply_move(after.board, NORTH, 5, 11).captured == 6


def test_the_heuristic_takes_a_safe_capture():
    #      5  4  3
    # N  [ 1  3  3]      pit 0: one back into 0, one into 1, which then holds 2: captures 2
    # S  [ 2  1  2]      pit 2: one back into 2, one into 3, which then holds 4: captures 4,
    #      0  1  2       after which North's only move (pit 4, 3 stones) captures nothing
    here = position(pack([2, 1, 2, 3, 3, 1]), SOUTH, 5)
    assert choices("heuristic", here) == choices("greedy", here) == {2}


def test_the_heuristic_breaks_ties_at_random():
    # At ply 0 every capture is forfeited; pits 1 and 2 leave North no capture in reply,
    # pit 0 one of 6, and both keep 18 stones on South's row.
    assert choices("heuristic", position(engine.start_board(), SOUTH, 0)) == {1, 2}


def test_the_heuristic_plays_for_north_too():
    # The first heuristic position turned by three pits, North to move: pit 3 now, not 5.
    here = position(engine.rotate(pack([3, 1, 2, 1, 0, 3])), NORTH, 11)
    assert choices("greedy", here) == {5}
    assert choices("heuristic", here) == {3}


# --- MCTS ---------------------------------------------------------------------------------


def test_mcts_finds_a_forced_capture():
    # The position of test_alphabeta_takes_a_capture_two_plies_away: pit 2 wins 6 stones
    # after North's forced reply (7 of the 8 stones on the board go to South); pit 1 loses.
    here = position(pack([0, 4, 2, 2, 0, 0]), SOUTH, 10)
    assert choices("mcts(playouts=200)", here, seeds=10) == {2}


def test_mcts_takes_an_immediate_winning_capture():
    here = position(pack([2, 1, 2, 3, 3, 1]), SOUTH, 5)
    assert choices("mcts(playouts=200)", here, seeds=10) == {2}


def test_mcts_expects_the_opponent_to_answer_well():
    #      5  4  3
    # N  [ 2  2  0]      pit 1: one stone back into 1, one into 2, which holds 2: captures 2;
    # S  [ 5  2  1]      North may then play pit 4 (no capture) or pit 5, which sows 5 and 0
    #      0  1  2       and takes the 6 in pit 0. Pit 0 captures nothing and is worth 0.
    here = position(pack([5, 2, 1, 0, 2, 2]), SOUTH, 10)
    assert choices("greedy", here) == {1}
    assert choices("mcts(playouts=200)", here, seeds=10) == {0}


def test_mcts_with_few_playouts_breaks_ties_at_random():
    # Two playouts among three moves: the two visited moves tie, the choice is a draw.
    assert len(choices("mcts(playouts=2)", position(engine.start_board(), SOUTH, 0))) > 1


# --- perfect play --------------------------------------------------------------------------


@pytest.mark.parametrize("rules", SMALL_VARIANTS[:3], ids=lambda rules: rules.name)
def test_perfect_never_loses_value(rules, small_solutions):
    rules = rules.replace(ply_cap=30)
    solution = solved(rules)
    for seed, (south, north) in itertools.product(range(30), [("perfect", "random"), ("random", "perfect")]):
        record = play_game(south, north, rules=rules, seed=seed)
        board, mover = engine.start_board(rules), SOUTH
        for ply, pit in enumerate(record.moves):
            result = engine.apply_move(board, mover, pit, ply, rules)
            if (south, north)[mover] == "perfect":
                before = solution.value(board, mover, ply)
                assert result.captured - solution.value(result.board, 1 - mover, ply + 1) == before, (seed, ply)
            board, mover = result.board, 1 - mover
    perfect = play_game("perfect", "perfect", rules=rules, seed=0)
    assert perfect.score_south - perfect.score_north == solution.start_value()


def test_perfect_breaks_ties_at_random(small_solutions):
    rules = Rules(stones_per_pit=3, ply_cap=30)
    solution = solved(rules)
    for board, mover, ply in sample_positions(rules, 200, seed=3):
        best = solution.best_moves(board, mover, ply)
        if len(best) > 1:
            assert choices("perfect", position(board, mover, ply, rules)) == set(best)
            return
    raise AssertionError("no position with tied best moves in the sample")


# --- every strategy ------------------------------------------------------------------------


@pytest.mark.parametrize("spec", SPECS)
def test_a_seed_means_the_same_game(spec, small_solutions):
    rules = Rules(stones_per_pit=3, ply_cap=40)
    for seed in range(3):
        first = play_game(spec, "random", rules=rules, seed=seed)
        assert first == play_game(spec, "random", rules=rules, seed=seed)
    games = {play_game(spec, "random", rules=rules, seed=seed).moves for seed in range(20)}
    assert len(games) > 1


def test_a_seed_means_the_same_game_between_two_searches():
    first = play_game("alphabeta(depth=3)", "mcts(playouts=50)", seed=7)
    assert first == play_game("alphabeta(depth=3)", "mcts(playouts=50)", seed=7)
    assert first.south == "alphabeta(depth=3)" and first.north == "mcts(playouts=50)"


@pytest.mark.parametrize(
    "spec, here, tied",
    [
        ("alphabeta(depth=1)", position(engine.start_board(), SOUTH, 0), {0, 1, 2}),  # all forfeit, all leave 18-24
        ("alphabeta(depth=4)", position(engine.start_board(), SOUTH, 0), {1, 2}),
        ("greedy", position(engine.start_board(), SOUTH, 0), {0, 1, 2}),
    ],
)
def test_ties_are_broken_by_the_random_stream(spec, here, tied):
    assert choices(spec, here) == tied


def test_a_choice_does_not_depend_on_earlier_calls():
    # Transposition tables and trees live for one call: the same position and random state
    # give the same move whatever the strategy searched before.
    here = position(pack([3, 1, 2, 1, 0, 3]), SOUTH, 10)
    for spec in ("alphabeta(depth=5)", "mcts(playouts=60)"):
        strategy = make_strategy(spec)
        fresh = [strategy.choose(here, Rng.for_game(seed)) for seed in range(5)]
        for board, mover, ply in game_positions(Rules(), 1)[:10]:
            strategy.choose(position(board, mover, ply), Rng.for_game(0))
        assert [strategy.choose(here, Rng.for_game(seed)) for seed in range(5)] == fresh


@pytest.mark.parametrize(
    "rules", [Rules(stones_per_pit=3, ply_cap=60), Rules(stones_per_pit=2, min_stones_to_play=1, ply_cap=40)]
)
def test_every_pair_of_strategies_plays_legal_games(rules, small_solutions):
    # play_game checks every move a strategy returns.
    for (south, north), seed in zip(itertools.product(SPECS, SPECS), itertools.count(), strict=False):
        record = play_game(south, north, rules=rules, seed=seed)
        assert record.score_south + record.score_north == rules.total_stones
        assert record.plies == len(record.moves) <= rules.ply_cap


def test_every_search_plays_legal_games_on_the_default_rules():
    searches = [spec for spec in SPECS if spec != "perfect"]  # perfect needs the default solution
    for (south, north), seed in zip(itertools.product(searches, searches), itertools.count(), strict=False):
        record = play_game(south, north, seed=seed)
        assert record.score_south + record.score_north == 42


def test_the_default_specs_are_written_out_in_the_record():
    assert make_strategy("alphabeta").spec == "alphabeta(depth=6)"
    assert make_strategy("mcts").spec == "mcts(playouts=400)"
    assert make_strategy("heuristic").spec == "heuristic" and make_strategy("perfect").spec == "perfect"


@pytest.mark.parametrize(
    "spec, message",
    [
        ("alphabeta(depth=0)", "depth must be a whole number from 1 to 10,000, not 0; alphabeta takes depth (default 6)"),
        ("alphabeta(depth=2.5)", "depth must be a whole number from 1 to 10,000, not 2.5"),
        ("alphabeta(depth=deep)", "not 'deep'"),
        ("alphabeta(plies=3)", "alphabeta takes depth (default 6)"),
        ("mcts(playouts=0)", "playouts must be a whole number from 1 to 37,800,000, not 0; mcts takes playouts (default 400)"),
        ("mcts(playouts=-5)", "playouts must be a whole number from 1 to 37,800,000, not -5"),
        ("mcts(playouts=2.5)", "playouts must be a whole number from 1 to 37,800,000, not 2.5"),
        # a huge search is refused with what it would cost: 8 searched moves a game
        ("mcts(playouts=1000000000)", "not 1000000000: a game of it would run about 8,000,000,000 playouts"),
        ("mcts(depth=3)", "mcts takes playouts (default 400)"),
        ("heuristic(depth=2)", "heuristic takes no parameters"),
        ("perfect(x=1)", "perfect takes epsilon (optional), temperature (optional)"),
        ("minimax", "known strategies: alphabeta, greedy, heuristic, mcts, perfect, random"),
    ],
)
def test_a_bad_spec_is_one_line_naming_the_valid_parameters(spec, message):
    with pytest.raises(UnknownStrategyError) as error:
        make_strategy(spec)
    assert message in str(error.value) and "\n" not in str(error.value)
