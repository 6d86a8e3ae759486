"""No figure that goes stale in the comments of the bundled configs or in the Makefile's help.

A time, a speed or a size on disk changes with the code and the machine, and a comment is never
run again: such a figure comes from one place, the estimate of time and memory that ``modiar
study run`` (ladder run, atlas run) prints before it starts, or a dated measurement (README.md's
"How long, here", docs/). Counts of games, positions and rule sets, and intervals, are design,
and stay. The patterns are plain on purpose: a comment one of them catches wrongly can be
reworded ("a second run" is fine; "games a second" is a speed).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from pipeline.runs.paths import ROOT, STUDIES

STALE = {
    "a time": re.compile(r"\b\d[\d.,]*\s*(?:ms|s|sec|min|h)\b|\b(?:seconds|minutes|hours|days)\b|\ba (?:minute|hour|day)\b"),
    "a speed": re.compile(r"\b(?:games|moves|positions) (?:a|per) second\b|\bper second\b|/s\b"),
    "a size": re.compile(r"\b\d[\d.,]*\s*[kKMGT]i?B\b"),
    "a folder that is gone (caches live in the cache folder)": re.compile(r"\bdata/(?:tables|solutions|policies)\b"),
}


def stale(text: str) -> list[str]:
    """What in ``text`` is a time, a speed, a size or a gone path, each as "kind: match"."""
    return [f"{kind}: {match[0]!r}" for kind, pattern in STALE.items() for match in pattern.finditer(text)]


def config_comments(path: Path) -> list[tuple[int, str]]:
    """The comments of a TOML config, with their line numbers (no value of ours holds a #)."""
    lines = path.read_text(encoding="utf-8").splitlines()
    return [(number, line.partition("#")[2]) for number, line in enumerate(lines, 1) if "#" in line]


def makefile_texts() -> list[tuple[int, str]]:
    """The Makefile's comments and each target's ``## help``, with their line numbers."""
    found = []
    for number, line in enumerate((ROOT / "Makefile").read_text(encoding="utf-8").splitlines(), 1):
        if line.startswith("#"):
            found.append((number, line))
        elif "## " in line and not line.startswith("\t"):
            found.append((number, line.partition("## ")[2]))
    return found


@pytest.mark.parametrize("config", sorted(STUDIES.glob("*.toml")), ids=lambda path: path.name)
def test_a_bundled_config_comment_gives_no_time_speed_or_size(config):
    found = [f"{config.name}:{number}: {what}" for number, comment in config_comments(config) for what in stale(comment)]
    assert found == [], "point to the estimate the run prints instead: " + "; ".join(found)


def test_the_makefile_help_gives_no_time_speed_or_size():
    found = [f"Makefile:{number}: {what}" for number, text in makefile_texts() for what in stale(text)]
    assert found == [], "point to the estimate the run prints, or README.md's How long, here: " + "; ".join(found)


@pytest.mark.parametrize(
    ("text", "caught"),
    [
        ("about 10 minutes on 2 cores", True),
        ("17 rule sets, ~30 min", True),
        ("~50 games a second", True),
        ("~17 s and 270 MB", True),
        ("5.7 GB on disk", True),
        ("the tables (data/tables)", True),
        ("hours", True),
        ("a second run, or the pairings", False),
        ("100,000 games a seat: within +-0.3 points", False),
        ("1,000 games a seat (4,000 games)", False),
        ("min_stones_to_play = [2, 1]", False),
    ],
)
def test_the_patterns(text, caught):
    assert bool(stale(text)) == caught, stale(text)
