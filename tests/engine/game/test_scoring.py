"""The score at the end of a game (engine.game.scoring): one rule for one game and for arrays of games."""

from __future__ import annotations

import numpy as np

import engine
from engine import Rules, pack, play_game
from engine.game.board import NORTH, SOUTH, rotate, row_stones
from engine.game.scoring import WINNERS, final_score, row_difference


def test_each_side_adds_its_own_row_to_its_captures_and_more_stones_wins():
    assert final_score(10, 12, 5, 2) == (0, 15, 14)  # South 10 + 5 beats North 12 + 2
    assert final_score(10, 12, 2, 5) == (1, 12, 17)
    assert final_score(17, 19, 4, 2) == (2, 21, 21)  # 21-21 is a draw (RULES.md)
    assert [WINNERS[index] for index in (0, 1, 2)] == ["south", "north", "draw"]


def test_arrays_of_games_score_as_each_game_alone():
    rng = np.random.default_rng(7)
    captured_south, captured_north, south_row, north_row = rng.integers(0, 22, size=(4, 2000)).astype(np.int16)
    winner, score_south, score_north = final_score(captured_south, captured_north, south_row, north_row)
    one_by_one = [final_score(*map(int, game)) for game in zip(captured_south, captured_north, south_row, north_row, strict=True)]
    assert list(zip(winner.tolist(), score_south.tolist(), score_north.tolist(), strict=True)) == one_by_one
    assert set(winner.tolist()) == {0, 1, 2}
    assert score_south.dtype == np.int16


def test_play_game_scores_by_the_rule_replayed_move_by_move():
    rules = Rules(ply_cap=20)  # 10 of these games end at the cap, 40 with no legal move; some are draws
    for seed in range(50):
        record = play_game("greedy", "random", rules=rules, seed=seed)
        board, captured = engine.start_board(rules), [0, 0]
        for ply, pit in enumerate(record.moves):
            moved = engine.apply_move(board, ply % 2, pit, ply, rules)
            board, captured[ply % 2] = moved.board, captured[ply % 2] + moved.captured
        winner, score_south, score_north = final_score(*captured, row_stones(board, SOUTH), row_stones(board, NORTH))
        assert (WINNERS[winner], score_south, score_north) == (record.winner, record.score_south, record.score_north)


def test_the_row_difference_is_the_movers_row_minus_the_opponents():
    board = pack([3, 0, 1, 2, 2, 5])
    assert row_difference(board) == 4 - 9
    assert row_difference(rotate(board)) == 9 - 4
