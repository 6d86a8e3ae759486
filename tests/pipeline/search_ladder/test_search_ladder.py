"""The search ladder (pipeline.search_ladder.run): mcts's rungs sampled to a stopping rule, scored by the solution."""

from __future__ import annotations

import json
import shutil

import numpy as np
import polars as pl
import pyarrow.parquet as pq
import pytest

import engine
from engine import Rules
from engine.game.rules import ROW
from engine.players.search import solution
from pipeline import estimates
from pipeline.analysis.stats import points
from pipeline.exact.cache import cached_exact_outcome
from pipeline.report.folder import check_published
from pipeline.runs.config import ConfigError
from pipeline.runs.records import RecordError
from pipeline.search_ladder.report import build_search_ladder_report
from pipeline.search_ladder.run import (
    CACHE_FOLDER,
    ROWS,
    SearchLadder,
    parse_search_ladder,
    play_pairing,
    run_search_ladder,
    strength_of,
)

SMALL = Rules(stones_per_pit=3)


def scalar_strength(south: str, north: str, rules: Rules, seeds: np.ndarray, sides: list[int]) -> tuple[int, int, float]:
    """The same measure from engine.play_game's positions and the solution's scalar move values."""
    moves = best = 0
    lost = 0.0
    for seed in seeds:
        seen: list[tuple[engine.Position, int]] = []
        keep = seen.append
        engine.play_game(south, north, rules=rules, seed=int(seed), on_move=lambda position, pit, k=keep: k((position, pit)))
        for position, pit in seen:
            if position.ply == 0 or position.mover not in sides:
                continue
            values = solution(rules).move_values(position.board, position.mover, position.ply)
            chosen = values[[option.pit + ROW * position.mover for option in position.options].index(pit)]
            moves, best, lost = moves + 1, best + (chosen == max(values)), lost + max(values) - chosen
    return moves, best, lost


@pytest.mark.parametrize(("south", "north", "sides"), [("mcts(playouts=3)", "random", [0]), ("greedy", "perfect", [0, 1])])
def test_the_strength_of_moves_is_the_solutions_move_by_move(south, north, sides):
    batch = engine.play_batch(150, south, north, rules=SMALL, seed=4)
    moves, best, lost = strength_of(batch, SMALL, sides)
    assert (int(moves), int(best), float(lost)) == scalar_strength(south, north, SMALL, batch.seeds, sides)
    assert moves > 100


def test_perfect_plays_only_perfect_moves():
    batch = engine.play_batch(200, "perfect", "random", rules=SMALL, seed=1)
    moves, best, lost = strength_of(batch, SMALL, [0])
    assert moves > 100 and best == moves and lost == 0


def ladder(**changes) -> SearchLadder:
    data = {"name": "tiny", "seed": 3, "playouts": [1, 4], "round_games": 200, "half_width": 0.05, "playout_budget": 1200}
    data.update(changes)
    data.setdefault("rules", {"stones_per_pit": 3})
    return parse_search_ladder(data)


def test_a_pairing_stops_at_the_width_asked_for_or_at_its_budget():
    precise = play_pairing(ladder(), "mcts(playouts=1)", "random")
    assert precise["stopped"] == "precision" and precise["games"] % 200 == 0
    assert (precise["first_player_high"] - precise["first_player_low"]) / 2 <= 0.05
    assert precise["south_wins"] + precise["draws"] + precise["north_wins"] == precise["games"]
    wide = play_pairing(ladder(half_width=0.001), "mcts(playouts=4)", "mcts(playouts=4)")
    assert wide["stopped"] == "budget" and wide["games"] == 1200 // 4


def test_the_same_config_gives_the_same_bytes_for_any_number_of_workers(tmp_path, cache):
    one = run_search_ladder(ladder(), tmp_path / "one", jobs=1)
    shutil.rmtree(cache / CACHE_FOLDER)  # played again, not read back
    two = run_search_ladder(ladder(), tmp_path / "two", jobs=2)
    assert (one / ROWS).read_bytes() == (two / ROWS).read_bytes()
    rows = pq.read_table(one / ROWS).to_pylist()
    assert [(row["south"], row["north"]) for row in rows][:3] == [
        ("mcts(playouts=1)", "mcts(playouts=1)"),
        ("mcts(playouts=1)", "perfect"),
        ("perfect", "mcts(playouts=1)"),
    ]
    report = build_search_ladder_report(one, tmp_path / "report", progress=False)
    assert (report / "figures" / "search_ladder.svg").exists() and (report / "tables" / "rungs.csv").exists()
    assert "Search ladder tiny" in (report / "index.html").read_text() and "| 4 | " in (report / "report.md").read_text()
    with pytest.raises(RecordError, match="choose an --out outside it"):  # the records are never written over
        build_search_ladder_report(one, one, progress=False)


