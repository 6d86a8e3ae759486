"""``modiar exact``: the exact outcome of two table strategies, printed or as JSON, and its
one-line refusals. Small rule sets only (3 stones a pit, cap 10), in the tests' cache."""

from __future__ import annotations

import argparse
import json
import logging
import re

import numpy as np
import pytest

import engine
import pipeline.cli
from engine import Rules
from engine.game import EVENT_BY_NAME
from pipeline.cli import main
from pipeline.exact.summary import mean, probability

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


def test_the_printed_outcome_rounds_its_figures_and_names_each_possible_event_in_words(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """The page a researcher reads: probabilities by ``probability``, every rule event the rule set
    allows by its name in the reports, none it rules out, no column name, no float noise."""
    assert main(["exact", "greedy", "random", *SMALL, "--rule", "feeding=off", "--quiet"]) == 0
    out = capsys.readouterr().out
    rules = SMALL_RULES.replace(feeding=False)
    expected = engine.exact_outcome("greedy", "random", rules=rules)
    assert out.startswith("exact outcome: greedy (South) against random (North), rules modiar-stones3-feedingoff-cap10\n")
    rows = {line[:32].strip(): line[32:].split() for line in out.splitlines()}
    for label, value in [
        ("South wins", expected.south_win),
        ("draws", expected.draw),
        ("North wins", expected.north_win),
        ("first-player score", expected.first_player_score),
    ]:
        assert rows[label][0] == probability(value), label
    for name in engine.EVENTS:
        short = EVENT_BY_NAME[name].short
        if name in engine.possible_events(rules):
            assert rows[short] == [probability(expected.event_fires[name]), mean(expected.event_mean[name])], name
        else:
            assert short not in rows, name  # feeding forced, feeding lapsed: ruled out, not counted as 0
    assert not [name for name in engine.EVENTS if "_" in name and name in out]
    assert not re.search(r"\d\.\d{8,}|\de[-+]\d", out), "a figure with float noise or an exponent"
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
    ("p", "printed"),
    [
        (0.0, "0"),
        (-1e-17, "0"),  # a float sum's error below 0
        (1e-20, "< 0.000001"),
        (8.3e-6, "0.0000083"),
        (0.00081, "0.00081"),
        (0.0012, "0.0012"),
        (0.0396, "0.0396"),
        (0.5, "0.5000"),
        (0.463581707, "0.4636"),
        (0.99996, "0.999960"),
        (0.99999917, "> 0.999999"),
        (1 - 1e-10, "1"),  # 1 but for the propagation's float error
        (1.0, "1"),
    ],
)
def test_a_probability_is_printed_to_4_decimals_or_2_significant_digits_from_0_or_1(p: float, printed: str) -> None:
    assert probability(p) == printed


@pytest.mark.parametrize(
    ("value", "printed"),
    [(7.500000001, "7.5000"), (5.999999998913457, "6"), (33.272864976, "33.2729"), (0.00081, "0.00081"), (0.0, "0")],
)
def test_a_mean_count_is_printed_to_4_decimals_a_whole_one_whole(value: float, printed: str) -> None:
    assert mean(value) == printed


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


@pytest.mark.parametrize("words", [words for words in _commands(pipeline.cli._parser()) if words], ids=" ".join)
def test_every_help_opens_with_what_the_command_does(capsys: pytest.CaptureFixture[str], words: tuple[str, ...]) -> None:
    with pytest.raises(SystemExit):
        main([*words, "--help"])
    paragraphs = capsys.readouterr().out.split("\n\n")
    assert paragraphs[0].startswith("usage: ") and paragraphs[1].strip().endswith("."), paragraphs[1]
    assert paragraphs[1][0].isupper() and not paragraphs[1].startswith(("options:", "positional arguments:"))


@pytest.mark.parametrize("command", ["show", "play"])
def test_show_and_play_say_what_they_do_and_where_to_read_more(capsys: pytest.CaptureFixture[str], command: str) -> None:
    with pytest.raises(SystemExit):
        main([command, "--help"])
    description = " ".join(capsys.readouterr().out.split("\n\n")[1].split())
    assert description.startswith("Play ") and "docs/studies.md#strategies" in description and "RULES.md" in description
