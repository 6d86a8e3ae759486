"""Where the tests find the repository and their data files: this module sits in tests/, at the
repository's top, so that a test in any folder below finds them without counting parents."""

from __future__ import annotations

from pathlib import Path

TESTS = Path(__file__).resolve().parent
ROOT = TESTS.parent  # the repository: RULES.md, README.md, docs/, reports/, engine/, pipeline/
DATA = TESTS / "data"  # the tests' own data files: perft counts, golden games, golden exact outcomes
