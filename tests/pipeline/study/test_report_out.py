"""``modiar study report DIR --out X`` loses nothing: it replaces only a folder holding a report
of ours (the .modiar-report marker), never the study's folder or a folder of other files; an
--out it cannot write is one line and exit status 2, with no staging folder left and the
previous report as it was. And a study whose games last 0 plies (no legal first move) gets a
report."""

from __future__ import annotations

import errno
import json
import os
import re
import shutil
import warnings
from pathlib import Path

import polars as pl
import pytest
from sealing import edit_sealed, payload
from study_configs import small_config

import engine
import pipeline.study.report
from pipeline.cli import main
from pipeline.runs.records import RecordError, read_study_manifest
from pipeline.study.report import MARKER, build_report, check_out

# With one stone per pit no move is legal: every game ends at ply 0.
ZERO = """name = "zero"
seed = 1
games_per_seat = 20
strategies = ["random"]

[rules]
stones_per_pit = 1
"""
ZERO_SWEEP = """name = "zerosweep"
seed = 2
games_per_seat = 10
strategies = ["random", "greedy"]

[rules]
stones_per_pit = 1

[variants.three]
rules = { stones_per_pit = 3 }
"""


@pytest.fixture(scope="module")
def zero(tmp_path_factory):
    """The zero-ply study and its report, built into a folder that already exists, empty."""
    folder = tmp_path_factory.mktemp("zero")
    study, report = _run(folder, ZERO), folder / "report"
    report.mkdir()
    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)  # e.g. an empty figure's legend
        assert main(["study", "report", str(study), "--out", str(report), "--quiet"]) == 0
    return study, report


def test_zero_ply_study_gets_a_report(zero):
    _, report = zero
    text = (report / "report.md").read_text(encoding="utf-8")
    ludii = next(line for line in text.splitlines() if line.startswith("| random | random | 0.5000"))
    assert ludii.split(" | ")[-3:] == ["n/a", "n/a", "0 |"]  # BranchingFactor, DecisionMoves: no ply to measure
    assert (report / "figures" / "end_events_by_ply.svg").exists()
    assert not (report / "figures" / "events_by_ply.svg").exists()  # no turn played: nothing to draw
    marker = payload(report / MARKER)
    assert (marker["study"], marker["engine_version"]) == ("zero", engine.ENGINE_VERSION)
    assert marker["files"] == sorted(
        str(path.relative_to(report)) for path in report.rglob("*") if path.is_file() and path.name != MARKER
    )


def test_zero_ply_variant_sweep_gets_a_report(tmp_path):
    study = _run(tmp_path, ZERO_SWEEP)
    assert main(["study", "report", str(study), "--out", str(tmp_path / "report"), "--quiet"]) == 0
    assert "| default | modiar-stones1 |" in (tmp_path / "report" / "report.md").read_text(encoding="utf-8")


def test_a_report_replaces_its_previous_report(zero, tmp_path):
    out = _copy_report(zero, tmp_path)
    (out / "tables" / "stale.csv").write_text("from an older report\n")  # which wrote, and listed, a table this one does not
    edit_sealed(out / MARKER, lambda marker: marker["files"].append("tables/stale.csv"))
    assert main(["study", "report", str(zero[0]), "--out", str(out), "--quiet"]) == 0
    assert (out / "index.html").exists() and not (out / "tables" / "stale.csv").exists()
    assert _leftovers(tmp_path) == []


def test_folder_of_other_files_is_refused(zero, tmp_path, capsys):
    thesis = tmp_path / "thesis"
    thesis.mkdir()
    (thesis / "thesis.tex").write_text("\\documentclass{article}\n")
    error = _refused(capsys, zero[0], thesis)
    assert f"{thesis} exists and is not a report of modiar" in error
    assert (thesis / "thesis.tex").read_text() == "\\documentclass{article}\n"
    assert _leftovers(tmp_path) == []


@pytest.mark.parametrize("where", ["study", "games", "inside", "parent"])
def test_the_study_folder_is_refused(zero, tmp_path, capsys, where):
    study = Path(shutil.copytree(zero[0], tmp_path / "study"))
    out = {"study": study, "games": study / "games", "inside": study / "report", "parent": tmp_path}[where]
    before = sorted(path.relative_to(tmp_path) for path in tmp_path.rglob("*"))
    assert "the study's folder" in _refused(capsys, study, out)
    assert sorted(path.relative_to(tmp_path) for path in tmp_path.rglob("*")) == before
    assert (study / "manifest.json").exists() and any((study / "games").iterdir())


