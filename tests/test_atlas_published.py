"""The published atlas (reports/atlas/, kept in git) cannot drift from the code: its files are
the ones its manifest lists, its engine version is the engine's, and two of its rows, the
cheapest (3 and 4 stones a pit), are computed again here and must be the published ones."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest

import engine
from pipeline.atlas.analyse import analyse
from pipeline.render.folder import check_published

PUBLISHED = Path(__file__).resolve().parent.parent / "reports" / "atlas"


def test_the_published_atlas_is_its_manifest_and_the_engines():
    manifest = check_published(PUBLISHED)
    assert manifest["kind"] == "atlas"
    assert manifest["engine"] == engine.ENGINE_VERSION, "the engine changed: run make atlas-full (or make atlas) again"
    rows = pl.read_csv(PUBLISHED / "tables" / "atlas.csv")
    assert rows.height == manifest["rule_sets_done"]


@pytest.mark.parametrize("name", ["modiar-stones3", "modiar-stones4"])
def test_a_cheap_row_of_the_published_atlas_is_computed_again_the_same(name, tmp_path):
    published = pl.read_csv(PUBLISHED / "tables" / "atlas.csv").filter(pl.col("rules") == name).row(0, named=True)
    row = analyse(engine.Rules.from_name(name), tmp_path).row
    row["best_first_moves"] = " ".join(map(str, row["best_first_moves"]))  # as the CSV writes it
    assert set(published) == set(row)
    for column, value in published.items():
        if isinstance(value, float):
            assert row[column] == pytest.approx(value, rel=1e-12, abs=1e-15), column
        else:
            assert str(row[column]) == str(value), column
