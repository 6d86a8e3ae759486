"""The published skill ladder (reports/ladder/, kept in git) cannot drift from the code: its files
are the ones its manifest lists, its figures were computed by this engine from the bundled config
(pipeline/studies/ladder.toml), its rungs and pairings are that config's, and a rung's exact
outcomes against perfect and perfect's exploitability are computed again here and must be the
published ones."""

from __future__ import annotations

import json

import polars as pl
import pytest
from locations import ROOT

import engine
from engine.players.search import solution
from pipeline.analysis.stats import points
from pipeline.exact.cache import is_wide
from pipeline.ladder.run import Ladder, load_ladder
from pipeline.report.folder import check_published

PUBLISHED = ROOT / "reports" / "ladder"
CONFIG = ROOT / "pipeline" / "studies" / "ladder.toml"


def bundled() -> Ladder:
    return load_ladder(CONFIG)


def test_the_published_ladder_is_its_manifest_and_the_engines():
    manifest = check_published(PUBLISHED)
    assert manifest["kind"] == "ladder"
    assert manifest["engine"] == engine.ENGINE_VERSION, "the engine changed: run make ladder again"


def test_the_published_ladder_is_the_bundled_configs():
    """The report is of pipeline/studies/ladder.toml as the code reads it: its rule set, its rungs
    in order and every pairing it asks for, each once."""
    ladder = bundled()
    manifest = check_published(PUBLISHED)
    assert manifest["config"] == json.loads(json.dumps(ladder.config())), "the config changed: run make ladder again"
    assert manifest["rules"] == ladder.rules.name
    rungs = pl.read_csv(PUBLISHED / "tables" / "rungs.csv")
    assert rungs["rung"].to_list() == list(ladder.rungs)
    pairings = pl.read_csv(PUBLISHED / "tables" / "pairings.csv")
    assert list(zip(pairings["south"], pairings["north"], strict=True)) == ladder.pairings()
    assert set(pairings["rules"]) == {ladder.rules.name}


def narrow_rung(ladder: Ladder) -> str:
    """The first rung that plays a few lines (not random nor a dial) and is not an opponent: its
    outcomes against perfect take about a second each."""
    return next(rung for rung in ladder.rungs if not is_wide(rung) and rung not in ladder.opponents)


@pytest.mark.slow  # perfect's policy table under RULES.md needs the solution: about 30 s on a cold test cache
def test_a_rungs_exact_outcomes_against_perfect_are_computed_again_the_same():
    ladder = bundled()
    rung = narrow_rung(ladder)
    pairings = pl.read_csv(PUBLISHED / "tables" / "pairings.csv")
    outcomes = {}
    for south, north in ((rung, "perfect"), ("perfect", rung)):
        outcome = engine.exact_outcome(south, north, rules=ladder.rules)
        published = pairings.filter((pl.col("south") == south) & (pl.col("north") == north)).row(0, named=True)
        assert published["first_player_score"] == outcome.first_player_score
        assert (published["south_win"], published["draw"], published["north_win"]) == (
            outcome.south_win,
            outcome.draw,
            outcome.north_win,
        )
        assert published["mean_plies"] == outcome.mean_plies
        assert {event: published[f"fires_{event}"] for event in engine.EVENTS} == outcome.event_fires
        outcomes[south, north] = outcome
    row = pl.read_csv(PUBLISHED / "tables" / "rungs.csv").filter(pl.col("rung") == rung).row(0, named=True)
    as_south, as_north = outcomes[rung, "perfect"], outcomes["perfect", rung]
    assert row["score_v_perfect_as_south"] == as_south.first_player_score
    assert row["score_v_perfect_as_north"] == pytest.approx(points(as_north.north_win, as_north.draw), rel=1e-12)


@pytest.mark.slow  # the solution of RULES.md: about 30 s on a cold test cache
def test_what_a_best_response_wins_against_perfect_is_the_solved_start_value():
    ladder = bundled()
    row = pl.read_csv(PUBLISHED / "tables" / "rungs.csv").filter(pl.col("rung") == "perfect").row(0, named=True)
    start = solution(ladder.rules).start_value()
    assert (row["exploitability_as_south"], row["exploitability_as_north"]) == (start, -start)