def test_report_folder_holding_other_files_is_refused(zero, tmp_path, capsys):
    out = _copy_report(zero, tmp_path)
    (out / "notes.txt").write_text("my notes\n")
    (out / "figures" / "mine.svg.bak").write_text("<svg/>\n")
    error = _refused(capsys, zero[0], out)
    assert "holds files the report did not write (figures/mine.svg.bak, notes.txt)" in error
    assert (out / "notes.txt").exists() and (out / "index.html").exists()


def test_what_may_be_replaced(zero, tmp_path):
    study = zero[0]
    assert check_out(study, tmp_path / "new" / "report") == (tmp_path / "new" / "report").resolve()
    assert check_out(study, tmp_path) == tmp_path.resolve()  # empty
    report = _copy_report(zero, tmp_path)
    (report / "figures" / ".DS_Store").write_bytes(b"")  # what a file browser leaves
    assert check_out(study, report) == report.resolve()
    with pytest.raises(RecordError, match="the report's folder"):
        check_out(study, "")


def test_a_report_of_an_earlier_release_whose_marker_lists_no_files_is_refused(zero, tmp_path):
    """Reports of earlier versions say nothing of the files they wrote: a user's notes.png beside
    their figures cannot be told from a figure, so such a folder is never replaced."""
    out = _copy_report(zero, tmp_path)
    (out / MARKER).write_text(json.dumps({"study": "zero", "engine_version": engine.ENGINE_VERSION}) + "\n")
    with pytest.raises(RecordError, match="holds a report whose marker is damaged or of an earlier modiar"):
        check_out(zero[0], out)
    (out / MARKER).unlink()
    with pytest.raises(RecordError, match="is not a report of modiar"):
        check_out(zero[0], out)


def test_a_folder_that_only_looks_like_a_report_is_refused(zero, tmp_path):
    out = tmp_path / "looks"
    out.mkdir()
    (out / "index.html").write_text("<p>my page</p>")
    (out / MARKER).write_text("not JSON\n")
    with pytest.raises(RecordError, match="marker is damaged"):
        check_out(zero[0], out)


@pytest.mark.parametrize("kind", ["file", "fifo", "below_a_file", "empty"])
def test_out_that_is_not_a_folder_is_one_line(zero, tmp_path, capsys, kind):
    # A fifo stands for /dev/null: run as root, a regression would replace the machine's /dev/null.
    somefile, fifo = tmp_path / "somefile", tmp_path / "fifo"
    somefile.write_text("keep me\n")
    os.mkfifo(fifo)
    out = {"file": somefile, "fifo": fifo, "below_a_file": somefile / "report", "empty": ""}[kind]
    error = _refused(capsys, zero[0], out)
    assert str(out) in error or kind == "empty"
    assert somefile.read_text() == "keep me\n" and fifo.is_fifo()
    assert sorted(tmp_path.iterdir()) == [fifo, somefile]


def test_dev_null_is_refused(zero):
    with pytest.raises(RecordError, match=r"^/dev/null exists and is not a folder"):
        check_out(zero[0], "/dev/null")  # only the check: nothing is written, whatever it answers


def test_out_nobody_can_write_is_one_line(zero, capsys):
    # Even root cannot make a folder in /proc: a folder that cannot be written, whoever runs the tests.
    out = Path("/proc/modiar-report-test/report")
    assert f"cannot write the report to {out}: " in _refused(capsys, zero[0], out)
    assert not out.parent.exists()


def test_read_only_media_is_one_line(zero, tmp_path, monkeypatch, capsys):
    def read_only(self, *args, **kwargs):
        raise OSError(errno.EROFS, "Read-only file system", str(self))

    monkeypatch.setattr(Path, "mkdir", read_only)
    out = tmp_path / "deep" / "report"
    assert f"cannot write the report to {out}: Read-only file system" in _refused(capsys, zero[0], out)
    assert list(tmp_path.iterdir()) == []


