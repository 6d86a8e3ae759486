"""The study report's methods: how its intervals and tests were chosen, their coverage, and the
Ludii concepts it reports beside its own.
"""

from __future__ import annotations

import polars as pl

from pipeline.exact.check import FLAG_P, FLAG_Z
from pipeline.report.document import Section, Table
from pipeline.report.prose import interval
from pipeline.runs.records import PAIRING_COLUMNS
from pipeline.study.report.data import ReportData
from pipeline.study.report.sections.cells import (
    ludii_cell,
    pairing_cells,
    pairing_header,
    per_ply_words,
    rules_cells,
    rules_header,
)
from pipeline.study.report.words import short


def ludii_section(data: ReportData) -> Section:
    """The Ludii-comparable table: self-play, counted as Ludii counts (pipeline.analysis.ludii)."""
    table = per_ply_words(data.ludii_comparable)
    names = ["AdvantageP1", "Balance", "Completion", "Drawishness", "Timeouts", "Duration", "Duration_p99"]
    names += ["BranchingFactor", "BranchingFactor_per_turn", "DecisionMoves", "PositionalRepetition", "PositionalRepetition_ours"]
    timeouts = bool(table.height) and bool(table["Timeouts"].max())
    names = [name for name in names if name in table.columns and (name != "Timeouts" or timeouts)]
    rows = [
        [*rules_cells(row, data), row["south"], *(ludii_cell(name, row[name]) for name in names)]
        for row in table.iter_rows(named=True)
    ]
    return Section(
        "Ludii game metrics",
        [
            "The metrics of the Ludii general game system (Digital Ludeme Project) under their own names, computed as "
            "Ludii computes them, so that Modiar can be set beside the games of its database: self-play only; a game "
            "stopped by the ply cap counted as a draw, as Ludii counts a game that reaches its move limit; "
            "BranchingFactor, the legal moves per turn averaged in each game and then over games, as Ludii does (beside "
            "it the same pooled over every turn); PositionalRepetition as Ludii's code computes it, the share of games "
            "in which a board comes back (beside it ours, the share of a game's positions, board and player to move, "
            "seen before). Player 1 is South. Shares are fractions, Duration and its 99th "
            "percentile are plies. pipeline.analysis.ludii gives the definitions and the Ludii source files they follow; the "
            "appendix has our own metrics for every pairing."
            + ("" if timeouts else " Timeouts is left out: no self-play game reached the ply cap.")
        ],
        [Table("Ludii-comparable metrics (self-play)", [*rules_header(data), "strategy", *names], rows, "ludii_comparable")],
    )


def ludii_appendix(data: ReportData) -> Section:
    table = data.ludii.join(per_ply_words(data.ludii_plies).drop("games", strict=False), on=list(PAIRING_COLUMNS), how="left")
    names = [name for name in _OUR_NAMES if name != "Timeouts" or bool(table["Timeouts"].max())]
    rows = [[*pairing_cells(row, data), *(ludii_cell(name, row[name]) for name in names)] for row in table.iter_rows(named=True)]
    return Section(
        "Game metrics of every pairing",
        [
            "The same kinds of figure as Ludii's, for every ordered pairing, but under this project's conventions and "
            "so under names of its own: a game stopped by the ply cap keeps the winner of its score (Ludii's "
            "AdvantageP1, Balance, Completion and Drawishness count it as a draw); the branching factor is the mean per "
            "game without the games of no move; repetition is the share of a game's positions (board and player to "
            "move) seen before in it."
            f"{'' if bool(table['Timeouts'].max()) else ' No game reached the ply cap, so none is counted as stopped there.'}"
        ],
        [Table("Game metrics per pairing", [*pairing_header(data), *(_OUR_NAMES[name] for name in names)], rows, "ludii")],
        appendix=True,
    )


# The appendix's columns (tables/ludii.csv keeps Ludii's names) under this project's own names:
# with a game stopped at the cap scored by its margin, they are not Ludii's figures.
_OUR_NAMES = {
    "AdvantageP1": "first player wins",
    "Balance": "balance of wins",
    "Completion": "decisive",
    "Drawishness": "drawn",
    "Timeouts": "stopped at the cap",
    "Duration": "mean plies",
    "BranchingFactor": "moves a turn",
    "DecisionMoves": "turns with a choice",
    "PositionalRepetition": "positions repeated",
}


