"""The atlas's report: ``modiar atlas report DIR`` (after ``modiar atlas run``).

    reports/<atlas>/index.html      the report, one file, figures inline
    reports/<atlas>/report.md       the same text and tables, figures linked
    reports/<atlas>/tables/*.csv    the whole atlas (atlas.csv), main effects, fair and first-player
                                    lists, the stones series and the costs
    reports/<atlas>/figures/*.svg|pdf|png

Every figure of an atlas is exact (pipeline.analyse: the solution and engine.exact_outcome), so
the report has no interval and no test. A grid of rule fields is laid out as one 2-D map: its
rows the combinations of some varying fields, its columns those of the others. The main effects
(a field's value against the mean of a figure over the rule sets with that value) are averages
over the grid the atlas holds, exact but not a model: a field's effect may depend on the others.
"""

from __future__ import annotations

import itertools
import math
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import matplotlib.cm
import matplotlib.colors
import matplotlib.ticker
import numpy as np
import polars as pl
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.lines import Line2D

import engine
from engine.rules import RULE_FIELD, RULE_FIELDS
from pipeline import figures as plot
from pipeline.atlas import FIELDS, atlas_of_manifest, read_atlas, read_manifest
from pipeline.paths import REPORTS
from pipeline.records import RecordError
from pipeline.report.render import check_out, publish_pages, staging
from pipeline.report.sections import Section, Table

# The figures the maps, the main effects and the stones series show: (column, words, number format).
MAPPED = (
    ("start_value", "start value under perfect play (stones)", "{:+.0f}"),
    ("random_first_player_score", "first player's score, random v random", "{:.3f}"),
    ("random_mean_plies", "mean length, random v random (plies)", "{:.0f}"),
)
CENTRES = {"start_value": 0.0, "random_first_player_score": 0.5}  # diverging maps centred here; others sequential
FIELD_WORDS = {field.name: field.words for field in RULE_FIELDS}  # "compulsory feeding"
PARTS = ("tables", "size", "solve", "perfect", "random", "greedy", "alphabeta4", "exploitability")
LABEL_SIZE = 6.5  # points: the labels of a map's rows and columns
MAX_COLUMNS = 8  # a map's columns: beyond this its labels no longer fit the page's width
ASPECT = 1.5  # a map's columns per row, ideally: a page is wider than it is tall
NO_EFFECT = 1e-9  # an effect below this is none: the means are exact, so equal ones differ by rounding alone
KEY_COLUMNS = (
    "rules",
    "start_value",
    "best_first_moves",
    "random_first_player_score",
    "greedy_first_player_score",
    "alphabeta4_first_player_score",
    "random_mean_plies",
    "perfect_mean_plies",
)


@dataclass(frozen=True)
class MapLayout:
    """A grid of rule sets as a 2-D map: each row a combination of ``row_fields``' values, each
    column one of ``column_fields``', both in the order the atlas lists them (the first field
    varying slowest)."""

    row_fields: tuple[str, ...]
    column_fields: tuple[str, ...]
    rows: tuple[tuple[Any, ...], ...]
    columns: tuple[tuple[Any, ...], ...]


# ---------------------------------------------------------------------------------------------
# The computations


def atlas_frame(directory: Path) -> pl.DataFrame:
    """The atlas's rows (checked against its manifest), one per rule set done, in its order."""
    frame = pl.from_arrow(read_atlas(directory))
    assert isinstance(frame, pl.DataFrame)
    return frame


def flat_atlas(frame: pl.DataFrame) -> pl.DataFrame:
    """The atlas for a CSV: best_first_moves as a string of pits, "0 2"."""
    moves = [" ".join(map(str, pits)) for pits in frame["best_first_moves"].to_list()]
    return frame.with_columns(pl.Series("best_first_moves", moves, dtype=pl.String))


def value_label(field: str, value: Any) -> str:
    """A field's value in a few words: "feeding off", "slam no capture", "4 stones"."""
    return RULE_FIELD[field].label(value)


def varying_fields(frame: pl.DataFrame) -> list[str]:
    """The rule fields that take more than one value in ``frame``, in engine.Rules's order."""
    return [field for field in FIELDS if frame[field].n_unique() > 1]


