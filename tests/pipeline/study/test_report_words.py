"""What a reader of a report is told, where a new user found it misleading: a study
whose exact phase did not finish says so wherever exact values would stand, and the same study
finished shows them, marked exact; the abstract's verdict on the first seat follows each
strategy; the ply cap and perfect play read as sentences; a rule set without feeding never has
feeding "due"; the seat-effect figure has a legend, and its exact crosses stand out on every
group's colour.

The studies are small (3 or 4 stones a pit): their exact values are checked by hand here, from
engine.exact_outcome, not from the report's code.
"""

from __future__ import annotations

import re
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import matplotlib.colors
import numpy as np
import polars as pl
import pytest

import engine
from pipeline.cli import main
from pipeline.exact.cache import cached_exact_outcome
from pipeline.runs.records import read_study_manifest, scan_exact, scan_games
from pipeline.study import run as runner
from pipeline.study.config import parse_study
from pipeline.study.report import compute, figure
from pipeline.study.run import run_study
from pipeline.study.status import exact_pending, exact_words

THREE = engine.Rules(stones_per_pit=3)
EXACT_CONFIG = {
    "name": "halfexact",
    "seed": 5,
    "games_per_seat": 100,
    "strategies": ["random", "greedy", "perfect"],
    "rules": {"stones_per_pit": 3},
    "exact": True,
}
PENDING = re.compile(r"exact outcomes not computed yet \((\d+) of (\d+) pairings in the cache folder, none in exact\.parquet\)")


def report_text(study: Path, out: Path) -> str:
    assert main(["study", "report", str(study), "--out", str(out), "--quiet"]) == 0
    return (out / "report.md").read_text(encoding="utf-8")


def abstract(text: str) -> str:
    return text[text.index("## Abstract") : text.index("## Contents")]


@contextmanager
def cache_in(folder: Path) -> Iterator[None]:
    """The cache folder of the engine and of every command run in-process (MODIAR_CACHE)."""
    kept = engine.cache_folder()
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("MODIAR_CACHE", str(folder))
        engine.set_cache_folder(folder)
        try:
            yield
        finally:
            engine.set_cache_folder(kept)


@pytest.fixture(scope="module")
def half_exact(tmp_path_factory):
    """A study killed in its exact phase (every game recorded, no exact.parquet) and a cache
    folder holding one of its 9 exact outcomes: (study folder, its cache, its report's Markdown)."""
    folder = tmp_path_factory.mktemp("halfexact")
    with cache_in(folder / "cache"):
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(runner, "_record_exact", killed)
            with pytest.raises(KeyboardInterrupt):
                run_study(parse_study(EXACT_CONFIG), folder / "study", progress=False)
        cached_exact_outcome("random", "random", THREE)
        text = report_text(folder / "study", folder / "report")
    return folder / "study", folder / "cache", text


def killed(*args, **kwargs):
    raise KeyboardInterrupt  # as a kill (Ctrl-C) in the exact phase


def finished(half_exact, tmp_path: Path) -> Path:
    """A copy of the half-exact study, its run finished (the fixture's own stays unfinished)."""
    study, cache, _ = half_exact
    shutil.copytree(study, tmp_path / "study")
    shutil.copytree(cache, tmp_path / "cache")
    with cache_in(tmp_path / "cache"):
        run_study(parse_study(EXACT_CONFIG), tmp_path / "study", progress=False)
    return tmp_path / "study"


def test_a_study_killed_in_its_exact_phase_says_so_wherever_exact_values_would_stand(half_exact):
    study, cache, text = half_exact
    assert scan_games(study).select(pl.len()).collect().item() == 9 * 2 * 100 // 2  # every game is there
    phrase = "exact outcomes not computed yet (1 of 9 pairings in the cache folder, none in exact.parquet)"
    with cache_in(cache):
        assert exact_pending(study) == phrase and exact_words(study) == phrase  # the notebooks print exact_words
    assert text.count(phrase) >= 4  # the warning, the abstract, both captions
    assert f"Every figure below is sampled: {phrase}." in abstract(text)
    assert "crosses are exact values" not in text and "exact where the study computed it" not in text
    assert f"95% intervals; no exact values: {phrase}." in text
    assert f"its games' estimates; {phrase}." in text
    assert "(exact)" not in abstract(text) and "exact values)" not in abstract(text)


