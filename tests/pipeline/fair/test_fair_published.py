"""The published fairness search (reports/fair/modiar, kept in git) and the README's words on it."""

from __future__ import annotations

import polars as pl
from locations import ROOT

PUBLISHED = ROOT / "reports" / "fair" / "modiar"


def test_the_readme_states_the_published_fair_counts_split_by_what_decides_them():
    starts = pl.read_csv(PUBLISHED / "tables" / "starts.csv")
    fair = starts.filter(pl.col("value") == 0)
    by_moved = [(starts.filter(pl.col("moved") == moved).height, fair.filter(pl.col("moved") == moved)) for moved in (1, 2)]
    natural = fair.filter(pl.col("natural_rank") == 1)["start"].to_list()
    claims = [
        f"{by_moved[0][1].height} of the {by_moved[0][0]} starts with one stone moved",
        f"{by_moved[1][1].height} of the {by_moved[1][0]} with two",
        "Play decides {} and {} of them".format(*(found.filter(pl.col("decided_by") == "play").height for _, found in by_moved)),
        f"The most natural fair start decided by play is {natural[0]}",
    ]
    readme = " ".join((ROOT / "README.md").read_text(encoding="utf-8").split())
    assert [claim for claim in claims if claim not in readme] == []


def test_every_fair_start_ranked_as_natural_is_decided_by_play():
    starts = pl.read_csv(PUBLISHED / "tables" / "starts.csv")
    ranked = starts.filter(pl.col("natural_rank").is_not_null())
    assert ranked.height and set(ranked["decided_by"]) == {"play"} and set(ranked["value"]) == {0}
    won = starts.filter(pl.col("value") != 0)  # decided by play exactly when the winner can force the end
    assert (won["remoteness"].is_not_null() == (won["decided_by"] == "play")).all()
    drawn = starts.filter(pl.col("value") == 0)  # ... and a draw when every value-keeping game ends
    assert (drawn["longest_line"].is_not_null() == (drawn["decided_by"] == "play")).all()