def test_the_report_is_published_with_a_manifest_and_the_exact_players_the_cache_held(tmp_path, cache):
    """reports/search-ladder/ is kept in git like the atlas: its manifest.json says which config,
    seed and engine played it and which exact players it drew, and lists every file; the exact
    players' figures it prints are the engine's."""
    tiny = ladder(playouts=[1])
    run = run_search_ladder(tiny, tmp_path / "run", jobs=1)
    pairings = [("random", "perfect"), ("perfect", "random"), ("random", "random")]
    for pairing in pairings:  # random's outcomes in the cache folder, as the skill ladder leaves them
        cached_exact_outcome(*pairing, tiny.rules)
    out = build_search_ladder_report(run, tmp_path / "report", progress=False)
    manifest = check_published(out)
    assert (manifest["kind"], manifest["search_ladder"], manifest["rules"]) == ("search-ladder", "tiny", tiny.rules.name)
    assert manifest["engine"] == engine.ENGINE_VERSION
    assert manifest["config"] == json.loads(json.dumps(tiny.config()))
    assert manifest["games"] == sum(row["games"] for row in pq.read_table(run / ROWS).to_pylist())
    assert manifest["exact_players"] == ["random"]
    south, north, itself = (engine.exact_outcome(*pairing, rules=tiny.rules) for pairing in pairings)
    exact = pl.read_csv(out / "tables" / "exact_players.csv").row(0, named=True)
    assert exact["strategy"] == "random"
    score = (points(south.south_win, south.draw) + points(north.north_win, north.draw)) / 2
    assert (exact["score_v_perfect"], exact["self_play_first_player_score"]) == (score, itself.first_player_score)
    assert f"| random | {exact['score_v_perfect']:.4f} | {itself.first_player_score:.4f} |" in (out / "report.md").read_text()
    assert (
        f"engine version {engine.ENGINE_VERSION} under the rule set {tiny.rules.name}, seed 3" in (out / "index.html").read_text()
    )
    figure = out / "figures" / "search_ladder.svg"
    figure.write_bytes(figure.read_bytes() + b"<!-- edited -->")
    with pytest.raises(RecordError, match=r"search_ladder\.svg is not the file"):
        check_published(out)


def test_a_pairing_played_once_is_read_back_not_played_again(tmp_path, cache, monkeypatch):
    before = estimates.search_ladder(ladder(playouts=[1]), jobs=1)
    first = run_search_ladder(ladder(playouts=[1]), tmp_path / "first", jobs=1)
    assert len(list((cache / CACHE_FOLDER).glob("*.json"))) == 5  # self-play, two opponents in two seats
    after = estimates.search_ladder(ladder(playouts=[1]), jobs=1)
    assert "5 of 5 pairings" in before.work and "0 of 5 pairings" in after.work and after.seconds < before.seconds

    def unexpected(*args):
        raise AssertionError("played again")

    monkeypatch.setattr("pipeline.search_ladder.run.play_pairing", unexpected)
    again = run_search_ladder(ladder(playouts=[1]), tmp_path / "again", jobs=1)
    assert (first / ROWS).read_bytes() == (again / ROWS).read_bytes()
    with pytest.raises(AssertionError, match="played again"):  # another stopping rule is another row
        run_search_ladder(ladder(playouts=[1], round_games=100), tmp_path / "other", jobs=1)


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"playouts": [0]}, "playouts must be a whole number from 1"),
        ({"playouts": []}, "playouts must be a list"),
        ({"half_width": 0}, "half_width must be a number above 0"),
        ({"round_games": 2.5}, "round_games must be a whole number of games"),
        ({"opponents": ["minimax"]}, "minimax"),
        ({"seed": -1}, "seed must be a whole number"),
    ],
)
def test_a_bad_config_is_one_line_naming_the_key(changes, message):
    with pytest.raises(ConfigError, match=message) as error:
        ladder(**changes)
    assert "\n" not in str(error.value)
