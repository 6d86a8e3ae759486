"""Nothing silently wrong, nothing lost: every file the project reads back is bound to
what it holds (engine.store.integrity), every run's folder follows one protocol (pipeline.runs.runfolder).

Each test is one break once found, named after what broke; the rule sets
have 3 stones a pit, so that every table, solution and policy takes a fraction of a second.
"""

from __future__ import annotations

import errno
import json
import os
import random
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from polling import deadline
from sealing import edit_manifest, edit_sealed, payload
from study_configs import small_config

import engine
from engine import Rules
from engine.players.policy import policy_path
from engine.solver.solution import solution_path, solve
from engine.store.cache import write_atomic
from engine.store.integrity import DamagedFileError, read_arrays, read_json, write_arrays, write_json
from engine.tables.positions import build_tables, cache_path, load_tables
from pipeline.atlas.config import Atlas, load_atlas
from pipeline.atlas.report import build_atlas_report
from pipeline.atlas.rows import read_row
from pipeline.atlas.run import run_atlas
from pipeline.cli import main
from pipeline.exact.cache import cached_exact_outcome, exact_path, read_cached
from pipeline.ladder.run import parse_ladder, run_ladder
from pipeline.report.folder import write_marker
from pipeline.runs.lock import FolderBusyError, folder_lock
from pipeline.runs.paths import MANIFEST
from pipeline.study.config import parse_study
from pipeline.study.report import build_report
from pipeline.study.run import run_study
from pipeline.study.status import status
from pipeline.study.summary import summary

THREE = Rules(stones_per_pit=3)
THREE_SLAM = Rules(stones_per_pit=3, grand_slam="allowed")
FOUR = Rules(stones_per_pit=4)
ATLAS = """\
name = "tiny"
[grid]
stones_per_pit = [3]
ply_cap = [16]
grand_slam = ["prohibited", "allowed"]
"""
LADDER = {"name": "small", "rungs": ["random", "greedy"], "opponents": ["random"], "rules": {"stones_per_pit": 3, "ply_cap": 40}}


def one_line_error(capsys: pytest.CaptureFixture[str]) -> str:
    err = capsys.readouterr().err
    assert err.startswith("modiar: error: ") and err.count("\n") == 1, err
    return err


# ---------------------------------------------------------------------------------------------
# The seal itself


def test_a_sealed_file_reads_back_only_as_what_it_holds(tmp_path):
    arrays = {"a": np.arange(5, dtype=np.int32), "b": np.array("text")}
    write_arrays(tmp_path / "x.npz", arrays, {"kind": "test", "rules": "one"})
    found = read_arrays(tmp_path / "x.npz", {"kind": "test", "rules": "one"})
    assert found is not None and found["a"].tolist() == [0, 1, 2, 3, 4] and str(found["b"]) == "text"
    with pytest.raises(DamagedFileError, match="holds the test of rules one, not the test of rules two"):
        read_arrays(tmp_path / "x.npz", {"kind": "test", "rules": "two"})
    assert read_arrays(tmp_path / "missing.npz", {"kind": "test"}) is None
    write_json(tmp_path / "x.json", {"value": 1.5}, {"kind": "test"})
    assert read_json(tmp_path / "x.json", {"kind": "test"}) == {"value": 1.5}
    edit_sealed(tmp_path / "x.json", lambda content: content.update(value=2.5), reseal=False)
    with pytest.raises(DamagedFileError, match="fails its checksum"):
        read_json(tmp_path / "x.json", {"kind": "test"})


