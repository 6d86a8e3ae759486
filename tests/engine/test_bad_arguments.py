"""Bad input at the public API: each attack gets one clear ValueError or TypeError naming the argument.

Every test is one attack, named after it.
"""

from __future__ import annotations

import re

import numpy as np
import pytest

import engine
from engine import Rules, UnknownStrategyError, canonical_spec, make_strategy

START = engine.start_board()


def _one_line(error: pytest.ExceptionInfo[BaseException]) -> str:
    message = str(error.value)
    assert "\n" not in message, message
    return message


# ---------------------------------------------------------------------------------------------
# apply_move, legal_moves


def test_apply_move_rejects_a_float_mover():
    with pytest.raises(ValueError, match="mover") as error:
        engine.apply_move(START, mover=1.0, pit=3, ply=1)
    assert "1.0" in _one_line(error)


def test_legal_moves_rejects_a_float_mover_instead_of_returning_float_pits():
    with pytest.raises(ValueError, match="mover"):
        engine.legal_moves(START, mover=1.0, ply=0)


def test_apply_move_rejects_a_bool_mover():
    with pytest.raises(ValueError, match="mover"):
        engine.apply_move(START, mover=True, pit=3, ply=1)


@pytest.mark.parametrize("pit", [True, 1.0, "1", None])
def test_apply_move_rejects_a_pit_that_is_no_whole_number(pit):
    with pytest.raises(ValueError, match="pit") as error:
        engine.apply_move(START, mover=0, pit=pit, ply=1)
    assert not isinstance(error.value, engine.IllegalMoveError)  # bad input, not a move the rules forbid
    assert repr(pit) in _one_line(error)


@pytest.mark.parametrize("ply", [True, 1.0, "1"])
def test_apply_move_rejects_a_ply_that_is_no_whole_number(ply):
    with pytest.raises(ValueError, match="ply"):
        engine.apply_move(START, mover=0, pit=0, ply=ply)


def test_apply_move_rejects_rules_that_are_not_a_rule_set():
    with pytest.raises(TypeError, match="rules"):
        engine.apply_move(START, mover=0, pit=0, ply=1, rules=None)


def test_apply_move_takes_numpy_integers_as_python_ints():
    result = engine.apply_move(START, mover=np.int64(0), pit=np.uint8(0), ply=np.int32(1))
    assert result == engine.apply_move(START, mover=0, pit=0, ply=1)
    assert engine.position(START, np.int64(1), np.int64(1)).moves == (3, 4, 5)


# ---------------------------------------------------------------------------------------------
# pack, parse_board


def test_pack_rejects_float_counts():
    with pytest.raises(ValueError, match="counts"):
        engine.pack([7.0] * 6)


def test_pack_rejects_a_string_of_digits():
    with pytest.raises(ValueError, match="counts") as error:
        engine.pack("777777")
    assert "'777777'" in _one_line(error)


def test_pack_rejects_bool_counts():
    with pytest.raises(ValueError, match="counts"):
        engine.pack([True] * 6)


def test_pack_rejects_none():
    with pytest.raises(ValueError, match="counts"):
        engine.pack(None)


def test_pack_of_numpy_counts_is_a_python_int_board_code():
    board = engine.pack(np.array([7] * 6))
    assert type(board) is int and board == START


def test_parse_board_rejects_none():
    with pytest.raises(TypeError, match="picture"):
        engine.parse_board(None)


def test_parse_board_rejects_two_north_rows():
    picture = "North 1 2 3\nNorth 4 5 6\nSouth 7 7 7"
    with pytest.raises(ValueError, match="picture has two North rows"):
        engine.parse_board(picture)


def test_parse_board_rejects_two_south_rows():
    picture = "North 1 2 3\nSouth 4 5 6\nSouth 7 7 7"
    with pytest.raises(ValueError, match="picture has two South rows"):
        engine.parse_board(picture)


@pytest.mark.parametrize("row", ["North 1 2 x", "North 1 2", "North 1 2 64"])
def test_parse_board_rejects_a_row_that_is_not_three_stone_counts(row):
    with pytest.raises(ValueError, match="picture's North row") as error:
        engine.parse_board(f"{row}\nSouth 7 7 7")
    _one_line(error)


def test_parse_board_still_reads_what_render_draws():
    board = engine.pack([1, 2, 3, 4, 5, 6])
    assert engine.parse_board(engine.render(board)) == board


# ---------------------------------------------------------------------------------------------
# Rules


