"""``modiar analyse``, ``modiar play --hints`` and ``modiar show``'s value lost: the moves of a
position with their value, value lost and remoteness, as engine.analyse gives them."""

from __future__ import annotations

import pytest

import engine
from engine import Rules
from pipeline.analyse import parse_counts, value_lost
from pipeline.cli import main
from pipeline.play import play_terminal

STONES4 = Rules(stones_per_pit=4)


def test_analyse_prints_each_moves_value_lost_and_remoteness_as_the_engine_gives_them(capsys):
    assert main(["analyse", "4 4 4 / 4 4 4", "--rules", STONES4.name]) == 0
    out = capsys.readouterr().out.splitlines()
    frame = engine.analyse(engine.start_board(STONES4), rules=STONES4)
    rows = [line.split() for line in out[out.index("  pit  captures  value  lost  remoteness  longest  decided by") + 1 :]]
    assert [(int(pit), int(value), int(lost)) for pit, _, value, lost, *_ in rows] == frame.select(
        "pit", "value", "value_lost"
    ).rows()
    assert [row[4] for row in rows] == [str(r) if r is not None else "cap" for r in frame["remoteness"]]
    assert min(frame["value_lost"]) == 0
    solution, lines = engine.solve(STONES4, progress=False), engine.remoteness(STONES4, progress=False)
    assert f"value {solution.start_value():+d} to South" in out[5]
    assert frame.filter(frame["value_lost"] == 0)["value"].to_list()[0] == solution.start_value()
    best = frame.filter(frame["value_lost"] == 0)["remoteness"].to_list()
    assert lines.start() == (min(best) if solution.start_value() >= 0 else max(best))


def test_a_board_is_six_counts_in_the_order_of_sowing():
    assert engine.unpack(parse_counts("6 7 8 / 7 7 7", Rules())) == (6, 7, 8, 7, 7, 7)
    assert engine.unpack(parse_counts("6,7,8,7,7,7", Rules())) == (6, 7, 8, 7, 7, 7)
    with pytest.raises(ValueError, match="six whole numbers"):
        parse_counts("6 7 8 7 7", Rules())


def test_hints_show_every_legal_move_before_each_move():
    shown: list[str] = []
    answers = iter(["0", "1", "2"] * 100)
    play_terminal("human", "greedy", rules=STONES4, ask=lambda prompt: next(answers), say=shown.append, hints=True)
    hints = [text for text in shown if "  pit  captures  value  lost" in text]
    moves = [text for text in shown if text.startswith("\nMove ")]
    assert len(hints) == len(moves)  # before the first move, and after every move but the last
    first = hints[0].splitlines()
    assert first[0] == f"{STONES4.name}, South to move after 0 plies (cap 400):"


def test_value_lost_is_zero_for_a_best_move_and_the_gap_for_another():
    solution = engine.solve(STONES4, progress=False)
    start = engine.start_board(STONES4)
    values = dict(zip(engine.legal_moves(start, 0, 0, STONES4), solution.move_values(start, 0, 0), strict=True))
    for pit, value in values.items():
        assert value_lost(solution, start, 0, 0, pit) == max(values.values()) - value
