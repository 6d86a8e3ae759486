"""The notebooks of notebooks/: each runs without error and without a warning on a small study
(04 on the published atlas and fairness search, kept in git), one whose study is missing says
in one line which make target builds it (and `make notebooks` runs the others), the READMEs say
which target each needs, and git's copies are stripped.

The studies are tiny (3 stones per pit: games of a few plies, a solution in well under a second),
so the study notebooks run in a few seconds each; the kernel inherits MODIAR_STUDY and
MODIAR_VARIANTS from the test's environment.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import nbformat
import polars as pl
import pytest
from nbclient import NotebookClient

from pipeline import notebooks
from pipeline.atlas.effects import atlas_frame
from pipeline.atlas.quality import distinct_games, quality_frame
from pipeline.atlas.verdicts import verdict_sentence
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


def printed(notebook: nbformat.NotebookNode, stream: str = "stdout") -> str:
    """What the notebook's cells printed on ``stream``; a warning (a DeprecationWarning of the
    code a notebook runs, say) is printed on stderr."""
    return "".join(
        str(output.get("text", ""))
        for output in outputs(notebook)
        if output.get("output_type") == "stream" and output.get("name") == stream
    )


def test_explore_a_study(one_rule_set: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MODIAR_STUDY", str(one_rule_set))
    notebook = execute("01-explore-a-study.ipynb")
    assert images(notebook) >= 3  # the report's figures show inline
    # the report's own words and tables: where the exact outcomes stand, and the ratings' fit
    said = printed(notebook)
    assert exact_words(one_rule_set) in said
    fit = compute(scan_games(one_rule_set), read_study_manifest(one_rule_set), per_ply=False, solutions={}).ratings_fit
    assert fit is not None
    for row in fit.filter(pl.col("model") == "per_strategy").iter_rows(named=True):
        assert f"{row['rules']}: the model " in said and f"(dispersion {row['dispersion']:.1f})" in said
    assert printed(notebook, "stderr") == ""


def test_rule_variants(variants: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MODIAR_VARIANTS", str(variants))
    notebook = execute("03-rule-variants.ipynb")
    assert images(notebook) == 3  # the report's three variant figures
    assert printed(notebook, "stderr") == ""


def test_game_quality(one_rule_set: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """05: the exact quality of self-play, the forecast by ply, the judged moves and one game's
    value history, on the study's games, without a warning."""
    monkeypatch.setenv("MODIAR_STUDY", str(one_rule_set))
    notebook = execute("05-game-quality.ipynb")
    assert images(notebook) == 2  # the forecast by ply and the value history
    assert printed(notebook, "stderr") == ""


ATLAS = ROOT / "data" / "atlas"
FAIR = ROOT / "reports" / "fair" / "modiar-exact-within-1"


def test_published_atlas(monkeypatch: pytest.MonkeyPatch) -> None:
    """04 needs no study: it reads the atlas and the fairness search kept in git, says what the
    atlas report says of its verdicts, and draws the report's figures."""
    monkeypatch.delenv("MODIAR_ATLAS", raising=False)
    monkeypatch.delenv("MODIAR_FAIR", raising=False)
    notebook = execute("04-published-atlas.ipynb")
    said = printed(notebook)
    assert verdict_sentence(atlas_frame(ATLAS)) in said
    quality = quality_frame(ATLAS)
    games = len(distinct_games(atlas_frame(ATLAS)))
    assert f"{quality['quality_from'].n_unique()} of {games} distinct games measured ({quality.height} rule sets)" in said
    starts = pl.read_csv(FAIR / "tables" / "starts.csv").filter(
        (pl.col("value") == 0) & pl.col("random_first_player_score").is_not_null()
    )
    score = starts["random_first_player_score"]
    assert (
        f"from the {starts.height} fair starts one stone away: the first player scores {score.min():.3f} to {score.max():.3f}"
        in said
    )
    # the atlas's map, stones series, field effects and trade-off, the drama front once a game's
    # quality is kept, then the fair report's figures
    drama = 1 if quality.height else 0
    assert images(notebook) == 4 + drama + len(list((FAIR / "figures").glob("*.png")))
    assert printed(notebook, "stderr") == ""


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


