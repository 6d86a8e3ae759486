"""Where things go: studies and reports under the current folder, caches in the cache folder
the caller chooses; the engine itself chooses no folder and prints nothing."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from figure_formats import DRAFT

import engine
from engine.solver.solution import solve
from engine.tables.positions import load_tables
from pipeline.report.figures import FORMATS_VARIABLE
from pipeline.runs.paths import ROOT, STUDIES, cache_folder, study_config

SMALL = 'name = "small"\nseed = 3\ngames_per_seat = 10\nstrategies = ["random", "perfect"]\n[rules]\nstones_per_pit = 2\n'


def modiar(*arguments: str, cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-c", "import sys, pipeline.cli; sys.exit(pipeline.cli.main())", *arguments]
    return subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True, timeout=300)


@pytest.fixture
def clean_env(tmp_path) -> dict[str, str]:
    """The environment of a user with nothing set, whose home is a new folder."""
    env = {key: value for key, value in os.environ.items() if not key.startswith("MODIAR_")}
    env[FORMATS_VARIABLE] = DRAFT  # figures choose no folder: the tests' draft format stays
    env["HOME"] = str(tmp_path / "home")
    env["XDG_CACHE_HOME"] = str(tmp_path / "home" / ".cache")
    env["PYTHONPATH"] = str(ROOT)
    return env


def test_a_study_and_its_report_go_under_the_current_folder_and_caches_to_the_user_cache(tmp_path, clean_env):
    work = tmp_path / "work"
    work.mkdir()
    (work / "small.toml").write_text(SMALL)
    run = modiar("study", "run", "small.toml", "--quiet", cwd=work, env=clean_env)
    assert run.returncode == 0, run.stderr
    report = modiar("study", "report", "data/small", "--quiet", cwd=work, env=clean_env)
    assert report.returncode == 0, report.stderr
    assert sorted(path.name for path in work.iterdir()) == ["data", "reports", "small.toml"]
    assert (work / "data" / "small" / "manifest.json").is_file() and (work / "reports" / "small" / "index.html").is_file()
    cache = tmp_path / "home" / ".cache" / "modiar"
    assert [path.name for path in (cache / "tables").iterdir()] == [f"modiar-stones2-engine{engine.ENGINE_VERSION}.npz"]
    assert [path.name for path in (cache / "solutions").iterdir()] == [f"modiar-stones2-cap400-engine{engine.ENGINE_VERSION}.npz"]


def test_cache_option_and_environment_choose_the_cache_folder(tmp_path, clean_env):
    (tmp_path / "small.toml").write_text(SMALL)
    clean_env["MODIAR_CACHE"] = str(tmp_path / "from-env")
    run = modiar(
        "study", "run", "small.toml", "--cache", str(tmp_path / "chosen"), "--out", "out", "--quiet", cwd=tmp_path, env=clean_env
    )
    assert run.returncode == 0, run.stderr
    assert (tmp_path / "chosen" / "solutions").is_dir() and not (tmp_path / "from-env").exists()
    assert cache_folder("x") == Path("x")


def test_data_and_reports_follow_their_environment_variables(tmp_path, clean_env):
    (tmp_path / "small.toml").write_text(SMALL)
    clean_env |= {"MODIAR_DATA": str(tmp_path / "d"), "MODIAR_REPORTS": str(tmp_path / "r"), "MODIAR_CACHE": str(tmp_path / "c")}
    assert modiar("study", "run", "small.toml", "--quiet", cwd=tmp_path, env=clean_env).returncode == 0
    assert modiar("study", "report", str(tmp_path / "d" / "small"), "--quiet", cwd=tmp_path, env=clean_env).returncode == 0
    assert (tmp_path / "d" / "small" / "manifest.json").is_file() and (tmp_path / "r" / "small" / "index.html").is_file()


def test_bundled_studies_can_be_named(tmp_path, monkeypatch):
    assert study_config("smoke") == STUDIES / "smoke.toml"
    assert study_config("default") == STUDIES / "default.toml"
    (tmp_path / "smoke").write_text("a file of the user's")
    monkeypatch.chdir(tmp_path)
    assert study_config("smoke") == Path("smoke")  # a file of that name comes first
    assert study_config("nothing") == Path("nothing")


def test_an_unwritable_cache_folder_is_one_line(tmp_path, clean_env):
    (tmp_path / "small.toml").write_text(SMALL)
    (tmp_path / "file").write_text("not a folder")
    run = modiar("solve", "--stones", "2", "--cache", str(tmp_path / "file"), cwd=tmp_path, env=clean_env)
    assert run.returncode == 2 and run.stderr.count("\n") == 1 and run.stderr.startswith("modiar: error: "), run.stderr


def test_the_engine_without_a_cache_folder_builds_in_memory_and_writes_nothing(tmp_path, monkeypatch, capfd):
    monkeypatch.chdir(tmp_path)
    folder = engine.cache_folder()
    engine.set_cache_folder(None)
    try:
        rules = engine.Rules(stones_per_pit=2)
        assert load_tables(rules).size > 0 and solve(rules, 30).start_value(30) == solve(rules, 30, cache=None).start_value(30)
        assert engine.play_game("perfect", "random", rules=rules, seed=1).plies > 0
    finally:
        engine.set_cache_folder(folder)
    assert list(tmp_path.iterdir()) == []
    assert capfd.readouterr() == ("", "")  # the engine prints nothing


def test_the_engine_logs_its_builds_and_prints_nothing(tmp_path, capfd, caplog):
    folder = engine.cache_folder()
    engine.set_cache_folder(tmp_path)
    try:
        with caplog.at_level("INFO", logger="engine"):
            solve(engine.Rules(stones_per_pit=2), 30)
    finally:
        engine.set_cache_folder(folder)
    assert capfd.readouterr() == ("", "")
    assert "built position tables of modiar-stones2" in caplog.text and "solved modiar-stones2-cap30" in caplog.text
    assert sorted(path.name for path in tmp_path.iterdir()) == ["solutions", "tables"]


def test_an_installed_copy_carries_rules_md_and_finds_it(tmp_path):
    """setup.py's build puts RULES.md inside the package, and pipeline.runs.paths.rules_md finds that
    copy where no repository is around it (an installed copy, whose reports link it)."""
    source = tmp_path / "source"
    source.mkdir()
    for name in ("pyproject.toml", "setup.py", "MANIFEST.in", "README.md", "RULES.md"):
        shutil.copy(ROOT / name, source / name)
    for package in ("engine", "pipeline"):
        shutil.copytree(ROOT / package, source / package, ignore=shutil.ignore_patterns("__pycache__"))
    built = tmp_path / "installed" / "site-packages"
    command = [sys.executable, "setup.py", "-q", "build_py", "--build-lib", str(built)]
    subprocess.run(command, cwd=source, check=True, capture_output=True)
    assert (built / "pipeline" / "RULES.md").read_bytes() == (ROOT / "RULES.md").read_bytes()
    found = subprocess.run(
        [sys.executable, "-c", "from pipeline.runs.paths import rules_md; print(rules_md())"],
        cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": str(built)},
        check=True,
        capture_output=True,
        text=True,
    )
    assert Path(found.stdout.strip()) == built / "pipeline" / "RULES.md"
