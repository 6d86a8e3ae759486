"""Rows read back are checked for their own arithmetic (pipeline.runs.sanity), not only for their seal.

A row sealed again with figures that cannot be (105 games of 100, a chance above 1, a value
beyond the stones) is computed again where it is a cache, and refused in one line where it is a
published file. Every row the code writes passes: the published atlas, exact outcomes, pairings.
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from sealing import edit_manifest, edit_sealed
from study_configs import small_config

import engine
from pipeline.atlas.analyse import Analysis
from pipeline.atlas.config import atlas_of_manifest
from pipeline.atlas.rows import check_row, read_row, row_path, write_row
from pipeline.atlas.run import ATLAS, read_atlas, read_atlas_manifest
from pipeline.exact.cache import cached_exact_outcome, exact_folder
from pipeline.runs.paths import ROOT
from pipeline.runs.records import EXACT, RecordError, parquet_bytes, scan_exact
from pipeline.runs.sanity import InsaneRowError, check_exact_outcome, check_search_row
from pipeline.search_ladder.run import CACHE_FOLDER, ROWS, cached_pairing, parse_search_ladder, read_rows, run_search_ladder
from pipeline.study.config import parse_study
from pipeline.study.run import run_study

SMALL = engine.Rules(stones_per_pit=3)
PUBLISHED_ATLAS = ROOT / "data" / "atlas"


def tiny_ladder():
    return parse_search_ladder(
        {
            "name": "tiny",
            "seed": 3,
            "playouts": [1],
            "round_games": 100,
            "half_width": 0.05,
            "playout_budget": 300,
            "rules": {"stones_per_pit": 3},
        }
    )


def rewrite(path: Path, change: Callable[[dict[str, Any]], object], row: int = 0) -> bytes:
    """Change one row of a Parquet file, keeping its schema; the new bytes."""
    table = pq.read_table(path)
    rows = table.to_pylist()
    change(rows[row])
    data = parquet_bytes(pa.Table.from_pylist(rows, schema=table.schema))
    path.write_bytes(data)
    return data


def reseal_file(folder: Path, name: str, data: bytes) -> None:
    """The manifest's entry of ``name`` made to vouch for ``data``, as a forger would."""

    def change(manifest: dict[str, Any]) -> None:
        manifest["files"][name].update(bytes=len(data), sha256=hashlib.sha256(data).hexdigest())

    edit_manifest(folder, change)


# ---------------------------------------------------------------------------------------------
# What the code writes passes


def test_every_published_atlas_row_adds_up():
    atlas = atlas_of_manifest(read_atlas_manifest(PUBLISHED_ATLAS))
    rows = {row["rules"]: row for row in read_atlas(PUBLISHED_ATLAS).to_pylist()}
    assert len(rows) >= 150
    for rules in atlas.rule_sets():
        if rules.name in rows:
            check_row(rows[rules.name], rules)


@pytest.mark.parametrize(
    ("south", "north"), [("random", "random"), ("greedy", "perfect"), ("perfect(epsilon=0.3)", "alphabeta(depth=2)")]
)
@pytest.mark.parametrize("stones", [2, 3])
def test_every_exact_outcome_adds_up(south, north, stones):
    check_exact_outcome(engine.exact_outcome(south, north, rules=engine.Rules(stones_per_pit=stones)))


# ---------------------------------------------------------------------------------------------
# Each check refuses what cannot be


def a_search_row() -> dict[str, Any]:
    return {
        "south": "mcts(playouts=1)", "north": "random", "playouts": 1, "games": 100, "stopped": "budget",
        "south_wins": 50, "draws": 10, "north_wins": 40, "first_player_score": 0.55,
        "first_player_low": 0.45, "first_player_high": 0.65, "mean_plies": 30.0,
        "feeding_forced": 0.2, "grand_slam_blocked": 0.0, "searched_moves": 1000, "perfect_moves": 600, "loss_stones": 900.0,
    }  # fmt: skip


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"draws": 15}, "south_wins \\+ draws \\+ north_wins is 105, not its 100 games"),
        ({"south_wins": -1, "north_wins": 51}, "south_wins is -1"),
        ({"first_player_score": 0.6}, "first_player_score is 0.6, not its counts' 0.55"),
        ({"first_player_low": 0.6}, "first_player_low <= first_player_score <= first_player_high does not hold"),
        ({"feeding_forced": 1.5}, "feeding_forced is 1.5, outside \\[0, 1\\]"),
        ({"mean_plies": 401.0}, "mean_plies is 401.0, outside \\[0, 400\\]"),
        ({"perfect_moves": 1001}, "perfect_moves is 1001, not a whole number from 0 to 1000"),
        ({"games": 0, "south_wins": 0, "draws": 0, "north_wins": 0}, "games is 0, not a whole number from 1"),
        ({"stopped": "tired"}, "stopped is 'tired'"),
        ({"mean_plies": float("nan")}, "mean_plies is nan, not a finite number"),
    ],
)
def test_a_search_row_that_does_not_add_up_is_refused_naming_the_figure(change, message):
    check_search_row(a_search_row(), SMALL)
    with pytest.raises(InsaneRowError, match=message):
        check_search_row({**a_search_row(), **change}, SMALL)


