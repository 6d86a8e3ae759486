"""The atlas's report (pipeline.atlas.report) on a tiny atlas of 2- and 3-stone rule sets, computed
once for the module: its files, its main effects and its lists against the atlas's rows, and its
refusals."""

from __future__ import annotations

import shutil
from pathlib import Path
from statistics import mean
from typing import Any

import polars as pl
import pyarrow.parquet as pq
import pytest
from figure_formats import every_figure_format
from sealing import edit_manifest

from pipeline.atlas.analyse import schema
from pipeline.atlas.config import Atlas, parse_atlas
from pipeline.atlas.effects import (
    atlas_frame,
    changed_groups,
    config_order,
    fair_rule_sets,
    field_effects,
    first_player_wins,
    main_effects,
    map_block,
    map_grid,
    map_layout,
    rule_that_matters,
    stones_series,
    value_label,
    varying_fields,
)
from pipeline.atlas.maps import tradeoff_figure
from pipeline.atlas.report import build_atlas_report
from pipeline.atlas.rows import PEAK_MEASURE
from pipeline.atlas.run import read_atlas_manifest, run_atlas
from pipeline.atlas.verdicts import game_groups, verdict_counts, verdict_sentence
from pipeline.report.figures import FORMATS
from pipeline.runs.lock import folder_lock
from pipeline.runs.records import RecordError, parquet_bytes, sha256

# Two stones a pit: sowing into the origin pit or not decides who wins (0 against +10 under
# perfect play); the stones series adds 3 stones (-8) at RULES.md's other rules.
CONFIG = {
    "name": "tiny",
    "grid": {"stones_per_pit": [2], "sow_origin": [True, False], "feeding": [True, False]},
    "grids": {"stones": {"stones_per_pit": [2, 3]}},
    "parts": {"fed": {"feeding": [True]}},
}
TABLES = ("atlas", "fair", "first_player_wins", "main_effects", "field_effects", "stones", "costs", "verdicts")
MAPS = ("atlas_map_start_value", "atlas_map_random_first_player_score", "atlas_map_random_mean_plies")
FIGURES = (*MAPS, "atlas_stones", "atlas_effects", "atlas_tradeoff")


@pytest.fixture(scope="module")
def atlas() -> Atlas:
    return parse_atlas(CONFIG)


@pytest.fixture(scope="module")
def folder(atlas: Atlas, tmp_path_factory: pytest.TempPathFactory) -> Path:
    return run_atlas(atlas, tmp_path_factory.mktemp("atlas") / "tiny", jobs=1, progress=False)