def test_finished_it_shows_exact_values_and_says_which_figures_are_exact(half_exact, tmp_path):
    study = finished(half_exact, tmp_path)
    with cache_in(tmp_path / "cache"):
        assert exact_pending(study) is None and exact_words(study) == "exact outcomes of 9 pairings in exact.parquet"
        text = report_text(study, tmp_path / "report")
    assert PENDING.search(text) is None and "INCOMPLETE" not in text
    assert "crosses are exact values" in text
    # self-play scores and lengths all exact: by hand from engine.exact_outcome
    scores = [engine.exact_outcome(name, name, rules=THREE).first_player_score for name in ("random", "greedy", "perfect")]
    assert scores[0] == pytest.approx(1 / 12) and scores[1:] == [0.0, 0.0]
    expected = f"random {scores[0]:.3f}; greedy 0.000; perfect 0.000 (exact values)"
    assert expected in abstract(text)
    assert "Moving first is a disadvantage for every strategy." in abstract(text)
    assert "(games between random players, exact)" in abstract(text)


def test_the_seat_effect_figure_has_a_legend_and_crosses_that_stand_out(half_exact, tmp_path):
    unfinished = half_exact[0]
    done = finished(half_exact, tmp_path)
    for study, exact in ((unfinished, None), (done, scan_exact(done))):
        data = compute(scan_games(study), read_study_manifest(study), exact=exact, per_ply=False, solutions={})
        drawn = figure("seat_effect", data)
        axes = drawn.axes[0]
        legend = axes.get_legend()
        assert legend is not None, "no legend"
        labels = [text.get_text() for text in legend.get_texts()]
        assert {"self-play", "both seat orders"} <= set(labels)
        groups = {matplotlib.colors.to_hex(line.get_color()) for line in axes.get_lines() if line.get_marker() in ("o", "s")}
        crosses = [collection for collection in axes.collections if collection.get_label() == "exact"]
        assert ("exact" in labels) == (exact is not None) == bool(crosses)
        for collection in crosses:
            colours = {matplotlib.colors.to_hex(colour) for colour in collection.get_edgecolor()}
            colours |= {matplotlib.colors.to_hex(colour) for colour in collection.get_facecolor()}
            assert colours and not colours & groups, f"exact crosses {colours} in a group's colour {groups}"


# ---------------------------------------------------------------------------------------------
# The abstract's verdict follows each strategy

# Four stones a pit: the exact first-player scores in self-play are random 0.5353, greedy 2/3,
# heuristic 0 and alphabeta(depth=2) exactly 1/2 (engine.exact_outcome; checked below), so moving
# first helps two strategies, hurts one and does nothing to the fourth.
MIXED = """name = "mixed"
seed = 13
games_per_seat = 400
strategies = ["random", "greedy", "heuristic", "alphabeta(depth=2)"]

[rules]
stones_per_pit = 4

[games]
"random vs random" = 6000  # its seat effect, +0.035, needs them
"""


def test_the_verdict_on_the_first_seat_follows_each_strategy(tmp_path):
    four = engine.Rules(stones_per_pit=4)
    exact = {name: engine.exact_outcome(name, name, rules=four).first_player_score for name in ("greedy", "heuristic")}
    assert exact == {"greedy": pytest.approx(2 / 3), "heuristic": 0.0}
    (tmp_path / "mixed.toml").write_text(MIXED)
    assert main(["study", "run", str(tmp_path / "mixed.toml"), "--out", str(tmp_path / "study"), "--quiet", "--jobs", "1"]) == 0
    words = abstract(report_text(tmp_path / "study", tmp_path / "report"))
    assert (
        "**Moving first is a disadvantage for heuristic but an advantage for random and greedy; for alphabeta(depth=2) "
        "the games show no clear seat effect.**" in words
    )
    assert "(exact" not in words  # a study without exact outcomes: every figure sampled, with its interval
    assert re.search(r"random 0\.5\d\d \[0\.\d+, 0\.\d+\]", words)


