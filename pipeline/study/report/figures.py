"""The report's figures: which figures a study gets (``figure_names``) and which table each is
drawn from (``figure``). The drawing itself, in the report's style, is pipeline.report.figures'.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl
from matplotlib.figure import Figure

from engine.game import EVENT_BY_NAME, GAME_EVENTS, Rules, start_board, unpack
from pipeline.analysis.turns import END_EVENTS, TURN_FLAGS
from pipeline.exact.check import FLAG_Z
from pipeline.report import figures as plot
from pipeline.report import quality as quality_plot
from pipeline.runs.records import IS_SELF_PLAY, PAIRING_COLUMNS
from pipeline.study.report.data import ReportData
from pipeline.study.report.quality import forecast_strategies

# first_move_forfeit fires at ply 0 only, by its definition: nothing to see by ply.
_TURN_NAMES = tuple(name for name in TURN_FLAGS if name != "first_move_forfeit")


def figure_names(data: ReportData) -> list[str]:
    """The figures the report draws from these tables (compute's), in the report's order."""
    several = data.several_rules
    # With several rule sets the variant figures show the advantage and the events per rule set,
    # and the length distributions are those of each rule set's largest pairing.
    names = ["board", "seat_effect", "pairing_scores"]
    names += ["game_length"] if several else ["first_player_advantage", "game_length", "rule_events"]
    # Games of 0 plies (no legal first move) have no turn to draw, only their end.
    if data.events_by_ply is not None:
        names += ["events_by_ply", "end_events_by_ply"] if _by_ply(data, _TURN_NAMES).height else ["end_events_by_ply"]
    if data.ratings is not None:
        names.append("rating_ladder")
    if data.agreement is not None:
        names.append("perfect_play_agreement")
    if several:
        names = ["variant_first_player_advantage", "variant_game_length", "variant_rule_events", *names]
    if data.quality_curves is not None:
        names += ["forecast_by_ply", "stones_lost_by_ply"]
    if data.exact_check is not None and data.exact_check.height:
        names.append("sampled_against_exact")
    return names


def figure(name: str, data: ReportData) -> Figure:
    """The report's figure ``name`` (see figure_names) drawn from compute's tables: in a notebook
    it shows inline; pipeline.report.figures.save writes it as SVG, PDF and PNG. Raises ValueError for
    a name that is no figure of the report, or one whose table the study does not have."""
    if name not in _DRAWINGS:
        raise ValueError(f"no figure {name!r}; the report's figures are {', '.join(_DRAWINGS)}")
    return _DRAWINGS[name](data)


def draw(folder: Path, data: ReportData) -> None:
    """Save every figure of figure_names in ``folder``, as SVG, PDF and PNG."""
    for name in figure_names(data):
        plot.save(figure(name, data), folder, name)


def _board_figure(data: ReportData) -> Figure:
    rules = Rules.from_name(data.rule_sets["rules"][0])
    return plot.board(unpack(start_board(rules)))


def _seat_effect_figure(data: ReportData) -> Figure:
    """The seat effect of every pair (self-play first), with its exact value where known."""
    table = data.seat_effect
    same = pl.col("strategy_a") == pl.col("strategy_b")
    label = pl.when(same).then(pl.col("strategy_a")).otherwise(pl.format("{} and {}", "strategy_a", "strategy_b"))
    if data.several_rules:
        label = pl.format("{}: {}", "rules", label)
    kind = pl.when(same).then(pl.lit("self-play")).otherwise(pl.lit("both seat orders"))
    table = table.with_columns(label.alias("label"), kind.alias("kind")).sort(pl.col("kind") != "self-play", maintain_order=True)
    figure = plot.forest(
        table,
        label="label",
        value="seat_effect",
        xlabel="seat effect: first player's score - 1/2",
        reference=0.0,
        colour_by="kind",
        width=plot.PAGE,
    )
    exact = table["seat_effect_exact"].to_numpy().astype(float)
    with plot.style():
        axes = figure.axes[0]
        if np.isfinite(exact).any():
            # black on both groups' colours (blue circles, orange squares), with a white rim
            axes.scatter(
                exact, np.arange(table.height)[::-1], **plot.EXACT_MARKER, zorder=3, label="exact", path_effects=plot.HALO
            )
        axes.legend(loc="lower left", bbox_to_anchor=(0, 1.02, 1, 0.2), ncols=3, borderaxespad=0)
    return figure


def _pairing_scores_figure(data: ReportData) -> Figure:
    """The first player's score of every ordered pairing of the first rule set, as a grid: the
    exact score where the study has it, else its games' estimate."""
    rules = data.rule_sets["rules"][0]
    table = data.outcomes.filter(pl.col("rules") == rules)
    if data.exact is not None:
        exact = data.exact.select("south", "north", pl.col("first_player_score").alias("_exact"))
        table = table.join(exact, on=["south", "north"], how="left", maintain_order="left")
        table = table.with_columns(pl.coalesce("_exact", "first_player_score").alias("first_player_score"))
    order = data.strategies(rules)
    grid = pl.DataFrame({"south": [a for a in order for _ in order], "north": [b for _ in order for b in order]})
    table = grid.join(
        table.select("south", "north", "first_player_score"), on=["south", "north"], how="left", maintain_order="left"
    )
    return plot.heatmap(
        table.rename({"south": "South (moves first)", "north": "North"}),
        row="South (moves first)",
        column="North",
        value="first_player_score",
        colour_label="first player's score",
        fmt="{:.2f}",
        diverging=0.5,
    )


def _advantage_figure(data: ReportData) -> Figure:
    label = pl.format("{} v {}", "south", "north")
    if data.several_rules:
        label = pl.format("{}: {}", "rules", label)
    table = data.outcomes.with_columns(label.alias("label"))
    return plot.forest(
        table, label="label", value="first_player_score", xlabel="first-player score (draw = 1/2)", colour_by="south"
    )


def _length_figure(data: ReportData) -> Figure:
    if data.several_rules:
        lengths = data.lengths.join(data.main_pairings(), on=list(PAIRING_COLUMNS), how="semi")
        label = pl.format("{}: {} v {}", "variant", "south", "north")
        lengths = data.with_variant(lengths).with_columns(label.alias("pairing"))
    else:
        lengths = data.lengths.filter(IS_SELF_PLAY).with_columns(pl.format("{} v {}", "south", "north").alias("pairing"))
    return plot.length_ecdf(lengths)


def _events_figure(data: ReportData) -> Figure:
    table = data.events.filter(IS_SELF_PLAY & pl.col("event").is_in(GAME_EVENTS))
    label = pl.format("{}: {}", "rules", "south") if data.several_rules else pl.col("south")
    # an event that fires in every game beside one that fires in a game in a thousand: a log axis
    # (linear below the smallest share drawn, so that a share of 0 still shows: plot.dot_grid)
    shares = table["fired_share"]
    log = _spans_decades(shares.filter(shares > 0))
    return plot.dot_grid(
        _named(table).with_columns(label.alias("self-play")),
        row="event",
        series="self-play",
        value="fired_share",
        xlabel=f"games in which it fires (%{', log scale' if log else ''})",
        log=log,
    )


def _turn_events_figure(data: ReportData) -> Figure:
    return plot.events_by_ply(_named(_by_ply(data, _TURN_NAMES)), max_ply=_ply_limit(data))


def _end_events_figure(data: ReportData) -> Figure:
    return plot.events_by_ply(_named(_by_ply(data, END_EVENTS)), max_ply=_ply_limit(data), ylabel="games that end at the ply (%)")


def ladder_axis(ratings: pl.DataFrame) -> tuple[tuple[float, float], list[str], list[str]]:
    """The rating figure's x-axis, and what it leaves out: the limits, the strategies whose
    interval runs past them (cut at the edge) and those whose rating the games do not bound
    (pipeline.analysis.ratings: drawn as an arrow at the edge, no point). The axis holds 0 and every
    bounded rating, with its interval unless that interval's half-width is larger than the
    spread of the ratings (at least 100 Elo): such an interval gets a quarter of that spread
    beyond the ratings, and is cut there."""
    bounded = ratings.filter("bounded")
    points = [0.0, *bounded["rating"].to_list()]
    spread = max(max(points) - min(points), 100.0)
    narrow = bounded.filter((pl.col("high") - pl.col("low")) / 2 <= spread)
    wide = bounded.filter((pl.col("high") - pl.col("low")) / 2 > spread)
    low = min([*points, *narrow["low"].to_list(), *(min(points) - 0.25 * spread for _ in wide["low"].head(1))])
    high = max([*points, *narrow["high"].to_list(), *(max(points) + 0.25 * spread for _ in wide["high"].head(1))])
    low, high = low - 0.04 * (high - low), high + 0.04 * (high - low)  # the arrowheads' room
    cut = bounded.filter((pl.col("low") < low) | (pl.col("high") > high))["strategy"].to_list()
    return (low, high), cut, ratings.filter(~pl.col("bounded"))["strategy"].to_list()


def _ladder_figure(data: ReportData) -> Figure:
    ladder = _present(data.ratings, "ratings", "no rule set has two strategies to rate")
    label = pl.format("{}: {}", "rules", "strategy") if data.several_rules else pl.col("strategy")
    limits, _, _ = ladder_axis(ladder)
    # study order; a rating the games do not bound is the prior's number: no point, an arrow
    table = ladder.with_columns(
        label.alias("label"),
        *(
            pl.when("bounded").then(pl.col(name)).alias(to)
            for name, to in (("rating", "rating"), ("low", "rating_low"), ("high", "rating_high"))
        ),
    )
    figure = plot.forest(table, label="label", value="rating", xlabel="rating (Elo)", reference=0.0, limits=limits)
    axes = figure.axes[0]
    positions = np.arange(table.height)[::-1]
    for position, row in zip(positions, ladder.iter_rows(named=True), strict=True):
        if not row["bounded"]:
            above = row["rating"] > 0
            edge = limits[1] if above else limits[0]
            axes.annotate(
                "not bounded by the games",
                (edge, position),
                xytext=(-4 if above else 4, 0),
                textcoords="offset points",
                ha="right" if above else "left",
                va="center",
                fontsize=6,
                color=plot.OKABE_ITO[0],
            )
            axes.plot([edge], [position], ">" if above else "<", color=plot.OKABE_ITO[0], markersize=5, clip_on=False)
    return figure


def _agreement_figure(data: ReportData) -> Figure:
    label = pl.format("{}: {}", "rules", "strategy") if data.several_rules else pl.col("strategy")
    table = _present(data.agreement, "agreement", "the study never played perfect").with_columns(label.alias("label"))
    return plot.forest(
        table,
        label="label",
        value="kept_share",
        xlabel="share of its moves that keep the value",
        reference=1.0,
    )


def _variant_advantage_figure(data: ReportData) -> Figure:
    return _self_play_by_variant(data, data.outcomes, "first_player_score", "first-player score (draw = 1/2)", reference=0.5)


def _variant_length_figure(data: ReportData) -> Figure:
    lengths = data.ludii.filter(IS_SELF_PLAY)["Duration"]
    return _self_play_by_variant(data, data.ludii, "Duration", "mean game length (plies)", log=_spans_decades(lengths))


def _variant_events_figure(data: ReportData) -> Figure:
    table = data.main_pairings().join(data.events, on=list(PAIRING_COLUMNS)).filter(pl.col("event").is_in(GAME_EVENTS))
    table = data.with_variant(table).with_columns((100 * pl.col("fired_share")).alias("percent"))
    return plot.heatmap(_named(table), row="variant", column="event", value="percent", colour_label="games in which it fires (%)")


def _exact_figure(data: ReportData) -> Figure:
    """Every sampled figure tested against its exact value (pipeline.exact.check): the histogram
    of their z scores against the standard normal they follow when both are right."""
    check = _present(data.exact_check, "exact_check", "the study has no exact outcomes")
    varies = check.filter((pl.col("se") > 0) | ~pl.col("z").is_finite())  # an infinite z is an alarm: kept
    return plot.z_histogram(varies["z"].to_numpy().astype(float), flag=FLAG_Z, certain=check.height - varies.height)


def _forecast_figure(data: ReportData) -> Figure:
    """The forecast by ply of the skills of SKILLS the study has (all its table strategies if none)."""
    curves = _present(data.quality_curves, "quality_curves", "the study has no exact outcomes")
    return quality_plot.forecast_bands(curves, forecast_strategies(curves))


def _stones_lost_figure(data: ReportData) -> Figure:
    """The stones lost by ply of every table strategy's self-play that loses any."""
    curves = _present(data.quality_curves, "quality_curves", "the study has no exact outcomes")
    losing = curves.group_by("strategy", maintain_order=True).agg(pl.col("stones_lost").max()).filter(pl.col("stones_lost") > 0)
    return quality_plot.stones_lost_by_ply(curves, losing["strategy"].to_list())


_DRAWINGS: dict[str, Callable[[ReportData], Figure]] = {
    "board": _board_figure,
    "seat_effect": _seat_effect_figure,
    "pairing_scores": _pairing_scores_figure,
    "first_player_advantage": _advantage_figure,
    "game_length": _length_figure,
    "rule_events": _events_figure,
    "events_by_ply": _turn_events_figure,
    "end_events_by_ply": _end_events_figure,
    "rating_ladder": _ladder_figure,
    "perfect_play_agreement": _agreement_figure,
    "variant_first_player_advantage": _variant_advantage_figure,
    "variant_game_length": _variant_length_figure,
    "variant_rule_events": _variant_events_figure,
    "sampled_against_exact": _exact_figure,
    "forecast_by_ply": _forecast_figure,
    "stones_lost_by_ply": _stones_lost_figure,
}


def _self_play_by_variant(data: ReportData, table: pl.DataFrame, value: str, xlabel: str, **style: Any) -> Figure:
    """One of a table's estimates for each strategy's self-play, a row per rule set."""
    self_play = data.with_variant(table.filter(IS_SELF_PLAY)).rename({"south": "strategy"})
    return plot.dot_grid(self_play, row="variant", series="strategy", value=value, xlabel=xlabel, percent=False, **style)


def _by_ply(data: ReportData, names: Sequence[str]) -> pl.DataFrame:
    """The events by ply of ``names`` in the first rule set's largest pairing."""
    main = data.main_pairings().head(1)
    by_ply = _present(data.events_by_ply, "events_by_ply", "compute(per_ply=False) leaves it out")
    return by_ply.join(main, on=list(PAIRING_COLUMNS), how="semi").filter(pl.col("event").is_in(list(names)))


def _ply_limit(data: ReportData) -> int:
    return plot.quantile_ply(data.lengths.join(data.main_pairings().head(1), on=list(PAIRING_COLUMNS), how="semi"), 0.99)


def _spans_decades(values: pl.Series) -> bool:
    """Whether positive values span more than a factor of 20: then a log scale reads better."""
    array = values.to_numpy()
    return bool(array.size and array.min() > 0 and array.max() > 20 * array.min())


def _named(table: pl.DataFrame) -> pl.DataFrame:
    """A table of events with each event under its short name in words (engine.game.Event.short)."""
    return table.with_columns(pl.col("event").replace({name: event.short for name, event in EVENT_BY_NAME.items()}))


def _present(table: pl.DataFrame | None, name: str, why: str) -> pl.DataFrame:
    if table is None:
        raise ValueError(f"no {name} table to draw from: {why}; figure_names(data) lists the figures there are")
    return table
