"""Shared fixtures. Tests import their helper modules (reference, variants) by name, so this
folder has no __init__.py.

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
from collections.abc import Iterator
from pathlib import Path

from locations import ROOT

# tests/engine/ and tests/pipeline/ mirror the packages, and this folder is on sys.path: to the
# import system they are namespace packages named engine and pipeline, which an editable install's
# finder (consulted after sys.path) would never see past. A regular package beats a namespace one
# wherever it is on sys.path, so the checkout at its end makes the real ones found, and changes
# nothing where the packages are installed.
sys.path.append(str(ROOT))

import pytest
from figure_formats import DRAFT, FORMATS_VARIABLE

import engine
from engine import Rules
from engine.tables.positions import PositionTables, load_tables

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
