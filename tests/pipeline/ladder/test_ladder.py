"""The skill ladder (pipeline.ladder.run, pipeline.ladder.report, ``modiar ladder``): its config, its
pairings, its files and their bytes, its cache, its report and its errors."""

from __future__ import annotations

import hashlib
import json

import polars as pl
import pytest
from figure_formats import every_figure_format
from sealing import edit_manifest
from sealing import manifest as sealed_manifest

import engine
from engine.players.search import solution
from pipeline.cli import main
from pipeline.ladder.report import build_ladder_report, ladder_tables
from pipeline.ladder.run import EXPLOITABILITY, OUTCOMES, Ladder, load_ladder, parse_ladder, run_ladder
from pipeline.report.folder import check_published
from pipeline.runs.config import ConfigError
from pipeline.runs.paths import MANIFEST, STUDIES, bundled_ladders, bundled_studies
from pipeline.runs.records import RecordError
from pipeline.study.config import load_study

# Three stones a pit and a cap of 40 plies: every table and exact outcome in well under a second.
SMALL = {"stones_per_pit": 3, "ply_cap": 40}
RUNGS = ["random", "alphabeta(depth=1)", "alphabeta(depth=2)", "perfect(epsilon=0.2)", "perfect"]
CONFIG = {"name": "small", "rungs": RUNGS, "rules": SMALL}


def ladder(**changes: object) -> Ladder:
    return parse_ladder({**CONFIG, **changes})


def digest(path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_each_rung_meets_itself_and_each_opponent_in_both_seats_each_pairing_once():
    pairings = ladder().pairings()
    assert len(pairings) == len(set(pairings))
    for rung in RUNGS:
        for pairing in ((rung, rung), (rung, "perfect"), ("perfect", rung), (rung, "random"), ("random", rung)):
            assert pairing in pairings
    # 5 rungs: 5 self-play, and rung v opponent in both seats for the 3 rungs that are not an opponent,
    # plus random and perfect against each other in both seats.
    assert len(pairings) == 5 + 3 * 4 + 2


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"rungs": ["random", "mcts(playouts=10)"]}, "mcts(playouts=10) has no policy table"),
        ({"opponents": ["nonsense"]}, "nonsense"),
        ({"rungs": []}, "rungs must be a non-empty list"),
        ({"name": "a/b"}, "cannot be a folder name"),
        ({"rules": {"stones": 3}}, "unknown rule 'stones'"),
        ({"games_per_seat": 10}, "unknown key 'games_per_seat'"),
    ],
)
def test_a_wrong_config_is_refused_with_a_line_naming_the_problem(changes, message):
    with pytest.raises(ConfigError, match=message.replace("(", r"\(").replace(")", r"\)")):
        ladder(**changes)


def test_the_bundled_ladder_climbs_from_random_to_perfect_through_every_alphabeta_depth():
    bundled = load_ladder(STUDIES / "ladder.toml")
    assert bundled.rungs[0] == "random" and bundled.rungs[-1] == "perfect"
    assert [f"alphabeta(depth={depth})" for depth in range(1, 17)] == [rung for rung in bundled.rungs if "alphabeta" in rung]
    assert any("epsilon" in rung for rung in bundled.rungs) and any("temperature" in rung for rung in bundled.rungs)
    assert bundled.opponents == ("perfect", "random")
    assert bundled_ladders() == ["ladder"] and "ladder" not in bundled_studies()
    with pytest.raises(ConfigError, match="ladder is a bundled ladder, not a study: modiar ladder run ladder"):
        load_study(STUDIES / "ladder.toml")


def test_the_ladder_holds_the_exact_outcome_of_every_pairing_and_the_exploitability_of_every_rung(tmp_path, cache):
    small = ladder()
    folder = run_ladder(small, tmp_path / "ladder", progress=False)
    outcomes = pl.read_parquet(folder / OUTCOMES)
    assert list(zip(outcomes["south"], outcomes["north"], strict=True)) == small.pairings()
    for row in outcomes.iter_rows(named=True):
        exact = engine.exact_outcome(row["south"], row["north"], rules=small.rules)
        assert row["first_player_score"] == exact.first_player_score
        assert row["mean_plies"] == exact.mean_plies
        assert row["fires_feeding_forced"] == exact.event_fires["feeding_forced"]
    exploits = pl.read_parquet(folder / EXPLOITABILITY)
    assert exploits["strategy"].to_list() == RUNGS
    perfect = exploits.filter(pl.col("strategy") == "perfect").row(0, named=True)
    start = solution(small.rules).start_value()  # what a best response wins against perfect: the solved value
    assert (perfect["as_south"], perfect["as_north"]) == (start, -start)
    manifest = sealed_manifest(folder)
    assert manifest["config"]["rungs"] == RUNGS
    assert manifest["files"][OUTCOMES]["sha256"] == digest(folder / OUTCOMES)


