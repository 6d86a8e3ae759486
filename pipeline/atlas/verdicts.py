"""What decides the atlas's verdicts, and which of its rule sets are one game.

A verdict (the first player wins, fair, the second wins) is *decided by play* when the side the
value favours can end play before the ply cap (at a value of 0: when every value-keeping game
ends), else *at the cap*, whose scoring (each player keeps the stones of its row) is then the
referee (docs/remoteness.md; pipeline.atlas.analyse's verdict columns). Rule sets whose games from
the start are identical (the same game_fingerprint: engine.exact.game_fingerprint) are one game
counted once. Rows kept from before the verdict columns have them null: they count as "not yet".
"""

from __future__ import annotations

import polars as pl

from engine.solver import CAP, PLAY
from pipeline.report.document import Section, Table
from pipeline.report.prose import plural, signed

# (outcome, its words, the start values it holds)
OUTCOMES = (
    ("fair", "fair", pl.col("start_value") == 0),
    ("first", "won by the first player", pl.col("start_value") > 0),
    ("second", "won by the second player", pl.col("start_value") < 0),
)
COUNT_COLUMNS = ("rule_sets", "by_play", "at_cap", "not_yet", "games", "games_by_play", "games_at_cap", "parity")


def verdict_counts(frame: pl.DataFrame) -> pl.DataFrame:
    """For each outcome (fair, first, second) and in all: its rule sets, how many play decides,
    how many the cap, how many have no verdict yet, the distinct games among those with one
    (in all, decided by play, at the cap), and how many change with the cap's parity (another
    start value under a cap one ply shorter or longer)."""
    rows = []
    for outcome, _, holds in (*OUTCOMES, ("all", "in all", pl.lit(True))):
        part = frame.filter(holds)
        known = part.filter(pl.col("decided_by").is_not_null())
        play, cap = known.filter(pl.col("decided_by") == PLAY), known.filter(pl.col("decided_by") == CAP)
        rows.append(
            {
                "outcome": outcome,
                "rule_sets": part.height,
                "by_play": play.height,
                "at_cap": cap.height,
                "not_yet": part.height - known.height,
                "games": known["game_fingerprint"].n_unique(),
                "games_by_play": play["game_fingerprint"].n_unique(),
                "games_at_cap": cap["game_fingerprint"].n_unique(),
                "parity": _parity(known).height,
            }
        )
    return pl.DataFrame(rows, schema={"outcome": pl.String} | dict.fromkeys(COUNT_COLUMNS, pl.Int64), orient="row")


def _parity(frame: pl.DataFrame) -> pl.DataFrame:
    """The rule sets whose start value under a cap one ply shorter or longer is another."""
    value = pl.col("start_value")
    return frame.filter((pl.col("value_cap_one_less") != value) | (pl.col("value_cap_one_more") != value))


def game_groups(frame: pl.DataFrame) -> pl.DataFrame:
    """The games that more than one rule set plays, in the atlas's order of their first rule set:
    how many rule sets, their names (space-separated), and the game's start value, what decides
    it and its remoteness."""
    known = frame.filter(pl.col("game_fingerprint").is_not_null()).with_row_index("order")
    groups = (
        known.group_by("game_fingerprint", maintain_order=True)
        .agg(
            pl.len().alias("rule_sets"),
            pl.col("rules").str.join(" ").alias("names"),
            pl.col("start_value").first(),
            pl.col("decided_by").first(),
            pl.col("remoteness").first(),
            pl.col("order").min(),
        )
        .filter(pl.col("rule_sets") > 1)
        .sort("order")
    )
    return groups.select("rule_sets", "names", "start_value", "decided_by", "remoteness", "game_fingerprint")