def test_rules_rejects_an_unknown_field_naming_it_and_listing_the_fields():
    with pytest.raises(TypeError, match="'foo'") as error:
        Rules(foo=1)
    message = _one_line(error)
    assert all(field in message for field in ("stones_per_pit", "grand_slam", "ply_cap"))


def test_rules_replace_rejects_an_unknown_field_naming_it():
    with pytest.raises(TypeError, match=r"'foo'.*stones_per_pit"):
        Rules().replace(foo=1)


def test_rules_from_name_rejects_none():
    with pytest.raises(TypeError, match="name"):
        Rules.from_name(None)


def test_rules_from_name_rejects_a_field_given_twice():
    with pytest.raises(ValueError, match="stones_per_pit twice") as error:
        Rules.from_name("modiar-stones5-stones6")
    assert "modiar-stones5-stones6" in _one_line(error)


def test_rules_from_name_still_reads_every_name():
    rules = Rules(stones_per_pit=5, capture_counts=(2, 3), grand_slam="no_capture", ply_cap=300)
    assert Rules.from_name(rules.name) == rules


# ---------------------------------------------------------------------------------------------
# make_strategy, canonical_spec


def test_make_strategy_rejects_none_naming_spec():
    with pytest.raises(TypeError, match="spec"):
        make_strategy(None)


def test_make_strategy_rejects_a_parameter_given_twice():
    assert issubclass(UnknownStrategyError, ValueError)
    with pytest.raises(UnknownStrategyError, match="parameter depth is given twice") as error:
        make_strategy("alphabeta(depth=1, depth=2)")
    _one_line(error)


def test_canonical_spec_rejects_a_parameter_given_twice():
    with pytest.raises(UnknownStrategyError, match="depth"):
        canonical_spec("alphabeta(depth=1, depth=2)")


@pytest.mark.parametrize("spec", ["minimax", "alphabeta(plies=3)", "alphabeta(depth=0)", "random(", ""])
def test_canonical_spec_refuses_what_make_strategy_refuses(spec):
    with pytest.raises(UnknownStrategyError, match="strategy"):
        canonical_spec(spec)


def test_canonical_spec_rejects_none_naming_spec():
    with pytest.raises(TypeError, match="spec"):
        canonical_spec(None)


@pytest.mark.parametrize(
    "spec, canonical",
    [
        (" random", "random"),
        ("random()", "random"),
        ("alphabeta( depth = 2 )", "alphabeta(depth=2)"),
        ("alphabeta(depth=02)", "alphabeta(depth=2)"),
        ("alphabeta(depth=2,)", "alphabeta(depth=2)"),
        ("alphabeta", "alphabeta(depth=6)"),  # the default is written out, as in records
        ("mcts(playouts=400)", "mcts(playouts=400)"),  # a default given is kept
        ("mcts", "mcts(playouts=400)"),
    ],
)
def test_canonical_spec_spells_a_spec_one_way(spec, canonical):
    assert canonical_spec(spec) == canonical
    assert canonical_spec(canonical) == canonical  # idempotent


def test_a_non_canonical_spelling_makes_the_same_strategy():
    assert make_strategy("alphabeta( depth = 02 )") is make_strategy("alphabeta(depth=2)")
    assert make_strategy(" random") is make_strategy("random")


@pytest.mark.parametrize("spec", ["random", "greedy", "heuristic", "alphabeta(depth=4)", "mcts(playouts=100)", "perfect"])
def test_the_spec_of_a_strategy_is_its_canonical_spelling(spec):
    # These are the specs of pipeline/studies/*.toml: already canonical, so their seeds stay.
    assert canonical_spec(spec) == spec == make_strategy(spec).spec


# ---------------------------------------------------------------------------------------------
# play_batch


def test_play_batch_refuses_more_games_than_memory_holds_with_the_estimate():
    with pytest.raises(ValueError, match="n_games") as error:
        engine.play_batch(10**13, "random", "random")
    message = _one_line(error)
    assert "needs at least" in message and "TiB" in message


@pytest.mark.parametrize("n_games", [1.5, 10.0, -1, 0, True, "10", None])
def test_play_batch_rejects_a_count_that_is_no_whole_number_of_at_least_one(n_games):
    with pytest.raises(ValueError, match="n_games"):
        engine.play_batch(n_games, "random", "random")


def test_play_batch_rejects_rules_that_are_not_a_rule_set():
    with pytest.raises(TypeError, match="rules"):
        engine.play_batch(1, "random", "random", rules="modiar")