def map_block(frame: pl.DataFrame) -> pl.DataFrame:
    """The rule sets of the grid the maps and the main effects read: all of them, but for an atlas
    whose stone counts are a series at otherwise fixed rules (a stone count with a single rule
    set), only the stone counts with several; empty when there is no such grid."""
    if "stones_per_pit" not in varying_fields(frame):
        return frame if frame.height > 1 else frame.clear()
    counts = frame.group_by("stones_per_pit").len()
    several = counts.filter(pl.col("len") > 1)["stones_per_pit"].to_list()
    return frame.filter(pl.col("stones_per_pit").is_in(several))


def map_layout(block: pl.DataFrame, fields: Sequence[str] | None = None, order: dict[str, list[Any]] | None = None) -> MapLayout:
    """The readable split of the varying ``fields`` (default: those of ``block``) into a map's rows
    and columns: at most MAX_COLUMNS columns where possible, then columns per row nearest ASPECT,
    then more columns. Each field's values come in ``order``'s order (config_order), else as the
    atlas lists them."""
    fields = list(varying_fields(block) if fields is None else fields)
    values = {field: field_values(block, field, order) for field in fields}
    splits = [tuple(combination) for size in range(len(fields) + 1) for combination in itertools.combinations(fields, size)]

    def badness(columns: tuple[str, ...]) -> tuple[bool, float, int]:
        across = math.prod(len(values[field]) for field in columns)
        down = math.prod(len(values[field]) for field in fields if field not in columns)
        return across > MAX_COLUMNS, abs(math.log(across / down / ASPECT)), -across

    column_fields = min(splits, key=badness)
    row_fields = tuple(field for field in fields if field not in column_fields)
    return MapLayout(
        row_fields,
        column_fields,
        tuple(itertools.product(*(values[field] for field in row_fields))),
        tuple(itertools.product(*(values[field] for field in column_fields))),
    )


def config_order(manifest: dict[str, Any]) -> dict[str, list[Any]]:
    """Each rule field's values in the order the atlas's config lists them, its grids in turn (as
    the atlas's columns hold them: capture_counts as "2.4.6")."""
    order: dict[str, list[Any]] = {}
    for grid in _table(_table(manifest.get("config")).get("grids")).values():
        for field, values in _table(grid).items():
            for value in values if isinstance(values, list) else []:
                value = ".".join(map(str, value)) if isinstance(value, list) else value
                if value not in order.setdefault(field, []):
                    order[field].append(value)
    return order


def field_values(frame: pl.DataFrame, field: str, order: dict[str, list[Any]] | None = None) -> list[Any]:
    """The values ``field`` takes in ``frame``: in ``order``'s order where it lists them, then as
    ``frame`` lists them."""
    found = frame[field].unique(maintain_order=True).to_list()
    listed = (order or {}).get(field, [])
    return sorted(found, key=lambda value: listed.index(value) if value in listed else len(listed) + found.index(value))


def map_grid(block: pl.DataFrame, layout: MapLayout, column: str) -> np.ndarray:
    """``column``'s value for each cell of the map (NaN where the atlas holds no such rule set)."""
    grid = np.full((len(layout.rows), len(layout.columns)), np.nan)
    row_place = {key: place for place, key in enumerate(layout.rows)}
    column_place = {key: place for place, key in enumerate(layout.columns)}
    for row in block.iter_rows(named=True):
        if row[column] is None:
            continue
        down = row_place[tuple(row[field] for field in layout.row_fields)]
        across = column_place[tuple(row[field] for field in layout.column_fields)]
        grid[down, across] = row[column]
    return grid


def main_effects(block: pl.DataFrame, fields: Sequence[str], order: dict[str, list[Any]] | None = None) -> pl.DataFrame:
    """For each field and each of its values, the number of rule sets with that value and the mean
    of each mapped figure over them (exact means over the grid, not estimates)."""
    rows = []
    for field in fields:
        for value in field_values(block, field, order):
            part = block.filter(pl.col(field) == value)
            row: dict[str, Any] = {"field": field, "value": value_label(field, value), "rule_sets": part.height}
            row |= {f"mean_{column}": part[column].cast(pl.Float64).mean() for column, _, _ in MAPPED}
            rows.append(row)
    schema = {"field": pl.String, "value": pl.String, "rule_sets": pl.Int64} | {f"mean_{c}": pl.Float64 for c, _, _ in MAPPED}
    return pl.DataFrame(rows, schema=schema, orient="row")


