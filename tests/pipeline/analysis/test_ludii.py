"""pipeline.analysis.ludii: the Ludii-comparable table on hand-built games whose outcomes and plies are counted by hand."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest

import engine
from engine.game.board import row_stones
from engine.game.scoring import WINNERS, final_score
from pipeline.analysis.ludii import comparable
from pipeline.analysis.metrics import ludii
from pipeline.analysis.turns import ludii_plies

KEYS = ["rules", "south", "north"]
RULES = engine.Rules(stones_per_pit=3, capture_counts=(6,), ply_cap=30)
# Four games of RULES (tests/pipeline/analysis/test_turns.py draws the repeated boards of the first two):
CYCLE = [1, 5, 1, 3, 2, 5, 1, 4, 0, 5, 0, 3, 2, 3, 1, 3, 2, 3]  # 18 plies, a draw 9 to 9; a state comes back
CROSS = [0, 3, 2, 3, 1, 5, 2, 4, 0, 3, 0, 4, 1, 4, 2, 3]  # 16 plies, North wins 15 to 3; a board comes back
PLAIN = [1, 4, 0, 5, 1]  # 5 plies, South wins 10 to 8; no board comes back
# Stopped by the cap after 30 plies with South ahead 12 to 6; no board comes back.
CAPPED = [0, 5, 1, 3, 2, 3, 0, 4, 0, 5, 0, 4, 2, 5, 0, 4, 1, 3, 0, 5, 1, 3, 0, 4, 2, 5, 1, 4, 2, 5]
# The legal moves before each move of each game (engine.legal_moves).
OPTIONS = {
    "CYCLE": [3, 3, 3, 2, 2, 3, 1, 2, 3, 2, 3, 1, 2, 2, 1, 2, 1, 1],
    "CROSS": [3, 3, 2, 3, 1, 2, 3, 2, 2, 2, 2, 2, 1, 3, 1, 2],
    "PLAIN": [3, 3, 2, 2, 2],
    "CAPPED": [3, 3, 3, 3, 2, 3, 1, 3, 3, 3, 3, 2, 1, 3, 1, 2, 1, 2, 3, 2, 3, 2, 2, 1, 3, 3, 2, 2, 2, 2],
}
# Self-play of "a" (all four games) and of "b" (the capped game); "a" against "b" is no self-play.
GROUPS = {("a", "a"): [CYCLE, CROSS, PLAIN, CAPPED], ("b", "b"): [CAPPED], ("a", "b"): [CAPPED, PLAIN]}


def _record(moves: list[int]) -> tuple[str, str]:
    """(winner, end_reason) of a game of RULES, from engine.apply_move and engine.game.scoring."""
    board, captured = engine.start_board(RULES), [0, 0]
    for ply, pit in enumerate(moves):
        result = engine.apply_move(board, ply % 2, pit, ply, RULES)
        board, captured[ply % 2] = result.board, captured[ply % 2] + result.captured
    winner = final_score(captured[0], captured[1], row_stones(board, 0), row_stones(board, 1))[0]
    return WINNERS[winner], "ply_cap" if len(moves) == RULES.ply_cap else "no_moves"


def _games(groups: dict[tuple[str, str], list[list[int]]] = GROUPS) -> pl.DataFrame:
    rows = [(south, north, moves, *_record(moves)) for (south, north), games in groups.items() for moves in games]
    return pl.DataFrame(
        {
            "rules": [RULES.name] * len(rows),
            "game_id": list(range(len(rows))),
            "south": [row[0] for row in rows],
            "north": [row[1] for row in rows],
            "winner": [row[3] for row in rows],
            "end_reason": [row[4] for row in rows],
            "plies": pl.Series([len(row[2]) for row in rows], dtype=pl.Int16),
            "moves": pl.Series([row[2] for row in rows], dtype=pl.List(pl.UInt8)),
        }
    )


def _table(games: pl.DataFrame) -> pl.DataFrame:
    return comparable(games.lazy(), ludii_plies(games, by=KEYS), by=KEYS)


def _row(table: pl.DataFrame, south: str) -> dict[str, object]:
    return table.filter(pl.col("south") == south).row(0, named=True)


def _options(moves: list[int]) -> list[int]:
    """The number of legal moves before each move (engine.legal_moves)."""
    board, options = engine.start_board(RULES), []
    for ply, pit in enumerate(moves):
        options.append(len(engine.legal_moves(board, ply % 2, ply, RULES)))
        board = engine.apply_move(board, ply % 2, pit, ply, RULES).board
    return options


def test_the_hand_built_games_are_as_their_comments_say():
    outcomes = [_record(moves) for moves in (CYCLE, CROSS, PLAIN, CAPPED)]
    assert outcomes == [("draw", "no_moves"), ("north", "no_moves"), ("south", "no_moves"), ("south", "ply_cap")]
    assert [_options(moves) for moves in (CYCLE, CROSS, PLAIN, CAPPED)] == list(OPTIONS.values())


def test_only_self_play_groups_are_kept():
    table = _table(_games())
    assert table.select(KEYS).rows() == [(RULES.name, "a", "a"), (RULES.name, "b", "b")]
    assert table["games"].to_list() == [4, 1]
    assert table.columns == [
        *KEYS, "games", "AdvantageP1", "Balance", "Completion", "Drawishness", "Timeouts",
        "Duration", "Duration_low", "Duration_high", "Duration_p99",
        *(f"{name}{end}" for name in (
            "BranchingFactor", "BranchingFactor_per_turn", "DecisionMoves", "PositionalRepetition", "PositionalRepetition_ours"
        ) for end in ("", "_low", "_high")),
    ]  # fmt: skip


def test_a_game_stopped_by_the_cap_is_a_draw_for_ludii_and_keeps_its_winner_in_ours():
    games = _games()
    ours = _row(ludii(games.lazy(), by=KEYS), "a")
    theirs = _row(_table(games), "a")
    # Engine winners: draw, North, South, South (the last at the cap). Ludii's: draw, North, South, draw.
    assert ours["AdvantageP1"] == pytest.approx((0.5 + 0 + 1 + 1) / 4)
    assert theirs["AdvantageP1"] == pytest.approx((0.5 + 0 + 1 + 0.5) / 4)
    assert (ours["Drawishness"], theirs["Drawishness"]) == pytest.approx((1 / 4, 2 / 4))
    assert (ours["Balance"], theirs["Balance"]) == pytest.approx((1 - abs(2 / 4 - 1 / 4), 1 - abs(1 / 4 - 1 / 4)))
    assert (ours["Completion"], theirs["Completion"]) == pytest.approx((2 / 4, 2 / 4))  # ours already left the cap out
    assert (ours["Timeouts"], theirs["Timeouts"]) == pytest.approx((1 / 4, 1 / 4))
    alone = _row(_table(games), "b")  # the capped game alone: South's 12 to 6 is Ludii's draw
    assert (alone["AdvantageP1"], alone["Balance"], alone["Drawishness"], alone["Completion"]) == (0.5, 1.0, 1.0, 0.0)
    assert _row(ludii(games.lazy(), by=KEYS), "b")["AdvantageP1"] == 1.0


@pytest.mark.parametrize("copies", [(1, 1, 1, 1), (7, 3, 11, 2), (1, 0, 40, 0)])
def test_duration_and_its_99th_percentile_are_numpys(copies):
    games = [moves for moves, count in zip((CYCLE, CROSS, PLAIN, CAPPED), copies, strict=True) for _ in range(count)]
    row = _row(_table(_games({("a", "a"): games})), "a")
    lengths = np.array([len(moves) for moves in games])
    assert row["Duration"] == pytest.approx(lengths.mean())
    assert row["Duration_p99"] == pytest.approx(np.percentile(lengths, 99))


def test_the_per_ply_columns_are_ludiis_with_ours_beside():
    assert [sum(options) for options in OPTIONS.values()] == [37, 34, 12, 69]
    assert [sum(n > 1 for n in options) for options in OPTIONS.values()] == [13, 13, 5, 25]
    row = _row(_table(_games()), "a")
    assert row["BranchingFactor"] == pytest.approx((37 / 18 + 34 / 16 + 12 / 5 + 69 / 30) / 4)
    assert row["BranchingFactor_per_turn"] == pytest.approx((37 + 34 + 12 + 69) / (18 + 16 + 5 + 30))
    assert row["DecisionMoves"] == pytest.approx((13 / 18 + 13 / 16 + 5 / 5 + 25 / 30) / 4)
    assert row["PositionalRepetition"] == pytest.approx((1 + 1 + 0 + 0) / 4)  # CYCLE and CROSS repeat a board
    assert row["PositionalRepetition_ours"] == pytest.approx((1 / 19 + 0 + 0 + 0) / 4)  # CYCLE repeats a state
    assert row["PositionalRepetition_low"] < row["PositionalRepetition"] < row["PositionalRepetition_high"]
    plies = ludii_plies(_games(), by=KEYS).filter(pl.col("south") == pl.col("north"))
    assert row["BranchingFactor"] == plies.row(0, named=True)["BranchingFactor_per_game"]


def test_plies_of_other_games_or_groups_without_the_seats_are_refused():
    games = _games()
    plies = ludii_plies(games, by=KEYS)
    with pytest.raises(ValueError, match="must hold 'south' and 'north'"):
        comparable(games.lazy(), plies, by=["rules", "south"])
    with pytest.raises(ValueError, match="no column"):
        comparable(games.lazy(), plies.drop("rules"), by=KEYS)
    with pytest.raises(ValueError, match=rf"holds 1 games for rules={RULES.name}, south=a, north=a, the games table 4"):
        comparable(games.lazy(), ludii_plies(games.head(1), by=KEYS), by=KEYS)


def test_no_self_play_gives_an_empty_table():
    games = _games({("a", "b"): [PLAIN]})
    table = _table(games)
    assert table.height == 0 and "PositionalRepetition_ours" in table.columns
