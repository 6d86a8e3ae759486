"""Exact outcomes in a study (exact = true or "self-play"): exact.parquet, its manifest entry and its cache."""

from __future__ import annotations

import hashlib
import json
import logging
import re
from pathlib import Path

import numpy as np
import polars as pl
import pytest

import engine
from pipeline.exact.cache import exact_folder
from pipeline.runs.config import ConfigError
from pipeline.runs.records import RecordError, read_study_manifest, scan_exact
from pipeline.study.config import parse_study
from pipeline.study.run import run_study
from pipeline.study.status import status

# Three stones a pit and a cap of 40 plies: tables, policies and exact outcomes in well under a second.
SMALL = {"stones_per_pit": 3, "ply_cap": 40}
CONFIG = {
    "name": "exact",
    "seed": 3,
    "games_per_seat": 40,
    "strategies": ["random", "greedy", "mcts(playouts=4)"],
    "rules": SMALL,
    "exact": True,
    "variants": {"four": {"rules": {"stones_per_pit": 4}, "strategies": ["random", "heuristic"]}},
}


def study(**changes):
    return parse_study({**CONFIG, **changes})


def exact_rows(folder: Path) -> pl.DataFrame:
    return scan_exact(folder).collect()


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def refuse_to_compute(monkeypatch):
    monkeypatch.setattr(engine, "exact_outcome", lambda *args, **kwargs: pytest.fail("computed an exact outcome again"))


def test_exact_parquet_holds_engine_exact_outcome_of_every_table_pairing_and_no_mcts(tmp_path, cache):
    folder = run_study(study(), tmp_path / "study", progress=False)
    rows = exact_rows(folder)
    expected = [(p.variant, p.south, p.north) for p in study().pairings() if "mcts" not in p.south + p.north]
    assert list(zip(rows["variant"], rows["south"], rows["north"], strict=True)) == expected
    assert len(expected) == 4 + 4
    for row in rows.iter_rows(named=True):
        rules = engine.Rules(**SMALL) if row["variant"] == "default" else engine.Rules(**SMALL).replace(stones_per_pit=4)
        outcome = engine.exact_outcome(row["south"], row["north"], rules=rules)
        assert row["rules"] == rules.name and row["engine_version"] == engine.ENGINE_VERSION
        for name in ("south_win", "draw", "north_win", "first_player_score", "mean_plies", "unresolved"):
            assert row[name] == getattr(outcome, name), name
        assert row["plies"] == outcome.plies.tolist()
        assert {entry["margin"]: entry["probability"] for entry in row["margin"]} == outcome.margin
        assert [entry["margin"] for entry in row["margin"]] == sorted(outcome.margin)
        for name in engine.EVENTS:
            assert row[f"fires_{name}"] == outcome.event_fires[name] and row[f"mean_{name}"] == outcome.event_mean[name]
    assert row["south_win"] + row["draw"] + row["north_win"] == pytest.approx(1, abs=1e-12)
    data = (folder / "exact.parquet").read_bytes()
    sha = hashlib.sha256(data).hexdigest()
    assert read_study_manifest(folder)["exact"] == {"file": "exact.parquet", "bytes": len(data), "sha256": sha, "rows": 8}


def test_self_play_lists_only_a_strategy_against_itself(tmp_path, cache):
    folder = run_study(study(exact="self-play"), tmp_path / "study", progress=False)
    rows = exact_rows(folder)
    pairs = list(zip(rows["variant"], rows["south"], rows["north"], strict=True))
    assert pairs == [
        ("default", "random", "random"),
        ("default", "greedy", "greedy"),
        ("four", "random", "random"),
        ("four", "heuristic", "heuristic"),
    ]
    assert read_study_manifest(folder)["config"]["exact"] == "self-play"


def test_a_study_without_exact_keeps_its_config_and_writes_no_exact_parquet(tmp_path):
    plain = study(exact=False)
    assert "exact" not in plain.as_dict() and plain.exact_pairings() == []
    assert "exact" not in parse_study({key: value for key, value in CONFIG.items() if key != "exact"}).as_dict()
    folder = run_study(parse_study({**CONFIG, "exact": False, "variants": {}}), tmp_path / "study", progress=False)
    assert not (folder / "exact.parquet").exists() and "exact" not in read_study_manifest(folder)
    with pytest.raises(RecordError, match="holds no exact outcomes"):
        scan_exact(folder)


