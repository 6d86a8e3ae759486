"""The cells and phrases every section of the study report shares: rule sets and pairings as table
cells, shares, exact values beside sampled ones (the numbers in words of every report are
pipeline.report.prose's).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import polars as pl

import engine
from engine.game import Rules
from pipeline.exact.check import FLAG_Z
from pipeline.report.prose import figure, interval, listed
from pipeline.runs.records import IS_SELF_PLAY, PAIRING_COLUMNS
from pipeline.study.report.data import ReportData
from pipeline.study.report.words import short

# The rules the report's words refer to: the repository's RULES.md, seen from reports/<study>/.
RULES_MD = "[RULES.md](RULES.md)"  # the copy every report carries (pipeline.study.report.render)
# An exact value has no sampling error: it is printed with more digits than its sampled estimate.
EXACT_SCORE_DIGITS = 4  # the headline's first-player score: its float error is far below 1e-4


def ruled_out(data: ReportData) -> str:
    """The sentence naming, per rule set of the study, the events its rules rule out (no row in
    any table: engine.possible_events), if any."""
    parts = []
    for rules in data.rule_sets["rules"].to_list():
        absent = [short(name) for name in engine.EVENTS if name not in engine.possible_events(Rules.from_name(rules))]
        if absent:
            parts.append(f"{listed(absent)} under {rules}" if data.several_rules else listed(absent))
    if not parts:
        return ""
    return (
        f" A rule set without the rule behind an event has no row for it, rather than a count of 0 (RULES.md: Rule "
        f"events): {'; '.join(parts)}."
    )


def exact_tagged(parts: Sequence[tuple[str, bool]]) -> str:
    """Figures joined by semicolons, saying which are exact (a flag beside each): "(exact)" after
    each exact one, or once after all of them when every one is; sampled ones carry their interval."""
    if all(exact for _, exact in parts):
        return "; ".join(words for words, _ in parts) + " (exact values)"
    return "; ".join(f"{words} (exact)" if exact else words for words, exact in parts)


def significant_seats(seat_effect: pl.DataFrame) -> tuple[int, int, int]:
    """Of the pairs of different strategies in ``seat_effect``: how many, and in how many moving
    first is significantly worse and better (Holm-adjusted p < 0.05)."""
    pairs = seat_effect.filter(pl.col("strategy_a") != pl.col("strategy_b"))
    significant = pairs.filter(pl.col("seat_effect_p_holm") < 0.05)
    worse = significant.filter(pl.col("seat_effect") < 0).height
    return pairs.height, worse, significant.filter(pl.col("seat_effect") > 0).height


def swept_words(seat_effect: pl.DataFrame) -> tuple[int, str]:
    """The pairs of different strategies whose games cannot show a seat effect, as a count and a
    phrase naming them: one strategy won every game from either seat, or every game was drawn
    (data.seat_effects' sweep)."""
    swept = seat_effect.filter((pl.col("strategy_a") != pl.col("strategy_b")) & pl.col("sweep").is_not_null())
    by_winner: dict[str, list[str]] = {}
    drawn = []
    for row in swept.iter_rows(named=True):
        if row["sweep"] == "draws":
            drawn.append(f"{row['strategy_a']} and {row['strategy_b']} draw every game")
            continue
        loser = row["strategy_b"] if row["sweep"] == row["strategy_a"] else row["strategy_a"]
        by_winner.setdefault(row["sweep"], []).append(loser)
    phrases = [f"{winner} wins every game against {listed(losers)} from either seat" for winner, losers in by_winner.items()]
    return swept.height, "; ".join(phrases + drawn)


def unmeasured_seats(seat_effect: pl.DataFrame) -> int:
    """The pairs of different strategies whose games detect no seat effect (Holm-adjusted p at
    least 0.05) although they could: those whose games sweep (swept_words) are not counted."""
    pairs = seat_effect.filter(pl.col("strategy_a") != pl.col("strategy_b"))
    return pairs.filter((pl.col("seat_effect_p_holm") >= 0.05) & pl.col("sweep").is_null()).height


def total_stones(rules: str) -> int:
    return 6 * Rules.from_name(rules).stones_per_pit


def stones_words(value: int) -> str:
    return "draws" if value == 0 else f"{'wins' if value > 0 else 'loses'} by {abs(value)}"


def table_row(table: pl.DataFrame, keys: dict[str, Any]) -> dict[str, Any]:
    return table.filter(*(pl.col(key) == value for key, value in keys.items())).row(0, named=True)


def rules_header(data: ReportData) -> list[str]:
    """A rules column, in a study of several rule sets only (rules_cells fills it)."""
    return ["rules"] if data.several_rules else []


def rules_cells(row: dict[str, Any], data: ReportData) -> list[str]:
    return [row["rules"]] if data.several_rules else []


def pairing_header(data: ReportData) -> list[str]:
    return [*rules_header(data), "South", "North"]


def pairing_cells(row: dict[str, Any], data: ReportData) -> list[str]:
    return [*rules_cells(row, data), row["south"], row["north"]]


def share_cell(row: dict[str, Any], name: str, digits: int = 1) -> str:
    share, low, high = (100 * row[f"{name}{part}"] for part in ("_share", "_low", "_high"))
    return interval(share, low, high, f".{digits}f")


def plain(row: dict[str, Any], name: str, digits: int) -> str:
    value = row[f"{name}_share"] if f"{name}_share" in row else row[f"{name}_score"]
    return interval(value, row[f"{name}_low"], row[f"{name}_high"], f".{digits}f")


def ludii_cell(name: str, value: float | None) -> str:
    if value is None or value != value:  # no ply to measure: games of 0 plies
        return "n/a"
    # Repetitions are rare (a few in ten million states): three significant digits, no exponent.
    if name.startswith("PositionalRepetition"):
        return figure(value, 3)
    return f"{value:.1f}" if name == "Duration_p99" else f"{value:.4f}"


def rate_cell(row: dict[str, Any]) -> str:
    if row["per_100_turns"] is None:
        return "n/a"
    return interval(row["per_100_turns"], row["per_100_turns_low"], row["per_100_turns_high"])


def start_values(table: pl.DataFrame) -> list[tuple[str, int]]:
    return [
        (str(rules), int(value)) for rules, value in table.select("rules", "start_value").unique(maintain_order=True).iter_rows()
    ]


def start_words(rules: str, value: int) -> str:
    """The value of a rule set's start in words: who wins by how much under perfect play."""
    total = total_stones(rules)
    if value == 0:
        return f"a draw with perfect play on both sides ({total // 2} stones each)"
    winner = "South (first)" if value > 0 else "North (second)"
    score = f"{(total + abs(value)) // 2} to {(total - abs(value)) // 2}"
    return f"{winner} wins by {abs(value)} stones with perfect play on both sides ({score})"


def described(pairings: pl.DataFrame) -> str:
    """The pairings of a table keyed by pairing, as "south v north, ..."."""
    return ", ".join(f"{row['south']} v {row['north']}" for row in pairings.iter_rows(named=True))


def anchor_text(first_move: pl.DataFrame) -> str:
    anchors = first_move["anchor"].unique(maintain_order=True).to_list()
    if anchors == [None]:
        return "Ratings are centred on their mean."
    return f"{' and '.join(str(anchor) for anchor in anchors if anchor)} is rated 0; the others relative to it."


def exact_row(data: ReportData, keys: dict[str, Any]) -> dict[str, Any] | None:
    """The exact outcome of a pairing (the PAIRING_COLUMNS of ``keys``), None when the study has none."""
    if data.exact is None:
        return None
    found = data.exact.filter(*(pl.col(key) == keys[key] for key in PAIRING_COLUMNS))
    return found.row(0, named=True) if found.height else None


def exact_cell(data: ReportData, keys: dict[str, Any], column: str, form: str, scale: float = 1.0) -> str:
    """A column of the pairing's exact outcome, formatted (times ``scale``); n/a without one."""
    exact = exact_row(data, keys)
    return "n/a" if exact is None else form.format(scale * exact[column])


def exact_outcome_cells(data: ReportData, row: dict[str, Any]) -> list[str | None]:
    """The exact cells beside _outcome_cells without North's wins: South's wins, draws and the
    score (None: no exact column)."""
    return [
        None,
        exact_cell(data, row, "south_win", "{:.3f}", 100),
        exact_cell(data, row, "draw", "{:.3f}", 100),
        exact_cell(data, row, "first_player_score", "{:.6f}"),
        None,
        None,
    ]


def put_beside(sampled: list[str], exact: Sequence[str | None], data: ReportData) -> list[str]:
    """Sampled cells (or headers), each followed by its exact one when the study has exact outcomes
    (an exact entry of None: that cell has none)."""
    if data.exact is None:
        return sampled
    return [cell for pair in zip(sampled, exact, strict=True) for cell in pair if cell is not None]


def exact_note(data: ReportData) -> str:
    """The sentence that introduces a table's exact columns, when it has them."""
    if data.exact is None:
        return ""
    return f" Beside each sampled figure, its exact value (no sampling error){_without_exact(data)}."


def _without_exact(data: ReportData) -> str:
    """Which pairings have no exact value, and why: those with a strategy that has no exact
    outcome (a search that samples, such as mcts), and those the study chose not to compute."""
    assert data.exact is not None
    computed = data.exact.select(*PAIRING_COLUMNS)
    missing = data.outcomes.select(*PAIRING_COLUMNS).join(computed, on=list(PAIRING_COLUMNS), how="anti")
    if not missing.height:
        return ""
    names = pl.concat([missing["south"], missing["north"]]).unique(maintain_order=True).to_list()
    sampling = [name for name in names if not engine.is_table_strategy(name)]
    has, its = ("has", "its") if len(sampling) == 1 else ("have", "their")
    reasons = [f"{listed(sampling)} {has} none, choosing {its} moves by sampling"] if sampling else []
    chosen = missing.filter(~pl.col("south").is_in(sampling) & ~pl.col("north").is_in(sampling))
    if chosen.height:
        reasons.append(
            "the study computed self-play only" if chosen.filter(IS_SELF_PLAY).height == 0 else "the study left it out"
        )
    return f"; n/a where there is none ({'; '.join(reasons)})"


def z_score(z: float) -> str:
    return f"{z:+.2f}" if math.isfinite(z) else ("+infinite" if z > 0 else "-infinite")


def flag_count(flagged: int) -> str:
    return "none flagged" if flagged == 0 else f"{flagged:,} flagged (|z| > {FLAG_Z:g}), listed at the top of the report"


def per_ply_words(table: pl.DataFrame | None) -> pl.DataFrame:
    """A table of compute's that replays every game, which a report cannot do without."""
    if table is None:
        raise ValueError("a report needs the per-ply tables: compose the tables of compute(games, manifest), per_ply=True")
    return table