def an_outcome(**changes: Any) -> engine.ExactOutcome:
    outcome = engine.exact_outcome("random", "greedy", rules=SMALL)
    return engine.ExactOutcome(**{**{name: getattr(outcome, name) for name in outcome.__dataclass_fields__}, **changes})


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda o: {"north_win": 1.2}, "north_win is 1.2, outside \\[0, 1\\]"),
        (lambda o: {"north_win": o.north_win - 0.25, "draw": o.draw + 0.5}, "is 1.25, not 1"),
        (lambda o: {"margin": {**o.margin, 50: 0.0}}, "a margin lies beyond the 18 stones"),
        (
            lambda o: {"margin": {-8: 1.0}, "north_win": 0.5, "south_win": 0.5},
            "the margins give South's wins a chance of 0, not 0.5",
        ),
        (lambda o: {"plies": o.plies * 0.5}, "its lengths' chances sum to 0.5"),
        (
            lambda o: {"event_mean": {**o.event_mean, "capture": 0.5}},
            "the expected count of capture is 0.5, below its chance of firing",
        ),
    ],
)
def test_an_exact_outcome_that_does_not_add_up_is_refused_naming_the_figure(change, message):
    with pytest.raises(InsaneRowError, match=message):
        check_exact_outcome(an_outcome(**change(an_outcome())))


# ---------------------------------------------------------------------------------------------
# A cache that does not add up is computed again; a published file is refused in one line


def test_a_cached_pairing_sealed_again_with_more_games_than_it_played_is_played_again(cache, caplog):
    ladder = tiny_ladder()
    played = cached_pairing(ladder, "mcts(playouts=1)", "random")
    (kept,) = (cache / CACHE_FOLDER).glob("*.json")
    edit_sealed(kept, lambda row: row.update(draws=row["draws"] + 5))
    with caplog.at_level(logging.WARNING):
        again = cached_pairing(ladder, "mcts(playouts=1)", "random")
    assert again == played
    assert "does not add up (south_wins + draws + north_wins is" in caplog.text


def test_a_search_ladder_row_sealed_again_with_105_of_100_games_is_refused_in_one_line(tmp_path, cache):
    folder = run_search_ladder(tiny_ladder(), tmp_path / "ladder", jobs=1, progress=False)
    read_rows(folder)
    data = rewrite(folder / ROWS, lambda row: row.update(draws=row["draws"] + row["games"] // 20))
    reseal_file(folder, ROWS, data)
    with pytest.raises(
        RecordError, match=r"search_ladder.parquet: the row of mcts\(playouts=1\) v mcts\(playouts=1\) does not add up"
    ) as error:
        read_rows(folder)
    assert "\n" not in str(error.value)


def test_a_cached_exact_outcome_sealed_again_with_a_chance_above_1_is_computed_again(cache, caplog):
    outcome = cached_exact_outcome("random", "greedy", SMALL)
    (kept,) = exact_folder().glob("*.json")  # type: ignore[union-attr]
    edit_sealed(kept, lambda payload: payload.update(north_win=1.2))
    with caplog.at_level(logging.WARNING):
        again = cached_exact_outcome("random", "greedy", SMALL)
    assert (again.south_win, again.draw, again.north_win, again.margin) == (
        outcome.south_win,
        outcome.draw,
        outcome.north_win,
        outcome.margin,
    )
    assert "does not add up (north_win is 1.2" in caplog.text


def test_a_study_exact_parquet_sealed_again_with_a_chance_above_1_is_refused_in_one_line(tmp_path, cache):
    config = small_config(exact=True, rules={"stones_per_pit": 3, "ply_cap": 40})
    folder = run_study(parse_study(config), tmp_path / "study", progress=False)
    scan_exact(folder)
    data = rewrite(folder / EXACT, lambda row: row.update(south_win=row["south_win"] + 0.5))
    edit_manifest(folder, lambda manifest: manifest["exact"].update(sha256=hashlib.sha256(data).hexdigest()))
    with pytest.raises(RecordError, match=r"exact.parquet: the outcome of random v random does not add up"):
        scan_exact(folder)


def test_an_atlas_row_sealed_again_with_a_value_beyond_the_stones_is_analysed_again(tmp_path, caplog):
    rules = atlas_of_manifest(read_atlas_manifest(PUBLISHED_ATLAS)).rule_sets()[0]
    folder = tmp_path / "atlas"
    (folder / "rows").mkdir(parents=True)
    for suffix in (".parquet", ".json"):
        row_path(folder, rules.name, suffix).write_bytes(row_path(PUBLISHED_ATLAS, rules.name, suffix).read_bytes())
    assert read_row(folder, rules) is not None
    row = pq.read_table(row_path(folder, rules.name)).to_pylist()[0]

    write_row(folder, Analysis(rules.name, {**row, "start_value": 99}))  # written and sealed as a worker would
    with caplog.at_level(logging.WARNING):
        assert read_row(folder, rules) is None
    assert f"start_value is 99, not a whole number from -{rules.total_stones}" in caplog.text


def test_a_published_atlas_sealed_again_with_a_chance_above_1_is_refused_in_one_line(tmp_path):
    folder = tmp_path / "atlas"
    folder.mkdir()
    for name in (ATLAS, "manifest.json"):
        (folder / name).write_bytes((PUBLISHED_ATLAS / name).read_bytes())
    data = rewrite(folder / ATLAS, lambda row: row.update(random_draw=1.5))
    reseal_file(folder, ATLAS, data)
    with pytest.raises(RecordError, match=r"atlas.parquet: the row of .* does not add up \(random_draw is 1.5"):
        read_atlas(folder)
