"""The notebooks of notebooks/: each runs without error on a small study, one whose study is
missing says in one line which make target builds it (and `make notebooks` runs the others),
and git's copies are stripped.

The studies are tiny (3 stones per pit: games of a few plies, a solution in well under a second),
so the three notebooks run in a few seconds each; the kernel inherits MODIAR_STUDY and
MODIAR_VARIANTS from the test's environment.
"""

from __future__ import annotations

from pathlib import Path

import nbformat
import polars as pl
import pytest
from nbclient import NotebookClient

from pipeline import notebooks
from pipeline.cli import main
from pipeline.notebooks import MissingStudyError, study_folder
from pipeline.runs.paths import ROOT
from pipeline.runs.records import read_study_manifest, scan_games
from pipeline.study.report import compute
from pipeline.study.status import exact_words

NOTEBOOKS = ROOT / "notebooks"
CELL_TIMEOUT = 120  # seconds per cell
KERNEL = "python3"

ONE_RULE_SET = """\
name = "notebooks"
seed = 7
games_per_seat = 200
strategies = ["random", "greedy", "perfect"]
exact = true

[rules]
stones_per_pit = 3
"""

VARIANTS = """\
name = "notebook-variants"
seed = 7
games_per_seat = 200
strategies = ["random", "greedy"]

[rules]
stones_per_pit = 3

[variants.feeding_off]
rules = { feeding = false }

[variants.stones4]
rules = { stones_per_pit = 4 }
strategies = ["random"]
"""


def run_study(folder: Path, config: str) -> Path:
    """Run the study of ``config`` into ``folder``/study; returns that folder."""
    path = folder / "study.toml"
    path.write_text(config, encoding="utf-8")
    out = folder / "study"
    assert main(["study", "run", str(path), "--out", str(out), "--quiet", "--jobs", "1"]) == 0
    return out


