"""The published atlas (reports/atlas/, kept in git) cannot drift from the code: its files are
the ones its manifest lists, its engine version is the engine's, its rows are those of the run
folder kept beside it (data/atlas/, which a clone resumes), and two of its rows, the cheapest
(3 and 4 stones a pit), are computed again here and must be the published ones, their
verdict columns included; README's counts are the published tables'."""

from __future__ import annotations

import polars as pl
import pytest
from locations import ROOT

import engine
from pipeline.atlas.analyse import VERDICT_COLUMNS, analyse
from pipeline.atlas.config import load_atlas
from pipeline.atlas.run import read_atlas, rows_done, rows_incomplete
from pipeline.report.folder import check_published

PUBLISHED = ROOT / "reports" / "atlas"
VERDICT_NAMES = {name for name, _ in VERDICT_COLUMNS}
RUN = ROOT / "data" / "atlas"


def test_the_published_atlas_is_its_manifest_and_the_engines():
    manifest = check_published(PUBLISHED)
    assert manifest["kind"] == "atlas"
    assert manifest["engine"] == engine.ENGINE_VERSION, "the engine changed: run make atlas-full (or make atlas) again"
    rows = pl.read_csv(PUBLISHED / "tables" / "atlas.csv")
    assert rows.height == manifest["rule_sets_done"]


def test_the_kept_run_folder_holds_the_published_rows_sound():
    """make atlas-full resumes data/atlas: every row kept there reads back sealed and of this
    engine (none would be computed again), and the report was made from exactly those rows."""
    done = rows_done(RUN)
    published = pl.read_csv(PUBLISHED / "tables" / "atlas.csv")
    assert done == published["rules"].to_list()
    assert read_atlas(RUN).column("rules").to_pylist() == done
    assert sorted(path.stem for path in (RUN / "rows").glob("*.parquet")) == sorted(done)
    waiting = published.filter(pl.col("decided_by").is_null())["rules"].to_list()
    assert rows_incomplete(RUN) == waiting  # the report says "not yet" of exactly the rows to complete


@pytest.mark.parametrize("name", ["modiar-stones3", "modiar-stones4"])
def test_a_cheap_row_of_the_published_atlas_is_computed_again_the_same(name, tmp_path):
    published = pl.read_csv(PUBLISHED / "tables" / "atlas.csv").filter(pl.col("rules") == name).row(0, named=True)
    row = analyse(engine.Rules.from_name(name), tmp_path).row
    row["best_first_moves"] = " ".join(map(str, row["best_first_moves"]))  # as the CSV writes it
    assert set(published) == set(row)
    for column, value in published.items():
        if column in VERDICT_NAMES and published["decided_by"] is None:
            continue  # a row kept from before the verdict columns, not completed yet (rows_incomplete)
        if isinstance(value, float):
            assert row[column] == pytest.approx(value, rel=1e-12, abs=1e-15), column
        else:
            assert str(row[column]) == str(value), column


def test_the_readme_states_the_published_atlas_counts():
    """The README's atlas findings are the published atlas's: how many rule sets are done, fair,
    won by each seat and drawn by the pie rule. An atlas run that changes them must change the
    README (and docs/atlas.md, which gives the same counts) with it."""
    rows = pl.read_csv(PUBLISHED / "tables" / "atlas.csv")
    balance = pl.read_csv(PUBLISHED / "tables" / "balance.csv")
    total = len(load_atlas(ROOT / "pipeline" / "studies" / "atlas.toml").rule_sets())
    value = rows["start_value"]
    claims = [
        f"{rows.height} of its {total} rule sets are computed",
        f"{(value == 0).sum()} are fair",
        f"the first player wins {(value > 0).sum()}",
        f"and the second {(value < 0).sum()}",
        f"the pie rule draws {(balance['pie_value'] == 0).sum()}",
    ]
    readme = " ".join((ROOT / "README.md").read_text(encoding="utf-8").split())
    assert [claim for claim in claims if claim not in readme] == []


def test_the_readme_states_what_decides_the_published_verdicts():
    """README's split of the atlas's verdicts by what decides them (play or the 400-ply cap), in
    rule sets and distinct games, and its lengths of perfect play that ends, are the published
    tables' (tables/verdicts.csv, tables/atlas.csv)."""
    counts = {row["outcome"]: row for row in pl.read_csv(PUBLISHED / "tables" / "verdicts.csv").iter_rows(named=True)}
    rows = pl.read_csv(PUBLISHED / "tables" / "atlas.csv")
    every, fair, first, second = (counts[outcome] for outcome in ("all", "fair", "first", "second"))
    assert every["not_yet"] == 0, "complete the atlas's verdicts (make atlas-full) before publishing them"
    ended = rows.filter(pl.col("decided_by") == "play")["remoteness"]
    claims = [
        f"play decides {every['by_play']} of these verdicts and the 400-ply cap {every['at_cap']}",
        f"fair by play {fair['by_play']} and only at the cap {fair['at_cap']}",
        f"first-player wins {first['by_play']} and {first['at_cap']}",
        f"second-player wins {second['by_play']} and {second['at_cap']}",
        f"{every['parity']} verdicts change with the cap's parity",
        f"the {every['rule_sets']} rule sets are {every['games']} distinct games",
        f"the fair ones {fair['games']} ({fair['games_by_play']} fair by play)",
        f"ends within {ended.min()} to {ended.max()} plies",
    ]
    readme = " ".join((ROOT / "README.md").read_text(encoding="utf-8").split()).lower()
    assert [claim for claim in claims if claim.lower() not in readme] == []
