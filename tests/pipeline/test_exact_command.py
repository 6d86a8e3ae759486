"""``modiar exact``: the exact outcome of two table strategies, printed or as JSON, and its
one-line refusals. Small rule sets only (3 stones a pit, cap 10), in the tests' cache."""

from __future__ import annotations

import argparse
import json
import logging

import numpy as np
import pytest

import engine
import pipeline.cli
from engine import Rules
from pipeline.cli import main

SMALL = ["--rule", "stones_per_pit=3", "--rule", "ply_cap=10"]
SMALL_RULES = Rules(stones_per_pit=3, ply_cap=10)


def test_main_takes_its_log_handlers_back_when_it_returns(capsys: pytest.CaptureFixture[str]) -> None:
    """main() logs the engine's builds on stderr while it runs; afterwards the engine is a silent
    library again, and no handler is left on capsys's stream, which closes with this test."""
    loggers = [logging.getLogger(name) for name in ("engine", "pipeline")]
    before = [(list(logger.handlers), logger.level) for logger in loggers]
    assert main(["exact", "random", "random", *SMALL, "--json", "--quiet"]) == 0
    assert [(list(logger.handlers), logger.level) for logger in loggers] == before


@pytest.mark.parametrize("south, north", [("random", "greedy"), ("perfect(epsilon=0.25)", "alphabeta(depth=2)")])
def test_the_json_holds_the_numbers_of_exact_outcome(capsys: pytest.CaptureFixture[str], south: str, north: str) -> None:
    assert main(["exact", south, north, *SMALL, "--json"]) == 0  # the progress line goes to stderr
    record = json.loads(capsys.readouterr().out)  # nothing but the one object on stdout
    expected = engine.exact_outcome(south, north, rules=SMALL_RULES)
    assert (record["south"], record["north"]) == (expected.south, expected.north)
    assert record["rules"]["name"] == "modiar-stones3-cap10"
    assert record["rules"]["fields"]["stones_per_pit"] == 3 and record["rules"]["fields"]["ply_cap"] == 10
    for name in ("south_win", "draw", "north_win", "first_player_score", "unresolved"):
        assert record[name] == getattr(expected, name), name
    assert record["margin"] == {str(margin): p for margin, p in sorted(expected.margin.items())}
    assert record["plies"] == expected.plies.tolist()
    assert record["event_fires"] == expected.event_fires and list(record["event_fires"]) == list(engine.EVENTS)
    assert record["event_mean"] == expected.event_mean and list(record["event_mean"]) == list(engine.EVENTS)
    assert record["length"]["mean"] == pytest.approx(expected.mean_plies, abs=1e-12)


def test_the_length_summary_is_that_of_the_plies_distribution(capsys: pytest.CaptureFixture[str]) -> None:
    # Random games of 3 stones a pit last 2 to 7 plies: a cap of 6 cuts some short.
    assert main(["exact", "random", "random", "--rule", "stones_per_pit=3", "--rule", "ply_cap=6", "--json", "--quiet"]) == 0
    record = json.loads(capsys.readouterr().out)
    plies = np.array(record["plies"])
    k = np.arange(len(plies))
    mean = float(k @ plies)

    def smallest_reaching(q: float) -> int:
        return min(length for length in range(len(plies)) if plies[: length + 1].sum() >= q - 1e-12)

    length = record["length"]
    assert length["standard_deviation"] == pytest.approx(np.sqrt((k * k) @ plies - mean**2), abs=1e-9)
    assert length["median"] == smallest_reaching(0.5)
    assert length["percentile_1"] == smallest_reaching(0.01) <= length["median"] <= length["percentile_99"]
    assert length["percentile_99"] == smallest_reaching(0.99)
    assert length["at_cap"] == plies[6] > 0
    assert record["margin_mean"] == pytest.approx(sum(int(m) * p for m, p in record["margin"].items()), abs=1e-12)


def test_the_printed_outcome_gives_the_score_to_nine_decimals_and_every_event(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["exact", "greedy", "random", *SMALL, "--quiet"]) == 0
    out = capsys.readouterr().out
    expected = engine.exact_outcome("greedy", "random", rules=SMALL_RULES)
    assert out.startswith("exact outcome: greedy (South) against random (North), rules modiar-stones3-cap10\n")
    assert f"{expected.first_player_score:.9f}" in out
    assert f"{expected.south_win:.9f}" in out and f"{expected.north_win:.9f}" in out
    for name in engine.EVENTS:
        line = next(line for line in out.splitlines() if line.startswith(f"{name} "))
        assert line.split()[1:] == [f"{expected.event_fires[name]:.9f}", f"{expected.event_mean[name]:.9f}"]
    for needle in (
        "standard deviation",
        "median",
        "99th percentile",
        "reaches the cap of 10",
        "most likely",
        "unresolved",
        "time:",
    ):
        assert needle in out


@pytest.mark.parametrize(
    "arguments, message",
    [
        (["mcts", "random"], "strategy 'mcts(playouts=400)' has no policy table"),
        (["random", "mcts(playouts=5)"], "modiar exact takes table strategies only"),
        (["nonsense", "random"], "unknown strategy 'nonsense'"),
        (["alphabeta(depth=0)", "random"], "bad parameters in strategy 'alphabeta(depth=0)'"),
        (["random", "random", "--rule", "colour=red"], "--rule takes FIELD=VALUE"),
        (["random", "random", "--rule", "feeding=maybe"], "--rule feeding takes on or off"),
        (["random", "random", "--rule", "stones_per_pit=0"], "stones_per_pit must be"),
    ],
)
def test_a_mistake_is_one_line_and_exit_status_2(capsys: pytest.CaptureFixture[str], arguments: list[str], message: str) -> None:
    assert main(["exact", *SMALL, *arguments]) == 2
    captured = capsys.readouterr()
    assert message in captured.err
    assert captured.err.count("\n") == 1 and captured.err.startswith("modiar: error: ")
    assert captured.out == ""


def _commands(parser: argparse.ArgumentParser, words: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    """Every command and subcommand of the parser, as the words that name it."""
    found = [words]
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, child in action.choices.items():
                found += _commands(child, (*words, name))
    return found


@pytest.mark.parametrize("words", _commands(pipeline.cli._parser()), ids=" ".join)
def test_every_help_prints(capsys: pytest.CaptureFixture[str], words: tuple[str, ...]) -> None:
    # A bare % in a help text makes argparse raise instead of printing the help.
    with pytest.raises(SystemExit) as stopped:
        main([*words, "--help"])
    assert stopped.value.code == 0
    assert capsys.readouterr().out.startswith(f"usage: {' '.join(('modiar', *words))}")


def test_exact_help_names_the_arguments(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["exact", "--help"])
    out = capsys.readouterr().out
    for needle in ("SOUTH", "NORTH", "--rule FIELD=VALUE", "--json", "--cache DIR", "mcts"):
        assert needle in out