def field_effects(effects: pl.DataFrame) -> pl.DataFrame:
    """Each field's effect on each mapped figure: the spread (largest less smallest) of its values'
    means; sorted by the effect on the start value, then on the random first player's score."""
    spreads = [
        (pl.col(f"mean_{column}").max() - pl.col(f"mean_{column}").min()).alias(f"effect_{column}") for column, _, _ in MAPPED
    ]
    table = effects.group_by("field", maintain_order=True).agg(pl.col("value").str.join(", ").alias("values"), *spreads)
    return table.sort(["effect_start_value", "effect_random_first_player_score", "field"], descending=[True, True, False])


def fair_rule_sets(frame: pl.DataFrame) -> pl.DataFrame:
    """The rule sets whose start is a draw under perfect play, with their key figures."""
    return flat_atlas(frame.filter(pl.col("start_value") == 0)).select(KEY_COLUMNS)


def first_player_wins(frame: pl.DataFrame) -> pl.DataFrame:
    """The rule sets where South, moving first, wins under perfect play, with their key figures."""
    return flat_atlas(frame.filter(pl.col("start_value") > 0)).select(KEY_COLUMNS)


def stones_series(frame: pl.DataFrame) -> pl.DataFrame:
    """The rule sets that differ from RULES.md in their stones per pit alone (RULES.md's own
    included), by stone count: empty unless there are two or more."""
    names = {engine.Rules(stones_per_pit=stones).name for stones in frame["stones_per_pit"].unique().to_list()}
    series = frame.filter(pl.col("rules").is_in(sorted(names))).sort("stones_per_pit")
    return series if series.height > 1 else series.clear()


def reference_rules(frame: pl.DataFrame) -> str | None:
    """The rule set a figure marks as the reference: RULES.md's own (modiar) if the atlas holds it,
    else RULES.md's rules at the stone count of the atlas's grid (the most common count)."""
    names = frame["rules"].to_list()
    if engine.Rules().name in names:
        return engine.Rules().name
    counts = frame.group_by("stones_per_pit").len().sort(["len", "stones_per_pit"], descending=[True, False])
    for stones in counts["stones_per_pit"].to_list():
        name = engine.Rules(stones_per_pit=stones).name
        if name in names:
            return name
    return None


def cost_table(manifest: dict[str, Any], frame: pl.DataFrame) -> pl.DataFrame:
    """Per rule set done, its seconds (in all and per part of pipeline.analyse), peak memory (GB)
    and host, as the manifest gives them (null where a rule set's costs were not kept)."""
    rows = []
    for name in frame["rules"].to_list():
        costs = _table(_table(manifest.get("costs")).get(name))
        seconds = _table(costs.get("seconds"))
        peak = _amount(costs.get("peak_bytes"))
        row: dict[str, Any] = {"rules": name, "seconds": _amount(seconds.get("total"))}
        row |= {f"seconds_{part}": _amount(seconds.get(part)) for part in PARTS}
        host = costs.get("host")
        row |= {"peak_gb": None if peak is None else peak / 2**30, "host": host if isinstance(host, str) else None}
        rows.append(row)
    schema = {"rules": pl.String, "seconds": pl.Float64} | {f"seconds_{part}": pl.Float64 for part in PARTS}
    return pl.DataFrame(rows, schema=schema | {"peak_gb": pl.Float64, "host": pl.String}, orient="row")


def slowest_part(costs: pl.DataFrame) -> tuple[str, float, float] | None:
    """The part of the analysis that took longest over the whole atlas: its name, its seconds and
    its share of all the seconds; None without costs."""
    totals = {part: float(costs[f"seconds_{part}"].fill_null(0).sum()) for part in PARTS}
    whole = float(costs["seconds"].fill_null(0).sum())
    part = max(totals, key=lambda name: totals[name])
    return (part, totals[part], totals[part] / whole) if whole > 0 else None


# ---------------------------------------------------------------------------------------------
# Figures


def map_figure(block: pl.DataFrame, layout: MapLayout, column: str, words: str, form: str) -> Figure:
    """One figure across the grid: a map whose rows and columns are labelled by their fields'
    values (outer fields spanning their groups), each cell annotated where it fits."""
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
        figure.text(0.005, 1 - 0.03 / height, words[0].upper() + words[1:], ha="left", va="top", fontsize=8)
    return figure


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
    panels = (
        ("random_feeding_forced_fires", "P(a feed is forced in a game)"),
        ("random_grand_slam_blocked_fires", "P(a grand slam is banned in a game)"),
    )
    with plot.style():
        figure = Figure(figsize=(plot.PAGE, 2.9), layout="constrained")
        for axes, (column, words) in zip(figure.subplots(1, 2, sharey=True), panels, strict=True):
            norm = matplotlib.colors.Normalize(0.0, max(float(np.max(frame[column].to_numpy(), initial=0.0)), 1e-9))
            event = column.removeprefix("random_").removesuffix("_fires")
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
            text = _signed(value, form).replace("-", "\u2212")
            axes.text(across, down, text, ha="center", va="center", fontsize=LABEL_SIZE, color="white" if dark else "black")