def test_play_game_rejects_rules_that_are_not_a_rule_set():
    with pytest.raises(TypeError, match="rules"):
        engine.play_game("random", "random", rules="modiar")


# ---------------------------------------------------------------------------------------------
# Hard edges: each break once found, by name

STONES3 = Rules(stones_per_pit=3)


@pytest.mark.parametrize("tolerance", [2, 1, float("inf"), 1e300, float("nan"), -1, -1e-300, True, "0.1", None])
def test_exact_outcome_refuses_a_tolerance_that_is_no_mass_below_1(tolerance):
    with pytest.raises(ValueError, match="tolerance") as error:
        engine.exact_outcome("random", "random", rules=STONES3, tolerance=tolerance)
    assert repr(tolerance) in _one_line(error)


@pytest.mark.parametrize(
    "call",
    [
        lambda rules: engine.exact_outcome("random", "random", rules=rules),
        lambda rules: engine.exploitability("random", rules=rules),
        lambda rules: engine.policy_table("random", rules),
        lambda rules: engine.solve(rules),
        lambda rules: engine.start_board(rules),
    ],
)
def test_a_rule_set_name_where_rules_are_wanted_says_to_read_it_with_from_name(call):
    with pytest.raises(TypeError, match=r"rules must be an engine\.Rules") as error:
        call("modiar-stones3")
    assert "engine.Rules.from_name('modiar-stones3')" in _one_line(error)


@pytest.mark.parametrize("cap", [-1, 0, 10**9, 3.5, True])
def test_solve_refuses_a_bad_cap_naming_cap_not_the_rule_field(cap):
    with pytest.raises(ValueError, match=r"^cap is the ply cap") as error:
        engine.solve(STONES3, cap, cache=None)
    assert repr(cap) in _one_line(error)


@pytest.mark.parametrize(
    ("spelling", "canonical"),
    [("perfect(epsilon=-0.0)", "perfect(epsilon=0.0)"), ("perfect(epsilon=0)", "perfect(epsilon=0.0)")],
)
def test_perfect_epsilon_minus_zero_is_the_strategy_of_epsilon_zero(spelling, canonical):
    assert canonical_spec(spelling) == canonical
    assert make_strategy(spelling) is make_strategy(canonical)


def test_perfect_temperature_minus_zero_is_refused_as_zero_is():
    with pytest.raises(UnknownStrategyError, match=r"temperature must be a number above 0, not -0\.0"):
        make_strategy("perfect(temperature=-0.0)")


@pytest.mark.parametrize(
    ("spec", "bound"),
    [
        ("mcts(playouts=99999999999999999999)", "playouts must be a whole number from 1 to 37,800,000"),
        ("mcts(playouts=100000000)", "playouts must be a whole number from 1 to 37,800,000"),
        ("alphabeta(depth=100000000)", "depth must be a whole number from 1 to 10,000"),
        ("alphabeta(depth=10001)", "depth must be a whole number from 1 to 10,000"),
    ],
)
def test_search_effort_beyond_a_day_or_the_longest_game_is_refused_by_the_spec(spec, bound):
    with pytest.raises(UnknownStrategyError, match=re.escape(bound)) as error:
        make_strategy(spec)
    _one_line(error)


@pytest.mark.parametrize("i", [99, 4, -1, 1.0, "0", None])
def test_batch_record_out_of_range_names_i_not_an_unpacking(i):
    batch = engine.play_batch(4, "random", "random", rules=STONES3)
    with pytest.raises(ValueError, match=r"^i is a game of the batch, a whole number from 0 to 3") as error:
        batch.record(i)
    assert repr(i) in _one_line(error)
    assert batch.record(np.int64(3)) == batch.record(3)


@pytest.mark.parametrize("board", [-1, 2**36, 2**200, 1.5, "0", None])
def test_rotate_refuses_what_is_no_board_code_instead_of_turning_it(board):
    with pytest.raises(ValueError, match="board code") as error:
        engine.rotate(board)
    _one_line(error)


@pytest.mark.parametrize("state", [-1, 2**64, "x", 1.0, None, True])
def test_rng_refuses_a_state_that_is_no_64_bit_int(state):
    with pytest.raises(ValueError, match="state") as error:
        engine.Rng(state)
    _one_line(error)


def test_set_cache_folder_refuses_what_is_no_path_naming_folder():
    before = engine.cache_folder()
    with pytest.raises(TypeError, match=r"^folder must be a folder's path"):
        engine.set_cache_folder(123)
    assert engine.cache_folder() == before
