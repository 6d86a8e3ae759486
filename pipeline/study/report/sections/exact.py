"""The study report's check of its sampled games against the exact outcomes, and its alarm."""

from __future__ import annotations

from typing import Any

import polars as pl

from pipeline.exact.check import FLAG_P, FLAG_Z, MIN_EXPECTED, MIN_GAMES, label
from pipeline.report.document import Section, Table
from pipeline.report.prose import plural
from pipeline.runs.records import PAIRING_COLUMNS
from pipeline.study.report.data import ReportData
from pipeline.study.report.sections.cells import flag_count, pairing_cells, pairing_header, z_score


def exact_section(check: pl.DataFrame, data: ReportData) -> Section:
    """The test of every sampled figure against its exact value (pipeline.exact.check)."""
    pairings = check.select(*PAIRING_COLUMNS).unique(maintain_order=True).height
    flagged = check.filter("flagged")
    approximate = check.filter("approximate")
    largest = (
        check.with_columns(pl.col("z").abs().alias("_size")).sort("_size", descending=True, nulls_last=True).row(0, named=True)
    )
    text = [
        "Where the study has the exact outcome of a pairing (the distribution of the outcome of two table strategies, "
        "computed over every position their games can reach, with no sampling error), every figure its games estimate "
        "is tested against its exact value: "
        "the shares of South wins, draws and North wins, the first-player score, the mean length and, for every rule "
        "event, the share of games in which it fires and its mean count per game. The test is a one-sample z test, "
        "z = (sampled - exact) / standard error, the standard error being that of the pairing's games under the exact "
        "distribution (for an event's mean count, whose exact variance is not stored, the sample's, but never below the "
        f"least a count with the exact mean can have). A figure with |z| above {FLAG_Z:g} (a chance of {FLAG_P:.1e} for one "
        "honest figure) is flagged as a possible bug at the top of the report (the code: pipeline.exact.check); "
        "tables/exact_check.csv has every test and tables/exact.csv every exact outcome, at full precision.",
        f"**{len(check):,} figures of {plural(pairings, 'pairing')} tested: {flag_count(len(flagged))}.** "
        f"The z farthest from 0 is {z_score(largest['z'])}: {_figure(largest, data)}"
        f"{' (approximate, see below)' if largest['approximate'] else ''}.",
    ]
    if len(approximate):
        text.append(
            f"The z of {len(approximate):,} of these figures is approximate: the pairing has fewer than {MIN_GAMES} games, "
            f"or fewer than {MIN_EXPECTED} of its games are expected away from the figure's most likely value (a rare event, "
            "a share near 0 or 1), where the normal law misleads (one game in which a rare event fires can lie many "
            "standard errors out). Such a share is flagged by its exact binomial test at the same level instead, and any "
            "other such figure only when its exact outcome rules it out."
        )
    unflagged = approximate.filter(~pl.col("flagged") & (pl.col("z").abs() > FLAG_Z))
    if len(unflagged):
        text.append(
            f"Approximate figures with |z| above {FLAG_Z:g} but not flagged (their exact test, or the share behind them, "
            f"passes): {'; '.join(_finding(row, data) for row in unflagged.iter_rows(named=True))}."
        )
    tables = [
        Table(
            "Sampled against exact per pairing",
            [*pairing_header(data), "games", "figures", "z farthest from 0", "flagged"],
            _check_rows(check, data),
            "exact_check",
        )
    ]
    if len(flagged):
        header = [*pairing_header(data), "figure", "games", "sampled", "exact", "standard error", "z", "approximate"]
        rows = [
            [
                *pairing_cells(row, data),
                label(row["quantity"]),
                f"{row['games']:,}",
                f"{row['sampled']:.6g}",
                f"{row['exact']:.6g}",
                f"{row['se']:.3g}",
                z_score(row["z"]),
                "yes" if row["approximate"] else "no",
            ]
            for row in flagged.iter_rows(named=True)
        ]
        tables.append(Table("Flagged figures: possible bugs", header, rows))
    return Section(
        "Sampled against exact",
        text,
        tables,
        [
            (
                "sampled_against_exact",
                "Every sampled figure tested against its exact value: the histogram of their z scores against the "
                "standard normal density they follow when games and exact values agree. Dashed lines: the alarm's "
                f"level, |z| = {FLAG_Z:g}. Approximate z (rare events, small pairings) are included; figures that cannot "
                "vary (certain or impossible under the exact outcome, z = 0) are counted, not drawn.",
            )
        ],
    )


def _check_rows(check: pl.DataFrame, data: ReportData) -> list[list[str]]:
    """Per pairing: its games, the figures tested, the z farthest from 0 (which figure) and how many are flagged."""
    rows = []
    for _, part in check.group_by(*PAIRING_COLUMNS, maintain_order=True):
        largest = (
            part.with_columns(pl.col("z").abs().alias("_size")).sort("_size", descending=True, nulls_last=True).row(0, named=True)
        )
        rows.append(
            [
                *pairing_cells(largest, data),
                f"{largest['games']:,}",
                f"{len(part)}",
                f"{z_score(largest['z'])} ({label(largest['quantity'])})",
                f"{part['flagged'].sum()}",
            ]
        )
    return rows


def exact_alarm(data: ReportData) -> list[str]:
    """The report's first words when a sampled figure lies more than 4 standard errors from its
    exact value: every such figure, none left out."""
    if data.exact_check is None or not data.exact_check["flagged"].any():
        return []
    flagged = data.exact_check.filter("flagged")
    return [
        f"POSSIBLE BUG: {plural(len(flagged), 'sampled figure')} of this study {'lies' if len(flagged) == 1 else 'lie'} "
        f"more than {FLAG_Z:g} standard errors from {'its' if len(flagged) == 1 else 'their'} exact value (|z| > {FLAG_Z:g}; "
        "see Sampled against exact). The games were played by the engine whose exact outcomes they are tested against: "
        "check the engine, the batch player, the records and the metrics before trusting this report.",
        *(_finding(row, data) for row in flagged.iter_rows(named=True)),
    ]


def _finding(row: dict[str, Any], data: ReportData) -> str:
    """One tested figure in words: pairing, figure, sampled and exact values, z."""
    approximate = f"; approximate, exact binomial p {row['p']:.2g}" if row["approximate"] else ""
    return (
        f"{_figure(row, data)}: sampled {row['sampled']:.6g} in {row['games']:,} games, exact {row['exact']:.6g}, "
        f"z = {z_score(row['z'])}{approximate}"
    )


def _figure(row: dict[str, Any], data: ReportData) -> str:
    """A tested figure's name: its pairing (and rule set) and its quantity in words."""
    rules = f"{row['rules']}, " if data.several_rules else ""
    return f"{rules}{row['south']} v {row['north']}, {label(row['quantity'])}"