def _mark_reference(axes: Axes, frame: pl.DataFrame, reference: str | None) -> None:
    if reference is None:
        return
    row = frame.filter(pl.col("rules") == reference).row(0, named=True)
    x, y = row["random_mean_plies"], abs(row["random_first_player_score"] - 0.5)
    axes.scatter([x], [y], s=90, facecolors="none", edgecolors=plot.OKABE_ITO[3], linewidths=1.2, zorder=3)
    axes.annotate(reference, (x, y), xytext=(6, 6), textcoords="offset points", fontsize=6.5, color=plot.OKABE_ITO[3])


# ---------------------------------------------------------------------------------------------
# The report


def build_atlas_report(directory: Path, out: Path | None = None, *, progress: bool = True) -> Path:
    """Write the report of the atlas in ``directory``; returns its folder (default
    reports/<atlas>/). Raises RecordError for a folder that is not a sound atlas, an atlas with no
    rule set done, or an ``out`` that is not a new or empty folder or a report of ours."""
    started = time.perf_counter()
    manifest = read_manifest(directory)
    name = str(manifest.get("atlas", directory.name))
    out = check_out(directory, out if out is not None else REPORTS / name)
    frame = atlas_frame(directory)
    if frame.height == 0:
        raise RecordError(f"the atlas in {directory} has no rule set done yet; run 'modiar atlas run' on its config first")
    report = _compose(frame, manifest)
    with staging(out) as folder:
        for stem, figure in report.figures.items():
            plot.save(figure, folder / "figures", stem)
        publish_pages(
            folder, out, f"Atlas of rule space: {name}", report.text, report.sections, report.tables, abstract=report.abstract
        )
    if progress:
        print(f"report of the atlas {name} in {time.perf_counter() - started:.1f} s: {out / 'index.html'}", file=sys.stderr)
    return out


@dataclass
class _Composed:
    abstract: list[str]
    text: list[str]
    sections: list[Section]
    tables: dict[str, pl.DataFrame]
    figures: dict[str, Figure]


def _compose(frame: pl.DataFrame, manifest: dict[str, Any]) -> _Composed:
    """Every section, table and figure of the report, from the atlas's rows and its manifest."""
    block = map_block(frame)
    fields = varying_fields(block)
    order = config_order(manifest)
    effects = main_effects(block, fields, order)
    spreads = field_effects(effects)
    series = stones_series(frame)
    costs = cost_table(manifest, frame)
    reference = reference_rules(frame)
    figures: dict[str, Figure] = {}
    sections: list[Section] = []
    if fields:
        layout = map_layout(block, fields, order)
        for column, words, form in MAPPED:
            figures[f"atlas_map_{column}"] = map_figure(block, layout, column, words, form)
        sections.append(_maps_section(block, layout))
    if series.height:
        figures["atlas_stones"] = stones_figure(series)
        sections.append(_stones_section(series))
    sections.append(_outcomes_section(frame))
    if fields:
        figures["atlas_effects"] = effects_figure(spreads)
        sections.append(_effects_section(block, effects, spreads))
    figures["atlas_tradeoff"] = tradeoff_figure(frame, reference)
    sections += [_tradeoff_section(frame, reference), _costs_section(costs, manifest), _every_rule_set_section(frame)]
    tables = {
        "atlas": flat_atlas(frame),
        "fair": fair_rule_sets(frame),
        "first_player_wins": first_player_wins(frame),
        "main_effects": effects,
        "field_effects": spreads,
        "stones": flat_atlas(series).select("rules", "stones_per_pit", *KEY_COLUMNS[1:]),
        "costs": costs,
    }
    return _Composed(_abstract(frame, manifest, spreads, series), _text(frame, manifest), sections, tables, figures)


