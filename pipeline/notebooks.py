"""The notebooks of notebooks/: the study each one reads, and a runner that executes them.

    study_folder(variable, default=..., target=..., kind="study")
        the folder a notebook reads (a study, or a published atlas or fairness search); when
        it holds none, MissingStudyError: one line that names the make target building it
    python -m pipeline.notebooks [--output-dir DIR] [NOTEBOOK ...]
        run each notebook into DIR (`make notebooks`; by default reports/notebooks, or
        $MODIAR_REPORTS/notebooks), printing "ran", "skipped: <the missing study>" or
        "failed: <error>" for each; exit status 1 when one failed

A notebook whose study is missing is skipped, not failed: ``make notebooks`` after ``make study``
runs the notebooks of the default study and of the published atlas and fairness search (kept in
git), and says which target builds the others' (``make variants``). The runner
needs nbclient, nbformat and ipykernel, which the extra modiar-lab[notebooks] installs; without
them it says so in one line (exit status 2). They are imported only by the runner, so a notebook
can import study_folder wherever the package is installed.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from pipeline.runs.extras import MissingExtraError, require
from pipeline.runs.paths import MANIFEST, REPORTS, ROOT

if TYPE_CHECKING:
    import nbformat

KERNEL = "python3"


class MissingStudyError(FileNotFoundError):
    """A notebook's study folder holds no study; the message names the make target that builds it."""

    def _render_traceback_(self) -> list[str]:
        # IPython shows these lines in place of the traceback: the reader sees the one line.
        return [str(self)]


def study_folder(variable: str, *, default: str, target: str, kind: str = "study") -> Path:
    """The folder in the environment variable ``variable``, else ``default``; a relative path is
    taken from the repository root. Raises MissingStudyError, whose one line names ``make
    target`` (the target that builds the default folder), when the folder has no manifest.
    ``kind`` names what the folder holds in that line: a study, an atlas, a fairness search."""
    chosen = os.environ.get(variable) or ""
    folder = ROOT / Path(chosen or default)  # an absolute path stays as it is
    if not (folder / MANIFEST).is_file():
        raise MissingStudyError(_missing(folder, variable, default, target, kind, chosen=bool(chosen)))
    return folder


def main(argv: Sequence[str] | None = None) -> int:
    """Run each notebook and write its executed copy; 1 when one failed (a skip is no failure)."""
    arguments = _parser().parse_args(argv)
    try:
        require("notebooks", "python -m pipeline.notebooks")
    except MissingExtraError as error:
        print(error, file=sys.stderr)
        return 2
    notebooks = arguments.notebooks or sorted(Path("notebooks").glob("*.ipynb"))
    if not notebooks:
        print("no notebooks given and none in notebooks/", file=sys.stderr)
        return 2
    if any(path.parent.resolve() == arguments.output_dir.resolve() for path in notebooks):
        print(f"--output-dir {arguments.output_dir} holds the notebooks themselves: choose another folder", file=sys.stderr)
        return 2
    arguments.output_dir.mkdir(parents=True, exist_ok=True)
    outcomes = [_announced(path, arguments.output_dir / path.name) for path in notebooks]
    counts = {word: sum(outcome.startswith(word) for outcome in outcomes) for word in ("ran", "skipped", "failed")}
    print(", ".join(f"{count} {word}" for word, count in counts.items()) + f"; executed copies in {arguments.output_dir}")
    return 1 if counts["failed"] else 0


def run_notebook(path: Path, output: Path) -> str:
    """Execute the notebook at ``path`` in its own folder and write the executed copy (outputs
    up to the first error included) to ``output``; returns "ran (N s)", "skipped: <the study
    it misses>" or "failed: <error>"."""
    import nbformat
    from nbclient import NotebookClient
    from nbclient.exceptions import CellExecutionError

    start = time.perf_counter()
    try:
        notebook = nbformat.read(path, as_version=4)  # type: ignore[no-untyped-call]  # nbformat's reader has no annotations
    except (OSError, ValueError) as error:  # missing, unreadable or not a notebook
        return f"failed: cannot read {path}: {error}"
    client = NotebookClient(notebook, kernel_name=KERNEL, resources={"metadata": {"path": str(path.parent)}})
    try:
        client.execute(stderr=subprocess.DEVNULL)  # the kernel's own chatter (a TCP warning) would split our lines
        outcome = f"ran ({time.perf_counter() - start:.1f} s)"
    except CellExecutionError as error:
        outcome = _cell_error(error.ename, error.evalue, _failed_cell(notebook), output)
    except Exception as error:  # a kernel that dies or does not start: this notebook fails, the next runs
        outcome = f"failed: {type(error).__name__}: {_first_line(str(error))}"
    nbformat.write(notebook, output)  # type: ignore[no-untyped-call]
    return outcome


def _announced(path: Path, output: Path) -> str:
    """run_notebook, its notebook's name printed before (a notebook may take minutes) and its outcome after."""
    print(f"{path}: ", end="", flush=True)
    outcome = run_notebook(path, output)
    print(outcome, flush=True)
    return outcome


def _missing(folder: Path, variable: str, default: str, target: str, kind: str, *, chosen: bool) -> str:
    shown, article = _shown(folder), "an" if kind[0] in "aeiou" else "a"
    if chosen:
        return (
            f"no {kind} in {shown} (from {variable}): set {variable} to {article} {kind} folder, "
            f"or unset it to read {default} (`make {target}` builds it)"
        )
    return f"no {kind} in {shown}: `make {target}` builds it (or set {variable} to {article} {kind} folder)"


def _shown(folder: Path) -> str:
    """The folder as the user knows it: relative to the repository root when inside it."""
    return str(folder.relative_to(ROOT)) if folder.is_relative_to(ROOT) else str(folder)


def _cell_error(name: str, message: str, cell: int | None, output: Path) -> str:
    if name == MissingStudyError.__name__:
        return f"skipped: {message}"
    where = f"cell {cell}, " if cell is not None else ""
    return f"failed: {name}: {_first_line(message)} ({where}traceback in {output})"


def _failed_cell(notebook: nbformat.NotebookNode) -> int | None:
    """The number of the first code cell with an error output (as in the notebook, from 0)."""
    for number, cell in enumerate(notebook.cells):
        if any(output.get("output_type") == "error" for output in cell.get("outputs", [])):
            return number
    return None


def _first_line(text: str) -> str:
    return text.strip().splitlines()[0] if text.strip() else "(no message)"


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m pipeline.notebooks",
        description="Run notebooks and write their executed copies; one whose study is missing is skipped.",
    )
    parser.add_argument(
        "--output-dir", type=Path, default=REPORTS / "notebooks", help="where the executed copies go (default: %(default)s)"
    )
    parser.add_argument("notebooks", nargs="*", type=Path, help="the notebooks to run (default: notebooks/*.ipynb)")
    return parser


if __name__ == "__main__":
    sys.exit(main())
