"""The atlas's figures: the maps of a grid of rule sets, the stones series, the main effects and
the trade-off between fairness and length, drawn from pipeline.atlas.effects' tables.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import matplotlib.cm
import matplotlib.colors
import matplotlib.ticker
import numpy as np
import polars as pl
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.patches import Rectangle

import engine
from engine.game import EVENT_BY_NAME
from pipeline.atlas.effects import CENTRES, FIELD_WORDS, LABEL_SIZE, MapLayout, map_grid, value_label
from pipeline.report import figures as plot
from pipeline.report.prose import signed


def map_figure(
    block: pl.DataFrame, layout: MapLayout, column: str, words: str, form: str, hatched: tuple[np.ndarray, str] | None = None
) -> Figure:
    """One figure across the grid: a map whose rows and columns are labelled by their fields'
    values (outer fields spanning their groups), each cell annotated where it fits; given
    ``hatched`` (a grid of booleans, and what they mean), its true cells hatched, said in a note."""
    grid = map_grid(block, layout, column)
    row_widths = [
        _label_points(max((value_label(field, key[level]) for key in layout.rows), key=len)) + 8
        for level, field in enumerate(layout.row_fields)
    ]
    left, right, bottom, cell_height = (sum(row_widths) + 8) / 72, 0.55, 0.05, 0.24
    cell_points = 72 * (plot.PAGE - left - right) / len(layout.columns)
    wrapped = [_wrapped_level(layout, level, cell_points) for level in range(len(layout.column_fields))]
    line_heights = [19 if wrap else 11 for wrap in wrapped]
    top = (sum(line_heights) + 4 + 14) / 72
    width, height = plot.PAGE, top + bottom + cell_height * len(layout.rows)
    box = (left / width, bottom / height, (width - left - right) / width, (height - top - bottom) / height)
    with plot.style():
        figure = Figure(figsize=(width, height))
        axes = figure.add_axes(box)
        colour_axes = figure.add_axes(((width - right + 0.12) / width, box[1], 0.1 / width, box[3]))
        image = axes.imshow(grid, cmap=_colour_map(column), norm=_norm(grid, CENTRES.get(column)), aspect="auto")
        axes.set_facecolor("#eeeeee")  # a rule set not (yet) in the atlas
        axes.set_xticks([])
        axes.set_yticks([])
        axes.grid(visible=False)
        for spine in axes.spines.values():
            spine.set_visible(False)
        _label_columns(axes, layout, line_heights, wrapped)
        _label_rows(axes, layout, row_widths)
        _separate_groups(axes, layout)
        if cell_points >= 26:
            _annotate(axes, image, grid, form)
        figure.colorbar(image, cax=colour_axes)
        title = words[0].upper() + words[1:]
        if hatched is not None and hatched[0].any():
            _hatch(axes, image, grid, hatched[0])
            title += f"; hatched: {hatched[1]}"
        figure.text(0.005, 1 - 0.03 / height, title, ha="left", va="top", fontsize=8)
    return figure


def _hatch(axes: Axes, image: Any, grid: np.ndarray, marked: np.ndarray) -> None:
    """Hatch the ``marked`` cells, light on a dark colour and dark on a light one (as _annotate's text)."""
    for down, across in zip(*np.nonzero(marked), strict=True):
        red, green, blue, _ = image.cmap(image.norm(grid[down, across]))
        dark = 0.299 * red + 0.587 * green + 0.114 * blue < 0.5
        cell = Rectangle((across - 0.5, down - 0.5), 1, 1, fill=False, hatch="//", edgecolor="#cccccc" if dark else "#666666")
        cell.set_linewidth(0)
        cell.set_hatch_linewidth(1.2)
        axes.add_patch(cell)


def stones_figure(series: pl.DataFrame) -> Figure:
    """The start value, the random first player's score and the mean lengths (random and perfect)
    against the stones per pit, at RULES.md's other rules."""
    stones = series["stones_per_pit"].to_numpy()
    with plot.style():
        figure = Figure(figsize=(plot.PAGE, 2.2), layout="constrained")
        value_axes, score_axes, length_axes = figure.subplots(1, 3)
        value_axes.plot(stones, series["start_value"].to_numpy(), marker="o", color=plot.OKABE_ITO[0])
        value_axes.axhline(0, color="#555555", linewidth=0.8, linestyle="--", zorder=0)
        value_axes.set_ylabel("start value, perfect play (stones)")
        score_axes.plot(stones, series["random_first_player_score"].to_numpy(), marker="o", color=plot.OKABE_ITO[0])
        score_axes.axhline(0.5, color="#555555", linewidth=0.8, linestyle="--", zorder=0)
        score_axes.set_ylabel("first player's score, random v random")
        for name, colour, marker in (("random", 0, "o"), ("perfect", 1, "s")):
            values = series[f"{name}_mean_plies"].to_numpy()
            length_axes.plot(stones, values, marker=marker, color=plot.OKABE_ITO[colour], label=f"{name} v {name}")
        length_axes.set_ylabel("mean length (plies)")
        length_axes.set_ylim(bottom=0)
        length_axes.legend()
        for axes in (value_axes, score_axes, length_axes):
            axes.set_xticks(stones)
            axes.set_xlabel("stones per pit")
    return figure


def effects_figure(effects: pl.DataFrame) -> Figure:
    """Each field's effect (the spread of its values' means) on the start value and on the random
    first player's score, as bars, the field with the largest effect on the start value on top."""
    labels = [FIELD_WORDS[field] for field in effects["field"].to_list()]
    places = np.arange(effects.height)[::-1]
    panels = (
        ("effect_start_value", "effect on the start value (stones)"),
        ("effect_random_first_player_score", "effect on the random first player's score"),
    )
    with plot.style():
        figure = Figure(figsize=(plot.PAGE, 0.7 + 0.25 * max(effects.height, 2)), layout="constrained")
        for index, (axes, (column, words)) in enumerate(zip(figure.subplots(1, 2, sharey=True), panels, strict=True)):
            values = effects[column].to_numpy()
            axes.barh(places, values, color=plot.OKABE_ITO[index], height=0.6)
            for place, value in zip(places, values, strict=True):
                axes.annotate(
                    f"{value:.3g}", (value, place), xytext=(3, 0), textcoords="offset points", va="center", fontsize=6.5
                )
            axes.margins(x=0.12)
            axes.set_yticks(places, labels)
            axes.grid(axis="y", visible=False)
            axes.set_xlabel(words)
    return figure


def tradeoff_figure(frame: pl.DataFrame, reference: str | None) -> Figure:
    """Fairness against length: each rule set's distance of the random first player's score from 1/2
    against random games' mean length, coloured by how often compulsory feeding (left) and the
    grand-slam ban (right) change a random game, shaped by who wins under perfect play."""
    shapes = (
        ("first player wins", pl.col("start_value") > 0, "^"),
        ("fair", pl.col("start_value") == 0, "o"),
        ("second player wins", pl.col("start_value") < 0, "v"),
    )
    with plot.style():
        figure = Figure(figsize=(plot.PAGE, 2.9), layout="constrained")
        for axes, event in zip(figure.subplots(1, 2, sharey=True), ("feeding_forced", "grand_slam_blocked"), strict=True):
            column, words = f"random_{event}_fires", f"P({EVENT_BY_NAME[event].clause} in a game)"
            norm = matplotlib.colors.Normalize(0.0, max(float(np.max(frame[column].to_numpy(), initial=0.0)), 1e-9))
            names = frame["rules"].to_list()
            possible = pl.Series([event in engine.possible_events(engine.Rules.from_name(name)) for name in names])
            for _, condition, marker in shapes:
                part = frame.with_columns(possible.alias("_possible")).filter(condition)
                for has_rule, shown in ((True, part.filter("_possible")), (False, part.filter(~pl.col("_possible")))):
                    x, y = shown["random_mean_plies"].to_numpy(), np.abs(shown["random_first_player_score"].to_numpy() - 0.5)
                    # a rule set without the rule: hollow, not the colour of "never"
                    colour = (
                        {"c": shown[column].to_numpy(), "cmap": "cividis", "norm": norm} if has_rule else {"facecolors": "none"}
                    )
                    axes.scatter(x, y, **colour, marker=marker, s=22, edgecolors="#333333", linewidths=0.4)
            _mark_reference(axes, frame, reference)
            lengths = frame["random_mean_plies"].to_numpy()
            if lengths.min() > 0 and lengths.max() > 20 * lengths.min():  # lengths over orders of magnitude
                axes.set_xscale("log")
                axes.xaxis.set_major_formatter(matplotlib.ticker.FuncFormatter(lambda value, _: f"{value:g}"))
            axes.set_xlabel("mean length, random v random (plies)")
            figure.colorbar(
                matplotlib.cm.ScalarMappable(norm, "cividis"),
                ax=axes,
                label=words,
                fraction=0.05,
                pad=0.01,
            )
        handles = [
            Line2D([], [], linestyle="", marker=marker, color="#999999", markeredgecolor="#333333", label=label)
            for label, _, marker in shapes
        ]
        figure.legend(
            handles=handles, title="under perfect play:", loc="outside upper center", ncols=3, fontsize=7, title_fontsize=7
        )
        figure.axes[0].set_ylabel("|first player's score - 1/2|, random v random")
    return figure


def _colour_map(column: str) -> str:
    return "PuOr" if column in CENTRES else "cividis"


def _norm(grid: np.ndarray, centre: float | None) -> matplotlib.colors.Normalize:
    """A diverging norm symmetric about ``centre``, or a sequential one over the grid's values."""
    finite = grid[np.isfinite(grid)]
    if centre is None:
        low, high = (float(finite.min()), float(finite.max())) if finite.size else (0.0, 1.0)
        return matplotlib.colors.Normalize(low, high if high > low else low + 1.0)
    spread = max(float(np.abs(finite - centre).max()) if finite.size else 0.0, 1e-9)
    return matplotlib.colors.TwoSlopeNorm(centre, centre - spread, centre + spread)


def _label_columns(axes: Axes, layout: MapLayout, line_heights: list[int], wrapped: list[bool]) -> None:
    """Above the map, one line per column field, the outer first; each value spans its group
    (on two lines where one would not fit)."""
    for level, field in enumerate(layout.column_fields):
        for start, stop, value in _groups(layout.columns, level):
            label = value_label(field, value)
            axes.annotate(
                label.replace(" ", "\n", 1) if wrapped[level] else label,
                xy=((start + stop - 1) / 2, 1.0),
                xycoords=("data", "axes fraction"),
                xytext=(0, 3 + sum(line_heights[level + 1 :])),
                textcoords="offset points",
                ha="center",
                va="bottom",
                fontsize=LABEL_SIZE,
                linespacing=1.0,
            )


def _label_rows(axes: Axes, layout: MapLayout, widths: list[float]) -> None:
    """Left of the map, one column per row field, the outer leftmost; each value spans its group."""
    for level, field in enumerate(layout.row_fields):
        for start, stop, value in _groups(layout.rows, level):
            axes.annotate(
                value_label(field, value),
                xy=(0.0, (start + stop - 1) / 2),
                xycoords=("axes fraction", "data"),
                xytext=(-4 - sum(widths[level + 1 :]), 0),
                textcoords="offset points",
                ha="right",
                va="center",
                fontsize=LABEL_SIZE,
            )


def _wrapped_level(layout: MapLayout, level: int, cell_points: float) -> bool:
    """Whether a level of column labels needs two lines: a label wider than its group."""
    field = layout.column_fields[level]
    return any(
        _label_points(value_label(field, value)) > (stop - start) * cell_points - 6
        for start, stop, value in _groups(layout.columns, level)
    )


def _label_points(label: str) -> float:
    """About how wide a label is, in points (the report's sans-serif at LABEL_SIZE)."""
    return 0.58 * LABEL_SIZE * len(label)


def _groups(keys: Sequence[tuple[Any, ...]], level: int) -> list[tuple[int, int, Any]]:
    """The runs of keys equal up to ``level`` (the labels of that level): (start, stop, value)."""
    runs: list[tuple[int, int, Any]] = []
    for place, key in enumerate(keys):
        if runs and keys[runs[-1][0]][: level + 1] == key[: level + 1]:
            runs[-1] = (runs[-1][0], place + 1, key[level])
        else:
            runs.append((place, place + 1, key[level]))
    return runs


def _separate_groups(axes: Axes, layout: MapLayout) -> None:
    """White rules between the groups of the outermost field of rows and of columns."""
    for keys, line in ((layout.columns, axes.axvline), (layout.rows, axes.axhline)):
        if keys and len(keys[0]) > 1:
            for start, _, _ in _groups(keys, 0)[1:]:
                line(start - 0.5, color="white", linewidth=2.0)


def _annotate(axes: Axes, image: Any, grid: np.ndarray, form: str) -> None:
    for (down, across), value in np.ndenumerate(grid):
        if np.isfinite(value):
            red, green, blue, _ = image.cmap(image.norm(value))
            dark = 0.299 * red + 0.587 * green + 0.114 * blue < 0.5
            text = signed(value, form).replace("-", "\u2212")
            axes.text(across, down, text, ha="center", va="center", fontsize=LABEL_SIZE, color="white" if dark else "black")


def _mark_reference(axes: Axes, frame: pl.DataFrame, reference: str | None) -> None:
    if reference is None:
        return
    row = frame.filter(pl.col("rules") == reference).row(0, named=True)
    x, y = row["random_mean_plies"], abs(row["random_first_player_score"] - 0.5)
    axes.scatter([x], [y], s=90, facecolors="none", edgecolors=plot.OKABE_ITO[3], linewidths=1.2, zorder=3)
    axes.annotate(reference, (x, y), xytext=(6, 6), textcoords="offset points", fontsize=6.5, color=plot.OKABE_ITO[3])