def test_every_single_bit_flip_of_a_sealed_file_is_caught(tmp_path):
    path = tmp_path / "x.npz"
    write_arrays(path, {"values": np.arange(40, dtype=np.int8)}, {"kind": "test"})
    data = path.read_bytes()
    for bit in random.Random(26).sample(range(len(data) * 8), 300):
        flipped = bytearray(data)
        flipped[bit // 8] ^= 1 << (bit % 8)
        path.write_bytes(bytes(flipped))
        try:
            found = read_arrays(path, {"kind": "test"})
        except DamagedFileError:
            continue
        assert found is not None and found["values"].tolist() == list(range(40)), f"bit {bit} changed a value silently"


# ---------------------------------------------------------------------------------------------
# Atlas rows/ files had no integrity check


@pytest.fixture(scope="module")
def tiny_atlas(tmp_path_factory: pytest.TempPathFactory) -> tuple[Atlas, Path]:
    folder = tmp_path_factory.mktemp("atlas")
    (folder / "tiny.toml").write_text(ATLAS)
    atlas = load_atlas(folder / "tiny.toml")
    run_atlas(atlas, folder / "reference", jobs=1, progress=False)
    return atlas, folder


def _atlas_copy(tiny_atlas: tuple[Atlas, Path], name: str) -> Path:
    return Path(shutil.copytree(tiny_atlas[1] / "reference", tiny_atlas[1] / name))


def test_an_edited_atlas_row_is_analysed_again_and_never_published(tiny_atlas, caplog):
    atlas, folder = tiny_atlas
    out = _atlas_copy(tiny_atlas, "edited")
    row = out / "rows" / f"{atlas.rule_sets()[0].name}.parquet"
    table = pq.read_table(row).to_pylist()
    table[0]["start_value"] = 99
    pq.write_table(pa.Table.from_pylist(table, schema=pq.read_schema(row)), row)
    run_atlas(atlas, out, jobs=1, progress=False)
    assert f"the row {row} is missing or does not match its record" in caplog.text
    assert (out / "atlas.parquet").read_bytes() == (folder / "reference" / "atlas.parquet").read_bytes()


def test_no_single_bit_flip_of_an_atlas_row_or_its_record_changes_a_value_silently(tiny_atlas, caplog):
    atlas, _ = tiny_atlas
    out = _atlas_copy(tiny_atlas, "flipped")
    rules = atlas.rule_sets()[1]
    reference = pq.read_table(out / "rows" / f"{rules.name}.parquet")
    for suffix in (".parquet", ".json"):
        path = out / "rows" / f"{rules.name}{suffix}"
        data = path.read_bytes()
        for bit in random.Random(suffix).sample(range(len(data) * 8), 200):
            flipped = bytearray(data)
            flipped[bit // 8] ^= 1 << (bit % 8)
            path.write_bytes(bytes(flipped))
            found = read_row(out, rules)
            assert found is None or found.table.equals(reference), f"bit {bit} of {path.name} changed the row silently"
        path.write_bytes(data)


def test_an_atlas_row_whose_record_is_lost_is_analysed_again_with_its_costs(tiny_atlas):
    atlas, folder = tiny_atlas
    out = _atlas_copy(tiny_atlas, "no-record")
    name = atlas.rule_sets()[0].name
    (out / "rows" / f"{name}.json").unlink()  # a kill between the row and its record
    (out / "rows" / f".{name}.json.tmp-999999999").write_text("{")  # and the temporary file it left
    run_atlas(atlas, out, jobs=1, progress=False)
    assert payload(out / MANIFEST)["costs"][name]["seconds"]["total"] > 0  # never null after a resume
    assert not list((out / "rows").glob(".*.tmp-*"))
    assert (out / "atlas.parquet").read_bytes() == (folder / "reference" / "atlas.parquet").read_bytes()


# ---------------------------------------------------------------------------------------------
# Cache files were not bound to what they hold


def test_position_tables_of_another_rule_set_copied_over_are_rebuilt(cache, caplog):
    load_tables(THREE), load_tables(THREE_SLAM)
    folder = cache / "tables"
    shutil.copy(cache_path(THREE_SLAM, folder), cache_path(THREE, folder))
    found = load_tables(THREE)
    assert f"holds the position tables of rules {THREE_SLAM.name}" in caplog.text
    expected = build_tables(THREE)
    assert all(np.array_equal(getattr(found, name), getattr(expected, name)) for name in ("child", "captured", "flags"))


def test_smaller_position_tables_copied_over_are_rebuilt_not_a_broadcast_traceback(cache, caplog, capsys):
    load_tables(THREE), load_tables(FOUR)
    folder = cache / "tables"
    shutil.copy(cache_path(THREE, folder), cache_path(FOUR, folder))
    assert main(["exact", "random", "greedy", "--rules", FOUR.name, "--quiet", "--cache", str(cache)]) == 0
    assert f"holds the position tables of rules {THREE.name}" in capsys.readouterr().err


def test_the_policy_table_of_greedy_copied_over_that_of_random_is_rebuilt(cache, capsys):
    command = ["exact", "random", "greedy", "--rules", THREE.name, "--json", "--quiet", "--cache", str(cache)]
    assert main(command) == 0
    before = json.loads(capsys.readouterr().out)
    folder = cache / "policies"
    shutil.copy(policy_path("greedy", THREE, folder), policy_path("random", THREE, folder))
    engine.release_caches()  # a new process: nothing kept in memory
    assert main(command) == 0
    captured = capsys.readouterr()
    assert "holds the policy table of rules modiar-stones3, values greedy" in captured.err
    after = json.loads(captured.out)
    assert {key: value for key, value in after.items() if key != "seconds"} == {
        key: value for key, value in before.items() if key != "seconds"
    }


def test_a_solution_of_another_cap_copied_over_is_solved_again(cache, caplog):
    short, long = THREE.replace(ply_cap=20), THREE.replace(ply_cap=40)
    solve(short), solve(long)
    folder = cache / "solutions"
    shutil.copy(solution_path(short, folder), solution_path(long, folder))
    assert solve(long).start_values.tolist() == solve(long, cache=None).start_values.tolist()
    assert "holds the solution of cap 20, rules modiar-stones3" in caplog.text


def test_an_exact_outcome_of_another_pairing_copied_over_is_computed_again(cache, caplog):
    cached_exact_outcome("random", "greedy", THREE), cached_exact_outcome("greedy", "random", THREE)
    folder = cache / "exact"
    shutil.copy(exact_path("greedy", "random", THREE, folder), exact_path("random", "greedy", THREE, folder))
    assert read_cached("random", "greedy", THREE) is None
    assert "computing the exact outcome again" in caplog.text


# ---------------------------------------------------------------------------------------------
# Ladder run had no folder lock


def test_a_second_ladder_run_into_a_folder_being_written_is_refused(tmp_path, cache):
    folder = tmp_path / "ladder"
    folder.mkdir()
    with folder_lock(folder, "modiar ladder run"), pytest.raises(FolderBusyError, match="another 'modiar ladder run'"):
        run_ladder(parse_ladder({**LADDER, "rungs": ["greedy"]}), folder, progress=False)
    assert [path.name for path in folder.iterdir()] == [".modiar.lock"]


# ---------------------------------------------------------------------------------------------
# Rewriting a report deleted the user's files that looked like a report's


def test_a_users_png_and_csv_inside_a_report_are_never_deleted(small_study_run, tmp_path, capsys):
    out = build_report(small_study_run, tmp_path / "report", progress=False)
    (out / "figures" / "notes.png").write_bytes(b"\x89PNG mine")
    (out / "tables" / "mine.csv").write_text("my,own\n")
    assert main(["study", "report", str(small_study_run), "--out", str(out), "--quiet"]) == 2
    assert "holds files the report did not write (figures/notes.png, tables/mine.csv)" in one_line_error(capsys)
    assert (out / "figures" / "notes.png").read_bytes() == b"\x89PNG mine" and (out / "tables" / "mine.csv").exists()


# ---------------------------------------------------------------------------------------------
# Ladder and atlas manifest names were used as report paths


def test_a_ladder_or_atlas_name_that_is_a_path_is_refused_before_any_report(tiny_atlas, tmp_path, cache, capsys):
    ladder = run_ladder(parse_ladder(LADDER), tmp_path / "ladder", progress=False)
    atlas = _atlas_copy(tiny_atlas, "named")
    for folder, key, name in ((ladder, "ladder", "/tmp/x"), (atlas, "atlas", "../../x")):
        edit_manifest(folder, lambda manifest, key=key, name=name: manifest.update({key: name}))
        assert main([key, "report", str(folder), "--quiet"]) == 2
        assert "is not a folder name" in one_line_error(capsys)
    assert not Path("/tmp/x").exists() and not (atlas.parent.parent / "x").exists()


def test_an_edited_manifest_is_refused_in_one_line(tiny_atlas, tmp_path, cache, capsys):
    ladder = run_ladder(parse_ladder(LADDER), tmp_path / "ladder", progress=False)
    edit_manifest(ladder, lambda manifest: manifest["config"].update(opponents=["greedy"]), reseal=False)
    assert main(["ladder", "report", str(ladder), "--quiet"]) == 2
    assert "manifest.json fails its checksum" in one_line_error(capsys)


# ---------------------------------------------------------------------------------------------
# A study killed during its exact phase was reported complete


def test_a_study_without_its_exact_outcomes_is_incomplete_in_status_summary_and_report(tmp_path, cache, monkeypatch, capsys):
    config = small_config(exact=True)
    monkeypatch.setattr("pipeline.study.run._record_exact", lambda run, manifest: (_ for _ in ()).throw(KeyboardInterrupt))
    with pytest.raises(KeyboardInterrupt):  # what a kill during the exact phase leaves
        run_study(parse_study(config), tmp_path / "study", progress=False)
    folder = tmp_path / "study"
    assert "(INCOMPLETE, exact outcomes missing)" in status(folder)
    assert "exact outcomes: INCOMPLETE, exact outcomes not computed yet" in status(folder)
    assert summary(folder).startswith("INCOMPLETE STUDY: exact outcomes not computed yet")
    report = build_report(folder, tmp_path / "report", progress=False)
    assert "**INCOMPLETE STUDY: exact outcomes not computed yet" in (report / "report.md").read_text(encoding="utf-8")


def test_a_missing_or_damaged_plies_file_is_flagged_by_report_and_summary_as_by_status(tmp_path, cache):
    folder = run_study(parse_study(small_config(keep_plies=True)), tmp_path / "study", progress=False)
    plies = sorted((folder / "plies").glob("*.parquet"))
    plies[0].unlink()
    plies[1].write_bytes(plies[1].read_bytes()[:-10])
    assert "INCOMPLETE, 1 chunk missing, 1 chunk damaged" in status(folder)
    assert summary(folder).startswith("INCOMPLETE STUDY: 26 of 28 chunks done")
    report = build_report(folder, tmp_path / "report", progress=False)
    assert "**INCOMPLETE STUDY: 26 of 28 chunks done" in (report / "report.md").read_text(encoding="utf-8")


# ---------------------------------------------------------------------------------------------
# The atlas report trusted the manifest's counts


def test_an_atlas_manifest_whose_grid_is_edited_is_refused(tiny_atlas, capsys):
    out = _atlas_copy(tiny_atlas, "regridded")
    edit_manifest(out, lambda manifest: manifest["config"]["grids"]["grid"].update(feeding=[True, False]), reseal=False)
    assert main(["atlas", "report", str(out), "--quiet"]) == 2
    assert "fails its checksum" in one_line_error(capsys)


def test_the_atlas_report_counts_its_rule_sets_from_its_rows_and_config(tiny_atlas, tmp_path):
    out = _atlas_copy(tiny_atlas, "counted")
    edit_manifest(out, lambda manifest: manifest.update(done=40, rule_sets=50))  # counts no reader should trust
    text = (build_atlas_report(out, tmp_path / "report", progress=False) / "report.md").read_text(encoding="utf-8")
    assert "the whole atlas" in text and "40 of" not in text


# ---------------------------------------------------------------------------------------------
# A FIFO in the cache where a table should be hung every command


def test_a_fifo_where_a_table_should_be_is_refused_unopened_and_rebuilt(cache, caplog):
    path = cache_path(THREE, cache / "tables")
    path.parent.mkdir(parents=True)
    os.mkfifo(path)
    with deadline(60):
        load_tables(THREE)
    assert f"{path} is a FIFO, not a regular file" in caplog.text
    assert path.is_file()  # the FIFO replaced by the tables


def test_a_fifo_in_a_study_folder_is_refused_unopened(small_study_run, tmp_path, capsys):
    folder = Path(shutil.copytree(small_study_run, tmp_path / "study"))
    chunk = sorted((folder / "games").glob("*.parquet"))[0]
    chunk.unlink()
    os.mkfifo(chunk)
    with deadline(60):
        assert "INCOMPLETE, 1 chunk damaged" in status(folder)
        assert f"damaged: {chunk} is a FIFO, not a regular file" in status(folder)
        assert main(["study", "summary", str(folder)]) == 2
    assert f"{chunk} is a FIFO, not a regular file" in one_line_error(capsys)
    (folder / MANIFEST).unlink()
    os.mkfifo(folder / MANIFEST)
    with deadline(60):
        assert main(["study", "status", str(folder)]) == 2
    assert "is a FIFO, not a regular file" in one_line_error(capsys)


# ---------------------------------------------------------------------------------------------
# Litter after kill -9


def test_staging_folders_of_a_killed_report_are_removed_by_the_next_report(small_study_run, tmp_path):
    pid = ended_pid()
    for suffix in ("tmp", "old"):  # a report's staging folder carries its marker from the start
        litter = tmp_path / f".report.{suffix}-{pid}"
        (litter / "figures").mkdir(parents=True)
        write_marker(litter, "report")
        (litter / "figures" / "a.png").write_bytes(b"x" * 1000)
    (tmp_path / f".report.old-{pid + 1}").mkdir()  # the empty folder a report replaced
    alive = tmp_path / f".report.tmp-{os.getpid()}-not-a-pid"
    alive.mkdir()
    build_report(small_study_run, tmp_path / "report", progress=False)
    assert sorted(path.name for path in tmp_path.iterdir()) == [alive.name, "report"]


@pytest.mark.parametrize("suffix", ["old", "tmp"])
def test_a_report_never_removes_a_users_folder_named_like_its_staging_folders(small_study_run, tmp_path, capsys, suffix):
    """A folder beside --out named as a report's staging folder, of a pid that no longer runs,
    but without a report's marker, is the user's: the report is written and keeps it."""
    mine = tmp_path / f".rep_s3.{suffix}-{ended_pid()}"
    mine.mkdir()
    (mine / "mine.txt").write_text("mine")
    code = main(["study", "report", str(small_study_run), "--out", str(tmp_path / "rep_s3"), "--quiet"])
    assert code == 0, capsys.readouterr().err
    assert (mine / "mine.txt").read_text() == "mine" and (tmp_path / "rep_s3" / "index.html").is_file()


@pytest.mark.parametrize("suffix", ["old", "tmp"])
def test_a_users_folder_named_as_this_reports_staging_folder_stops_it_in_one_line(small_study_run, tmp_path, capsys, suffix):
    """Named with the report's own pid, the user's folder is in the report's way: it is kept and
    the report refused in one line, the report already there kept too."""
    out = tmp_path / "rep_s3"
    assert main(["study", "report", str(small_study_run), "--out", str(out), "--quiet"]) == 0
    before = {path: path.read_bytes() for path in out.rglob("*") if path.is_file()}
    mine = tmp_path / f".rep_s3.{suffix}-{os.getpid()}"
    mine.mkdir()
    (mine / "mine.txt").write_text("mine")
    assert main(["study", "report", str(small_study_run), "--out", str(out), "--quiet"]) == 2
    error = capsys.readouterr().err
    assert error == f"modiar: error: {mine} is in the way of the report and is not a report of modiar's; move it away\n"
    assert (mine / "mine.txt").read_text() == "mine"
    assert {path: path.read_bytes() for path in out.rglob("*") if path.is_file()} == before


def ended_pid() -> int:
    """The pid of a process that has ended."""
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True, check=True)
    return int(dead.stdout)


def test_a_studys_temporary_files_are_cleared_at_the_next_run(small_study_run, tmp_path):
    folder = Path(shutil.copytree(small_study_run, tmp_path / "study"))
    edit_manifest(folder, lambda manifest: manifest["chunks"].pop("p000-c00000"))
    (folder / "games" / ".p000-c00000.parquet.tmp-999999999").write_bytes(b"PAR1")
    run_study(parse_study(small_config()), folder, progress=False)
    assert not list(folder.rglob(".*.tmp-*"))


# ---------------------------------------------------------------------------------------------
# Cache write errors named the temporary file


def test_a_write_error_names_the_file_not_its_temporary(tmp_path, monkeypatch):
    def read_only(source: object, target: object) -> None:
        raise OSError(errno.EROFS, "Read-only file system", str(source))

    monkeypatch.setattr(os, "replace", read_only)
    with pytest.raises(OSError) as error:
        write_atomic(tmp_path / "tables" / "x.npz", b"data")
    assert error.value.filename == str(tmp_path / "tables" / "x.npz") and ".tmp-" not in str(error.value)
    monkeypatch.undo()

    def full(handle: object) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    with pytest.raises(OSError) as error:
        write_atomic(tmp_path / "y.npz", full)
    assert error.value.filename == str(tmp_path / "y.npz") and not list(tmp_path.glob(".*"))


def test_a_file_where_the_tables_folder_should_be_is_named(tmp_path, cache, capsys):  # cache: restored after main sets one
    (tmp_path / "tables").write_text("not a folder")
    assert main(["solve", "--rules", THREE.name, "--cache", str(tmp_path)]) == 2
    assert f"{tmp_path / 'tables'}: a file stands where a folder should be" in one_line_error(capsys)


# ---------------------------------------------------------------------------------------------
# Folders of an earlier release


def test_an_unsealed_manifest_of_an_earlier_release_is_sealed_by_a_run_and_refused_by_readers(small_study_run, tmp_path, capsys):
    folder = Path(shutil.copytree(small_study_run, tmp_path / "study"))
    (folder / MANIFEST).write_text(json.dumps(payload(folder / MANIFEST), indent=1))  # as an earlier release wrote it
    assert main(["study", "status", str(folder)]) == 2
    assert "carries no checksum" in one_line_error(capsys)
    before = {path.name: path.read_bytes() for path in (folder / "games").iterdir()}
    run_study(parse_study(small_config()), folder, progress=False)
    assert {path.name: path.read_bytes() for path in (folder / "games").iterdir()} == before
    assert "(complete)" in status(folder)