@pytest.mark.parametrize("value", ["yes", "self_play", 1, 0, 1.0, [], {"all": True}])
def test_a_bad_exact_value_is_a_one_line_config_error(value):
    with pytest.raises(ConfigError, match=re.escape('exact must be true, false or "self-play", not')) as error:
        study(exact=value)
    assert "\n" not in str(error.value) and repr(value) in str(error.value)


def test_turning_exact_on_or_off_keeps_the_games_and_writes_or_drops_exact_parquet(tmp_path, cache):
    folder = run_study(study(exact=False), tmp_path / "study", progress=False)
    games = {path.name: digest(path) for path in (folder / "games").glob("*.parquet")}
    run_study(study(), folder, progress=False)
    assert {path.name: digest(path) for path in (folder / "games").glob("*.parquet")} == games
    assert exact_rows(folder).height == len(study().exact_pairings())
    assert read_study_manifest(folder)["config"]["exact"] is True
    run_study(study(exact="self-play"), folder, progress=False)
    assert exact_rows(folder).height == len(study(exact="self-play").exact_pairings())
    run_study(study(exact=False), folder, progress=False)
    assert not (folder / "exact.parquet").exists() and "exact" not in read_study_manifest(folder)
    assert {path.name: digest(path) for path in (folder / "games").glob("*.parquet")} == games
    with pytest.raises(RecordError, match=r"another config \(seed differs\)"):  # any other change is refused
        run_study(study(seed=4), folder, progress=False)


@pytest.mark.parametrize(
    "spoil",
    [
        lambda path: path.write_bytes(b"PAR1"),
        lambda path: path.write_bytes(path.read_bytes()[:-100]),
        lambda path: path.unlink(),
    ],
)
def test_a_spoilt_exact_parquet_is_detected_and_written_again_from_the_cache(tmp_path, cache, monkeypatch, spoil):
    folder = run_study(study(), tmp_path / "study", progress=False)
    before = digest(folder / "exact.parquet")
    spoil(folder / "exact.parquet")
    with pytest.raises(RecordError, match=r"exact\.parquet is missing or does not match its checksum") as error:
        scan_exact(folder)
    assert "\n" not in str(error.value)
    refuse_to_compute(monkeypatch)
    run_study(study(), folder, progress=False)
    assert digest(folder / "exact.parquet") == before and len(exact_rows(folder)) == 8


def test_one_and_two_jobs_write_the_same_bytes(tmp_path, cache):
    one = run_study(study(), tmp_path / "one", jobs=1, progress=False)
    (cache / "exact").rename(tmp_path / "first-exact")  # the second run computes them too, in two workers
    two = run_study(study(), tmp_path / "two", jobs=2, progress=False)
    assert (one / "exact.parquet").read_bytes() == (two / "exact.parquet").read_bytes()
    assert read_study_manifest(one)["exact"] == read_study_manifest(two)["exact"]
    assert {path.name: path.read_bytes() for path in (tmp_path / "first-exact").iterdir()} == {
        path.name: path.read_bytes() for path in (cache / "exact").iterdir()
    }


def test_a_second_study_takes_its_exact_outcomes_from_the_cache(tmp_path, cache, monkeypatch):
    first = run_study(study(), tmp_path / "first", progress=False)
    assert len(list((cache / "exact").glob("*.json"))) == 8 and exact_folder() == cache / "exact"
    written = {path: path.stat().st_mtime_ns for path in (cache / "exact").iterdir()}
    refuse_to_compute(monkeypatch)  # in this process: one job plays and computes here
    second = run_study(study(), tmp_path / "second", jobs=1, progress=False)
    assert (first / "exact.parquet").read_bytes() == (second / "exact.parquet").read_bytes()
    assert {path: path.stat().st_mtime_ns for path in (cache / "exact").iterdir()} == written


