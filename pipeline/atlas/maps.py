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
from matplotlib.patches import Rectangle

import engine
from engine.game import EVENT_BY_NAME, RULE_FIELD
from pipeline.atlas.effects import CENTRES, FIELD_WORDS, LABEL_SIZE, NO_EFFECT, MapLayout, map_grid, value_label
from pipeline.report import figures as plot
from pipeline.report.prose import signed

KEY_LINE = 1.3 * LABEL_SIZE  # points: a line of a map's key


def map_figure(
    block: pl.DataFrame,
    layout: MapLayout,
    column: str,
    words: str,
    form: str,
    hatched: tuple[np.ndarray, str] | None = None,
    reference: str | None = None,
) -> Figure:
    """One figure across the grid: a map whose rows and columns are labelled by their fields'
    values (outer fields spanning their groups), each cell annotated where it fits, and under it
    a key saying what each label means; given ``hatched`` (a grid of booleans, and what they
    mean), its true cells hatched, and given ``reference`` (a rule set's name), its cell
    outlined, each said in the title."""
    grid = map_grid(block, layout, column)
    key = _key_lines(layout)
    row_widths = [
        _label_points(max((value_label(field, key[level]) for key in layout.rows), key=len)) + 8
        for level, field in enumerate(layout.row_fields)
    ]
    left, right, cell_height = (sum(row_widths) + 8) / 72, 0.55, 0.24
    bottom = 0.05 + (KEY_LINE * len(key) + 6) / 72
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
        cell = reference_cell(block, layout, reference)
        if cell is not None:
            _outline(axes, *cell)
            title += (
                f"; outlined: RULES.md's rules ({reference})" if reference == engine.Rules().name else f"; outlined: {reference}"
            )
        figure.text(0.005, 1 - 0.03 / height, title, ha="left", va="top", fontsize=8)
        figure.text(0.005, 0.03 / height, "\n".join(key), ha="left", va="bottom", fontsize=LABEL_SIZE, linespacing=1.3)
    return figure


def reference_cell(block: pl.DataFrame, layout: MapLayout, reference: str | None) -> tuple[int, int] | None:
    """The (row, column) of the map's cell that holds the rule set named ``reference``; None
    without one or when the map does not hold it."""
    if reference is None:
        return None
    found = block.filter(pl.col("rules") == reference)
    if found.height == 0:
        return None
    row = found.row(0, named=True)
    down = layout.rows.index(tuple(row[field] for field in layout.row_fields))
    return down, layout.columns.index(tuple(row[field] for field in layout.column_fields))


def map_key(layout: MapLayout) -> list[str]:
    """What the map's labels mean, one entry per field: "min 2 / 1: stones needed to play a
    pit", "origin on / off: first stone back into the origin pit (on) or not (off)"."""
    entries = []
    for level, field in enumerate(layout.column_fields):
        entries.append(_key_entry(field, [key[level] for key in layout.columns]))
    for level, field in enumerate(layout.row_fields):
        entries.append(_key_entry(field, [key[level] for key in layout.rows]))
    return entries


def _key_entry(field: str, values: Sequence[Any]) -> str:
    """One field's entry in the key: its values as the map labels them, shortened, and its words."""
    head, _, tail = RULE_FIELD[field].label_format.partition("{}")
    labels = [value_label(field, value) for value in dict.fromkeys(values)]
    shortened = head + " / ".join(label[len(head) : len(label) - len(tail)] for label in labels) + tail
    switch = all(isinstance(value, bool) for value in values)
    return f"{shortened}: {FIELD_WORDS[field]}" + (" (on) or not (off)" if switch else "")


def _key_lines(layout: MapLayout) -> list[str]:
    """The key (map_key) in lines that fit the page's width, its entries whole."""
    lines: list[str] = []
    for entry in map_key(layout):
        if lines and _label_points(f"{lines[-1]}; {entry}") <= 72 * plot.PAGE - 8:
            lines[-1] += f"; {entry}"
        else:
            lines.append(entry if lines else f"Key: {entry}")
    return lines