def test_a_missing_atlas_says_atlas(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("MODIAR_ATLAS", raising=False)
    with pytest.raises(MissingStudyError) as raised:
        study_folder("MODIAR_ATLAS", default="data/no-such-atlas", target="atlas", kind="atlas")
    assert str(raised.value) == "no atlas in data/no-such-atlas: `make atlas` builds it (or set MODIAR_ATLAS to an atlas folder)"


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
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == (
        f"{NOTEBOOKS / '03-rule-variants.ipynb'}: skipped: no study in {tmp_path / 'not-run'} (from MODIAR_VARIANTS): "
        "set MODIAR_VARIANTS to a study folder, or unset it to read data/variants (`make variants` builds it)"
    )
    assert lines[1].startswith(f"{NOTEBOOKS / '02-perfect-play.ipynb'}: ran (")
    assert lines[2] == f"1 ran, 1 skipped, 0 failed; executed copies in {out}"
    # 02 itself, run as make notebooks runs it: its words and its figures, and no warning
    perfect_play = nbformat.read(out / "02-perfect-play.ipynb", as_version=4)
    assert "value of the start under modiar-stones3" in printed(perfect_play)
    assert images(perfect_play) >= 2  # the value against the cap, and the agreement figure
    assert printed(perfect_play, "stderr") == ""


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
    assert {"01-explore-a-study.ipynb", "02-perfect-play.ipynb", "03-rule-variants.ipynb", "04-published-atlas.ipynb"} <= set(
        names
    )


FOLDER_CALL = re.compile(r'study_folder\(\s*"(\w+)",\s*default="([^"]+)",\s*target="([\w-]+)"')


def folders_read(path: Path) -> list[tuple[str, str, str]]:
    """Each folder the notebook reads: its variable, its default and the make target that builds it."""
    notebook = nbformat.read(path, as_version=4)
    return [found for cell in notebook.cells if cell.cell_type == "code" for found in FOLDER_CALL.findall(cell.source)]


@pytest.mark.parametrize("path", committed_notebooks(), ids=lambda path: path.name)
def test_notebooks_readme_says_what_each_notebook_reads_and_which_target_builds_it(path: Path) -> None:
    folders = folders_read(path)
    assert folders, f"{path.name} finds no folder with study_folder"
    rows = [
        line
        for line in (NOTEBOOKS / "README.md").read_text(encoding="utf-8").splitlines()
        if line.startswith(f"| `{path.name}` |")
    ]
    assert len(rows) == 1, f"notebooks/README.md has no row for {path.name}"
    named = [f"`{variable}`" for variable, _, _ in folders] + [f"`{default}`" for _, default, _ in folders]
    missing = [word for word in [*named, *(f"`make {target}`" for _, _, target in folders)] if word not in rows[0]]
    assert missing == []


@pytest.mark.parametrize("path", committed_notebooks(), ids=lambda path: path.name)
def test_readme_says_which_target_each_notebook_needs(path: Path) -> None:
    """README's sentence on the notebooks gives each one's make target, or says that there is
    nothing to build when what it reads is kept in git."""
    if shutil.which("git") is None or not (ROOT / ".git").exists():
        pytest.skip("not a git checkout")
    readme = " ".join((ROOT / "README.md").read_text(encoding="utf-8").split())
    number = path.name[:2]
    said = re.findall(rf"\(([^()]*\b{number}\b[^()]*)\)", readme[readme.index("`make notebooks` runs the") :])
    assert said, f"README does not say what notebook {number} needs"
    folders = folders_read(path)
    if all(kept_in_git(ROOT / default / "manifest.json") for _, default, _ in folders):
        assert "nothing to build" in said[0]
    else:
        assert [target for _, _, target in folders if f"`make {target}`" not in said[0]] == []


def kept_in_git(path: Path) -> bool:
    listed = subprocess.run(["git", "ls-files", "--", str(path)], cwd=ROOT, capture_output=True, check=True).stdout
    return bool(listed.strip())


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
