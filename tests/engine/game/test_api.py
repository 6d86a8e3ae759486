"""The public API's contract at its edges: bad input, NumPy seeds, the ply cap."""

from __future__ import annotations

import numpy as np
import pytest

import engine
from engine import Rules, apply_move, end_event, legal_moves, pack, play_game, position


def test_numpy_seeds_mean_the_same_games_as_python_ints():
    record = play_game("random", "random", seed=np.uint64(2**63 + 5))
    assert record == play_game("random", "random", seed=2**63 + 5)
    assert type(record.seed) is int


@pytest.mark.parametrize("seed", [-1, 2**64, 2.0, True, "3"])
def test_a_bad_seed_is_refused(seed):
    with pytest.raises(ValueError, match="seed"):
        play_game("random", "random", seed=seed)


def test_a_board_of_more_than_63_stones_is_refused_before_it_can_overflow_a_pit():
    # Sowing pit 0 here would put 64 stones in pit 1, one more than its 6 bits hold.
    with pytest.raises(ValueError, match="holds 68 stones; a board holds at most 63"):
        apply_move(pack([2, 63, 0, 1, 1, 1]), 0, 0, ply=1)


@pytest.mark.parametrize(
    "board, mover, ply, message",
    [
        (-1, 0, 0, "board code"),
        (2**36, 0, 0, "board code"),
        (engine.start_board(), 2, 0, "mover"),
        (engine.start_board(), 0, -1, "ply"),
    ],
)
def test_a_bad_position_is_a_value_error_that_names_the_problem(board, mover, ply, message):
    with pytest.raises(ValueError, match=message):
        legal_moves(board, mover, ply)


def test_no_move_is_legal_at_the_ply_cap_and_no_end_event_fires_there():
    rules = Rules(ply_cap=10)
    board = engine.start_board(rules)
    assert legal_moves(board, 0, 9, rules) == (0, 1, 2)
    assert legal_moves(board, 0, 10, rules) == ()
    assert end_event(board, 0, 10, rules) is None
    with pytest.raises(engine.IllegalMoveError, match="ply cap of 10"):
        apply_move(board, 0, 0, 10, rules)


def test_position_shows_a_strategy_the_legal_moves_of_either_player():
    board = pack([2, 1, 0, 0, 3, 2])
    assert position(board, 0, 5).moves == legal_moves(board, 0, 5) == (0,)
    assert position(board, 1, 5).moves == legal_moves(board, 1, 5) == (4, 5)


def test_an_option_names_the_pit_the_child_the_events_and_the_capture():
    #   pit      5   4   3
    #   North    1   1   1
    #   South    0   2   3
    #   pit      0   1   2
    # Pit 1 sows 1 and 2 and takes the 4 of pit 2; pit 2 sows 2, 3 and 4 and takes pits 4 and 3.
    board = pack([0, 2, 3, 1, 1, 1])
    options = position(board, 0, 1).options
    assert [option.pit for option in options] == [1, 2]
    assert [option.captured for option in options] == [4, 4]
    after = [pack([0, 1, 0, 1, 1, 1]), pack([0, 2, 1, 0, 0, 1])]  # the child is seen by North, the next mover
    assert [option.child for option in options] == [engine.rotate(code) for code in after]
    for option in options:
        moved = apply_move(board, 0, option.pit, 1)
        assert (option.captured, engine.game.events.unpack_events(option.events)) == (moved.captured, moved.events)