@pytest.fixture(scope="module")
def report(folder: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    with every_figure_format():
        return build_atlas_report(folder, tmp_path_factory.mktemp("reports") / "tiny", progress=False)


@pytest.fixture(scope="module")
def rows(folder: Path) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = pq.read_table(folder / "atlas.parquet").to_pylist()
    return rows


def test_the_report_has_its_pages_tables_and_figures(report: Path) -> None:
    assert (report / "index.html").stat().st_size > 0
    assert "Which rule matters most" in (report / "report.md").read_text()
    for name in TABLES:
        assert (report / "tables" / f"{name}.csv").exists(), name
    for stem in FIGURES:
        for suffix in FORMATS:
            assert (report / "figures" / f"{stem}.{suffix}").stat().st_size > 0, f"{stem}.{suffix}"


def test_the_atlas_csv_has_every_rule_set_and_flat_best_moves(report: Path, rows: list[dict[str, Any]]) -> None:
    table = pl.read_csv(report / "tables" / "atlas.csv")
    assert table["rules"].to_list() == [row["rules"] for row in rows]
    assert table["best_first_moves"].cast(pl.String).to_list() == [" ".join(map(str, row["best_first_moves"])) for row in rows]


def test_the_map_block_is_the_grid_without_the_stones_series(folder: Path, rows: list[dict[str, Any]]) -> None:
    block = map_block(atlas_frame(folder))
    assert sorted(block["rules"].to_list()) == sorted(row["rules"] for row in rows if row["stones_per_pit"] == 2)
    assert varying_fields(block) == ["sow_origin", "feeding"]


def test_main_effects_are_the_means_over_each_value(folder: Path, rows: list[dict[str, Any]]) -> None:
    block = map_block(atlas_frame(folder))
    effects = main_effects(block, ["sow_origin", "feeding"])
    grid = [row for row in rows if row["stones_per_pit"] == 2]
    for field in ("sow_origin", "feeding"):
        for value in (True, False):
            expected = mean(row["start_value"] for row in grid if row[field] == value)
            found = effects.filter((pl.col("field") == field) & (pl.col("value") == value_label(field, value)))
            assert found["rule_sets"].item() == 2
            assert found["mean_start_value"].item() == pytest.approx(expected, abs=1e-12)


def test_field_effects_are_the_spread_of_the_means_largest_first(folder: Path, rows: list[dict[str, Any]]) -> None:
    block = map_block(atlas_frame(folder))
    spreads = field_effects(main_effects(block, ["sow_origin", "feeding"]), changed_groups(block, ["sow_origin", "feeding"]))
    grid = [row for row in rows if row["stones_per_pit"] == 2]
    by_origin = [mean(row["start_value"] for row in grid if row["sow_origin"] == value) for value in (True, False)]
    assert spreads["field"][0] == "sow_origin"
    assert spreads["effect_start_value"][0] == pytest.approx(max(by_origin) - min(by_origin))
    assert spreads["effect_start_value"].to_list() == sorted(spreads["effect_start_value"].to_list(), reverse=True)


def test_an_unfinished_grid_compares_each_field_within_complete_blocks(folder: Path, rows: list[dict[str, Any]]) -> None:
    # Without (origin off, feeding off), origin is compared where feeding is on only, and feeding
    # where origin is on only: the mean of "origin on" over both feeding values would mix in
    # feeding's own effect. Two rule sets that differ in both fields make no complete block.
    grid = [row for row in rows if row["stones_per_pit"] == 2]
    missing = next(row["rules"] for row in grid if not row["sow_origin"] and not row["feeding"])
    block = map_block(atlas_frame(folder)).filter(pl.col("rules") != missing)
    effects = main_effects(block, ["sow_origin", "feeding"])
    for field, other in (("sow_origin", "feeding"), ("feeding", "sow_origin")):
        for value in (True, False):
            found = effects.filter((pl.col("field") == field) & (pl.col("value") == value_label(field, value)))
            (alike,) = [row for row in grid if row[field] == value and row[other]]
            assert found["rule_sets"].item() == 1
            assert found["mean_start_value"].item() == alike["start_value"]
    apart = [row["rules"] for row in grid if row["sow_origin"] == row["feeding"]]  # both on, both off
    whole = map_block(atlas_frame(folder))
    both = whole.filter(pl.col("rules").is_in(apart))
    spreads = field_effects(main_effects(both, ["sow_origin", "feeding"]), changed_groups(both, ["sow_origin", "feeding"]))
    assert spreads["effect_start_value"].is_null().all()
    assert spreads["changed_start_value"].to_list() == [0, 0] and spreads["share_changed_start_value"].is_null().all()


def test_fair_and_first_player_lists_follow_the_start_value(folder: Path, rows: list[dict[str, Any]]) -> None:
    frame = atlas_frame(folder)
    assert fair_rule_sets(frame)["rules"].to_list() == [row["rules"] for row in rows if row["start_value"] == 0]
    assert first_player_wins(frame)["rules"].to_list() == [row["rules"] for row in rows if row["start_value"] > 0]
    assert fair_rule_sets(frame).height and first_player_wins(frame).height  # the tiny atlas has both


def test_the_map_puts_every_rule_set_in_one_cell(folder: Path) -> None:
    block = map_block(atlas_frame(folder))
    layout = map_layout(block)
    grid = map_grid(block, layout, "start_value")
    assert grid.size == block.height == 4
    assert sorted(grid.ravel().tolist()) == sorted(block["start_value"].cast(pl.Float64).to_list())


def test_the_stones_series_is_rules_md_at_each_stone_count(folder: Path) -> None:
    series = stones_series(atlas_frame(folder))
    assert series["rules"].to_list() == ["modiar-stones2", "modiar-stones3"]


def test_a_folder_without_a_manifest_is_one_line_error(tmp_path: Path) -> None:
    with pytest.raises(RecordError) as error:
        build_atlas_report(tmp_path, tmp_path.parent / f"{tmp_path.name}-report", progress=False)
    assert "manifest.json not found" in str(error.value)
    assert "\n" not in str(error.value)


def test_a_partial_atlas_still_reports(atlas: Atlas, folder: Path, tmp_path: Path) -> None:
    partial = tmp_path / "partial"
    (partial / "rows").mkdir(parents=True)
    shutil.copy(folder / "manifest.json", partial / "manifest.json")
    for path in (folder / "rows").iterdir():  # the finished rows of one part: nothing to compute
        if "feedingoff" not in path.name:
            shutil.copy(path, partial / "rows" / path.name)
    run_atlas(atlas, partial, part="fed", jobs=1, progress=False)
    out = build_atlas_report(partial, tmp_path / "report", progress=False)
    words = (out / "report.md").read_text()
    assert "3 of the atlas's 5 rule sets done so far" in words
    assert pl.read_csv(out / "tables" / "atlas.csv").height == 3

    def refuse_the_rest(manifest: dict[str, Any]) -> None:  # as a machine too small for them would
        missing = [rules.name for rules in atlas.rule_sets() if rules.name not in manifest["costs"]]
        manifest["refused"] = {name: f"refused {name}: too large here" for name in missing}

    edit_manifest(partial, refuse_the_rest)
    words = (build_atlas_report(partial, tmp_path / "refused", progress=False) / "report.md").read_text()
    assert "3 of the atlas's 5 rule sets, every one but the 2 refused for memory" in words
    assert "done so far" not in words


def test_values_come_in_the_configs_order(folder: Path) -> None:
    order = config_order(read_atlas_manifest(folder))
    assert order["sow_origin"] == [True, False]
    block = map_block(atlas_frame(folder)).sort("rules", descending=True)  # another order than the config's
    assert map_layout(block, order=order).rows + map_layout(block, order=order).columns == ((True,), (False,), (True,), (False,))
    assert main_effects(block, ["feeding"], order)["value"].to_list() == ["feeding on", "feeding off"]


# ---------------------------------------------------------------------------------------------
# Hard edges


@pytest.mark.parametrize(
    "costs",
    [
        {"seconds": "abc"},
        {"seconds": {"total": "abc", "solve": None, "tables": float("nan")}, "peak_bytes": "x", "host": 7},
        {"seconds": {"total": 10**400}, "peak_bytes": -1},
        "abc",
        [1, 2],
    ],
)
def test_malformed_atlas_costs_are_shown_as_unknown_not_a_crash(folder: Path, tmp_path: Path, costs: object) -> None:
    """{"seconds": "abc"} among the manifest's costs ended atlas report in an AttributeError."""
    edited = tmp_path / "edited"
    shutil.copytree(folder, edited)

    def spoil(manifest: dict[str, object]) -> None:  # sealed anew: a forged manifest the report must survive
        manifest["costs"] = dict.fromkeys(manifest["costs"], costs)  # type: ignore[call-overload]
        manifest["refused"], manifest["done"] = ["not", "a", "table"], "abc"

    edit_manifest(edited, spoil)
    out = build_atlas_report(edited, tmp_path / "report", progress=False)
    table = pl.read_csv(out / "tables" / "costs.csv")
    assert table["seconds"].null_count() == table.height and table["peak_gb"].null_count() == table.height
    assert "n/a" in (out / "report.md").read_text()


def test_each_peak_says_what_it_counts(folder: Path, tmp_path: Path) -> None:
    """A peak measured now counts the memory the system cannot take back (the solver's log is in
    files it can); an older record's does not say, and its row says so rather than pass for one."""
    edited = tmp_path / "edited"
    shutil.copytree(folder, edited)
    older = "modiar-stones3"

    def forget(manifest: dict[str, Any]) -> None:
        del manifest["costs"][older]["peak_measure"]

    edit_manifest(edited, forget)
    out = build_atlas_report(edited, tmp_path / "report", progress=False)
    table = pl.read_csv(out / "tables" / "costs.csv")
    measures = dict(zip(table["rules"], table["peak_measure"], strict=True))
    assert measures.pop(older) is None
    assert set(measures.values()) == {PEAK_MEASURE}
    assert "not said" in (out / "report.md").read_text()


def test_the_headline_says_no_rule_field_changes_the_start_value_when_every_effect_is_zero() -> None:
    """The headline bolded "the rule that matters most ... is compulsory feeding" for an
    effect of 0.00 stones."""
    spreads = pl.DataFrame(
        {
            "field": ["feeding", "grand_slam"],
            "values": ["feeding on, feeding off", "slam prohibited, slam allowed"],
            "blocks": [2, 2],
            "effect_start_value": [0.0, 0.0],
            "effect_random_first_player_score": [1e-12, 0.0],
            "effect_random_mean_plies": [0.5, 0.0],
        }
    )
    headline = rule_that_matters(spreads)
    assert headline.startswith("**No rule field the grid varies (compulsory feeding and grand slam) changes the start value")
    assert "matters most" not in headline and "nor the random first player's score" in headline
    moved = spreads.with_columns(pl.Series("effect_random_first_player_score", [0.0, 0.02]))
    assert "for random players it is grand slam (the first player's score differs by 0.020)" in rule_that_matters(moved)
    decided = spreads.with_columns(pl.Series("effect_start_value", [4.0, 0.0]))
    assert rule_that_matters(decided).startswith("**The rule that matters most to the first player's advantage is compulsory")
    assert "(from 2 groups of rule sets alike in every other field)" in rule_that_matters(decided)


def test_the_tradeoff_figure_draws_a_rule_set_without_feeding_hollow(folder: Path) -> None:
    """A rule set without feeding never forces a feed because it has no such rule: its marker in
    the feeding panel is hollow, not the colour of "never" (RULES.md: Rule events)."""
    frame = atlas_frame(folder)
    assert set(frame["feeding"].to_list()) == {True, False}
    feeding, slam = tradeoff_figure(frame, None).axes[:2]
    filled = [collection for collection in feeding.collections if collection.get_array() is not None]
    hollow = [
        collection for collection in feeding.collections if collection.get_array() is None and len(collection.get_offsets())
    ]
    assert sum(len(collection.get_offsets()) for collection in hollow) == frame.filter(~pl.col("feeding")).height
    assert sum(len(collection.get_offsets()) for collection in filled) == frame.filter("feeding").height
    assert all(len(collection.get_facecolor()) == 0 for collection in hollow)
    # every rule set bans grand slams here: the other panel is all filled
    assert not [c for c in slam.collections if c.get_array() is None and len(c.get_offsets())]


def started_only(folder: Path, copy: Path) -> bytes:
    """A copy of ``folder`` whose atlas.parquet and manifest are as a run writes them as it starts
    (no rule set done), beside every sealed row: what a run killed (kill -9) after its rows leaves."""
    shutil.copytree(folder, copy)
    empty = parquet_bytes(schema().empty_table())
    (copy / "atlas.parquet").write_bytes(empty)
    entry = {"atlas.parquet": {"bytes": len(empty), "sha256": sha256(empty)}}
    edit_manifest(copy, lambda manifest: manifest.update(done=0, costs={}, files=entry))
    return empty


def test_a_run_killed_after_its_rows_leaves_them_gathered_by_the_report_not_no_rule_set_done(
    folder: Path, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    killed = tmp_path / "killed"
    started_only(folder, killed)
    out = build_atlas_report(killed, tmp_path / "report", progress=False)
    assert f"atlas.parquet now holds all {len(read_atlas_manifest(folder)['costs'])}" in caplog.text
    assert (killed / "atlas.parquet").read_bytes() == (folder / "atlas.parquet").read_bytes()
    assert read_atlas_manifest(killed)["done"] == read_atlas_manifest(folder)["done"]
    assert "no rule set done" not in (out / "report.md").read_text()


def test_a_report_beside_a_running_atlas_says_so_and_writes_nothing_in_its_folder(
    folder: Path, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    running = tmp_path / "running"
    empty = started_only(folder, running)
    with folder_lock(running, "modiar atlas run"), pytest.raises(RecordError, match="has no rule set done yet"):
        build_atlas_report(running, tmp_path / "report", progress=False)
    assert "a run is writing" in caplog.text and (running / "atlas.parquet").read_bytes() == empty


def test_the_verdicts_are_counted_by_what_decides_them_in_rule_sets_and_distinct_games() -> None:
    # a and b are one game (the same fingerprint), fair by play; c is fair at the cap and lets a
    # player pass (singletons with RULES.md's sowing); d is won by the second player by play; e has no verdict yet.
    frame = pl.DataFrame(
        {
            "rules": ["a", "b", "c", "d", "e"],
            "start_value": [0, 0, 0, -2, 2],
            "decided_by": ["play", "play", "cap", "play", None],
            "remoteness": [20, 20, None, 24, None],
            "game_fingerprint": ["x", "x", "y", "z", None],
            "min_stones_to_play": [2, 2, 1, 2, 2],
            "sow_origin": [True, True, True, True, True],
            "ply_cap": [400] * 5,
            "value_cap_one_less": [0, 0, -2, -2, None],
            "value_cap_one_more": [0, 0, 0, -2, None],
        }
    )
    counts = {row["outcome"]: row for row in verdict_counts(frame).iter_rows(named=True)}
    assert {key: counts["fair"][key] for key in ("rule_sets", "by_play", "at_cap", "not_yet", "games")} == {
        "rule_sets": 3,
        "by_play": 2,
        "at_cap": 1,
        "not_yet": 0,
        "games": 2,
    }
    assert (counts["first"]["rule_sets"], counts["first"]["not_yet"], counts["first"]["games"]) == (1, 1, 0)
    assert (counts["all"]["rule_sets"], counts["all"]["games"], counts["all"]["games_by_play"]) == (5, 3, 2)
    groups = game_groups(frame)
    assert groups["names"].to_list() == ["a b"] and groups["rule_sets"].to_list() == [2]
    sentence = verdict_sentence(frame)
    assert "3 are fair: 2 by play (1 distinct game), 1 only at the 400-ply cap (1 game)" in sentence
    assert "1 of the 1 decided at the cap allow singletons" in sentence
    assert "1 rule set kept from an older run has no verdict yet" in sentence
    assert counts["fair"]["parity"] == 1 and "1 of the verdicts change with the cap's parity" in sentence


def test_the_report_counts_its_verdicts(report: Path) -> None:
    verdicts = pl.read_csv(report / "tables" / "verdicts.csv")
    every = verdicts.filter(pl.col("outcome") == "all").row(0, named=True)
    assert every["rule_sets"] == every["by_play"] + every["at_cap"] == 5 and every["not_yet"] == 0
    assert "Under perfect play" in (report / "report.md").read_text()