def test_unwritable_parent_leaves_nothing(zero, tmp_path, capsys):
    if os.geteuid() == 0:
        pytest.skip("root writes through a mode of 0o500: test_out_nobody_can_write_is_one_line covers this")
    locked = tmp_path / "locked"
    locked.mkdir(mode=0o500)
    assert f"cannot write the report to {locked / 'report'}" in _refused(capsys, zero[0], locked / "report")
    assert list(locked.iterdir()) == []


def test_disk_full_keeps_the_previous_report(zero, tmp_path, monkeypatch):
    out = _copy_report(zero, tmp_path)
    before = {path: path.read_bytes() for path in out.rglob("*") if path.is_file()}

    def disk_full(*args, **kwargs):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(pl.DataFrame, "write_csv", disk_full)
    message = f"cannot write the report to {out}: No space left on device"
    with pytest.raises(RecordError, match=f"^{re.escape(message)}$"):
        build_report(zero[0], out, progress=False)
    assert {path: path.read_bytes() for path in out.rglob("*") if path.is_file()} == before
    assert _leftovers(tmp_path) == []


def test_failed_move_puts_the_previous_report_back(zero, tmp_path, monkeypatch):
    out = _copy_report(zero, tmp_path)
    before = {path: path.read_bytes() for path in out.rglob("*") if path.is_file()}
    rename = Path.rename

    def failing(self, target):
        if ".tmp-" in self.name:
            raise OSError(errno.EIO, "Input/output error")
        return rename(self, target)

    monkeypatch.setattr(Path, "rename", failing)
    with pytest.raises(RecordError, match="Input/output error"):
        build_report(zero[0], out, progress=False)
    assert {path: path.read_bytes() for path in out.rglob("*") if path.is_file()} == before
    assert _leftovers(tmp_path) == []


@pytest.mark.parametrize("name", ["../escaped", "", ".", "nested/escaped", 7])
def test_default_folder_stays_in_reports(zero, tmp_path, monkeypatch, capsys, name):
    # records.read_study_manifest checks the name too; this is the report's own check behind it.
    manifest = {**read_study_manifest(zero[0]), "study": name}
    monkeypatch.setattr(pipeline.study.report, "read_study_manifest", lambda directory: manifest)
    monkeypatch.setattr(pipeline.study.report, "REPORTS", tmp_path / "reports" / "all")
    assert main(["study", "report", str(zero[0]), "--quiet"]) == 2
    error = capsys.readouterr().err.strip()
    assert error.startswith(f"modiar: error: the study's name {name!r} cannot name a folder in ") and "\n" not in error
    assert list(tmp_path.iterdir()) == []


# ---------------------------------------------------------------------------------------------


def _run(folder: Path, config: str) -> Path:
    path = folder / "study.toml"
    path.write_text(config)
    assert main(["study", "run", str(path), "--out", str(folder / "study"), "--quiet", "--jobs", "1"]) == 0
    return folder / "study"


def _copy_report(zero: tuple[Path, Path], folder: Path) -> Path:
    return Path(shutil.copytree(zero[1], folder / "report"))


def _refused(capsys: pytest.CaptureFixture[str], study: Path, out: Path | str) -> str:
    """The one-line error of ``modiar study report STUDY --out OUT``, which must exit with 2."""
    assert main(["study", "report", str(study), "--out", str(out), "--quiet"]) == 2
    error = capsys.readouterr().err.strip()
    assert error.startswith("modiar: error:") and "\n" not in error, error
    return error


def _leftovers(folder: Path) -> list[Path]:
    """Staging (.X.tmp-PID) and replaced (.X.old-PID) folders a report left behind."""
    return [path for path in folder.rglob(".*") if ".tmp-" in path.name or ".old-" in path.name]


def test_the_report_of_an_unfinished_study_says_so_first(tmp_path):
    from pipeline.study.config import parse_study
    from pipeline.study.run import run_study

    config = small_config(games_per_seat=40, rules={})  # the default rules: 32 chunks of 5 games
    study = run_study(parse_study(config), tmp_path / "half", progress=False, stop_after=5)
    out = build_report(study, tmp_path / "report", progress=False)
    first = (out / "report.md").read_text(encoding="utf-8").split("\n\n")[1]
    assert first.startswith("**INCOMPLETE STUDY: 5 of 32 chunks done, 25 of 160 games; unfinished pairings: ")
    assert "<p><strong>INCOMPLETE STUDY: 5 of 32 chunks done" in (out / "index.html").read_text(encoding="utf-8")