# ---------------------------------------------------------------------------------------------
# Sentences: the ply cap, perfect play, a rule set without feeding

CAPPED = """name = "capped"
seed = 3
games_per_seat = 200
strategies = ["random", "perfect"]

[rules]
stones_per_pit = 3
ply_cap = 5
feeding = false

[variants.feeding_on]
rules = { feeding = true }
"""


def test_the_ply_cap_perfect_play_and_a_rule_set_without_feeding_read_as_sentences(tmp_path):
    (tmp_path / "capped.toml").write_text(CAPPED)
    assert main(["study", "run", str(tmp_path / "capped.toml"), "--out", str(tmp_path / "study"), "--quiet", "--jobs", "1"]) == 0
    text = report_text(tmp_path / "study", tmp_path / "report")
    games = scan_games(tmp_path / "study").collect()
    off = engine.Rules(stones_per_pit=3, ply_cap=5, feeding=False)
    default = games.filter(pl.col("rules") == off.name)
    ended = pl.sum_horizontal(*(pl.col(name) for name in engine.END_EVENTS)) > 0
    capped = default.filter((pl.col("plies") == 5) & ~ended).height  # stopped by the cap: no end event
    assert capped > 1
    assert f"{capped:,} games reached the cap of 5 plies and were stopped there." in abstract(text)
    assert "of the cap of" not in text
    value = engine.solve(off, progress=False).start_value()
    assert value < 0
    assert f"North (second) wins by {-value} stone{'s' if value != -1 else ''} with perfect play on both sides" in text
    assert "Value of the start for South:" not in text
    # without feeding: a turn facing an empty row is counted, never called feeding due, and the
    # events of the rule it lacks have no row (RULES.md: Rule events)
    assert "feeding due" not in text and "feeding is due" not in text
    assert re.search(
        r"(a player starts a turn facing an empty row in [0-9.]+% of games|no player ever starts a turn facing an empty row) "
        r"\(this rule set has no feeding rule",
        text,
    )
    assert set(engine.EVENTS) - set(engine.possible_events(off)) == {"feeding_forced", "feeding_lapsed"}
    events = {
        variant: [line for line in text.splitlines() if line.startswith(f"| {variant} | random v random |")]
        for variant in ("default", "feeding_on")
    }
    assert events["default"] and not any("feeding forced a move" in row or "feeding lapsed" in row for row in events["default"])
    assert any("feeding forced a move" in row for row in events["feeding_on"])
    assert any("opponent's row empty" in row for row in events["default"])
    assert f"feeding forced a move and feeding lapsed under {off.name}" in text


def test_an_event_a_rule_set_rules_out_never_fires():
    """engine.possible_events against the engine itself: in random games under every variant that
    rules an event out, that event never fires (and each rule set fires some of what it allows)."""
    base = engine.Rules(stones_per_pit=4)
    variants = [
        base.replace(feeding=False),
        base.replace(grand_slam="allowed"),
        base.replace(grand_slam="no_capture"),
        base.replace(first_move_forfeit=False),
        base.replace(capture_rows="opponent"),
        base.replace(capture_rows="own"),
        base.replace(min_stones_to_play=1, ply_cap=60),
    ]
    for rules in variants:
        possible = engine.possible_events(rules)
        assert len(possible) < len(engine.EVENTS), rules.name
        batch = engine.play_batch(2000, "random", "random", seed=1, rules=rules)
        totals = {name: int(np.sum(batch.events[name])) for name in engine.EVENTS}
        fired = {name for name, total in totals.items() if total}
        assert fired <= set(possible), f"{rules.name}: {sorted(fired - set(possible))} fired"
    assert engine.possible_events(engine.Rules()) == engine.EVENTS
