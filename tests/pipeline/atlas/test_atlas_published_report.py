"""What the published atlas report (reports/atlas/, kept in git) shows a reader, against its own
tables: each field's effect as the spread of its values' means and the groups it changes, the
effects chart and the start-value map as drawn, the Pareto sentence beside its table, and counts
printed whole. docs/atlas.md's counts of the groups each field changes are the published ones."""

from __future__ import annotations

import html
import re

import polars as pl
import pytest
from locations import ROOT

import engine
from pipeline.atlas.effects import FIELD_WORDS, NO_EFFECT, map_block, varying_fields

PUBLISHED = ROOT / "reports" / "atlas"


@pytest.fixture(scope="module")
def effects() -> pl.DataFrame:
    return pl.read_csv(PUBLISHED / "tables" / "field_effects.csv")


def svg_text(stem: str) -> str:
    return html.unescape((PUBLISHED / "figures" / f"{stem}.svg").read_text(encoding="utf-8"))


def test_each_fields_groups_changed_are_recounted_from_the_published_rule_sets(effects: pl.DataFrame) -> None:
    """Counted again from tables/atlas.csv: in how many groups of rule sets alike in every other
    field the field's values do not all have one start value."""
    block = map_block(pl.read_csv(PUBLISHED / "tables" / "atlas.csv"))
    fields = varying_fields(block)
    for row in effects.iter_rows(named=True):
        others = [field for field in fields if field != row["field"]]
        groups = block.group_by(others).agg(pl.col(row["field"]).n_unique().alias("values"), pl.col("start_value").n_unique())
        complete = groups.filter(pl.col("values") == block[row["field"]].n_unique())
        assert (row["blocks"], row["changed_start_value"]) == (complete.height, (complete["start_value"] > 1).sum()), row
        assert row["share_changed_start_value"] == pytest.approx(row["changed_start_value"] / row["blocks"])


def test_a_field_whose_means_are_equal_is_shown_changing_the_value_where_it_does(effects: pl.DataFrame) -> None:
    """Feeding's values have equal mean start values, yet it changes the value in some groups:
    the chart and the text say so rather than show a bare 0."""
    hidden = effects.filter((pl.col("effect_start_value").abs() < NO_EFFECT) & (pl.col("changed_start_value") > 0))
    assert "feeding" in hidden["field"].to_list()
    chart = svg_text("atlas_effects")
    shown = [f"{row['changed_start_value']} of {row['blocks']}" for row in effects.iter_rows(named=True)]
    assert [label for label in shown if label not in chart] == []
    assert "0: changes cancel" in chart
    report = " ".join((PUBLISHED / "report.md").read_text(encoding="utf-8").split())
    for row in hidden.iter_rows(named=True):
        words = FIELD_WORDS[row["field"]]
        assert f"{words[0].upper()}{words[1:]} changes the start value in {row['changed_start_value']} of its" in report


def test_the_published_start_value_map_outlines_rules_md_and_keys_its_labels() -> None:
    chart = svg_text("atlas_map_start_value")
    assert f"outlined: RULES.md's rules ({engine.Rules().name})" in chart
    for label in ("min 2 / 1", "origin on / off", "forfeit on / off", "rows either / opponent / own", "feeding on / off"):
        assert label in chart


def test_the_pareto_sentence_stands_right_above_its_table() -> None:
    lines = (PUBLISHED / "report.md").read_text(encoding="utf-8").splitlines()
    sentence = next(place for place, line in enumerate(lines) if "on the Pareto front of closeness" in line)
    table = next(place for place, line in enumerate(lines) if line.startswith("**The rule sets fair by play and the Pareto"))
    assert 0 < table - sentence <= 2


def test_counts_are_printed_whole_with_thousands_separators_and_nothing_with_an_exponent() -> None:
    """never_settled printed as 9.965e+05."""
    report = (PUBLISHED / "report.md").read_text(encoding="utf-8")
    assert re.findall(r"\d(?:\.\d+)?e[+-]\d+", report) == []
    after = report.split("**The rule sets fair by play and the Pareto front**")[1].split("\n\n")[1]
    rows = {line.split(" | ")[0].removeprefix("| "): line for line in after.splitlines()[2:]}
    front = pl.read_csv(PUBLISHED / "tables" / "fair_front.csv")
    assert set(rows) == set(front["rules"]) and front.height > 0
    for row in front.iter_rows(named=True):
        assert f"| {row['never_settled']:,} |" in rows[row["rules"]]


def test_docs_give_the_published_groups_each_field_changes(effects: pl.DataFrame) -> None:
    """docs/atlas.md's counts of the groups in which each field changes the start value are the
    published table's: an atlas run that changes them must change the page with it."""
    changed = {row["field"]: row for row in effects.iter_rows(named=True)}
    claims = [
        f"the sowing changes the value in {changed['sow_origin']['changed_start_value']} of its "
        f"{changed['sow_origin']['blocks']} groups",
        f"singletons in {changed['min_stones_to_play']['changed_start_value']}",
        f"the forfeit in {changed['first_move_forfeit']['changed_start_value']}",
        f"the grand-slam rule in {changed['grand_slam']['changed_start_value']} of {changed['grand_slam']['blocks']}",
        f"feeding in only {changed['feeding']['changed_start_value']}",
    ]
    assert changed["capture_rows"]["changed_start_value"] == changed["capture_rows"]["blocks"]  # "in every group"
    docs = " ".join((ROOT / "docs" / "atlas.md").read_text(encoding="utf-8").split())
    assert [claim for claim in claims if claim not in docs] == []