def _outline(axes: Axes, down: int, across: int) -> None:
    """Outline a cell in black and white, seen on any colour of the maps' scales."""
    for colour, width in (("black", 3.0), ("white", 1.2)):
        axes.add_patch(Rectangle((across - 0.45, down - 0.45), 0.9, 0.9, fill=False, edgecolor=colour, linewidth=width))


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
    """Each field's effect (field_effects), the field with the largest effect on the start value on
    top: side by side, the spread of its values' mean start values, the share of its groups in
    which changing it changes the start value (a spread of 0 whose changes cancel is not "no
    effect"), and the spread of the random first player's mean score."""
    labels = [FIELD_WORDS[field] for field in effects["field"].to_list()]
    places = np.arange(effects.height)[::-1]
    spread, changed, score = (
        effects[column].to_numpy()
        for column in ("effect_start_value", "share_changed_start_value", "effect_random_first_player_score")
    )
    notes = [_spread_note(value, count) for value, count in zip(spread, effects["changed_start_value"].to_list(), strict=True)]
    shares = [
        f"{count} of {groups}"
        for count, groups in zip(effects["changed_start_value"].to_list(), effects["blocks"].to_list(), strict=True)
    ]
    panels = (
        (spread, notes, "spread of the mean start value\n(stones)", 0),
        (100 * np.nan_to_num(changed), shares, "groups in which the field\nchanges the start value (%)", 0),
        (score, [f"{value:.4f}" for value in score], "spread of the random first\nplayer's mean score", 1),
    )
    with plot.style():
        figure = Figure(figsize=(plot.PAGE, 0.8 + 0.25 * max(effects.height, 2)), layout="constrained")
        for axes, (values, texts, words, colour) in zip(figure.subplots(1, 3, sharey=True), panels, strict=True):
            axes.barh(places, values, color=plot.OKABE_ITO[colour], height=0.6)
            for place, value, text in zip(places, values, texts, strict=True):
                axes.annotate(text, (value, place), xytext=(3, 0), textcoords="offset points", va="center", fontsize=LABEL_SIZE)
            axes.margins(x=0.35)
            axes.set_xlim(left=0)
            axes.set_yticks(places, labels)
            axes.grid(axis="y", visible=False)
            axes.set_xlabel(words)
    return figure


def _spread_note(spread: float, changed: int) -> str:
    """A spread's label: a spread of 0 where the field changes the value in some group says that
    those changes cancel, not that there are none."""
    return "0: changes cancel" if spread < NO_EFFECT and changed > 0 else f"{spread:.2f}"


def tradeoff_figure(frame: pl.DataFrame, reference: str | None) -> Figure:
    """Fairness against length: each rule set's distance of the random first player's score from 1/2
    against random games' mean length, coloured by how often compulsory feeding (left) and the
    grand-slam ban (right) change a random game; a rule set without that panel's rule hollow, and
    ``reference`` ringed and named."""
    names = frame["rules"].to_list()
    with plot.style():
        figure = Figure(figsize=(plot.PAGE, 2.7), layout="constrained")
        for axes, event in zip(figure.subplots(1, 2, sharey=True), ("feeding_forced", "grand_slam_blocked"), strict=True):
            column, words = f"random_{event}_fires", f"P({EVENT_BY_NAME[event].clause} in a game)"
            norm = matplotlib.colors.Normalize(0.0, max(float(np.max(frame[column].to_numpy(), initial=0.0)), 1e-9))
            possible = pl.Series([event in engine.possible_events(engine.Rules.from_name(name)) for name in names])
            for has_rule in (True, False):
                shown = frame.filter(possible if has_rule else ~possible)
                x, y = shown["random_mean_plies"].to_numpy(), np.abs(shown["random_first_player_score"].to_numpy() - 0.5)
                # a rule set without the rule: hollow, not the colour of "never"
                colour = {"c": shown[column].to_numpy(), "cmap": "cividis", "norm": norm} if has_rule else {"facecolors": "none"}
                axes.scatter(x, y, **colour, s=20, edgecolors="#333333", linewidths=0.4)
            _mark_reference(axes, frame, reference)
            lengths = frame["random_mean_plies"].to_numpy()
            if lengths.min() > 0 and lengths.max() > 20 * lengths.min():  # lengths over orders of magnitude
                axes.set_xscale("log")
                axes.xaxis.set_major_formatter(matplotlib.ticker.FuncFormatter(lambda value, _: f"{value:g}"))
            axes.set_xlabel("mean length, random v random (plies)")
            figure.colorbar(matplotlib.cm.ScalarMappable(norm, "cividis"), ax=axes, label=words, fraction=0.05, pad=0.01)
        figure.axes[0].set_ylabel("|first player's score \u2212 1/2|,\nrandom v random")
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
    """Ring the reference rule set and name it above the ring, joined to it by a line, clear of the
    ring and of the points beside it."""
    if reference is None:
        return
    row = frame.filter(pl.col("rules") == reference).row(0, named=True)
    x, y = row["random_mean_plies"], abs(row["random_first_player_score"] - 0.5)
    colour = plot.OKABE_ITO[3]
    axes.scatter([x], [y], s=90, facecolors="none", edgecolors=colour, linewidths=1.2, zorder=3)
    line = {"arrowstyle": "-", "color": colour, "linewidth": 0.8, "shrinkA": 1, "shrinkB": 6}
    axes.annotate(
        reference,
        (x, y),
        xytext=(0, 24),
        textcoords="offset points",
        ha="center",
        va="bottom",
        fontsize=LABEL_SIZE,
        color=colour,
        arrowprops=line,
    )
