"""``modiar sample`` and ``modiar show``: the quick sample and its summary, a game drawn move by move, and a user's mistakes."""

from __future__ import annotations

import itertools
import re

import numpy as np
import pytest

import engine
from engine.game.rng import game_seeds
from pipeline.cli import main
from pipeline.sample import play_sample, summary


def test_a_sample_is_reproducible_and_adds_up():
    first = play_sample("random", "greedy", games=300, seed=3, progress=False)
    again = play_sample("random", "greedy", games=300, seed=3, progress=False)
    assert np.array_equal(first.plies, again.plies) and np.array_equal(first.winner, again.winner)
    assert np.all(first.score_south + first.score_north == 42)
    seed = int(game_seeds(3, 300)[17])
    record = engine.play_game("random", "greedy", seed=seed)
    assert (first.plies[17], first.winner[17]) == (record.plies, record.winner)
    assert first.events["first_move_forfeit"].sum() == 300


def test_the_summary_names_every_result_and_event():
    text = summary(play_sample("random", "random", games=200, seed=1, progress=False))
    for needle in ("South wins", "draws", "North wins", "first-player score", "game length", *engine.EVENTS):
        assert needle in text


def test_modiar_sample_prints_the_summary(capsys):
    assert main(["sample", "--games", "50", "--quiet", "--rule", "feeding=off"]) == 0
    out = capsys.readouterr().out
    assert "50 games: random (South) against random (North), rules modiar-feedingoff, seed 7" in out


@pytest.mark.parametrize(
    "arguments, message",
    [
        (["sample", "--south", "nonsense"], "unknown strategy 'nonsense'"),
        (["sample", "--rule", "stones_per_pit=0"], "stones_per_pit"),
        (["sample", "--rule", "colour=red"], "--rule takes FIELD=VALUE"),
        (["sample", "--rule", "feeding=maybe"], "feeding takes on or off"),
        (["sample", "--rules", "modiar-xx"], "unknown part 'xx'"),
        (["sample", "--games", "1"], "--games must be at least 2"),
        (["show", "--seed", "-4"], "--seed must be"),
        (["show", "--figure", "history.jpg"], "--figure history.jpg: the value history is drawn as svg, pdf, png"),
    ],
)
def test_a_user_mistake_is_one_line_and_exit_status_2(capsys, arguments, message):
    assert main(arguments) == 2
    err = capsys.readouterr().err
    assert message in err
    assert err.count("\n") == 1 and err.startswith("modiar: error: ")


def test_modiar_show_draws_every_move(capsys):
    assert main(["show", "--seed", "3"]) == 0
    out = capsys.readouterr().out
    record = engine.play_game("random", "random", seed=3)
    assert out.count("plays pit") == record.plies
    winner = "South" if record.score_south > record.score_north else "North"
    high, low = max(record.score_south, record.score_north), min(record.score_south, record.score_north)
    *_, ending, lost = out.rstrip().splitlines()
    assert ending.endswith(f"the game ends. {winner} wins {high} to {low} after {record.plies} moves.")
    assert lost.startswith("Value lost under perfect play: South ") and lost.endswith("(start value -2).")


def test_modiar_show_follows_the_forecast_and_draws_the_value_history(capsys, tmp_path):
    """Each move's line gives the forecast (South's side), which moves by the value the move
    loses, against its mover; the last forecast is the final margin; --figure draws the game."""
    figure = tmp_path / "history.svg"
    assert main(["show", "--seed", "3", "--south", "random", "--north", "perfect", "--figure", str(figure)]) == 0
    out = capsys.readouterr().out
    record = engine.play_game("random", "perfect", seed=3)
    forecasts = re.findall(r"forecast ([+-]?\d+)(?: -> ([+-]?\d+))?\)", out)
    assert len(forecasts) == record.plies and int(forecasts[0][0]) == -2
    for (before, after), (following, _) in itertools.pairwise(forecasts):
        assert int(after or before) == int(following)  # the forecast after a move is the next one's before
    last_before, last_after = forecasts[-1]
    assert int(last_after or last_before) == record.score_south - record.score_north
    assert "<svg" in figure.read_text() and f"Value history: {figure}" in out
