"""The atlas's game quality (pipeline.atlas.quality) and its report section
(pipeline.atlas.good_game) on a tiny atlas of 2- and 3-stone rule sets: one row a distinct game,
shared by every rule set that plays it and equal to engine.exact_quality of each, resumed, refused
when damaged or at odds with the atlas, and ranked and fronted as the report says."""

from __future__ import annotations

import dataclasses
import logging
import shutil
from pathlib import Path
from typing import Any

import polars as pl
import pytest
from joblib.externals.loky.process_executor import TerminatedWorkerError
from stand_ins import Clock, Greedy

import engine
import pipeline.atlas.quality
from pipeline.atlas.config import parse_atlas
from pipeline.atlas.effects import atlas_frame
from pipeline.atlas.good_game import best_games, drama_front, good_game_section, quality_columns
from pipeline.atlas.quality import (
    QUALITY_SPECS,
    distinct_games,
    measure_quality,
    plan_quality,
    quality_frame,
    quality_path,
    run_quality,
    write_quality_row,
)
from pipeline.atlas.report import build_atlas_report
from pipeline.atlas.run import run_atlas
from pipeline.exact.quality import cached_exact_quality
from pipeline.report.prose import percent
from pipeline.runs.records import RecordError

# Two stones a pit with and without the origin rule and feeding, and three stones at RULES.md's
# other rules. With two stones a pit no feed is ever forced, so modiar-stones2 and
# modiar-stones2-feedingoff play one game (their fingerprints are equal).
CONFIG = {
    "name": "tiny",
    "grid": {"stones_per_pit": [2], "sow_origin": [True, False], "feeding": [True, False]},
    "grids": {"stones": {"stones_per_pit": [2, 3]}},
}


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    directory = run_atlas(parse_atlas(CONFIG), tmp_path_factory.mktemp("atlas") / "tiny", jobs=1, progress=False)
    run_quality(directory, jobs=1, progress=False)
    return directory


def copied(folder: Path, tmp_path: Path) -> Path:
    copy = tmp_path / "tiny"
    shutil.copytree(folder, copy)
    return copy


def test_each_distinct_game_is_measured_once_and_read_for_every_rule_set_that_plays_it(folder: Path) -> None:
    frame = atlas_frame(folder)
    games = distinct_games(frame)
    assert len(games) < frame.height  # the tiny atlas has a game under two names
    measured = sorted(path.stem for path in (folder / "quality").glob("*.parquet"))
    assert measured == sorted(game.representative for game in games)
    quality = quality_frame(folder)
    assert sorted(quality["rules"].to_list()) == sorted(frame["rules"].to_list())
    fingerprints = dict(zip(frame["rules"].to_list(), frame["game_fingerprint"].to_list(), strict=True))
    for name, source in zip(quality["rules"].to_list(), quality["quality_from"].to_list(), strict=True):
        assert fingerprints[name] == fingerprints[source]


def test_a_shared_game_has_the_quality_its_own_rules_give(folder: Path) -> None:
    quality = quality_frame(folder)
    shared = quality.filter(pl.col("rules") != pl.col("quality_from"))
    assert shared.height
    for row in shared.iter_rows(named=True):
        rules = engine.Rules.from_name(row["rules"])
        for prefix, spec in QUALITY_SPECS.items():
            own = engine.exact_quality(spec, spec, rules=rules)
            for name, value in own.as_dict().items():
                assert row[f"{prefix}_{name}"] == pytest.approx(value, abs=1e-12), (row["rules"], prefix, name)
            assert row[f"{prefix}_quality_south_win"] == pytest.approx(own.south_win, abs=1e-12)


def test_the_random_outcome_is_the_atlas_own(folder: Path) -> None:
    joined = atlas_frame(folder).join(quality_frame(folder), on="rules")
    for name in ("south_win", "draw", "north_win"):
        assert (joined[f"random_quality_{name}"] - joined[f"random_{name}"]).abs().max() < 1e-12


