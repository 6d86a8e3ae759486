"""The optional parts of modiar-lab: ``pip install .`` pulls neither Jupyter nor
dask.distributed; the command and the engine load without them, and what needs one says in one
line which extra to install (pipeline.runs.extras).

A package counts as not installed when ``sys.modules`` holds None under its name: ``import`` then
raises ModuleNotFoundError and importlib.util.find_spec answers None, as for a package absent.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import tomllib

import pytest
from locations import ROOT

from pipeline import notebooks
from pipeline.cli import main
from pipeline.runs.extras import EXTRAS

# The top-level packages of the two extras and of what they pull in (Jupyter's, dask's).
OPTIONAL = ("dask", "distributed", "jupyter", "jupyter_client", "jupyter_core", "nbclient", "nbformat", "nbconvert", "ipykernel")
OPTIONAL += ("IPython", "notebook", "jupyterlab", "ipywidgets")
IMPORT_EVERY_MODULE = """
import importlib, json, sys
for name in {optional!r}:
    sys.modules[name] = None
failed = {{}}
for module in {modules!r}:
    try:
        importlib.import_module(module)
    except ImportError as error:
        failed[module] = str(error)
print(json.dumps(failed))
"""


def every_module() -> list[str]:
    """Every module of engine and pipeline by dotted name."""
    found = []
    for package in ("engine", "pipeline"):
        for path in sorted((ROOT / package).rglob("*.py")):
            parts = path.relative_to(ROOT).with_suffix("").parts
            found.append(".".join(parts[:-1] if parts[-1] == "__init__" else parts))
    return found


def requirement_name(requirement: str) -> str:
    return re.split(r"[<>=!~\[; ]", requirement, maxsplit=1)[0].lower()


def test_pip_install_pulls_no_extra_and_dev_pulls_both():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    required = {requirement_name(requirement) for requirement in project["dependencies"]}
    assert not required & {name.lower() for name in OPTIONAL}, "a package of an extra is a dependency of pip install ."
    extras = project["optional-dependencies"]
    for extra, modules in EXTRAS.items():
        assert set(modules) <= {requirement_name(requirement) for requirement in extras[extra]}, extra
    assert "jupyter" in {requirement_name(requirement) for requirement in extras["notebooks"]}
    assert f"modiar-lab[{','.join(sorted(EXTRAS))}]" in extras["dev"], "dev must pull every extra: the tests use them all"
    # The Makefile's environment (make setup, make test, make notebooks) installs dev, and so both extras.
    assert re.search(r"pip install .*-e '\.\[dev\]'", (ROOT / "Makefile").read_text())


def test_engine_and_pipeline_import_without_the_extras():
    script = IMPORT_EVERY_MODULE.format(optional=OPTIONAL, modules=every_module())
    run = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr
    assert json.loads(run.stdout.splitlines()[-1]) == {}, "these modules import an extra's package at module level"


@pytest.mark.parametrize(
    "argv",
    [
        ["study", "run", "smoke", "--backend", "dask", "--out", "{out}"],
        ["atlas", "run", "atlas", "--part", "make", "--backend", "dask", "--out", "{out}"],
    ],
    ids=["study run", "atlas run"],
)
def test_backend_dask_without_dask_names_the_extra_in_one_line(tmp_path, monkeypatch, capsys, argv):
    monkeypatch.setitem(sys.modules, "distributed", None)
    out = tmp_path / "out"
    assert main([word.replace("{out}", str(out)) for word in argv]) == 2
    err = capsys.readouterr().err
    assert err.startswith("modiar: error: --backend dask needs distributed") and err.count("\n") == 1, err
    assert "pip install 'modiar-lab[dask]'" in err
    assert not out.exists()


def test_the_notebook_runner_without_jupyter_names_the_extra_in_one_line(tmp_path, monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "nbclient", None)
    assert notebooks.main(["--output-dir", str(tmp_path / "out"), str(tmp_path / "missing.ipynb")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("python -m pipeline.notebooks needs nbclient") and err.count("\n") == 1, err
    assert "pip install 'modiar-lab[notebooks]'" in err
    assert not (tmp_path / "out").exists()