def test_the_same_config_gives_the_same_bytes_with_one_or_two_jobs_and_a_second_run_reads_the_cache(tmp_path, cache, monkeypatch):
    small = ladder()
    one = run_ladder(small, tmp_path / "one", jobs=1, progress=False)
    monkeypatch.setattr(engine, "exact_outcome", lambda *args, **kwargs: pytest.fail("computed an exact outcome again"))
    monkeypatch.setattr(engine, "exploitability", lambda *args, **kwargs: pytest.fail("computed an exploitability again"))
    two = run_ladder(small, tmp_path / "two", jobs=2, progress=False)
    for name in (OUTCOMES, EXPLOITABILITY, MANIFEST):
        assert digest(one / name) == digest(two / name), name


def test_a_damaged_cache_file_is_computed_again_with_a_warning(tmp_path, cache, caplog):
    small = ladder(rungs=["alphabeta(depth=1)"])
    first = run_ladder(small, tmp_path / "first", progress=False)
    for path in (cache / "exact").glob("*exploit-alphabeta*"):
        path.write_text(path.read_text().replace('"as_south": ', '"as_south": 1'))
    second = run_ladder(small, tmp_path / "second", progress=False)
    assert "fails its checksum" in caplog.text
    assert digest(first / EXPLOITABILITY) == digest(second / EXPLOITABILITY)


def test_a_folder_of_another_ladder_or_of_other_files_is_refused_and_left_as_it_was(tmp_path, cache):
    folder = run_ladder(ladder(rungs=["random"]), tmp_path / "ladder", progress=False)
    before = digest(folder / OUTCOMES)
    assert run_ladder(ladder(rungs=["random"]), folder, progress=False) == folder  # its own ladder runs again
    assert digest(folder / OUTCOMES) == before
    with pytest.raises(RecordError, match="holds the ladder of another config"):
        run_ladder(ladder(rungs=["alphabeta(depth=1)"]), folder, progress=False)
    assert digest(folder / OUTCOMES) == before
    (tmp_path / "notes").mkdir()
    (tmp_path / "notes" / "mine.txt").write_text("mine")
    with pytest.raises(RecordError, match="holds no ladder"):
        run_ladder(ladder(), tmp_path / "notes", progress=False)


def test_the_rung_table_reads_each_rungs_score_in_both_seats(tmp_path, cache):
    small = ladder()
    folder = run_ladder(small, tmp_path / "ladder", progress=False)
    rungs, _ = ladder_tables(folder)
    assert rungs["rung"].to_list() == RUNGS
    row = rungs.filter(pl.col("rung") == "alphabeta(depth=2)").row(0, named=True)
    as_north = engine.exact_outcome("random", "alphabeta(depth=2)", rules=small.rules)
    assert row["score_v_random_as_north"] == pytest.approx(as_north.north_win + as_north.draw / 2, abs=1e-15)
    perfect = rungs.filter(pl.col("rung") == "perfect").row(0, named=True)
    assert perfect["score_v_perfect_as_south"] + perfect["score_v_perfect_as_north"] == pytest.approx(1.0)


def test_the_report_draws_every_figure_and_writes_its_tables(tmp_path, cache):
    folder = run_ladder(ladder(), tmp_path / "ladder", progress=False)
    with every_figure_format():
        out = build_ladder_report(folder, tmp_path / "report", progress=False)
    page = (out / "index.html").read_text()
    assert "Skill ladder: small" in page and "<svg" in page
    for stem in ("ladder_first_player", "ladder_scores", "ladder_length", "ladder_events", "ladder_exploitability"):
        for suffix in ("svg", "pdf", "png"):
            assert (out / "figures" / f"{stem}.{suffix}").stat().st_size > 0
    rungs = pl.read_csv(out / "tables" / "rungs.csv")
    assert rungs["rung"].to_list() == RUNGS
    (folder / OUTCOMES).write_bytes(b"not parquet")
    with pytest.raises(RecordError, match="does not match its checksum"):
        build_ladder_report(folder, tmp_path / "report", progress=False)
    assert (out / "index.html").read_text() == page  # the report that was there is kept


