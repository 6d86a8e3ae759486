"""The fairness report's section on the quality of play from the fair starts (``modiar fair
--quality``): the exact quality (engine.exact_quality) of random and perfect(temperature=1.0)
self-play from each fair start played exactly, the starts ranked by drama, and the Pareto front
of fairness against drama.

Every start here is fair under perfect play (value 0), so fairness is the one thing left that a
start changes: how far the random first player's score is from 1/2. Drama is the chance of a
comeback between perfect(temperature=1.0) players (docs/quality.md), as in the atlas's section.
A start fair only at the cap is listed but on no front, as in the section on play.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import polars as pl
from matplotlib.figure import Figure

from engine.solver import PLAY
from pipeline.analysis.fairness import pareto_front
from pipeline.fair.run import FairSearch
from pipeline.report import figures as plot
from pipeline.report.document import Section, Table
from pipeline.report.prose import percent

DRAMA = "perfect_t1_comeback"
FRONT_REFERENCE = {"unfairness": 0.0, DRAMA: 1.0}  # the best: a random first player's score of 1/2, a comeback every game


def drama_starts(measured: pl.DataFrame) -> pl.DataFrame:
    """The fair starts whose quality is measured, the most dramatic first, with their unfairness
    (|random first player's score - 1/2|) and whether each is on the front of fairness against
    drama (among those play decides)."""
    frame = measured.with_columns((pl.col("random_first_player_score") - 0.5).abs().alias("unfairness"))
    by_play = frame.with_columns(pl.when(pl.col("decided_by") == PLAY).then(pl.col(column)) for column in FRONT_REFERENCE)
    front = pareto_front(by_play, FRONT_REFERENCE, tuple(FRONT_REFERENCE)).alias("drama_pareto")
    return frame.with_columns(front).sort([DRAMA, "random_lead_changes"], descending=True)


def start_quality_section(search: FairSearch, measured: pl.DataFrame) -> Section:
    """The section, from the fair starts whose quality is measured (``measured``)."""
    starts = drama_starts(measured)
    own = search.own
    text = [
        f"The exact quality of play from every fair start within {search.exact_within} moved "
        f"{'stone' if search.exact_within == 1 else 'stones'}, and from the rule set's own start: random self-play, "
        "how much a game between novices swings, and self-play of perfect(temperature=1.0), which errs often in small "
        "ways and rarely in large ones, how often the side behind comes back between good players (the eventual "
        "winner was behind, by the exact forecast, at some ply). Every figure is an expectation over every line of "
        "play (docs/quality.md defines each).",
        f"From the rule set's own start: {own['random_lead_changes']:.2f} lead changes a random game, a comeback in "
        f"{percent(own['random_comeback'])}; between perfect(temperature=1.0) players {own['perfect_t1_lead_changes']:.2f} "
        f"lead changes and a comeback in {percent(own[DRAMA])} of games.",
    ]
    value = search.balance.value
    if value:
        behind = "South" if value < 0 else "North"
        text.append(
            f"That start is worth {value:+d} to South: {behind} is behind from ply 0, so every game {behind} wins counts as "
            "a comeback. From a fair start (worth 0) nobody is behind at ply 0 and a comeback needs the lead to be lost "
            "first: compare the fair starts with each other, not with the rule set's own."
        )
    front = starts.filter(pl.col("drama_pareto"))
    if starts.height:
        top = starts.row(0, named=True)
        text.append(
            f"The most dramatic fair start is {top['start']} (decided by {top['decided_by']}"
            + (", and the most natural fair start" if top["natural_rank"] == 1 else "")
            + f"): a comeback in "
            f"{percent(top[DRAMA])} of perfect(temperature=1.0) games. On the Pareto front of fairness (the random first "
            "player's score nearest 1/2) against drama, among the starts play decides: "
            + (", ".join(front["start"].to_list()) or "none")
            + "."
        )

    def cells(start: str, row: Mapping[str, Any], decided_by: str, pareto: str) -> list[str]:
        return [
            start,
            decided_by,
            f"{row['random_first_player_score']:.4f}",
            f"{row['random_lead_changes']:.2f}",
            f"{row['random_comeback']:.3f}",
            f"{row['perfect_t1_lead_changes']:.3f}",
            f"{row[DRAMA]:.3f}",
            f"{row['perfect_t1_decided_ply'] / row['perfect_t1_plies']:.2f}",
            pareto,
        ]

    rows = [cells("the rule set's own", own, search.verdict.decided_by, "")]
    rows += [
        cells(str(row["start"]), row, row["decided_by"], "yes" if row["drama_pareto"] else "")
        for row in starts.iter_rows(named=True)
    ]
    header = [
        "start",
        "decided by",
        "random: first player's score",
        "random: lead changes",
        "random: comeback",
        "perfect(T=1): lead changes",
        "perfect(T=1): comeback",
        "perfect(T=1): decided (share of plies)",
        "Pareto",
    ]
    figures = [
        (
            "fair_drama",
            "Fairness against drama from the fair starts (exact): the random first player's distance from 1/2 against "
            "the chance of a comeback between perfect(temperature=1.0) players; the front filled and named, the starts "
            "fair only at the cap crossed in grey, the rule set's own start ringed.",
        )
    ]
    table = Table("The quality of play from the fair starts, the most dramatic first", header, rows)
    return Section("Quality of play from the fair starts", text, [table], figures)


def start_drama_figure(search: FairSearch, measured: pl.DataFrame) -> Figure:
    """|random first player's score - 1/2| against DRAMA for each measured fair start."""
    starts = drama_starts(measured)
    with plot.style():
        figure = Figure(figsize=(plot.COLUMN, 2.8))
        axes = figure.subplots()
        front = starts.filter(pl.col("drama_pareto"))
        rest = starts.filter(~pl.col("drama_pareto") & (pl.col("decided_by") == PLAY))
        capped = starts.filter(pl.col("decided_by") != PLAY)
        x, y = "unfairness", DRAMA
        axes.scatter(rest[x], rest[y], s=18, facecolors="none", edgecolors=plot.OKABE_ITO[0], label="fair by play")
        if capped.height:
            axes.scatter(capped[x], capped[y], s=14, marker="x", color="0.6", linewidths=0.8, label="fair only at the cap")
        axes.scatter(front[x], front[y], s=22, color=plot.OKABE_ITO[0], label="on the Pareto front")
        own = search.own
        axes.scatter(
            [abs(own["random_first_player_score"] - 0.5)], [own[DRAMA]], s=80, facecolors="none", edgecolors=plot.OKABE_ITO[3]
        )
        for row in front.iter_rows(named=True):
            axes.annotate(row["start"], (row[x], row[y]), xytext=(4, 3), textcoords="offset points", fontsize=5.5)
        axes.set_xlabel("|first player's score \u2212 1/2|, random")
        axes.set_ylabel("P(comeback), perfect(T=1)")
        axes.legend(frameon=False, fontsize=6.5, scatterpoints=1)
    return figure