def verdict_sentence(frame: pl.DataFrame) -> str:
    """The atlas's verdicts in words, each count split by what decides it and counted in
    distinct games beside rule sets; says how many rule sets have no verdict yet."""
    counts = {row["outcome"]: row for row in verdict_counts(frame).iter_rows(named=True)}
    cap = int(frame["ply_cap"].max()) if frame.height else 0  # type: ignore[arg-type]
    parts = []
    for outcome, words, _ in OUTCOMES:
        row = counts[outcome]
        split = [
            f"{row['by_play']} by play ({plural(row['games_by_play'], 'distinct game')})",
            f"{row['at_cap']} only at the {cap}-ply cap ({plural(row['games_at_cap'], 'game')})",
        ]
        if row["not_yet"]:
            split.append(f"{row['not_yet']} not yet known")
        parts.append(f"{row['rule_sets']} {'are' if row['rule_sets'] != 1 else 'is'} {words}: {', '.join(split)}")
    every = counts["all"]
    text = (
        "Under perfect play "
        + "; ".join(parts)
        + ". A verdict decided at the cap is the cap's scoring (each player keeps the stones of its row), not play's; "
        f"rule sets whose games from the start are identical count as one distinct game ({plural(every['games'], 'game')} "
        f"among {plural(every['rule_sets'] - every['not_yet'], 'rule set')})."
    )
    if every["parity"]:
        text += (
            f" {every['parity']} of the verdicts change with the cap's parity: under a cap of {cap - 1} or {cap + 1} plies "
            "their start value is another."
        )
    passing = frame.filter((pl.col("decided_by") == CAP) & (pl.col("min_stones_to_play") == 1) & pl.col("sow_origin"))
    if every["at_cap"]:
        text += (
            f" {passing.height} of the {every['at_cap']} decided at the cap allow singletons with RULES.md's sowing, where "
            "a singleton's one stone goes straight back into its own pit: a pass, so either side can keep play going."
        )
    if every["not_yet"]:
        verb = "has" if every["not_yet"] == 1 else "have"
        waiting = plural(every["not_yet"], "rule set")
        text += f" {waiting} kept from an older run {verb} no verdict yet (modiar atlas run completes them)."
    return text


def verdict_words(frame: pl.DataFrame) -> list[str]:
    """The report's paragraphs on the verdicts: verdict_sentence, and what the words mean."""
    cap = int(frame["ply_cap"].max())  # type: ignore[arg-type]
    return [
        verdict_sentence(frame),
        f"Each verdict is decided by play when the side ahead can end play before the {cap}-ply cap (at a start value "
        "of 0: when every value-keeping game ends), and at the cap otherwise. Its remoteness is the length of a perfect "
        "game in which the side ahead hurries and the other delays (both hurry at 0): the length of perfect play that "
        "ends; beside it, perfect play's mean length with ties broken at random (mean plies: perfect), which need not "
        "hurry. Both are exact.",
    ]


def verdict_table(frame: pl.DataFrame) -> Table:
    """verdict_counts as the report's table (tables/verdicts.csv)."""
    counts = verdict_counts(frame)
    rows = [[row["outcome"], *(str(row[column]) for column in COUNT_COLUMNS)] for row in counts.iter_rows(named=True)]
    header = [
        "outcome",
        "rule sets",
        "by play",
        "at the cap",
        "not yet",
        "games",
        "games by play",
        "games at the cap",
        "parity",
    ]
    return Table("Verdicts by what decides them, in rule sets and distinct games", header, rows, "verdicts")


def games_section(groups: pl.DataFrame) -> Section:
    """The report's section listing each game_groups game once."""
    text = [
        "Rule sets whose games from the start are identical (the same positions, moves, captures and rule events, the "
        "first move and the cap) are one game under several names; each such game is "
        f"listed once, {plural(groups.height, 'game')} in all. Every other rule set is a game of its own."
    ]
    rows = [
        [
            str(row["rule_sets"]),
            row["names"],
            signed(row["start_value"]),
            row["decided_by"],
            "—" if row["remoteness"] is None else str(row["remoteness"]),
        ]
        for row in groups.iter_rows(named=True)
    ]
    header = ["rule sets", "names", "start value", "decided by", "remoteness"]
    return Section(
        "One game under several names", text, [Table("The games played by more than one rule set", header, rows, "games")]
    )
