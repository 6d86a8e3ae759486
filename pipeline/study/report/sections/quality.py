"""The study report's section on game quality: is Modiar a good game, and where do players err."""

from __future__ import annotations

from typing import Any

import polars as pl

from pipeline.report.document import Section, Table
from pipeline.report.prose import figure, listed
from pipeline.study.report.data import ReportData
from pipeline.study.report.quality import forecast_strategies
from pipeline.study.report.sections.cells import rules_cells, rules_header

# The self-plays the abstract names: a beginner, then a strong player who misjudges close moves.
BEGINNER, STRONG = "random", "perfect(temperature=1.0)"
HEADER = (
    "strategy",
    "lead changes",
    "comeback (%)",
    "plies behind",
    "stones behind",
    "decided at ply",
    "stones lost S / N",
    "mistakes S / N",
    "decisions",
    "one right move (%)",
    "any move (%)",
    "stake per decision",
    "plies",
)


def quality_section(table: pl.DataFrame, data: ReportData) -> Section:
    """Each table strategy's self-play measured against perfect play, exactly (pipeline.study.report.quality)."""
    rows = [_cells(row, data) for row in table.iter_rows(named=True)]
    text = [
        "The **forecast** after a ply is the margin (South's stones minus North's) the game ends with if both sides "
        "play perfectly from there on: the start's value before the first move, the final margin after the last. "
        "Its sign says who is winning; a move's **loss** is how far it moves the forecast against its mover, 0 for a "
        "best move, and a **mistake** is a move that loses something. For every table strategy's self-play these "
        "measures are computed exactly, every game weighed by its probability (no sampling): how often the sign of the "
        "forecast changes (**lead changes**); the chance that the eventual winner was behind at some ply "
        "(**comeback**), for how many plies and by how many stones in all (**drama**); the ply from which the "
        "eventual result's side led to the end (**decided at ply**); the stones each side gives away and its "
        "mistakes; and how often a turn is a **decision** (two legal moves or more), with the share of decisions "
        "where exactly one move keeps the forecast (**one right move**) or every move does (**any move**), and the "
        "stones between its best and worst move (**stake**). All are expectations per game; shares are ratios of "
        "expectations (docs/quality.md says how they differ from Ludii's means of per-game ratios).",
        *_findings(table),
    ]
    header = [*rules_header(data), *HEADER]
    shown = [] if data.quality_curves is None else forecast_strategies(data.quality_curves)
    figures = [
        (
            "forecast_by_ply",
            f"The mean forecast by ply of {listed(shown)}'s self-play, with a band of one standard deviation over the "
            "games still in play (exact). Perfect play keeps it at the start's value; errors spread it.",
        ),
        (
            "stones_lost_by_ply",
            "The stones a move gives away at each ply, per game still in play, in each table strategy's self-play "
            "that gives any away (exact): where the mistakes happen.",
        ),
    ]
    return Section(
        "Is it a good game?",
        text,
        [Table("Exact quality of self-play (expectations per game)", header, rows, "quality")],
        figures=figures,
    )


def quality_words(data: ReportData) -> list[str]:
    """The abstract's sentence on how dramatic the game is, from the exact quality (none without it)."""
    table = data.quality
    if table is None:
        return []
    beginner, strong = _row(table, BEGINNER), _row(table, STRONG)
    if beginner is None:
        return []
    text = (
        f"How dramatic is it? Measured against perfect play, exactly: in random self-play the lead changes hands "
        f"{beginner['lead_changes']:.2f} times a game and the eventual winner was behind at some point in "
        f"{100 * beginner['comeback']:.0f}% of games"
    )
    if strong is not None:
        text += (
            f"; between players who misjudge close moves ({STRONG}) the lead changes {strong['lead_changes']:.2f} "
            f"times and {100 * strong['comeback']:.1f}% of games are comebacks"
        )
    return [text + "."]


def _findings(table: pl.DataFrame) -> list[str]:
    """The section's findings in words: the most and least dramatic self-play, and how often a
    decision has one right move."""
    ranked = table.sort("lead_changes", descending=True)
    most, least = ranked.row(0, named=True), ranked.row(-1, named=True)
    text = [
        f"**The most dramatic self-play is {most['strategy']}'s: {most['lead_changes']:.2f} lead changes and a comeback "
        f"in {100 * most['comeback']:.0f}% of games; the least, {least['strategy']}'s "
        f"({least['lead_changes']:.2f} and {100 * least['comeback']:.1f}%).**"
    ]
    narrow = table.filter((pl.col("decisions") > 0) & (pl.col("only_move") / pl.col("decisions") > 0.5))
    if narrow.height:
        shares = [
            f"{name} {100 * share:.0f}%"
            for name, share in narrow.select("strategy", pl.col("only_move") / pl.col("decisions")).iter_rows()
        ]
        text.append(
            "Most decisions have exactly one move that keeps the forecast, so a turn usually matters "
            f"({listed(shares)} of decisions): Modiar punishes the wrong move more often than it forgives it."
        )
    return text


def _row(table: pl.DataFrame, strategy: str) -> dict[str, Any] | None:
    found = table.filter(pl.col("strategy") == strategy)
    return found.row(0, named=True) if found.height else None


def _cells(row: dict[str, Any], data: ReportData) -> list[str]:
    decisions = row["decisions"]

    def share(name: str) -> str:
        return "n/a" if decisions == 0 else f"{100 * row[name] / decisions:.1f}"

    return [
        *rules_cells(row, data),
        row["strategy"],
        figure(row["lead_changes"], 2, decimals=3),
        figure(100 * row["comeback"], 2, decimals=2),
        figure(row["drama_plies"], 2, decimals=3),
        figure(row["drama_severity"], 2, decimals=2),
        figure(row["decided_ply"], 2, decimals=2),
        f"{figure(row['stones_lost_south'], 2, decimals=2)} / {figure(row['stones_lost_north'], 2, decimals=2)}",
        f"{figure(row['mistakes_south'], 2, decimals=2)} / {figure(row['mistakes_north'], 2, decimals=2)}",
        f"{decisions:.2f}",
        share("only_move"),
        share("free_choice"),
        "n/a" if decisions == 0 else f"{row['stake'] / decisions:.1f}",
        f"{row['plies']:.2f}",
    ]