def test_the_command_line_runs_and_reports_a_ladder_and_refuses_a_bad_one_in_one_line(tmp_path, cache, capsys):
    config = tmp_path / "small.toml"
    config.write_text('name = "small"\nrungs = ["random", "greedy"]\n[rules]\nstones_per_pit = 3\nply_cap = 40\n')
    out = tmp_path / "ladder"
    assert main(["ladder", "run", str(config), "--out", str(out), "--jobs", "1", "--quiet", "--cache", str(cache)]) == 0
    assert main(["ladder", "report", str(out), "--out", str(tmp_path / "report"), "--quiet"]) == 0
    assert (tmp_path / "report" / "index.html").exists()
    capsys.readouterr()
    config.write_text('name = "small"\nrungs = ["mcts(playouts=5)"]\n')
    assert main(["ladder", "run", str(config), "--out", str(tmp_path / "other"), "--quiet"]) == 2
    error = capsys.readouterr().err
    assert error.count("\n") == 1 and "mcts(playouts=5) has no policy table" in error
    assert main(["ladder", "report", str(tmp_path / "nowhere"), "--quiet"]) == 2
    assert "not found" in capsys.readouterr().err


def test_the_report_is_published_with_a_manifest_of_what_made_it_and_every_files_sha256(tmp_path, cache):
    """reports/ladder/ is kept in git like the atlas: its manifest.json says which ladder, config
    and engine made it and lists every file, so that a changed file is caught."""
    small = ladder()
    folder = run_ladder(small, tmp_path / "ladder", progress=False)
    out = build_ladder_report(folder, tmp_path / "report", progress=False)
    manifest = check_published(out)
    assert (manifest["kind"], manifest["ladder"], manifest["rules"]) == ("ladder", "small", small.rules.name)
    assert manifest["engine"] == engine.ENGINE_VERSION
    assert manifest["config"] == json.loads(json.dumps(small.config()))
    assert manifest["records"] == {name: digest(folder / name) for name in (OUTCOMES, EXPLOITABILITY)}
    written = {str(path.relative_to(out)) for path in out.rglob("*") if path.is_file()}
    assert set(manifest["files"]) == written - {"manifest.json", ".modiar-report"}
    assert f"engine version {engine.ENGINE_VERSION} under the rule set {small.rules.name}" in (out / "index.html").read_text()
    rungs = out / "tables" / "rungs.csv"
    rungs.write_text(rungs.read_text().replace("perfect", "perfekt"))
    with pytest.raises(RecordError, match=r"rungs\.csv is not the file .*manifest\.json lists"):
        check_published(out)


def test_a_published_report_names_the_engine_that_computed_its_figures_not_the_one_that_drew_them(tmp_path, cache):
    folder = run_ladder(ladder(rungs=["random"]), tmp_path / "ladder", progress=False)
    edit_manifest(folder, lambda manifest: manifest["versions"].update(engine="0"))  # a run of an older engine
    out = build_ladder_report(folder, tmp_path / "report", progress=False)
    assert check_published(out)["engine"] == "0"


# ---------------------------------------------------------------------------------------------
# Hard edges


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"rungs": "random"}, "rungs must be a non-empty list of spec strings"),
        ({"opponents": []}, "opponents must be a non-empty list of spec strings"),
        ({"rungs": ["random", " random"]}, "strategy 'random' is listed twice in rungs"),
        ({"opponents": ["greedy", "greedy"]}, "strategy 'greedy' is listed twice in opponents"),
        ({"opponents": ["nonsense"]}, "opponents: unknown strategy 'nonsense'"),
        ({"opponents": ["mcts"]}, "opponents: mcts(playouts=400) has no policy table"),
    ],
)
def test_a_ladder_config_error_names_rungs_or_opponents_not_strategies(changes, message):
    with pytest.raises(ConfigError) as error:
        ladder(**changes)
    assert message in str(error.value) and "strategies" not in str(error.value).split(":")[0]


def test_ladder_report_of_a_manifest_whose_config_lists_a_rung_without_rows_is_one_line(tmp_path, cache, capsys):
    """A rung in the manifest's config whose rows are not in the files ended in
    KeyError: ('greedy', 'greedy')."""
    folder = run_ladder(ladder(rungs=["random"], opponents=["random"]), tmp_path / "ladder", progress=False)
    edit_manifest(folder, lambda manifest: manifest["config"].update(rungs=["random", "greedy"]))  # sealed anew: a forgery
    with pytest.raises(RecordError, match=r"has no row for greedy v greedy, which the config in manifest\.json lists"):
        ladder_tables(folder)
    assert main(["ladder", "report", str(folder), "--out", str(tmp_path / "report"), "--quiet"]) == 2
    error = capsys.readouterr().err
    assert error.startswith("modiar: error: ") and error.count("\n") == 1
    assert not (tmp_path / "report").exists()
    edit_manifest(folder, lambda manifest: manifest["config"].update(rungs="random"))
    assert main(["ladder", "report", str(folder), "--out", str(tmp_path / "report"), "--quiet"]) == 2
    assert "config's rungs is not a list of strategy specs" in capsys.readouterr().err
