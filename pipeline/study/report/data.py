"""The report's tables, at full precision: ``compute`` reads a study's games into a ReportData.

Every table keyed by pairing (columns rules, south, north) is in the study's order, that of
its config (the game ids), rather than alphabetical; the CSV files of the report are these
tables as they are (pipeline.study.report.render).
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, fields, replace
from typing import Any

import polars as pl

import engine
from engine.game import Rules
from pipeline.analysis.ludii import comparable
from pipeline.analysis.metrics import events, first_player_columns, ludii, outcomes
from pipeline.analysis.stats import Z95, holm, points
from pipeline.exact.check import exact_check
from pipeline.runs.records import IS_SELF_PLAY, PAIRING_COLUMNS, Manifest
from pipeline.study.config import parse_study

# The exact table of the report: exact.parquet without its list columns (plies, margin), with
# the length's standard deviation.
EXACT_COLUMNS = (
    *PAIRING_COLUMNS,
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


@dataclass(frozen=True, kw_only=True, eq=False, repr=False)
class ReportData:
    """Every table of the report (polars DataFrames, full precision); a field's name is its CSV's.

    The tables of pipeline.analysis.metrics, pipeline.analysis.turns and pipeline.analysis.ratings, with the columns their
    functions document; ``outcomes`` adds first_player_p_holm, and ``seat_effect`` is
    seat_effects'. ``ratings``, ``first_move`` and ``ratings_fit`` are None when no rule set
    has two strategies to rate; ``agreement`` is None when the study never played ``perfect``; ``exact``
    and ``exact_check`` are None when the study has no exact outcomes (exact.parquet), and so are
    ``exploitability``, ``quality``, ``quality_curves``, ``calibration`` and
    ``calibration_agreement``, which build_report adds (pipeline.study.report.exploits,
    pipeline.study.report.quality).
    ``ludii_plies``, ``ludii_comparable`` and ``events_by_ply`` are None when compute was told
    not to replay every game (per_ply=False); so are ``agreement`` and ``openings`` when it was
    given no solution.
    """

    rule_sets: pl.DataFrame  # one row per rule set: rules, variant (its label), games, start_value
    outcomes: pl.DataFrame  # per pairing: pipeline.analysis.metrics.outcomes
    ludii: pl.DataFrame  # per pairing: pipeline.analysis.metrics.ludii (with the length's quantiles)
    ludii_plies: pl.DataFrame | None = None  # per pairing: pipeline.analysis.turns.ludii_plies
    ludii_comparable: pl.DataFrame | None = None  # per self-play pairing: pipeline.analysis.ludii.comparable
    events: pl.DataFrame  # per pairing and event: pipeline.analysis.metrics.events
    events_by_ply: pl.DataFrame | None = None  # per pairing, event and ply: pipeline.analysis.turns.events_by_ply
    lengths: pl.DataFrame  # per pairing and length in plies: its games
    seat_effect: pl.DataFrame  # per rule set and pair of strategies, both seat orders pooled: seat_effects
    ratings: pl.DataFrame | None = None  # per rule set and strategy: the ladder of pipeline.analysis.ratings
    first_move: pl.DataFrame | None = None  # per rule set and strategy in South's seat: its first-move term
    ratings_fit: pl.DataFrame | None = None  # per rule set and model (shared, per_strategy): pipeline.analysis.ratings.Fit
    agreement: pl.DataFrame | None = None  # per rule set and strategy: pipeline.analysis.agreement.agreement
    openings: pl.DataFrame | None = None  # per rule set solved and first move: its value under perfect play
    exact: pl.DataFrame | None = None  # per pairing with an exact outcome: exact.parquet, flat (EXACT_COLUMNS)
    exact_check: pl.DataFrame | None = None  # per pairing and quantity: pipeline.exact.check.exact_check
    coverage: pl.DataFrame | None = None  # per figure and interval: pipeline.analysis.coverage, in the main self-play pairing
    exploitability: pl.DataFrame | None = None  # per table strategy of the study's rule set: pipeline.study.report.exploits
    quality: pl.DataFrame | None = None  # per table strategy of the study's rule set: its self-play's exact quality
    quality_curves: pl.DataFrame | None = None  # per table strategy and ply: its self-play's curves by ply
    calibration: pl.DataFrame | None = None  # per table strategy, Ludii metric and evaluator: mean, bias
    calibration_agreement: pl.DataFrame | None = None  # per Ludii metric and evaluator: rank agreement

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
        """Per rule set, the pairing with the most games (the first in order on a tie): PAIRING_COLUMNS."""
        table = self.outcomes.with_row_index("order")
        best = table.sort(["games", "order"], descending=[True, False]).unique("rules", keep="first", maintain_order=True)
        return best.sort("order").select(*PAIRING_COLUMNS)

    def strategies(self, rules: str | None = None) -> list[str]:
        """The strategies of a rule set (of every rule set by default) in the study's order, that
        of its config: the order of every table and figure."""
        table = self.outcomes if rules is None else self.outcomes.filter(pl.col("rules") == rules)
        return pl.concat([table["south"], table["north"]]).unique(maintain_order=True).to_list()

    def in_order(self, table: pl.DataFrame, column: str = "strategy") -> pl.DataFrame:
        """``table`` sorted by its rule set (the study's order, when it has a rules column) and by
        its ``column`` of strategies in the study's order; rows keep their order otherwise."""
        rules = self.rule_sets["rules"].to_list()
        strategies = self.strategies()
        keys = [pl.col(column).replace_strict(strategies, range(len(strategies)), default=len(strategies))]
        if "rules" in table.columns:
            keys.insert(0, pl.col("rules").replace_strict(rules, range(len(rules)), default=len(rules)))
        return table.with_row_index("_row").sort([*keys, pl.col("_row")]).drop("_row")

    def with_variant(self, table: pl.DataFrame) -> pl.DataFrame:
        """``table`` with the variant label of its rule set (column variant) beside its rules."""
        return table.join(self.rule_sets.select("rules", "variant"), on="rules", how="left", maintain_order="left")


def compute(
    games: pl.LazyFrame,
    manifest: Manifest | None = None,
    *,
    exact: pl.LazyFrame | None = None,
    per_ply: bool = True,
    solutions: Mapping[str, engine.Solution] | None = None,
) -> ReportData:
    """Every table of the report from a study's games (pipeline.runs.records.scan_games).
    ``manifest`` (the study's, pipeline.runs.records.read_study_manifest) gives the rule sets their
    variant labels; without it a rule set is labelled by its name. ``exact`` (the study's exact
    outcomes, pipeline.runs.records.scan_exact) adds the tables exact and exact_check. A ``games``
    that is no frame of games, or holds none, is refused naming it.

    A quicker look, for a notebook: ``per_ply=False`` leaves out the tables that replay every
    game's moves (ludii_plies, ludii_comparable and events_by_ply: minutes for the default
    study's 116 million plies; compose needs them, figure_names leaves out their figures).
    ``solutions`` (rule-set name -> engine.Solution) are the strong solutions that agreement
    and openings judge by, for the rule sets under which the study played perfect; by default
    each of them is solved (engine.solve: read from the cache, some seconds and hundreds of MB
    each); a rule set the mapping leaves out is not judged, and ``{}`` judges none."""
    _check_games(games)
    keys = list(PAIRING_COLUMNS)
    first = _first_games(games)
    pairings = _sorted_by(outcomes(games, by=keys), first)
    pairings = pairings.with_columns(pl.Series("first_player_p_holm", holm(pairings["first_player_p"].to_numpy())))
    ludii_plies, events_by_ply = _per_ply(games, keys) if per_ply else (None, None)
    ratings, first_move, ratings_fit = _ratings(pairings)
    agreement, openings = _agreement(games, solutions)
    exact_table = None if exact is None else _exact(exact, first)
    data = ReportData(
        rule_sets=_rule_sets(first, agreement, manifest),
        outcomes=pairings,
        seat_effect=seat_effects(pairings, exact_table),
        ludii=ludii(games, by=keys),
        ludii_plies=ludii_plies,
        ludii_comparable=None if ludii_plies is None else comparable(games, ludii_plies, by=keys),
        events=events(games, by=keys),
        events_by_ply=events_by_ply,
        lengths=games.group_by(*keys, "plies").agg(pl.len().alias("games")).sort(*keys, "plies").collect(),
        ratings=ratings,
        first_move=first_move,
        ratings_fit=ratings_fit,
        agreement=agreement,
        openings=openings,
        exact=exact_table,
        exact_check=None if exact is None else exact_check(games, exact),
        coverage=None if exact_table is None else _coverage(exact_table, manifest),
    )
    data = replace(data, **{name: _sorted_by(table, first) for name, table in data.tables()})
    by_strategy = {name: getattr(data, name) for name in ("ratings", "first_move", "agreement")}
    return replace(data, **{name: data.in_order(table) for name, table in by_strategy.items() if table is not None})


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
    table = exact.join(first.lazy().select(*PAIRING_COLUMNS), on=list(PAIRING_COLUMNS), how="semi").collect()
    spread = [
        math.sqrt(max(sum(mass * (length - mean) ** 2 for length, mass in enumerate(plies)), 0.0))
        for plies, mean in table.select("plies", "mean_plies").iter_rows()
    ]
    return table.with_columns(pl.Series("plies_sd", spread, dtype=pl.Float64)).select(EXACT_COLUMNS)


def _coverage(exact: pl.DataFrame, manifest: Manifest | None) -> pl.DataFrame | None:
    """pipeline.analysis.coverage in the first self-play pairing with an exact outcome, 2,000 pairings of
    30 games seeded by the study's seed; None when there is no such pairing."""
    from pipeline.analysis.coverage import coverage

    self_play = exact.filter(IS_SELF_PLAY)
    if not self_play.height:
        return None
    row = self_play.row(0, named=True)
    seed = int(manifest["config"].get("seed", 0)) if manifest is not None else 0
    table = coverage(row["south"], row["north"], row, rules=Rules.from_name(row["rules"]), seed=seed)
    return table.select(*(pl.lit(row[key]).alias(key) for key in PAIRING_COLUMNS), pl.all())


def _first_games(games: pl.LazyFrame) -> pl.DataFrame:
    """Per pairing: its first game id (_first, the study's order) and its number of games."""
    return games.group_by(list(PAIRING_COLUMNS)).agg(pl.col("game_id").min().alias("_first"), pl.len().alias("games")).collect()


def _sorted_by(table: pl.DataFrame, first: pl.DataFrame) -> pl.DataFrame:
    """A table keyed by pairing in the order of ``first`` (the rows of a pairing keep theirs);
    a table without the PAIRING_COLUMNS columns as it is."""
    keys = list(PAIRING_COLUMNS)
    if not set(keys) <= set(table.columns):
        return table
    order = first.select(*keys, "_first")
    return table.with_row_index("_row").join(order, on=keys, how="left").sort("_first", "_row").drop("_first", "_row")


def _per_ply(games: pl.LazyFrame, keys: list[str]) -> tuple[pl.DataFrame, pl.DataFrame]:
    """Ludii's per-ply metrics and the events by ply, pairing by pairing (both are per pairing),
    so that only one pairing's moves are in memory at once, and a block of its plies
    (pipeline.analysis.turns.ply_tables): the default study holds 116 million plies, a sweep hundreds of
    millions."""
    from pipeline.analysis.turns import ply_tables

    metrics, by_ply = [], []
    for pairing in games.select(keys).unique(maintain_order=True).collect().iter_rows(named=True):
        ludii_plies, events_by_ply = ply_tables(
            games.filter(*(pl.col(name) == value for name, value in pairing.items())), by=keys
        )
        metrics.append(ludii_plies)
        by_ply.append(events_by_ply)
    return pl.concat(metrics), pl.concat(by_ply)


def seat_effects(pairings: pl.DataFrame, exact: pl.DataFrame | None = None) -> pl.DataFrame:
    """The seat effect of every pair of strategies of each rule set, free of their strengths:
    the games of both seat orders pooled (a against b and b against a; a strategy's self-play
    alone), so that each strategy is the first player as often as the second.

    One row per rule set and pair (strategy_a before strategy_b in the study's order, or equal):
    games, first_player_wins, draws, second_player_wins, seat_effect (the pooled first player's
    score minus 1/2: negative when moving first is a disadvantage) with seat_effect_low/_high
    and seat_effect_p (pipeline.analysis.stats.first_player: an exact sign test on the decisive games,
    conservative for two pooled orders, and the interval that agrees with it; seat_effect_test
    names it, see _equal_weights for pairs whose orders played unequal games), seat_effect_p_holm
    (Holm's adjustment over every pair of every rule set), and seat_effect_exact (the mean of the
    two orders' exact first-player scores minus 1/2; null unless both are known), and sweep: the
    pair's games cannot show a seat effect when one strategy wins every game from either seat, or
    every game is drawn (the strategy's name, or "draws"; null otherwise, and for self-play). With
    as many games in each order, as a study plays, the pooled score is the mean of the two orders'."""
    totals: dict[tuple[str, str, str], list[list[int]]] = {}
    winners: dict[tuple[str, str, str], list[str | None]] = {}
    for (rules,), part in pairings.group_by("rules", maintain_order=True):
        rank = {name: place for place, name in enumerate(pl.concat([part["south"], part["north"]]).unique(maintain_order=True))}
        for row in part.iter_rows(named=True):
            a, b = sorted((row["south"], row["north"]), key=rank.__getitem__)
            orders = totals.setdefault((str(rules), a, b), [])
            orders.append([int(row[column]) for column in ("games", "south_wins", "draws", "north_wins")])
            winners.setdefault((str(rules), a, b), []).append(_sole_outcome(row))
    counts = [[sum(order[place] for order in orders) for place in range(4)] for orders in totals.values()]
    table = pl.DataFrame(
        [(*key, *pooled) for key, pooled in zip(totals, counts, strict=True)],
        schema={name: pl.String for name in ("rules", "strategy_a", "strategy_b")}
        | {name: pl.Int64 for name in ("games", "first_player_wins", "draws", "second_player_wins")},
        orient="row",
    )
    table = table.with_columns(
        *first_player_columns(
            table["first_player_wins"], table["draws"], table["second_player_wins"], "seat_effect", "seat_effect", shift=0.5
        ),
        pl.lit("sign test").alias("seat_effect_test"),
    )
    table = _equal_weights(table, list(totals.values()))
    table = table.with_columns(pl.Series("seat_effect_p_holm", holm(table["seat_effect_p"].to_numpy())))
    sweeps = [
        found[0] if len(found) == 2 and found[0] is not None and found[0] == found[1] else None for found in winners.values()
    ]
    return table.with_columns(_exact_seat_effect(table, exact), pl.Series("sweep", sweeps, dtype=pl.String))


def _sole_outcome(row: dict[str, Any]) -> str | None:
    """The strategy that won every game of an ordered pairing, "draws" when every game was drawn,
    None when its games had more than one outcome."""
    games = int(row["games"])
    for column, name in (("south_wins", row["south"]), ("north_wins", row["north"]), ("draws", "draws")):
        if games and int(row[column]) == games:
            return str(name)
    return None


def _equal_weights(table: pl.DataFrame, orders: list[list[list[int]]]) -> pl.DataFrame:
    """The pairs whose two seat orders played different numbers of games: pooling would weigh
    the orders unequally and let strength back in, so their seat effect is the mean of the two
    orders' scores less 1/2, with a normal interval and z test from the two orders' variances
    (seat_effect_test "normal, orders weighted equally")."""
    rows = table.to_dicts()
    for row, played in zip(rows, orders, strict=True):
        if len(played) < 2 or played[0][0] == played[1][0]:
            continue
        means, variances = [], []
        for games, first, draws, _ in played:
            score = points(first, draws) / games
            means.append(score)
            variances.append(max((first + draws / 4) / games - score**2, 0.0) / games)
        effect, spread = sum(means) / 2 - 0.5, math.sqrt(sum(variances)) / 2
        z = effect / spread if spread > 0 else (0.0 if effect == 0 else math.copysign(math.inf, effect))
        row |= {
            "seat_effect": effect,
            "seat_effect_low": effect - Z95 * spread,
            "seat_effect_high": effect + Z95 * spread,
            "seat_effect_p": math.erfc(abs(z) / math.sqrt(2)),
            "seat_effect_test": "normal, orders weighted equally",
        }
    return pl.DataFrame(rows, schema=table.schema)


def _exact_seat_effect(table: pl.DataFrame, exact: pl.DataFrame | None) -> pl.Series:
    """Per pair, the mean of its two orders' exact first-player scores minus 1/2 (null unless both are known)."""
    if exact is None:
        return pl.Series("seat_effect_exact", [None] * table.height, dtype=pl.Float64)
    score = {
        (rules, south, north): value
        for rules, south, north, value in exact.select(*PAIRING_COLUMNS, "first_player_score").iter_rows()
    }
    values = []
    for rules, a, b in table.select("rules", "strategy_a", "strategy_b").iter_rows():
        orders = [score.get((rules, a, b)), score.get((rules, b, a))]
        values.append(None if None in orders else sum(orders) / 2 - 0.5)  # type: ignore[arg-type]
    return pl.Series("seat_effect_exact", values, dtype=pl.Float64)


def _ratings(pairings: pl.DataFrame) -> tuple[pl.DataFrame | None, pl.DataFrame | None, pl.DataFrame | None]:
    """Per rule set with two strategies or more: the rating ladder of the model with a
    first-move term per strategy, those terms, and the fit of both models (shared and
    per_strategy); (None, None, None) when there is none."""
    from pipeline.analysis.ratings import ratings

    ladders, first_moves, fits = [], [], []
    for (rules,), part in pairings.group_by("rules", maintain_order=True):
        if part.select(pl.concat_list("south", "north").explode().n_unique()).item() < 2:
            continue
        rules_column = pl.lit(rules).alias("rules")
        shared, fitted = ratings(part, first_move="shared"), ratings(part, first_move="per_strategy")
        fits += [
            pl.DataFrame([{"rules": rules, "model": model.first_move_model, "anchor": model.anchor, **vars(model.fit)}])
            for model in (shared, fitted)
        ]
        ladders.append(fitted.ladder.select(rules_column, pl.all()))  # compute puts them in the study's order
        first_moves.append(fitted.first_moves.select(rules_column, pl.all(), pl.lit(fitted.prior_sd).alias("prior_sd")))
    if not ladders:
        return None, None, None
    return pl.concat(ladders), pl.concat(first_moves), pl.concat(fits, how="diagonal_relaxed")


def _agreement(
    games: pl.LazyFrame, solutions: Mapping[str, engine.Solution] | None
) -> tuple[pl.DataFrame | None, pl.DataFrame | None]:
    """Agreement with perfect play, and the value of each first move, for each rule set under
    which the study played ``perfect``: its solution was needed to play, so the report does not
    depend on what else is cached. (None, None) when the study never played perfect. With
    ``solutions``, only the rule sets it has a solution for, by that solution."""
    played = games.filter((pl.col("south") == "perfect") | (pl.col("north") == "perfect")).select(pl.col("rules").unique())
    parts, openings = [], []
    for rules in played.collect()["rules"].sort().to_list():
        if solutions is not None and rules not in solutions:
            continue
        table, opening = _judged(games.filter(pl.col("rules") == rules), rules, None if solutions is None else solutions[rules])
        parts += [table] if table.height else []  # no move to judge: games of 0 plies
        openings.append(opening)
    if not openings:
        return None, None
    return (pl.concat(parts, how="diagonal_relaxed") if parts else None), pl.concat(openings)


def _judged(games: pl.LazyFrame, rules: str, solution: engine.Solution | None) -> tuple[pl.DataFrame, pl.DataFrame]:
    """The agreement and the openings of one rule set's games, by ``solution`` or else by the
    rule set's, solved here once its games are picked and let go on return: one solution in
    memory at a time (up to 0.9 GB each in a variant sweep)."""
    from engine.solver import solve
    from pipeline.analysis.agreement import agreement, first_games

    judged = first_games(games)
    solution = solve(Rules.from_name(rules), progress=False) if solution is None else solution
    return agreement(judged, solution, max_games_per_pairing=None), _openings(rules, solution)


def _openings(rules: str, solution: engine.Solution) -> pl.DataFrame:
    """South's first moves under ``rules``: pit, value (South's final total minus North's after
    it, both sides then playing perfectly) and best (whether it keeps the start's value)."""
    start = engine.start_board(solution.rules)
    pits = list(engine.legal_moves(start, 0, 0, solution.rules))
    values = list(solution.move_values(start, 0, 0))
    best = max(values, default=0)
    return pl.DataFrame(
        {"rules": [rules] * len(pits), "pit": pits, "value": values, "best": [value == best for value in values]},
        schema={"rules": pl.String, "pit": pl.Int64, "value": pl.Int64, "best": pl.Boolean},
    )


def _check_games(games: object) -> None:
    """Refuse (TypeError, ValueError naming ``games``) what compute cannot make a report of: every
    table is grouped by pairing, and an empty frame has none."""
    if not isinstance(games, pl.LazyFrame):
        kind = type(games).__name__
        raise TypeError(
            f"games must be a polars LazyFrame of games (pipeline.runs.records.scan_games's, or a frame's .lazy()), not {kind}"
        )
    missing = [key for key in PAIRING_COLUMNS if key not in games.collect_schema().names()]
    if missing:
        raise ValueError(f"games has no column {missing[0]!r}: it is not a frame of games (pipeline.runs.records.scan_games)")
    if games.select(pl.len()).collect().item() == 0:
        raise ValueError("games holds no game: a report needs the games of at least one pairing")
