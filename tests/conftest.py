"""Shared fixtures. Tests import their helper modules (reference, variants) by name, so this
folder has no __init__.py."""

from __future__ import annotations

import pytest

from engine import Rules
from engine.tables import PositionTables, load_tables


@pytest.fixture(scope="session")
def default_tables() -> PositionTables:
    """The default rules' position tables, from the data/tables cache (built once per machine)."""
    return load_tables(Rules(), verbose=False)
