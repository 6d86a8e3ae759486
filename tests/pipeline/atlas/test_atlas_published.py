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
from pipeline.atlas.effects import atlas_frame, varying_fields
from pipeline.atlas.good_game import DRAMA, best_games, quality_columns
from pipeline.atlas.quality import distinct_games, measure_quality, quality_frame
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


README_OUTCOMES = ("fair", "first player wins", "second player wins", "in all")  # the README table's rows
FIELD_NAMES = {"capture_rows": "the capture rows", "min_stones_to_play": "singletons", "first_move_forfeit": "the forfeit"}


def readme() -> str:
    """README.md with its whitespace collapsed: a claim may be wrapped anywhere."""
    return " ".join((ROOT / "README.md").read_text(encoding="utf-8").split())


def test_the_readme_states_the_published_atlas_counts():
    """The README's atlas findings are the published atlas's: how many rule sets are done and
    drawn by the pie rule, and its table of verdicts: per outcome the rule sets, how many play
    decides and how many only the 400-ply cap, and the distinct games (those decided by play in
    brackets). An atlas run that changes them must change the README (and docs/atlas.md, which
    gives the same counts) with it."""
    rows = pl.read_csv(PUBLISHED / "tables" / "atlas.csv")
    balance = pl.read_csv(PUBLISHED / "tables" / "balance.csv")
    counts = {row["outcome"]: row for row in pl.read_csv(PUBLISHED / "tables" / "verdicts.csv").iter_rows(named=True)}
    assert counts["all"]["not_yet"] == 0, "complete the atlas's verdicts (make atlas-full) before publishing them"
    total = len(load_atlas(ROOT / "pipeline" / "studies" / "atlas.toml").rule_sets())
    value = rows["start_value"]
    assert [counts[outcome]["rule_sets"] for outcome in ("fair", "first", "second", "all")] == [
        (value == 0).sum(),
        (value > 0).sum(),
        (value < 0).sum(),
        rows.height,
    ]
    claims = [
        f"{rows.height} of its {total} rule sets are computed",
        f"The pie rule draws {(balance['pie_value'] == 0).sum()} rule sets",
        *(
            f"| {words} | {row['rule_sets']} | {row['by_play']} | {row['at_cap']} | {row['games']} ({row['games_by_play']}) |"
            for words, row in zip(
                README_OUTCOMES, (counts[outcome] for outcome in ("fair", "first", "second", "all")), strict=True
            )
        ),
    ]
    assert [claim for claim in claims if claim not in readme()] == []


def test_the_readme_states_what_decides_the_published_verdicts():
    """README's words on what decides the atlas's verdicts (play or the 400-ply cap), the cap's
    parity, singletons, the fields that move the start value and the lengths of perfect play
    are the published tables' (tables/verdicts.csv, tables/atlas.csv, tables/field_effects.csv)."""
    counts = {row["outcome"]: row for row in pl.read_csv(PUBLISHED / "tables" / "verdicts.csv").iter_rows(named=True)}
    rows = pl.read_csv(PUBLISHED / "tables" / "atlas.csv")
    every = counts["all"]
    ended = rows.filter(pl.col("decided_by") == "play")["remoteness"]
    cap = rows["ply_cap"].max()
    seven = rows.filter(pl.col("stones_per_pit") == 7)  # the grid
    first = seven.filter(pl.col("start_value") > 0)
    value = pl.col("start_value")
    flipped = first.filter((pl.col("value_cap_one_less") != value) | (pl.col("value_cap_one_more") != value))
    other = set(flipped["value_cap_one_less"]) | set(flipped["value_cap_one_more"])
    assert len(other) == 1, "README gives one start value for the first-player wins that change with the cap's parity"
    passing = rows.filter((pl.col("min_stones_to_play") == 1) & pl.col("sow_origin"))
    assert set(passing["decided_by"]) == {"cap"}, "README says every rule set where a singleton is a pass is decided at the cap"
    assert seven["perfect_mean_plies"].max() == pytest.approx(cap), "README says some perfect games last the whole cap"
    claims = [
        f"play decides {every['by_play']} of their verdicts under perfect play, and the {cap}-ply cap {every['at_cap']}",
        f"{every['parity']} verdicts change with the cap's parity",
        f"{flipped.height} of the {first.height} first-player wins at 7 stones a pit are {other.pop():+d} "
        f"under a cap of {cap - 1} or {cap + 1} plies",
        f"all {passing.height} such rule sets are decided at the cap",
        f"perfect games with random ties average from {seven['perfect_mean_plies'].min():g} plies to the whole cap",
        f"over all {rows.height}, perfect play that play decides ends within {ended.min()} to {ended.max()} plies",
        *field_claims(rows),
    ]
    readme_lower = readme().lower().replace("−", "-")  # README's minus sign is the typographic one
    assert [claim for claim in claims if claim.lower() not in readme_lower] == []


