"""The atlas report's sections on balancing a rule set: the pie rule and komi of every rule set,
and the rule sets fair by play nearest RULES.md's (their Pareto front), from
pipeline.analysis.fairness's tables.
"""

from __future__ import annotations

import polars as pl

from engine.game import EVENT_BY_NAME
from pipeline.analysis.fairness import EXACT_EVENTS
from pipeline.report.document import Section, Table
from pipeline.report.prose import listed, plural, signed

# The Pareto front's figures (pipeline.analysis.fairness.RULE_SET_PARETO_COLUMNS): each one's
# header, its words in a sentence, and its form (plies to two places, a chance to four, a count
# of positions whole).
FRONT_WORDS = {
    "perfect_mean_plies": ("mean plies (perfect)", "perfect play's mean length", "{:.2f}"),
    **{
        f"random_{event}_fires": (
            f"P({EVENT_BY_NAME[event].clause}), random",
            f"the chance that {EVENT_BY_NAME[event].clause} in a random game",
            "{:.4f}",
        )
        for event in EXACT_EVENTS
    },
    "never_settled": ("positions that never settle", "the number of positions whose value never settles", "{:,}"),
}


def balance_section(balances: pl.DataFrame) -> Section:
    """The pie rule and komi: what each gives every rule set, from its first moves' values."""
    drawn = int((balances["pie_value"] == 0).sum())
    text = [
        "Two classic devices balance a game that favours one seat. The pie rule lets North, after South's first move, "
        "take South's side: South then opens with a move of least |value| and the game is worth minus that to South, "
        "never more than 0. Komi gives the first player stones at the end: komi shifts every final margin alike, so a "
        "komi of minus the start value draws under perfect play, and a komi half a stone above or below it leaves no "
        "draw: under perfect play the first player then wins, or loses, by half a stone. Both follow from the values of "
        f"the first moves the atlas keeps. The pie rule draws {drawn} of the "
        f"{plural(balances.height, 'rule set')} (a first move worth 0 exists); tables/balance.csv has every value.",
    ]
    rows = [
        [
            row["rules"],
            signed(row["start_value"]),
            " ".join(
                "-" if row[f"first_move_{pit}_value"] is None else signed(row[f"first_move_{pit}_value"]) for pit in range(3)
            ),
            "-" if row["pie_value"] is None else signed(row["pie_value"]),
            signed(row["komi"]),
        ]
        for row in balances.iter_rows(named=True)
    ]
    header = ["rules", "start value", "first moves' values (pits 0 1 2)", "with the pie rule", "komi for a draw"]
    return Section(
        "Balancing: the pie rule and komi",
        text,
        [Table("The start value, the pie rule and komi of every rule set", header, rows, "balance")],
    )


def front_section(front: pl.DataFrame, reference: str) -> Section:
    """The rule sets fair by play, and which of them are on the Pareto front of closeness to
    ``reference``: the sentence that says what the front is, right above its table."""
    columns = [column for column in front.columns if column not in ("rules", "pareto")]
    header = [FRONT_WORDS[column][0] for column in columns]
    text = [
        "Among the rule sets fair by play (a fair verdict decided at the cap is the cap's, and one not yet known is left "
        f"out), those on the Pareto front of closeness to {reference}: no other such rule set is at least as close to "
        f"{reference} in each of {listed([FRONT_WORDS[column][1] for column in columns])} and closer in one."
    ]
    rows = [
        [row["rules"], *(_figure(column, row[column]) for column in columns), "yes" if row["pareto"] else ""]
        for row in front.iter_rows(named=True)
    ]
    table = Table("The rule sets fair by play and the Pareto front", ["rules", *header, "Pareto"], rows, "fair_front")
    return Section(f"Fair by play and nearest {reference}: the Pareto front", text, [table])


def _figure(column: str, value: float | None) -> str:
    return "—" if value is None else FRONT_WORDS[column][2].format(value)