def _abstract(frame: pl.DataFrame, manifest: dict[str, Any], spreads: pl.DataFrame, series: pl.DataFrame) -> list[str]:
    """The atlas's answers in words: who wins where, how fair and long random games are, and
    which rule field moves the first player's advantage most."""
    values = frame["start_value"].to_numpy()
    fair, first, second = int((values == 0).sum()), int((values > 0).sum()), int((values < 0).sum())
    score = frame.sort("random_first_player_score")
    length = frame.sort("random_mean_plies")
    text = [
        f"{_count(frame.height, 'rule set')} of Modiar, each solved and analysed exactly ({_done(frame, manifest)}). "
        f"Under perfect play {fair} {'is' if fair == 1 else 'are'} fair (the start is a draw), the first player "
        f"(South) wins in {first} and the second (North) in {second}.",
        f"Between two random players the first player's score runs from {score['random_first_player_score'][0]:.3f} "
        f"({score['rules'][0]}) to {score['random_first_player_score'][-1]:.3f} ({score['rules'][-1]}), and a game lasts "
        f"{length['random_mean_plies'][0]:.1f} ({length['rules'][0]}) to {length['random_mean_plies'][-1]:.1f} plies "
        f"on average ({length['rules'][-1]}).",
    ]
    default = engine.Rules().name
    if default in frame["rules"].to_list():
        row = frame.filter(pl.col("rules") == default).row(0, named=True)
        text.append(
            f"RULES.md's own rules ({default}): start value {_signed(row['start_value'])}, random first player's score "
            f"{row['random_first_player_score']:.3f}, {row['random_mean_plies']:.1f} plies on average."
        )
    if spreads.height:
        text.append(rule_that_matters(spreads))
    if series.height:
        text.append(
            f"At RULES.md's other rules, from {series['stones_per_pit'][0]} to {series['stones_per_pit'][-1]} stones per pit "
            f"the start value goes {', '.join(_signed(value) for value in series['start_value'].to_list())}."
        )
    text.append(
        "Every figure is exact (the solution and exact self-play, pipeline.analyse): there is no sampling error and no interval."
    )
    return text


def rule_that_matters(spreads: pl.DataFrame) -> str:
    """The headline on the field effects (field_effects, largest first): the field that moves the
    start value most, and the one that moves random play's first-player score most where that is
    another; or that no field moves them, when every effect is zero (a bold "rule that matters
    most" with an effect of 0.00 stones would be a false answer)."""
    top = spreads.row(0, named=True)
    by_score = spreads.sort("effect_random_first_player_score", descending=True).row(0, named=True)
    moves_value = abs(top["effect_start_value"]) >= NO_EFFECT
    moves_score = abs(by_score["effect_random_first_player_score"]) >= NO_EFFECT
    caveat = " These are averages over the grid (a field's effect may depend on the others), exact, not sampled."
    score = (
        f"for random players it is {FIELD_WORDS[by_score['field']]} "
        f"(the first player's score differs by {by_score['effect_random_first_player_score']:.3f})"
    )
    if not moves_value:
        fields = _listed([FIELD_WORDS[field] for field in spreads["field"].to_list()])
        rest = f"; {score}." if moves_score else ", nor the random first player's score."
        return f"**No rule field the grid varies ({fields}) changes the start value under perfect play**{rest}{caveat}"
    return (
        f"**The rule that matters most to the first player's advantage is {FIELD_WORDS[top['field']]}**: over the grid, "
        f"the mean start value of its values ({top['values']}) differs by {top['effect_start_value']:.2f} stones"
        + ("." if by_score["field"] == top["field"] or not moves_score else f"; {score}.")
        + caveat
    )


def _done(frame: pl.DataFrame, manifest: dict[str, Any]) -> str:
    """How much of the atlas is done (its rows, of the rule sets its config makes), and what was
    refused for memory."""
    done, total = frame.height, len(atlas_of_manifest(manifest).rule_sets())
    refused = _table(manifest.get("refused"))
    words = "the whole atlas" if done == total else f"{done} of the atlas's {total} rule sets done so far"
    return words + (f"; {len(refused)} refused for memory, listed under Costs" if refused else "")


def _text(frame: pl.DataFrame, manifest: dict[str, Any]) -> list[str]:
    versions = _table(manifest.get("versions"))
    return [
        f"Atlas **{manifest.get('atlas')}**: {_done(frame, manifest)}, engine version {versions.get('engine', '?')}. "
        "The start value is "
        "South's final total less North's under perfect play: above 0 the first player wins, 0 is fair, below 0 the "
        "second wins. The first player's score counts a win as 1 and a draw as 1/2. A rule set's name spells out every "
        "field that differs from RULES.md (RULES.md: Rule-set names); tables/atlas.csv has every figure of every rule set."
    ]