def field_claims(rows: pl.DataFrame) -> list[str]:
    """README's words on the fields that move the start value: the three largest spreads of mean
    start values, in order (tables/field_effects.csv), and compulsory feeding, whose means are
    equal though it changes the start value in some groups of rule sets alike in every other
    field (counted here from tables/atlas.csv)."""
    spreads = pl.read_csv(PUBLISHED / "tables" / "field_effects.csv")
    top = spreads.head(3).iter_rows(named=True)
    named = [(FIELD_NAMES.get(row["field"], row["field"]), row["effect_start_value"]) for row in top]
    feeding = spreads.filter(pl.col("field") == "feeding").row(0, named=True)
    grid = rows.filter(pl.col("stones_per_pit") == 7)
    others = [field for field in varying_fields(grid) if field != "feeding"]
    groups = grid.group_by(others).agg(pl.col("start_value").n_unique().alias("values"), pl.len())
    assert set(groups["len"]) == {2}, "each group holds feeding on and off"
    assert feeding["effect_start_value"] == pytest.approx(0, abs=1e-9), "README says feeding's means are equal"
    return [
        f"{named[0][0]} move the start value most (their settings' mean values lie {named[0][1]:.2f} stones apart), "
        f"then {named[1][0]} ({named[1][1]:.2f}) and {named[2][0]} ({named[2][1]:.2f})",
        f"feeding's means are equal, yet it changes the value in {(groups['values'] > 1).sum()} of its {groups.height} groups",
    ]


def test_the_kept_quality_rows_are_sound_and_the_published_report_shows_exactly_them():
    """make atlas-quality resumes data/atlas/quality: every row kept there reads back sound (sealed,
    of this engine, agreeing with the atlas's outcome), and the report's quality table holds
    exactly the rule sets whose games they measure."""
    kept = sorted(path.stem for path in (RUN / "quality").glob("*.parquet"))
    quality = quality_frame(RUN)
    assert sorted(set(quality["quality_from"].to_list())) == kept
    published = PUBLISHED / "tables" / "quality.csv"
    shown = pl.read_csv(published)["rules"].sort().to_list() if published.exists() else []
    assert shown == quality["rules"].sort().to_list()


def test_the_readme_states_how_much_of_the_atlas_quality_is_measured_and_what_it_finds():
    """README's drama across the atlas is the kept quality rows': how many of the distinct games
    are measured, the range of perfect(temperature=1.0)'s comebacks over them and the most
    dramatic fair rule set's. A run of make atlas-quality that changes them must change README."""
    frame = quality_columns(atlas_frame(RUN), quality_frame(RUN))
    measured = frame.filter(pl.col(DRAMA).is_not_null())
    drama = measured[DRAMA]
    claims = [
        f"Over {measured['quality_from'].n_unique()} of the atlas's {len(distinct_games(atlas_frame(RUN)))} distinct games",
        f"runs from {100 * drama.min():.0f} to {100 * drama.max():.0f}%",
        f"({100 * best_games(frame)[DRAMA][0]:.1f}% at best for a fair rule set)",
    ]
    assert [claim for claim in claims if claim not in readme()] == []


def test_the_cheapest_published_quality_row_is_computed_again_the_same():
    """modiar-stones3's game (its quality takes a second) measured again equals its kept row."""
    quality = quality_frame(RUN).filter(pl.col("quality_from") == "modiar-stones3")
    assert quality.height == 1, "modiar-stones3's game is measured and kept in data/atlas/quality"
    row = quality.row(0, named=True)
    fingerprint = read_atlas(RUN).to_pandas().set_index("rules").loc["modiar-stones3", "game_fingerprint"]
    again = measure_quality(engine.Rules.from_name("modiar-stones3"), fingerprint).row
    for column, value in row.items():
        if column not in ("rules", "quality_from"):
            assert again[column] == pytest.approx(value, rel=1e-12, abs=1e-15), column