def test_a_damaged_cache_file_is_computed_again_with_a_warning(tmp_path, cache, caplog):
    first = run_study(study(exact="self-play"), tmp_path / "first", progress=False)
    files = sorted((cache / "exact").glob("*.json"))
    stored = json.loads(files[0].read_text())
    stored["payload"]["draw"] += 0.5  # a changed number: the checksum no longer matches
    files[0].write_text(json.dumps(stored))
    files[1].write_bytes(files[1].read_bytes()[:50])  # cut short: not JSON
    with caplog.at_level(logging.WARNING, logger="pipeline.exact.cache"):
        second = run_study(study(exact="self-play"), tmp_path / "second", progress=False)
    assert "fails its checksum" in caplog.text and "is unreadable" in caplog.text
    assert (first / "exact.parquet").read_bytes() == (second / "exact.parquet").read_bytes()
    assert json.loads(files[0].read_text())["payload"]["draw"] == stored["payload"]["draw"] - 0.5


def test_a_killed_run_leaves_no_exact_parquet_and_resumes_to_the_same_bytes(tmp_path, cache):
    whole = run_study(study(), tmp_path / "whole", progress=False)
    stopped = run_study(study(), tmp_path / "stopped", progress=False, stop_after=3)
    assert not (stopped / "exact.parquet").exists() and "exact" not in read_study_manifest(stopped)
    (stopped / ".exact.parquet.tmp-99").write_bytes(b"PAR1")  # a kill inside write_atomic
    run_study(study(), stopped, jobs=2, progress=False)
    assert not (stopped / ".exact.parquet.tmp-99").exists()
    assert (stopped / "exact.parquet").read_bytes() == (whole / "exact.parquet").read_bytes()
    assert read_study_manifest(stopped)["exact"] == read_study_manifest(whole)["exact"]


def test_a_finished_study_with_exact_outcomes_runs_again_without_writing(tmp_path, cache, monkeypatch):
    folder = run_study(study(), tmp_path / "study", progress=False)
    before = {path.name: path.stat().st_mtime_ns for path in folder.iterdir()}
    monkeypatch.setattr("pipeline.study.run.write_manifest", lambda *args: pytest.fail("wrote a finished study"))
    run_study(study(), folder, progress=False)
    assert {path.name: path.stat().st_mtime_ns for path in folder.iterdir()} == before


def test_the_exact_outcome_of_a_pairing_matches_its_games_roughly(tmp_path, cache):
    """Exact before estimated: the sampled first-player score of random self-play lies near the exact one."""
    folder = run_study(study(games_per_seat=4000, strategies=["random"], variants={}), tmp_path / "study", progress=False)
    games = pl.scan_parquet(sorted((folder / "games").glob("*.parquet"))).collect()
    score = float(np.mean((games["winner"] == "south").to_numpy() + 0.5 * (games["winner"] == "draw").to_numpy()))
    exact = exact_rows(folder)["first_player_score"][0]
    assert abs(score - exact) < 4 * np.sqrt(0.25 / len(games))


def test_status_says_whether_the_exact_outcomes_are_written(tmp_path, cache):
    folder = run_study(study(), tmp_path / "study", progress=False, stop_after=1)
    pairings = len(study().exact_pairings())
    missing = f"exact outcomes: INCOMPLETE, exact outcomes not computed yet (0 of {pairings} pairings in the cache folder"
    assert missing in status(folder)
    run_study(study(), folder, progress=False)
    assert f"exact outcomes: {pairings} pairings in exact.parquet, matching the manifest" in status(folder)
    (folder / "exact.parquet").unlink()
    assert (
        f"exact outcomes not computed yet ({pairings} of {pairings} pairings in the cache folder, none in exact.parquet)"
        in status(folder)
    )
    assert "exact outcomes" not in status(run_study(study(exact=False), tmp_path / "plain", progress=False))


def test_an_exact_parquet_swapped_in_from_another_study_is_damaged_not_not_computed(tmp_path, cache, capsys):
    folder = run_study(study(), tmp_path / "study", progress=False)
    other = run_study(study(seed=4, games_per_seat=20), tmp_path / "other", progress=False)
    (folder / "exact.parquet").write_bytes((other / "exact.parquet").read_bytes() + b"\n")
    text = status(folder)
    assert "exact outcomes: INCOMPLETE, exact outcomes unusable: exact.parquet does not match its checksum" in text
    assert "not computed yet" not in text and "(INCOMPLETE, exact outcomes damaged)" in text
    run_study(study(), folder, progress=False)
    assert "pairings in exact.parquet, matching the manifest" in status(folder)
