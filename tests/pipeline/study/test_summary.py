"""``modiar study summary``: a line per pairing in the order of the study's config, each share
(South wins, draws, North wins) as its games say, and the warning of an unfinished study first.

The study is the tests' small one (tests/study_configs.py: 3 stones a pit, 20 games a seat),
whose strategies, random then greedy, are out of alphabetical order, so that the order of the
config and the alphabet disagree.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from study_configs import small_config

from pipeline.analysis.stats import wilson
from pipeline.cli import main
from pipeline.runs.records import read_games
from pipeline.study.config import parse_study
from pipeline.study.run import run_study
from pipeline.study.summary import SHARE_WIDTH, summary

CONFIG_ORDER = [("random", "random"), ("random", "greedy"), ("greedy", "random"), ("greedy", "greedy")]


def heading(text: str) -> str:
    return next(line for line in text.splitlines() if line.startswith("South"))


def pairing_lines(text: str) -> list[str]:
    """The lines of the pairings' table: those after its heading, up to the blank line."""
    lines = text.splitlines()
    start = lines.index(heading(text))
    return lines[start + 1 : lines.index("", start)]


def column(text: str, title: str, line: str) -> str:
    """The cell of ``line`` under ``title`` (a share: right-aligned, SHARE_WIDTH wide)."""
    end = heading(text).index(title) + len(title)
    return line[end - SHARE_WIDTH : end].strip()


def test_pairings_follow_the_config_not_the_alphabet(small_study_run: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["study", "summary", str(small_study_run)]) == 0
    lines = pairing_lines(capsys.readouterr().out)
    assert [tuple(line.split()[:2]) for line in lines] == CONFIG_ORDER


@pytest.mark.parametrize(("heading", "winner"), [("South wins", "south"), ("draws", "draw"), ("North wins", "north")])
def test_each_share_is_that_of_the_games(small_study_run: Path, heading: str, winner: str) -> None:
    text = summary(small_study_run)
    games = read_games(small_study_run)
    for line in pairing_lines(text):
        south, north = line.split()[:2]
        pairing = games[(games.south == south) & (games.north == north)]
        assert column(text, heading, line) == wilson(int((pairing.winner == winner).sum()), len(pairing)).percent(1), line


def test_the_north_wins_column_follows_the_draws(small_study_run: Path) -> None:
    titles = heading(summary(small_study_run))
    assert titles.index("South wins") < titles.index("draws") < titles.index("North wins") < titles.index("first-player")


def test_an_unfinished_study_opens_with_its_warning_then_its_pairings(tmp_path: Path) -> None:
    folder = run_study(parse_study(small_config()), tmp_path / "small", progress=False, stop_after=1)
    text = summary(folder)
    assert text.splitlines()[0].startswith("INCOMPLETE STUDY: 1 of ")
    assert [tuple(line.split()[:2]) for line in pairing_lines(text)] == CONFIG_ORDER[:1]


def test_the_events_of_a_rule_the_rule_set_lacks_are_left_out(tmp_path: Path, small_study_run: Path) -> None:
    """Without feeding, feeding cannot be forced nor lapse: no line for them (RULES.md: Rule events)."""
    config = small_config(rules={"stones_per_pit": 3, "feeding": False})
    events = summary(run_study(parse_study(config), tmp_path / "off", progress=False)).split("rule events in")[1]
    assert "feeding_active" in events and "grand_slam_blocked" in events
    assert "feeding_forced" not in events and "feeding_lapsed" not in events
    events = summary(small_study_run).split("rule events in")[1]
    assert "feeding_forced" in events and "feeding_lapsed" in events


def test_the_command_shows_each_pairing_as_its_records_say(small_study_run: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["study", "summary", str(small_study_run)]) == 0
    out = capsys.readouterr().out
    games = read_games(small_study_run)
    pairing = games[(games.south == "greedy") & (games.north == "random")]
    south_wins = wilson(int((pairing.winner == "south").sum()), len(pairing)).percent(1)
    line = next(line for line in out.splitlines() if line.split()[:2] == ["greedy", "random"])
    assert south_wins in line and f"{len(pairing):,}" in line
    assert "rule events in" in out and "feeding_forced" in out
