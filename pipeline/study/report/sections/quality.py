"""The study report's section on game quality: is Modiar a good game, and where do players err."""

from __future__ import annotations

from typing import Any

import numpy as np
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
    tables = [Table("Exact quality of self-play (expectations per game)", header, rows, "quality")]
    if data.calibration is not None and data.calibration_agreement is not None:
        text += calibration_words(data.calibration, data.calibration_agreement)
        tables.append(calibration_table(data.calibration, data.calibration_agreement))
    return Section("Is it a good game?", text, tables, figures=figures)


# Ludii's five metrics the report calibrates, each with the name of what Ludii's code computes for it.
LUDII_METRICS = (
    ("Drama", "Drama_code"),
    ("LeadChange", "LeadChange_code"),
    ("Stability", "Stability_code"),
    ("DecisivenessMoves", "DecisivenessMoves_code"),
    ("ClarityNarrowness", "ClarityNarrowness_code"),
)
HEURISTIC = "heuristic"


def calibration_words(table: pl.DataFrame, agreement: pl.DataFrame) -> list[str]:
    """What the calibration of Ludii's metrics finds, in words (pipeline.analysis.calibration_ludii)."""
    games = int(table["games"].to_numpy().min())
    strategies = table["strategy"].n_unique()
    monte_carlo = _monte_carlo(table)
    reversed_ = [metric for metric, _ in LUDII_METRICS if (rho := _rho(agreement, metric, HEURISTIC)) is not None and rho < 0]
    text = [
        "**Ludii's metrics against the truth.** Ludii (the general game system's Evaluation metrics) measures drama, "
        "lead changes, stability, decisiveness and clarity from an *estimate* of every state: its default heuristic "
        "through tanh (stones captured minus the opponent's, plus 0.001 a legal move for the player to move), or "
        f"playouts. The table below computes each metric as Ludii defines it on the first {games:,} self-play games of "
        f"each of the {strategies} table strategies, once from the exact forecast's sign and once from each estimate "
        f"(the heuristic; {monte_carlo}, the mean result of random playouts), with the mean bias of the estimate and "
        "Spearman's rank correlation of the strategies' means with the exact ones."
    ]
    if reversed_:
        perfect = table.filter(
            (pl.col("strategy") == "perfect") & (pl.col("metric") == "LeadChange") & (pl.col("evaluator") == HEURISTIC)
        )["mean"].to_numpy()
        seen = (
            f" In perfect self-play, where the forecast never moves, it reads a LeadChange of {perfect[0]:.2f}."
            if len(perfect) and perfect[0] > 0
            else ""
        )
        text.append(f"The heuristic ranks the strategies against the truth's order for {listed(reversed_)}.{seen}")
    silent = [metric for metric, coded in LUDII_METRICS if _constant(table, coded)]
    if silent:
        text.append(
            f"Ludii's code, as written, prints the same value for every game of every strategy for {listed(silent)} "
            "(it reads the winners before the first move, so that every player counts as one, and divides integers); "
            "docs/quality.md gives each departure of its code from its own definitions."
        )
    return text


def calibration_table(table: pl.DataFrame, agreement: pl.DataFrame) -> Table:
    monte_carlo = _monte_carlo(table)
    rows = []
    for metric, coded in LUDII_METRICS:
        exact = _values(table, metric, "exact", "mean")
        printed = _values(table, coded, HEURISTIC, "mean")
        row = [metric, f"{exact.min():.2f} to {exact.max():.2f}"]
        for evaluator in (HEURISTIC, monte_carlo):
            bias = _values(table, metric, evaluator, "bias_exact")
            rho = _rho(agreement, metric, evaluator)
            row += [f"{bias.mean():+.2f}", "n/a" if rho is None else f"{rho:+.2f}"]
        row.append(f"{printed.min():.2f} to {printed.max():.2f}" if len(printed) else "n/a")
        rows.append(row)
    header = [
        "Ludii metric (as defined)",
        "exact: range over strategies",
        "heuristic: mean bias",
        "heuristic: rank correlation",
        f"{monte_carlo}: mean bias",
        f"{monte_carlo}: rank correlation",
        "Ludii's code prints (heuristic)",
    ]
    return Table("Ludii's metrics from the exact forecast and from Ludii's estimates", header, rows, "calibration")


def _values(table: pl.DataFrame, metric: str, evaluator: str, column: str) -> np.ndarray:
    """A column of calibration_table's rows of one metric and evaluator, over the strategies."""
    rows = table.filter((pl.col("metric") == metric) & (pl.col("evaluator") == evaluator))
    values: np.ndarray = rows[column].to_numpy().astype(float)
    return values


def _monte_carlo(table: pl.DataFrame) -> str:
    found = [str(name) for name in table["evaluator"].unique().sort().to_list() if str(name).startswith("mc(")]
    return found[0] if found else "mc"


def _rho(agreement: pl.DataFrame, metric: str, evaluator: str) -> float | None:
    found = agreement.filter((pl.col("metric") == metric) & (pl.col("evaluator") == evaluator))["statistic"].to_numpy()
    return None if not len(found) or not np.isfinite(found[0]) else float(found[0])


def _constant(table: pl.DataFrame, coded: str) -> bool:
    means = _values(table, coded, HEURISTIC, "mean")
    return len(means) > 1 and float(means.max() - means.min()) == 0


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
