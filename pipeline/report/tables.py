"""The report's tables, at full precision: ``compute`` reads a study's games into a ReportData.

Every table keyed by pairing (columns rules, south, north) is in the study's order, that of
its config (the game ids), rather than alphabetical; the CSV files of the report are these
tables as they are (pipeline.report.render).
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass, fields, replace

import polars as pl

import engine
from engine.rules import Rules
from pipeline.exact_check import exact_check
from pipeline.metrics import events, ludii, outcomes
from pipeline.records import Manifest
from pipeline.study import parse_study
from pipeline.turns import END_EVENTS, TURN_EVENTS

KEYS = ("rules", "south", "north")
SELF_PLAY = pl.col("south") == pl.col("north")
# The exact table of the report: exact.parquet without its list columns (plies, margin), with
# the length's standard deviation.
EXACT_COLUMNS = (
    *KEYS,
    "variant",
    "south_win",
    "draw",
    "north_win",
    "first_player_score",
    "mean_plies",
    "plies_sd",
    "unresolved",
    *(f"{kind}_{name}" for name in engine.EVENTS for kind in ("fires", "mean")),
)
# The rules' events proper (fired or not in a game), without the counters of stones and pits.
GAME_EVENTS = (*TURN_EVENTS, *END_EVENTS)


@dataclass(frozen=True, kw_only=True, eq=False, repr=False)
class ReportData:
    """Every table of the report (polars DataFrames, full precision); a field's name is its CSV's.

    The tables of pipeline.metrics, pipeline.turns and pipeline.ratings, with the columns their
    functions document. ``ratings`` and ``first_move`` are None when no rule set has two
    strategies to rate; ``agreement`` is None when the study never played ``perfect``; ``exact``
    and ``exact_check`` are None when the study has no exact outcomes (exact.parquet).
    """

    rule_sets: pl.DataFrame  # one row per rule set: rules, variant (its label), games, start_value
    outcomes: pl.DataFrame  # per pairing: pipeline.metrics.outcomes
    outcomes_overall: pl.DataFrame  # per rule set, every pairing pooled
    ludii: pl.DataFrame  # per pairing: pipeline.metrics.ludii (with the length's quantiles)
    ludii_plies: pl.DataFrame  # per pairing: pipeline.turns.ludii_plies
    events: pl.DataFrame  # per pairing and event: pipeline.metrics.events
    events_by_ply: pl.DataFrame  # per pairing, event and ply: pipeline.turns.events_by_ply
    lengths: pl.DataFrame  # per pairing and length in plies: its games
    ratings: pl.DataFrame | None = None  # per rule set and strategy: the ladder of pipeline.ratings
    first_move: pl.DataFrame | None = None  # per rule set: the first-move term of the ratings
    agreement: pl.DataFrame | None = None  # per rule set and strategy: pipeline.turns.agreement
    exact: pl.DataFrame | None = None  # per pairing with an exact outcome: exact.parquet, flat (EXACT_COLUMNS)
    exact_check: pl.DataFrame | None = None  # per pairing and quantity: pipeline.exact_check.exact_check

    def tables(self) -> Iterator[tuple[str, pl.DataFrame]]:
        """(name, table) for every table there is, in the order of the fields."""
        for name in (field.name for field in fields(self)):
            table = getattr(self, name)
            if table is not None:
                yield name, table

    def __repr__(self) -> str:
        shapes = ", ".join(f"{name}: {table.height} × {table.width}" for name, table in self.tables())
        return f"ReportData({shapes})"

    @property
    def several_rules(self) -> bool:
        """Whether the study played several rule sets (a variant sweep)."""
        return bool(self.outcomes["rules"].n_unique() > 1)

    def main_pairings(self) -> pl.DataFrame:
        """Per rule set, the pairing with the most games (the first in order on a tie): KEYS."""
        table = self.outcomes.with_row_index("order")
        best = table.sort(["games", "order"], descending=[True, False]).unique("rules", keep="first", maintain_order=True)
        return best.sort("order").select(*KEYS)

    def with_variant(self, table: pl.DataFrame) -> pl.DataFrame:
        """``table`` with the variant label of its rule set (column variant) beside its rules."""
        return table.join(self.rule_sets.select("rules", "variant"), on="rules", how="left", maintain_order="left")


def compute(games: pl.LazyFrame, manifest: Manifest | None = None, *, exact: pl.LazyFrame | None = None) -> ReportData:
    """Every table of the report from a study's games (pipeline.records.scan_games).
    ``manifest`` (the study's, pipeline.records.read_manifest) gives the rule sets their
    variant labels; without it a rule set is labelled by its name. ``exact`` (the study's exact
    outcomes, pipeline.records.scan_exact) adds the tables exact and exact_check."""
    keys = list(KEYS)
    first = _first_games(games)
    pairings = outcomes(games, by=keys)
    ludii_plies, events_by_ply = _per_ply(games, keys)
    ratings, first_move = _ratings(pairings)
    agreement = _agreement(games)
    data = ReportData(
        rule_sets=_rule_sets(first, agreement, manifest),
        outcomes=pairings,
        outcomes_overall=outcomes(games, by=["rules"]),
        ludii=ludii(games, by=keys),
        ludii_plies=ludii_plies,
        events=events(games, by=keys),
        events_by_ply=events_by_ply,
        lengths=games.group_by(*keys, "plies").agg(pl.len().alias("games")).sort(*keys, "plies").collect(),
        ratings=ratings,
        first_move=first_move,
        agreement=agreement,
        exact=None if exact is None else _exact(exact, first),
        exact_check=None if exact is None else exact_check(games, exact),
    )
    return replace(data, **{name: _sorted_by(table, first) for name, table in data.tables()})


def variant_labels(manifest: Manifest) -> dict[str, str]:
    """Rule-set name -> the label the study config gives it: "default" for its [rules], the key
    of [variants.LABEL] for the others."""
    return {rule_set.rules.name: rule_set.label for rule_set in parse_study(manifest["config"]).rule_sets()}


def _rule_sets(first: pl.DataFrame, agreement: pl.DataFrame | None, manifest: Manifest | None) -> pl.DataFrame:
    """One row per rule set, in the study's order: rules, variant (its label), games and, when
    the study played perfect under it, start_value (the start's value for South under perfect play)."""
    labels = variant_labels(manifest) if manifest is not None else {}
    table = first.group_by("rules").agg(pl.col("games").sum(), pl.col("_first").min()).sort("_first").drop("_first")
    table = table.with_columns(pl.col("rules").replace_strict(labels, default=pl.col("rules")).alias("variant"))
    if agreement is not None:
        values = agreement.select("rules", "start_value").unique("rules")
        table = table.join(values, on="rules", how="left", maintain_order="left")
    else:
        table = table.with_columns(pl.lit(None, dtype=pl.Int64).alias("start_value"))
    return table.select("rules", "variant", "games", "start_value")


def _exact(exact: pl.LazyFrame, first: pl.DataFrame) -> pl.DataFrame:
    """The exact outcome of every pairing the study played that has one, flat (no list column,
    so that it is a CSV): EXACT_COLUMNS, plies_sd being the standard deviation of the length."""
    table = exact.join(first.lazy().select(*KEYS), on=list(KEYS), how="semi").collect()
    spread = [
        math.sqrt(max(sum(mass * (length - mean) ** 2 for length, mass in enumerate(plies)), 0.0))
        for plies, mean in table.select("plies", "mean_plies").iter_rows()
    ]
    return table.with_columns(pl.Series("plies_sd", spread, dtype=pl.Float64)).select(EXACT_COLUMNS)


def _first_games(games: pl.LazyFrame) -> pl.DataFrame:
    """Per pairing: its first game id (_first, the study's order) and its number of games."""
    return games.group_by(list(KEYS)).agg(pl.col("game_id").min().alias("_first"), pl.len().alias("games")).collect()


def _sorted_by(table: pl.DataFrame, first: pl.DataFrame) -> pl.DataFrame:
    """A table keyed by pairing in the order of ``first`` (the rows of a pairing keep theirs);
    a table without the KEYS columns as it is."""
    keys = list(KEYS)
    if not set(keys) <= set(table.columns):
        return table
    order = first.select(*keys, "_first")
    return table.with_row_index("_row").join(order, on=keys, how="left").sort("_first", "_row").drop("_first", "_row")


def _per_ply(games: pl.LazyFrame, keys: list[str]) -> tuple[pl.DataFrame, pl.DataFrame]:
    """Ludii's per-ply metrics and the events by ply, pairing by pairing (both are per pairing),
    so that only one pairing's plies are in memory at once: the default study holds 116 million
    plies, a sweep hundreds of millions."""
    from pipeline.turns import events_by_ply, ludii_plies, replay_games

    metrics, by_ply = [], []
    for pairing in games.select(keys).unique(maintain_order=True).collect().iter_rows(named=True):
        plies = replay_games(games.filter(*(pl.col(name) == value for name, value in pairing.items())), by=keys)
        metrics.append(ludii_plies(plies, by=keys))
        by_ply.append(events_by_ply(plies, by=keys))
        del plies
    return pl.concat(metrics), pl.concat(by_ply)


def _ratings(pairings: pl.DataFrame) -> tuple[pl.DataFrame | None, pl.DataFrame | None]:
    """The rating ladder and the first-move term of every rule set with two strategies or more;
    (None, None) when there is none."""
    from pipeline.ratings import ratings

    ladders, first_moves = [], []
    for (rules,), part in pairings.group_by("rules", maintain_order=True):
        if part.select(pl.concat_list("south", "north").explode().n_unique()).item() < 2:
            continue
        fitted = ratings(part)
        ladders.append(fitted.ladder.select(pl.lit(rules).alias("rules"), pl.all()))
        first, score = fitted.first_move, fitted.first_player_score
        first_moves.append(
            pl.DataFrame(
                {
                    "rules": [rules],
                    "anchor": [None if fitted.anchor is None else str(fitted.anchor)],
                    "prior_sd": [fitted.prior_sd],
                    "elo": [first.value],
                    "low": [first.low],
                    "high": [first.high],
                    "expected_score": [score.value],
                    "expected_score_low": [score.low],
                    "expected_score_high": [score.high],
                }
            )
        )
    if not ladders:
        return None, None
    return pl.concat(ladders), pl.concat(first_moves)


def _agreement(games: pl.LazyFrame) -> pl.DataFrame | None:
    """Agreement with perfect play for each rule set under which the study played ``perfect``:
    its solution was needed to play, so the report does not depend on what else is cached."""
    from engine.solver import solve
    from pipeline.turns import agreement

    played = games.filter((pl.col("south") == "perfect") | (pl.col("north") == "perfect")).select(pl.col("rules").unique())
    parts = []
    for rules in played.collect()["rules"].sort().to_list():
        solution = solve(Rules.from_name(rules), verbose=False)
        table = agreement(games.filter(pl.col("rules") == rules), solution)
        parts += [table] if table.height else []  # no move to judge: games of 0 plies
    return pl.concat(parts, how="diagonal_relaxed") if parts else None