def _maps_section(block: pl.DataFrame, layout: MapLayout) -> Section:
    stones = block["stones_per_pit"].unique().to_list()
    fixed = f" at {stones[0]} stones per pit" if len(stones) == 1 else ""
    words = [
        f"The grid{fixed}, {_count(block.height, 'rule set')}: rows are the combinations of "
        f"{_listed([FIELD_WORDS[field] for field in layout.row_fields]) or 'nothing'}, columns those of "
        f"{_listed([FIELD_WORDS[field] for field in layout.column_fields]) or 'nothing'}; other fields are RULES.md's. "
        "A grey cell is a rule set not (yet) in the atlas. The start value and the score are coloured about the fair "
        "value (0 stones, 1/2), the length from shortest to longest."
    ]
    figures = [(f"atlas_map_{column}", f"{words_.capitalize()}, per rule set (exact).") for column, words_, _ in MAPPED]
    return Section("Across the grid", words, figures=figures)


def _stones_section(series: pl.DataFrame) -> Section:
    rows = [
        [
            str(row["stones_per_pit"]),
            row["rules"],
            _signed(row["start_value"]),
            f"{row['random_first_player_score']:.6f}",
            f"{row['random_mean_plies']:.2f}",
            f"{row['perfect_mean_plies']:.2f}",
        ]
        for row in series.iter_rows(named=True)
    ]
    header = ["stones per pit", "rules", "start value", "first player (random)", "mean plies (random)", "mean plies (perfect)"]
    return Section(
        "Stones per pit",
        ["The number of stones in each pit at the start, every other rule RULES.md's."],
        [Table("The stones series (exact)", header, rows, "stones")],
        [("atlas_stones", "Start value, random first player's score and mean lengths against the stones per pit (exact).")],
    )


def _outcomes_section(frame: pl.DataFrame) -> Section:
    second = int((frame["start_value"] < 0).sum())
    text = [
        f"The rule sets that are fair under perfect play, and those the first player wins; in the other {second} the second "
        "player wins. Best first moves are South's pits (0, 1, 2) that keep the start value."
    ]
    tables = []
    for caption, table, name in (
        ("Fair rule sets (start value 0)", fair_rule_sets(frame), "fair"),
        ("Rule sets the first player wins", first_player_wins(frame), "first_player_wins"),
    ):
        if table.height:
            tables.append(Table(caption, _key_header(), _key_rows(table), name))
        else:
            text.append(f"{caption}: none.")
    return Section("Who wins under perfect play", text, tables)


def _effects_section(block: pl.DataFrame, effects: pl.DataFrame, spreads: pl.DataFrame) -> Section:
    text = [
        f"For each rule field that varies, the mean of each figure over the rule sets with each of its values (over the "
        f"{_count(block.height, 'rule set')} of the grid); a field's effect is the spread of those means, largest less "
        "smallest. These are exact averages over the grid, not sampled estimates, and not a model: where fields interact, "
        "a field's effect depends on the values of the others, and an unfinished grid weighs its values unequally."
    ]
    effect_rows = [
        [
            FIELD_WORDS[row["field"]],
            row["values"],
            f"{row['effect_start_value']:.3f}",
            f"{row['effect_random_first_player_score']:.4f}",
            f"{row['effect_random_mean_plies']:.2f}",
        ]
        for row in spreads.iter_rows(named=True)
    ]
    mean_rows = [
        [
            FIELD_WORDS[row["field"]],
            row["value"],
            str(row["rule_sets"]),
            _signed(row["mean_start_value"], "{:+.3f}"),
            f"{row['mean_random_first_player_score']:.4f}",
            f"{row['mean_random_mean_plies']:.2f}",
        ]
        for row in effects.iter_rows(named=True)
    ]
    return Section(
        "Which rule matters most",
        text,
        [
            Table(
                "Each field's effect (spread of its values' means)",
                ["field", "values", "start value", "first player (random)", "mean plies (random)"],
                effect_rows,
                "field_effects",
            ),
            Table(
                "Main effects: means over the rule sets with each value",
                ["field", "value", "rule sets", "start value", "first player (random)", "mean plies (random)"],
                mean_rows,
                "main_effects",
            ),
        ],
        [
            (
                "atlas_effects",
                "Each rule field's effect on the start value and on the random first player's score "
                "(exact averages over the grid).",
            )
        ],
    )


