"""The published search ladder (reports/search-ladder/, kept in git) cannot drift from the code:
its files are the ones its manifest lists, its games were played by this engine from the bundled
config (pipeline/studies/search.toml), its rungs and pairings are that config's, the exact players
it prints beside the searches are the engine's exact outcomes, and its first rung's self-play,
replayed from its seed, is the published row bit for bit."""

from __future__ import annotations

import json

import polars as pl
import pytest
from locations import ROOT

import engine
from pipeline.analysis.stats import points
from pipeline.exact.cache import is_wide
from pipeline.report.folder import check_published
from pipeline.search_ladder.run import SearchLadder, load_search_ladder, play_pairing

PUBLISHED = ROOT / "reports" / "search-ladder"
CONFIG = ROOT / "pipeline" / "studies" / "search.toml"


def bundled() -> SearchLadder:
    return load_search_ladder(CONFIG)


def test_the_published_search_ladder_is_its_manifest_and_the_engines():
    manifest = check_published(PUBLISHED)
    assert manifest["kind"] == "search-ladder"
    assert manifest["engine"] == engine.ENGINE_VERSION, "the engine changed: run make search-ladder again"


def test_the_published_search_ladder_is_the_bundled_configs():
    """The report is of pipeline/studies/search.toml as the code reads it: its rule set, seed and
    stopping rule, its rungs in order and every pairing it asks for, each once."""
    ladder = bundled()
    manifest = check_published(PUBLISHED)
    assert manifest["config"] == json.loads(json.dumps(ladder.config())), "the config changed: run make search-ladder again"
    assert manifest["rules"] == ladder.rules.name
    assert pl.read_csv(PUBLISHED / "tables" / "rungs.csv")["playouts"].to_list() == sorted(ladder.playouts)
    pairings = pl.read_csv(PUBLISHED / "tables" / "pairings.csv")
    assert list(zip(pairings["south"], pairings["north"], strict=True)) == ladder.pairings()
    assert manifest["games"] == pairings["games"].sum()


@pytest.mark.slow  # random's three exact outcomes under RULES.md: about 80 s, the narrow players' a second each
def test_the_exact_players_the_report_prints_are_the_engines():
    """Random's and every narrow player's (greedy, alphabeta) score against perfect over both seats
    and first-player score in self-play; perfect's dials, whose self-play takes minutes, are left
    to the skill ladder's own checks."""
    ladder = bundled()
    exact = pl.read_csv(PUBLISHED / "tables" / "exact_players.csv")
    assert "random" in exact["strategy"].to_list(), (
        "the report was drawn with no exact outcome of random in the cache folder: run make ladder, then make search-ladder"
    )
    report = (PUBLISHED / "report.md").read_text(encoding="utf-8")
    for row in exact.iter_rows(named=True):
        spec = row["strategy"]
        if spec != "random" and is_wide(spec):
            continue
        south = engine.exact_outcome(spec, "perfect", rules=ladder.rules)
        north = engine.exact_outcome("perfect", spec, rules=ladder.rules)
        itself = engine.exact_outcome(spec, spec, rules=ladder.rules)
        score = (points(south.south_win, south.draw) + points(north.north_win, north.draw)) / 2
        assert (row["score_v_perfect"], row["self_play_first_player_score"]) == (score, itself.first_player_score), spec
        assert f"| {spec} | {score:.4f} | {itself.first_player_score:.4f} |" in report


@pytest.mark.slow  # about 10,000 games of mcts(playouts=1) and their moves scored: 15-20 s, the solution's first
def test_the_first_rungs_self_play_replayed_from_its_seed_is_the_published_row():
    ladder = bundled()
    rung = ladder.rungs()[0]
    pairings = pl.read_csv(PUBLISHED / "tables" / "pairings.csv")
    published = pairings.filter((pl.col("south") == rung) & (pl.col("north") == rung)).row(0, named=True)
    assert play_pairing(ladder, rung, rung) == published
