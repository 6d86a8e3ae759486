"""``modiar show``'s game: the board after every move, what each move gave away against perfect
play, and the game's value history (the forecast by ply, pipeline.report.quality.value_history)."""

from __future__ import annotations

from pathlib import Path

import polars as pl

import engine
from pipeline.analyse import value_lost
from pipeline.play import ending
from pipeline.report.figures import FORMATS, save_as
from pipeline.report.quality import value_history

SIDES = ("South", "North")


def check_figure_path(figure: Path | None) -> None:
    """Refuse, before the game is played, a figure file that is not SVG, PDF or PNG (ValueError)."""
    if figure is not None and figure.suffix.lower().lstrip(".") not in FORMATS:
        raise ValueError(f"--figure {figure}: the value history is drawn as {', '.join(FORMATS)}; name a file ending in one")


def show_game(record: engine.GameRecord, rules: engine.Rules, solution: engine.Solution, figure: Path | None = None) -> None:
    """Print the game move by move, each with what it gave away and the forecast (South's side:
    the final margin if both sides played perfectly from there), then how it ended; with
    ``figure``, draw its value history there."""
    board = engine.start_board(rules)
    print(engine.render(board))
    lost, margin, rows = [0, 0], 0, []
    for ply, pit in enumerate(record.moves):
        mover = ply % 2
        side = 1 if mover == 0 else -1
        forecast = margin + side * solution.value(board, mover, ply)
        given_up = value_lost(solution, board, mover, ply, pit)
        lost[mover] += given_up
        result = engine.apply_move(board, mover, pit, ply, rules)
        board, margin = result.board, margin + side * result.captured
        after = forecast - side * given_up
        rows.append({"ply": ply, "mover": mover, "forecast_before": forecast, "forecast_after": after, "loss": given_up})
        verdict = "a best move" if not given_up else f"loses {given_up} of value against a best move"
        change = f"forecast {forecast:+d}" if not given_up else f"forecast {forecast:+d} -> {after:+d}"
        print(f"\nply {ply}: {SIDES[mover]} plays pit {pit} ({verdict}; {change})\n{engine.render(board)}")
    print(f"\n{ending(record, rules)}")
    print(f"Value lost under perfect play: South {lost[0]}, North {lost[1]} (start value {solution.start_value():+d}).")
    if figure is not None and rows:
        drawn = value_history(pl.DataFrame(rows), title=f"{record.south} (South) against {record.north} (North)")
        print(f"Value history: {save_as(drawn, figure)}")