def _tradeoff_section(frame: pl.DataFrame, reference: str | None) -> Section:
    mark = f" The ringed rule set is {reference}." if reference else ""
    text = [
        "Fairness, length and how often the feeding and grand-slam rules change a game, between random players: the "
        "nearer a rule set lies to the bottom, the nearer 1/2 the first player's score; colour is the probability that a "
        "feed is forced (left) or a grand slam is banned (right) at least once in a game; the marker's shape says who wins "
        f"under perfect play.{mark}"
    ]
    return Section(
        "Fairness, length and the rules that fire",
        text,
        figures=[
            (
                "atlas_tradeoff",
                "Distance of the random first player's score from 1/2 against mean length (exact); a hollow marker is a "
                "rule set without that panel's rule (no feeding, or grand slams allowed).",
            )
        ],
    )


def _costs_section(costs: pl.DataFrame, manifest: dict[str, Any]) -> Section:
    slowest = slowest_part(costs)
    refused = _table(manifest.get("refused"))
    text = [f"Refused for memory ({len(refused)}): " + "; ".join(map(str, refused.values()))] if refused else []
    if slowest is not None:
        part, seconds, share = slowest
        text.append(
            f"{float(costs['seconds'].fill_null(0).sum()):,.0f} s of analysis in all; the part that took longest is {part}: "
            f"{seconds:,.0f} s, {100 * share:.0f}% of the whole. Peak memory is one task's largest resident size."
        )
    rows = [
        [
            row["rules"],
            _seconds(row["seconds"]),
            *(_seconds(row[f"seconds_{part}"]) for part in PARTS),
            "n/a" if row["peak_gb"] is None else f"{row['peak_gb']:.2f}",
            row["host"] or "n/a",
        ]
        for row in costs.iter_rows(named=True)
    ]
    return Section(
        "Costs",
        text,
        [Table("Seconds per part and peak memory per rule set", ["rules", "seconds", *PARTS, "peak GB", "host"], rows, "costs")],
    )


def _every_rule_set_section(frame: pl.DataFrame) -> Section:
    table = Table("Every rule set's key figures (exact)", _key_header(), _key_rows(flat_atlas(frame)), "atlas")
    return Section("Every rule set", ["All columns are in tables/atlas.csv."], [table], appendix=True)


def _key_header() -> list[str]:
    return [
        "rules",
        "start value",
        "best first moves",
        "first player: random",
        "greedy",
        "alphabeta4",
        "mean plies: random",
        "perfect",
    ]


def _key_rows(table: pl.DataFrame) -> list[list[str]]:
    return [
        [
            row["rules"],
            _signed(row["start_value"]),
            row["best_first_moves"],
            f"{row['random_first_player_score']:.4f}",
            f"{row['greedy_first_player_score']:.4f}",
            f"{row['alphabeta4_first_player_score']:.4f}",
            f"{row['random_mean_plies']:.2f}",
            f"{row['perfect_mean_plies']:.2f}",
        ]
        for row in table.iter_rows(named=True)
    ]


def _signed(value: float, form: str = "{:+.0f}") -> str:
    """A value with its sign, but 0 without one: "+6", "0", "-8"."""
    text = form.format(value)
    return text.lstrip("+-") if float(text) == 0 else text


def _seconds(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.1f}"


def _count(count: int, word: str) -> str:
    return f"{count} {word}" if count == 1 else f"{count} {word}s"


def _listed(words: Sequence[str]) -> str:
    return words[0] if len(words) == 1 else f"{', '.join(words[:-1])} and {words[-1]}" if words else ""


def _table(value: object) -> dict[str, Any]:
    """A table of the manifest (an edited one may hold anything there), else an empty one: what
    is not well-formed is unknown, shown as n/a."""
    return value if isinstance(value, dict) else {}


def _amount(value: object) -> float | None:
    """A cost of the manifest: a finite number of seconds or bytes, at least 0; else unknown (None)."""
    if not isinstance(value, int | float) or isinstance(value, bool):
        return None
    try:
        number = float(value)
    except OverflowError:  # an int beyond any float
        return None
    return number if math.isfinite(number) and number >= 0 else None