@pytest.fixture(scope="module")
def one_rule_set(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return run_study(tmp_path_factory.mktemp("one-rule-set"), ONE_RULE_SET)


@pytest.fixture(scope="module")
def variants(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return run_study(tmp_path_factory.mktemp("variants"), VARIANTS)


def execute(name: str) -> nbformat.NotebookNode:
    """Run a notebook of notebooks/ as `make notebooks` does (its folder as the working
    directory); a cell that raises fails the test with the cell's traceback."""
    notebook = nbformat.read(NOTEBOOKS / name, as_version=4)
    client = NotebookClient(notebook, timeout=CELL_TIMEOUT, kernel_name=KERNEL, resources={"metadata": {"path": str(NOTEBOOKS)}})
    client.execute()
    return notebook


def outputs(notebook: nbformat.NotebookNode) -> list[dict[str, object]]:
    return [output for cell in notebook.cells if cell.cell_type == "code" for output in cell.outputs]


def images(notebook: nbformat.NotebookNode) -> int:
    return sum("image/png" in output.get("data", {}) for output in outputs(notebook))


def test_explore_a_study(one_rule_set: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MODIAR_STUDY", str(one_rule_set))
    notebook = execute("01-explore-a-study.ipynb")
    assert images(notebook) >= 3  # the report's figures show inline
    # the report's own words and tables: where the exact outcomes stand, and the ratings' fit
    printed = "".join(str(output.get("text", "")) for output in outputs(notebook) if output.get("output_type") == "stream")
    assert exact_words(one_rule_set) in printed
    fit = compute(scan_games(one_rule_set), read_study_manifest(one_rule_set), per_ply=False, solutions={}).ratings_fit
    assert fit is not None
    for row in fit.filter(pl.col("model") == "per_strategy").iter_rows(named=True):
        assert f"{row['rules']}: the model " in printed and f"(dispersion {row['dispersion']:.1f})" in printed


def test_rule_variants(variants: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MODIAR_VARIANTS", str(variants))
    notebook = execute("03-rule-variants.ipynb")
    assert images(notebook) == 3  # the report's three variant figures


# ---------------------------------------------------------------------------------------------
# A missing study, and the runner of `make notebooks`


def test_a_missing_default_study_names_its_make_target(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("MODIAR_VARIANTS", raising=False)
    with pytest.raises(MissingStudyError) as raised:
        study_folder("MODIAR_VARIANTS", default="data/no-such-study", target="variants")
    assert str(raised.value) == (
        "no study in data/no-such-study: `make variants` builds it (or set MODIAR_VARIANTS to a study folder)"
    )


def test_a_missing_chosen_study_names_the_variable(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MODIAR_STUDY", str(tmp_path))  # a folder, but no manifest in it
    with pytest.raises(MissingStudyError) as raised:
        study_folder("MODIAR_STUDY", default="data/default", target="study")
    assert str(raised.value) == (
        f"no study in {tmp_path} (from MODIAR_STUDY): set MODIAR_STUDY to a study folder, "
        "or unset it to read data/default (`make study` builds it)"
    )
    assert raised.value._render_traceback_() == [str(raised.value)]  # what Jupyter shows: the line, no traceback


def test_a_study_folder_is_found(one_rule_set: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MODIAR_STUDY", str(one_rule_set))
    assert study_folder("MODIAR_STUDY", default="data/default", target="study") == one_rule_set


RUNNER_SET = ("03-rule-variants.ipynb", "02-perfect-play.ipynb")  # the missing study first: the next still runs


def test_the_runner_skips_a_notebook_whose_study_is_missing_and_runs_the_others(
    one_rule_set: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("MODIAR_STUDY", str(one_rule_set))
    monkeypatch.setenv("MODIAR_VARIANTS", str(tmp_path / "not-run"))
    out = tmp_path / "executed"
    assert notebooks.main(["--output-dir", str(out), *(str(NOTEBOOKS / name) for name in RUNNER_SET)]) == 0
    printed = capsys.readouterr().out.splitlines()
    assert printed[0] == (
        f"{NOTEBOOKS / '03-rule-variants.ipynb'}: skipped: no study in {tmp_path / 'not-run'} (from MODIAR_VARIANTS): "
        "set MODIAR_VARIANTS to a study folder, or unset it to read data/variants (`make variants` builds it)"
    )
    assert printed[1].startswith(f"{NOTEBOOKS / '02-perfect-play.ipynb'}: ran (")
    assert printed[2] == f"1 ran, 1 skipped, 0 failed; executed copies in {out}"
    # 02 itself, run as make notebooks runs it: its words and its figures
    perfect_play = nbformat.read(out / "02-perfect-play.ipynb", as_version=4)
    assert "value of the start under modiar-stones3" in "".join(str(output.get("text", "")) for output in outputs(perfect_play))
    assert images(perfect_play) >= 2  # the value against the cap, and the agreement figure


def test_the_runner_goes_on_after_a_failure_and_exits_1(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    for name, source in (("broken.ipynb", "1 / 0"), ("fine.ipynb", "print('fine')")):
        notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(source)])
        notebook.metadata["kernelspec"] = {"name": KERNEL, "display_name": "Python 3", "language": "python"}
        nbformat.write(notebook, tmp_path / name)
    out = tmp_path / "executed"
    assert notebooks.main(["--output-dir", str(out), str(tmp_path / "broken.ipynb"), str(tmp_path / "fine.ipynb")]) == 1
    printed = capsys.readouterr().out.splitlines()
    assert printed[0] == (
        f"{tmp_path / 'broken.ipynb'}: failed: ZeroDivisionError: division by zero (cell 0, traceback in {out / 'broken.ipynb'})"
    )
    assert printed[1].startswith(f"{tmp_path / 'fine.ipynb'}: ran (")
    assert printed[2] == f"1 ran, 0 skipped, 1 failed; executed copies in {out}"


def test_the_runner_never_writes_over_the_notebooks(capsys: pytest.CaptureFixture[str]) -> None:
    assert notebooks.main(["--output-dir", str(NOTEBOOKS), str(NOTEBOOKS / "01-explore-a-study.ipynb")]) == 2
    assert "holds the notebooks themselves" in capsys.readouterr().err


def committed_notebooks() -> list[Path]:
    return sorted(NOTEBOOKS.glob("*.ipynb"))


def test_there_are_notebooks() -> None:
    names = [path.name for path in committed_notebooks()]
    assert {"01-explore-a-study.ipynb", "02-perfect-play.ipynb", "03-rule-variants.ipynb"} <= set(names)


@pytest.mark.parametrize("path", committed_notebooks(), ids=lambda path: path.name)
def test_notebook_is_stripped(path: Path) -> None:
    """Git keeps notebooks without outputs: run them with `make notebooks` (into reports/notebooks/)."""
    notebook = nbformat.read(path, as_version=4)
    nbformat.validate(notebook)
    assert notebook.metadata.get("kernelspec", {}).get("name") == KERNEL
    assert "widgets" not in notebook.metadata, f"{path.name}: widget state in its metadata"
    for number, cell in enumerate(notebook.cells):
        where = f"{path.name}, cell {number}"
        assert "widgets" not in cell.metadata, f"{where}: widget state in its metadata"
        if cell.cell_type == "code":
            assert cell.outputs == [], f"{where} has outputs: strip them before committing"
            assert cell.execution_count is None, f"{where} has an execution count: strip it"
    assert notebook.cells[0].cell_type == "markdown", f"{path.name} should open with a markdown cell"
    assert "**Needs:**" in notebook.cells[0].source, f"{path.name} should say in its first cell what memory and time it needs"