def test_a_second_run_measures_nothing_and_a_damaged_row_is_measured_again(
    folder: Path, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    copy = copied(folder, tmp_path)
    assert run_quality(copy, jobs=1, progress=False) == []
    victim = sorted((copy / "quality").glob("*.parquet"))[0]
    before = quality_frame(copy)
    victim.write_bytes(victim.read_bytes()[:-7])
    with caplog.at_level(logging.WARNING):
        assert run_quality(copy, jobs=1, progress=False) == [victim.stem]
    assert "does not match its record" in caplog.text
    assert quality_frame(copy).equals(before)


def test_a_row_at_odds_with_the_atlas_outcome_is_measured_again(
    folder: Path, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    copy = copied(folder, tmp_path)
    game = distinct_games(atlas_frame(copy))[0]
    rules = engine.Rules.from_name(game.representative)
    row = measure_quality(rules, game.fingerprint)
    forged = row.row | {"random_quality_south_win": row.row["random_quality_south_win"] + 0.01}
    write_quality_row(copy, dataclasses.replace(row, row=forged))  # sealed as a sound one would be
    with caplog.at_level(logging.WARNING):
        assert game.representative not in quality_frame(copy)["quality_from"].to_list()
        assert run_quality(copy, jobs=1, progress=False) == [game.representative]
    assert "not the atlas's" in caplog.text


def test_a_run_whose_hours_are_up_measures_nothing_and_says_what_is_left(
    folder: Path, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    copy = copied(folder, tmp_path)
    for path in (copy / "quality").iterdir():
        path.unlink()
    with caplog.at_level(logging.WARNING):
        assert run_quality(copy, jobs=1, hours=1e-9, progress=False) == []
    assert f"{len(distinct_games(atlas_frame(copy)))} games left to measure" in caplog.text
    assert quality_frame(copy).height == 0


def test_no_game_starts_after_the_hours_even_when_joblib_took_it_before(
    folder: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """`--hours 1.5`, each game taking an hour and joblib taking every task at the start: the
    first two games are measured, the others are left for the next run."""
    copy = copied(folder, tmp_path)
    for path in (copy / "quality").iterdir():
        path.unlink()
    games = len(distinct_games(atlas_frame(copy)))
    assert games >= 3
    clock, write = Clock(), pipeline.atlas.quality.write_quality_row

    def written(directory: Path, row: Any) -> None:
        write(directory, row)
        clock.now += 3600

    monkeypatch.setattr(pipeline.atlas.quality, "time", clock)
    monkeypatch.setattr(pipeline.atlas.quality, "write_quality_row", written)
    monkeypatch.setattr(pipeline.atlas.quality, "Parallel", Greedy)
    with caplog.at_level(logging.WARNING):
        assert len(run_quality(copy, jobs=1, hours=1.5, progress=False)) == 2
    assert f"{games - 2} games left to measure" in caplog.text
    assert quality_frame(copy)["quality_from"].drop_nulls().n_unique() == 2


def test_two_workers_write_the_same_rows_as_one(folder: Path, tmp_path: Path) -> None:
    copy = copied(folder, tmp_path)
    for path in (copy / "quality").iterdir():
        path.unlink()
    run_quality(copy, jobs=2, progress=False)
    for path in sorted((folder / "quality").glob("*.parquet")):
        assert quality_path(copy, path.stem).read_bytes() == path.read_bytes()


def test_the_best_games_are_the_fair_rule_sets_most_dramatic_first(folder: Path) -> None:
    frame = quality_columns(atlas_frame(folder), quality_frame(folder))
    best = best_games(frame)
    fair = frame.filter(pl.col("start_value") == 0)["rules"].to_list()
    assert sorted(best["rules"].to_list()) == sorted(fair)
    comebacks = best["perfect_t1_comeback"].to_list()
    assert comebacks == sorted(comebacks, reverse=True)


def test_the_front_keeps_what_no_fairer_and_more_dramatic_rule_set_beats() -> None:
    # |start value| against the chance of a comeback: b is beaten by a (as fair, more dramatic),
    # d by c; e is decided at the cap and on no front; the rest trade fairness for drama.
    frame = pl.DataFrame(
        {
            "rules": ["a", "b", "c", "d", "e"],
            "quality_from": ["a", "b", "c", "d", "e"],
            "start_value": [0, 0, -2, 4, 0],
            "decided_by": ["play", "play", "play", "play", "cap"],
            "perfect_t1_comeback": [0.10, 0.05, 0.30, 0.20, 0.90],
            "random_lead_changes": [1.0, 1.0, 1.0, 1.0, 1.0],
        }
    ).with_columns(pl.col("start_value").abs().cast(pl.Float64).alias("unfairness"))
    front = drama_front(frame)
    assert dict(zip(front["rules"].to_list(), front["pareto"].to_list(), strict=True)) == {
        "a": True,
        "b": False,
        "c": True,
        "d": False,
    }


def test_the_report_says_how_good_a_game_is(folder: Path, tmp_path: Path) -> None:
    out = build_atlas_report(folder, tmp_path / "report", progress=False)
    text = (out / "report.md").read_text()
    assert "## Is it a good game? Drama across the grid" in text
    assert "all 4 distinct games of the atlas" in text
    assert "Game quality, exact for all 4 distinct games" in text  # the abstract's sentence
    for stem in ("atlas_map_random_lead_changes", "atlas_map_perfect_t1_comeback", "atlas_drama_front"):
        assert (out / "figures" / f"{stem}.svg").exists()
    best = pl.read_csv(out / "tables" / "best_games.csv")
    assert best["rules"].to_list() == best_games(quality_columns(atlas_frame(folder), quality_frame(folder)))["rules"].to_list()
    assert "random_lead_changes" not in pl.read_csv(out / "tables" / "atlas.csv").columns  # the atlas's own rows
    assert pl.read_csv(out / "tables" / "quality.csv")["rules"].sort().to_list() == sorted(atlas_frame(folder)["rules"])


def test_the_section_says_an_unfair_starts_comebacks_include_every_win_of_the_side_behind(folder: Path) -> None:
    """A reference rule set worth -2 has South behind from ply 0: the section says each South win
    (its share, from the quality row) is a comeback; worth 0, it says nothing of the kind."""
    frame = quality_columns(atlas_frame(folder), quality_frame(folder))
    reference = frame["rules"][0]
    wins = frame["perfect_t1_quality_south_win"][0]
    for value, said in ((-2, True), (0, False)):
        changed = frame.with_columns(
            pl.when(pl.col("rules") == reference).then(value).otherwise(pl.col("start_value")).alias("start_value")
        )
        text = " ".join(good_game_section(changed, 4, 4, reference).text)
        claim = f"South is behind from ply 0, so each game South wins ({percent(wins)} between"
        assert (claim in text) == said, value


def test_a_worker_killed_mid_run_ends_it_in_one_line_with_the_rows_done_kept(
    folder: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    copy = copied(folder, tmp_path)
    for path in (copy / "quality").iterdir():
        path.unlink()
    real = pipeline.atlas.quality._computed

    def killed_after_one(games, workers, until):  # as the system's OOM killer ends a loky worker
        yield next(iter(real(games, 1, until)))
        raise TerminatedWorkerError("killed")

    monkeypatch.setattr(pipeline.atlas.quality, "_computed", killed_after_one)
    with pytest.raises(RecordError, match=r"^a worker was killed by the system, most likely for lack of memory; the rows done"):
        run_quality(copy, jobs=2, progress=False)
    assert quality_frame(copy)["quality_from"].n_unique() == 1


def test_a_game_whose_qualities_the_cache_keeps_is_read_not_computed(
    folder: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    copy = copied(folder, tmp_path)
    kept = quality_frame(copy).filter(pl.col("rules") == "modiar-stones3")
    for path in (copy / "quality").glob("modiar-stones3.*"):
        path.unlink()
    rules = engine.Rules.from_name("modiar-stones3")
    for spec in QUALITY_SPECS.values():
        cached_exact_quality(spec, spec, rules)  # as a study of these rules leaves them

    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("computed again")

    monkeypatch.setattr(engine, "exact_quality", refuse)
    assert plan_quality(copy, 1).seconds == {"modiar-stones3": 1.0}
    assert run_quality(copy, jobs=1, progress=False) == ["modiar-stones3"]
    assert quality_frame(copy).filter(pl.col("rules") == "modiar-stones3").equals(kept)
