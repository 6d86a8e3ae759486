"""The exact quality in the cache folder (pipeline.exact.quality): computed once, read back to
the same floats, and computed again when its file is damaged, of another pairing or impossible."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pytest
from sealing import edit_sealed

import engine
from engine import Rules
from pipeline.exact.quality import cached_exact_quality, quality_path

THREE = Rules(stones_per_pit=3)


def test_a_cached_quality_reads_back_the_same(cache: Path) -> None:
    first = cached_exact_quality("random", "greedy", THREE)
    path = quality_path("random", "greedy", THREE, cache / "exact")
    assert path.exists()
    again = cached_exact_quality("random", "greedy", THREE)
    assert again.as_dict() == first.as_dict()
    assert (again.south_win, again.draw, again.north_win) == (first.south_win, first.draw, first.north_win)
    assert all(np.array_equal(again.curves[name], first.curves[name]) for name in first.curves)
    assert again.as_dict() == engine.exact_quality("random", "greedy", rules=THREE).as_dict()


def test_a_damaged_or_misplaced_quality_is_computed_again(cache: Path, caplog: pytest.LogCaptureFixture) -> None:
    cached_exact_quality("random", "greedy", THREE), cached_exact_quality("greedy", "random", THREE)
    folder = cache / "exact"
    shutil.copy(quality_path("greedy", "random", THREE, folder), quality_path("random", "greedy", THREE, folder))
    assert cached_exact_quality("random", "greedy", THREE).south == "random"
    assert "computing the exact quality again" in caplog.text
    caplog.clear()
    edit_sealed(quality_path("random", "greedy", THREE, folder), lambda content: content["measures"].update(comeback=1.5))
    fresh = cached_exact_quality("random", "greedy", THREE)
    assert fresh.measures["comeback"] <= 1
    assert "does not add up" in caplog.text