def methods_section(data: ReportData) -> Section:
    """How every figure of the report is estimated and tested, and how well the intervals cover."""
    text = [
        "**Estimates and intervals.** All intervals are two-sided 95%. A share of games (South wins, draws, games in "
        "which an event fires) has its Wilson score interval (Wilson 1927). The first player's score, a win counting 1 "
        "and a draw 1/2, is 1/2 + d (pi - 1/2), d being the share of decisive games and pi the first player's share of "
        "them; its interval is the range of that expression over the Clopper-Pearson interval of pi (Clopper and "
        "Pearson 1934) and the Wilson interval of d. A mean count per game and a rate per 100 turns have a score "
        "interval for a rate (the Poisson score interval, with a dispersion estimated from the games as clusters): "
        "it is the usual normal interval for a frequent event, and unlike it keeps an upper bound above 0 for an "
        "event seen once or never. A mean length has its normal interval (thousands of games).",
        "**Tests.** The first player's score is tested against 1/2 by the exact sign test (the exact binomial test of "
        "the decisive games, two-sided; draws carry no sign): exact at any number of games, so 5 wins in 5 games gives "
        "p = 0.0625, not a p near 0. Its interval holds 1/2 exactly when p >= 0.05, so the two never disagree. p-values "
        "below 0.001 are printed as p < 0.001.",
        "**Many comparisons.** Each table of tests is a family: the p-values of the first-player tests of every ordered "
        "pairing and rule set, and those of the seat effects of every pair and rule set, are adjusted by Holm's "
        "step-down method (Holm 1979), which keeps the chance of any false rejection in the family below 5% whatever the "
        "dependence between the tests; columns headed p (Holm) give the adjusted values, and the words of the report "
        "rely on them."
        + (
            ""
            if data.exact_check is None
            else " The test of every sampled figure against its exact value (Sampled against exact) flags at "
            f"|z| > {FLAG_Z:g}, a chance of {FLAG_P:.1e} per honest figure: over the {data.exact_check.height:,} figures "
            f"tested the chance of a false alarm is at most {min(1.0, data.exact_check.height * FLAG_P):.2f} (Bonferroni)."
        ),
        "**Seat against strength.** Only self-play and pairs pooled over both seat orders measure the seat; an ordered "
        "pairing of two different strategies measures the seat and their strengths together, and the report never "
        "reads a seat effect into it.",
    ]
    tables = []
    if data.coverage is not None:
        text.append(
            "**Coverage.** The intervals are checked where they are weakest, in small pairings and for rare events: "
            f"{_coverage_setting(data.coverage)} The table gives, for each figure, how many of the replications' 95% "
            "intervals hold its exact value, for the interval of the report and for the normal interval it replaced "
            "(pipeline.analysis.coverage; tables/coverage.csv). A Wilson interval's coverage swings with the true share and "
            "dips a few points below 95% at some shares of small samples (Brown, Cai and DasGupta 2001, Statistical "
            "Science 16:101); the table shows where."
        )
        tables.append(_coverage_table(data.coverage))
    return Section("Methods", text, tables)


def _coverage_setting(coverage: pl.DataFrame) -> str:
    row = coverage.row(0, named=True)
    return (
        f"{row['replications']:,} independent pairings of {row['games']} games of {row['south']} v {row['north']} "
        f"(seeded), each with its intervals, against the exact values of the pairing."
    )


def _coverage_table(coverage: pl.DataFrame) -> Table:
    rows = []
    for (figure,), part in coverage.group_by("figure", maintain_order=True):
        cells = {
            row["interval"]: interval(100 * row["coverage"], 100 * row["coverage_low"], 100 * row["coverage_high"], ".1f")
            for row in part.iter_rows(named=True)
        }
        exact = part["exact"][0]
        name, _, what = str(figure).rpartition(": ")
        rows.append(
            [
                f"{short(name)}: {what}" if name else what,
                f"{exact:.4g}",
                cells.get("report", "n/a"),
                cells.get("normal", "the same"),
            ]
        )
    return Table(
        "Coverage of the 95% intervals (%)", ["figure", "exact value", "report's interval", "normal interval"], rows, "coverage"
    )
