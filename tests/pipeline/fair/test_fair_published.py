"""The published fairness search (reports/fair/modiar, kept in git) and the README's words on it."""

from __future__ import annotations

import html
import json
from pathlib import Path
from xml.etree import ElementTree

import polars as pl
import pytest
from locations import ROOT

from pipeline.report.prose import plural, signed

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


# ---------------------------------------------------------------------------------------------
# What the published pages say: that fair means fair under perfect play, what each report holds,
# and figures a reader can read (the fair value ticked, whose pits are whose).

FOLDERS = [PUBLISHED, PUBLISHED.parent / "modiar-exact-within-1", PUBLISHED.parent / "modiar-exact-within-1-quality"]
SVG = "{http://www.w3.org/2000/svg}"
PIT_NAMES = ["South's pit 0", "South's pit 1", "South's pit 2", "North's pit 3", "North's pit 4", "North's pit 5"]  # RULES.md


def _abstract(folder: Path) -> str:
    report = (folder / "report.md").read_text(encoding="utf-8")
    return report.split("## Abstract", 1)[1].split("\n## ", 1)[0]


def _tick_labels(svg: Path, axis: str) -> list[str]:
    """The labels of the ``axis`` ("x" or "y") ticks of a matplotlib SVG's first axes (text kept as text)."""
    root = ElementTree.parse(svg).getroot()
    grid = next(group for group in root.iter(f"{SVG}g") if group.get("id") == "axes_1")  # not a colour bar's
    ticks = [group for group in grid.iter(f"{SVG}g") if group.get("id", "").startswith(f"{axis}tick_")]
    return ["".join(text.itertext()).strip() for group in ticks for text in group.iter(f"{SVG}text")]


@pytest.mark.parametrize("folder", FOLDERS, ids=lambda folder: folder.name)
def test_the_published_fair_counts_say_fair_under_perfect_play_and_what_random_play_scores(folder):
    starts = pl.read_csv(folder / "tables" / "starts.csv")
    abstract = " ".join(_abstract(folder).split())
    for moved in sorted(set(starts["moved"])):
        within = starts.filter(pl.col("moved") == moved)
        fair = within.filter(pl.col("value") == 0).height
        assert f"{fair} of the {within.height} starts with {plural(moved, 'stone')} moved are fair under perfect play" in abstract
    assert "fair under perfect play only, not for players who err" in abstract
    played = starts.filter((pl.col("value") == 0) & pl.col("random_first_player_score").is_not_null())
    own = pl.read_csv(folder / "tables" / "balance.csv")["random_first_player_score"][0]
    if played.height:
        scores = played["random_first_player_score"]
        assert f"a score from {scores.min():.3f} to {scores.max():.3f} ({own:.3f} from the rule set's own start)" in abstract
    else:
        assert f"a score of {own:.3f}, and this report plays no game from the fair starts" in abstract


def test_the_published_fair_reports_have_titles_that_say_what_each_holds():
    titles = []
    for folder in FOLDERS:
        manifest = json.loads((folder / "manifest.json").read_text(encoding="utf-8"))
        title = (folder / "report.md").read_text(encoding="utf-8").splitlines()[0].removeprefix("# ")
        assert f"<h1>{html.escape(title)}</h1>" in (folder / "index.html").read_text(encoding="utf-8")
        assert "fair under perfect play" in title and f"within {plural(manifest['moved'], 'stone')} moved" in title
        quality = " and its quality" if manifest.get("quality") else ""
        played = f"exact random and perfect play{quality} from those within {plural(manifest['exact_within'], 'stone')} moved"
        assert (played in title) == (manifest["exact_within"] > 0)
        titles.append(title)
    assert len(set(titles)) == len(titles)


@pytest.mark.parametrize("folder", FOLDERS, ids=lambda folder: folder.name)
def test_the_published_value_histogram_ticks_every_value_the_starts_take_fair_included(folder):
    values = pl.read_csv(folder / "tables" / "starts.csv")["value"]
    expected = [signed(value, "{:+d}") for value in range(values.min(), values.max() + 1, 2)]
    labels = _tick_labels(folder / "figures" / "fair_values.svg", "x")
    assert labels == expected and "0" in labels


@pytest.mark.parametrize("folder", FOLDERS, ids=lambda folder: folder.name)
def test_the_published_one_stone_heatmap_says_whose_pits_are_whose(folder):
    svg = folder / "figures" / "fair_one_stone.svg"
    assert _tick_labels(svg, "y") == PIT_NAMES and _tick_labels(svg, "x") == PIT_NAMES
    report = (folder / "report.md").read_text(encoding="utf-8")
    assert "South's pits are 0, 1 and 2, North's 3, 4 and 5" in report.split("](figures/fair_one_stone.svg)")[0]


def test_the_published_quality_of_play_from_the_fair_starts_agrees_with_their_exact_play():
    """engine.exact_quality and engine.exact_outcome are computed apart (their own caches): from
    every fair start measured, the random games' expected length is the same in both, and each
    fair start within the exact play has its quality, and no other start has."""
    folder = PUBLISHED.parent / "modiar-exact-within-1-quality"
    manifest = json.loads((folder / "manifest.json").read_text(encoding="utf-8"))
    starts = pl.read_csv(folder / "tables" / "starts.csv")
    played = starts.filter((pl.col("value") == 0) & (pl.col("moved") <= manifest["exact_within"]))
    measured = starts.filter(pl.col("perfect_t1_comeback").is_not_null())
    assert measured["start"].to_list() == played["start"].to_list() and played.height > 0
    for row in measured.iter_rows(named=True):
        assert row["random_plies"] == pytest.approx(row["random_mean_plies"], abs=1e-9), row["start"]


def test_the_readme_states_the_published_drama_of_the_fair_starts():
    folder = PUBLISHED.parent / "modiar-exact-within-1-quality"
    starts = pl.read_csv(folder / "tables" / "starts.csv").filter(pl.col("perfect_t1_comeback").is_not_null())
    drama = starts.sort("perfect_t1_comeback", descending=True)
    low, high = 100 * drama["perfect_t1_comeback"].min(), 100 * drama["perfect_t1_comeback"].max()
    readme = " ".join((ROOT / "README.md").read_text(encoding="utf-8").split())
    assert f"{low:.1f}–{high:.1f}%, the most from {drama['start'][0]}" in readme
