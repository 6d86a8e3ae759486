"""Shared fixtures. The tests sit in folders that mirror the packages (tests/engine/<package>/,
tests/pipeline/<package>/) and import the helper modules of this folder (reference, variants,
study_configs, locations, ...) by name: pytest puts this folder on sys.path, and no folder of
tests has an __init__.py, so every test file's name is unique across them.

Tests keep position tables and solutions in a cache folder of their own in the system's
temporary folder ($MODIAR_TEST_CACHE to choose another), never in the checkout or the user's
cache; processes the tests start inherit it through $MODIAR_CACHE.

Reports here save their figures as SVG only ($MODIAR_FIGURE_FORMATS, inherited the same way):
PDF and PNG take four fifths of a small report's time, and the tests that check them ask for
them with ``figure_formats.every_figure_format()``.
"""

from __future__ import annotations

import os
import sys
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from locations import ROOT

# tests/engine/ and tests/pipeline/ mirror the packages, and this folder is on sys.path: to the
# import system they are namespace packages named engine and pipeline, which an editable install's
# finder (consulted after sys.path) would never see past. A regular package beats a namespace one
# wherever it is on sys.path, so the checkout at its end makes the real ones found, and changes
# nothing where the packages are installed.
sys.path.append(str(ROOT))

import pytest
from figure_formats import DRAFT, FORMATS_VARIABLE
from study_configs import small_config, toml_text

import engine
from engine import Rules
from engine.tables.positions import PositionTables, load_tables
from pipeline.study.config import parse_study
from pipeline.study.run import run_study

CACHE = Path(os.environ.get("MODIAR_TEST_CACHE") or Path(tempfile.gettempdir()) / "modiar-test-cache")
os.environ["MODIAR_CACHE"] = str(CACHE)
engine.set_cache_folder(CACHE)
os.environ[FORMATS_VARIABLE] = DRAFT


@pytest.fixture(scope="session")
def default_tables() -> PositionTables:
    """The default rules' position tables, from the tests' cache (built once per machine)."""
    return load_tables(Rules(), progress=False)


@pytest.fixture
def cache(tmp_path: Path) -> Iterator[Path]:
    """A cache folder of the test's own, so that what it holds is known; the tests' cache after."""
    kept = engine.cache_folder()
    engine.set_cache_folder(tmp_path / "cache")
    yield tmp_path / "cache"
    engine.set_cache_folder(kept)


@pytest.fixture
def small_study(tmp_path: Path) -> Callable[..., Path]:
    """Writes the small study's config (tests/study_configs.py), with the keys given in place of
    its own, to ``tmp_path/<name>.toml``, and returns that file: ``small_study(games_per_seat=40)``."""

    def write(**changes: Any) -> Path:
        config = small_config(**changes)
        path = tmp_path / f"{config['name']}.toml"
        path.write_text(toml_text(config), encoding="utf-8")
        return path

    return write


@pytest.fixture(scope="session")
def small_study_run(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """The small study run once for the session: its folder, which the tests read and never change
    (one that spoils a study copies it first); a test that wrote into it fails the session's end."""
    folder = run_study(parse_study(small_config()), tmp_path_factory.mktemp("small-study") / "small", progress=False)
    before = _contents(folder)
    yield folder
    assert _contents(folder) == before, f"a test changed the shared small study in {folder}; copy it before changing it"


def _contents(folder: Path) -> dict[str, bytes]:
    return {str(path.relative_to(folder)): path.read_bytes() for path in sorted(folder.rglob("*")) if path.is_file()}
