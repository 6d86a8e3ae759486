"""The report's figures, in one publication style, each saved as SVG, PDF and PNG.

$MODIAR_FIGURE_FORMATS (a comma list such as ``svg`` or ``svg,pdf``) saves fewer: a draft
report in a fifth of the time. SVG is always written: the report's pages draw it.

Every figure function takes the report's tables (polars DataFrames, as pipeline.study.report builds
them) and returns a matplotlib Figure; ``save`` writes it in the three formats. The style:

- sizes for a two-column paper: one column is 3.5 in wide, two columns 7.2 in;
- 8-point type, labelled axes with units, no chart junk (no top/right spines);
- the Okabe–Ito palette (Okabe and Ito 2008, "Color Universal Design"), safe for the common
  forms of colour blindness, with markers or direct labels where colour alone would carry meaning;
- intervals drawn as 95% bars; a reference line where the question has one (a score of 1/2).

Figures are built with matplotlib's object API, not pyplot: no global figure state, no
backend switch, so the same functions draw inline in a notebook and into files in a worker.
Outputs are reproducible: no timestamps in SVG or PDF, and a fixed SVG id salt.
"""

from __future__ import annotations

import math
import os
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, cast

import matplotlib
import matplotlib.colors
import matplotlib.patches
import matplotlib.patheffects
import matplotlib.ticker
import numpy as np
import polars as pl
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.rcsetup import cycler

OKABE_ITO = ("#0072B2", "#E69F00", "#009E73", "#D55E00", "#CC79A7", "#56B4E9", "#F0E442", "#000000")
MARKERS = ("o", "s", "^", "D", "v", "P", "X", "*")
COLUMN = 3.5  # inches: one column of a two-column paper
PAGE = 7.2  # inches: both columns
FORMATS = ("svg", "pdf", "png")
FORMATS_VARIABLE = "MODIAR_FIGURE_FORMATS"
# No dates and no software versions in the files, so a figure's bytes depend on its data alone.
_METADATA: dict[str, dict[str, Any]] = {
    "svg": {"Date": None, "Creator": None},
    "pdf": {"CreationDate": None, "Creator": None, "Producer": None},
    "png": {"Software": None},
}
PNG_DPI = 300
# An exact value drawn over sampled estimates: a black cross with a white rim, seen on any colour
# of the palette (a vermillion one vanished on the orange squares of a second group).
EXACT_MARKER: dict[str, Any] = {"marker": "x", "color": OKABE_ITO[7], "s": 28, "linewidths": 1.2}
HALO = [matplotlib.patheffects.withStroke(linewidth=2.4, foreground="white")]

STYLE: dict[str, Any] = {
    "font.size": 8,
    "axes.titlesize": 8,
    "axes.labelsize": 8,
    "xtick.labelsize": 7,
    "ytick.labelsize": 7,
    "legend.fontsize": 7,
    "legend.frameon": False,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "axes.prop_cycle": cycler(color=OKABE_ITO),
    "axes.grid": True,
    "grid.color": "#dddddd",
    "grid.linewidth": 0.5,
    "lines.linewidth": 1.2,
    "lines.markersize": 4,
    "errorbar.capsize": 0,
    "figure.dpi": 100,
    "savefig.bbox": "tight",
    "savefig.pad_inches": 0.02,
    "svg.hashsalt": "modiar",
    "svg.fonttype": "none",  # text stays text: searchable, and editable in a paper's figure
    "pdf.fonttype": 42,  # TrueType, as journals ask
}


@contextmanager
def style() -> Iterator[None]:
    """The report's matplotlib style, for a block of figure code."""
    with matplotlib.rc_context(cast(Any, STYLE)):
        yield


def formats() -> tuple[str, ...]:
    """The formats figures are saved in: SVG, PDF and PNG, or SVG and those $MODIAR_FIGURE_FORMATS
    lists. Raises ValueError, naming the variable, for a format it does not know."""
    value = os.environ.get(FORMATS_VARIABLE, "").strip()
    if not value:
        return FORMATS
    chosen = {part.strip().lower() for part in value.split(",")} - {""}
    unknown = sorted(chosen - set(FORMATS))
    if unknown:
        raise ValueError(f"${FORMATS_VARIABLE} names {unknown[0]!r}: figures are saved as {', '.join(FORMATS)}")
    return tuple(suffix for suffix in FORMATS if suffix in chosen | {"svg"})


def save(figure: Figure, folder: Path, name: str) -> list[Path]:
    """Write the figure as folder/name.svg, .pdf and .png (300 dpi), or in ``formats()``."""
    folder.mkdir(parents=True, exist_ok=True)
    paths = []
    with style():
        for suffix in formats():
            path = folder / f"{name}.{suffix}"
            metadata = _METADATA[suffix]
            figure.savefig(path, dpi=PNG_DPI, metadata=metadata)
            paths.append(path)
    return paths


def save_as(figure: Figure, path: Path) -> Path:
    """Write the figure to ``path`` in the format its suffix names (.svg, .pdf or .png), as
    ``save`` writes that format; ValueError for another suffix."""
    suffix = path.suffix.lower().lstrip(".")
    if suffix not in FORMATS:
        raise ValueError(f"{path}: a figure is saved as {', '.join(FORMATS)}, not {suffix or 'a file without a suffix'}")
    path.parent.mkdir(parents=True, exist_ok=True)
    with style():
        figure.savefig(path, format=suffix, dpi=PNG_DPI, metadata=_METADATA[suffix])
    return path


def forest(
    table: pl.DataFrame,
    *,
    label: str,
    value: str,
    title: str | None = None,
    xlabel: str,
    reference: float | None = 0.5,
    colour_by: str | None = None,
    width: float = COLUMN,
    limits: tuple[float, float] | None = None,
    legend: bool = False,
) -> Figure:
    """A forest plot, ``width`` inches wide (a column by default): one row per line of ``table``
    (labelled by column ``label``), the estimate ``value`` with its interval ``<stem>_low`` ..
    ``<stem>_high`` (the stem being ``value`` less a ``_share`` or ``_score`` suffix, as
    pipeline.analysis.metrics names them), and a reference line. Rows with the same ``colour_by`` share a
    colour and a marker, and a thin rule separates the groups; the labels name them, and
    ``legend`` adds a legend of the groups above the axes. ``limits`` (low, high) fixes the
    x-axis: an interval reaching past it is cut at the edge, where an arrowhead marks the cut
    (the caption must say so). A row whose estimate is NaN draws nothing but its label."""
    rows = table.height
    stem = _stem(value)
    with style():
        figure, axes = _canvas(width, 0.6 + 0.16 * max(rows, 3))
        positions = np.arange(rows)[::-1]
        groups = _colour_groups(table, colour_by)
        for (name, mask), colour, marker in zip(groups, OKABE_ITO, MARKERS, strict=False):
            estimate = table[value].to_numpy()[mask].astype(float)
            low = table[f"{stem}_low"].to_numpy()[mask].astype(float)
            high = table[f"{stem}_high"].to_numpy()[mask].astype(float)
            if limits is not None:
                for ends, edge, arrow in ((low < limits[0], limits[0], "<"), (high > limits[1], limits[1], ">")):
                    if ends.any():
                        axes.plot(
                            np.full(ends.sum(), edge), positions[mask][ends], arrow, color=colour, markersize=4, clip_on=False
                        )
                low, high = np.clip(low, *limits), np.clip(high, *limits)
            axes.errorbar(
                estimate,
                positions[mask],
                xerr=_spans(estimate, low, high),
                fmt=marker,
                color=colour,
                label=name,
                elinewidth=1.0,
            )
        if limits is not None:
            axes.set_xlim(*limits)
        if legend:
            axes.legend(loc="lower left", bbox_to_anchor=(0, 1.02, 1, 0.2), ncols=3, borderaxespad=0)
        if reference is not None:
            axes.axvline(reference, color="#555555", linewidth=0.8, linestyle="--", zorder=0)
        axes.set_yticks(positions, table[label].to_list())
        axes.set_ylim(-0.7, rows - 0.3)
        axes.grid(axis="y", visible=False)
        axes.set_xlabel(xlabel)
        _title(axes, title)
        if colour_by is not None:
            values = table[colour_by].to_list()
            for row in range(1, rows):
                if values[row] != values[row - 1]:
                    axes.axhline(positions[row] + 0.5, color="#bbbbbb", linewidth=0.5)
    return figure


def length_ecdf(lengths: pl.DataFrame, *, title: str | None = None) -> Figure:
    """Game length distributions on one pair of axes (column pairing; columns plies and games):
    for each pairing, the share of its games over by each ply (an empirical distribution
    function), so that pairings compare at a glance. The ply axis stops where 99.5% of every
    pairing's games are over; a colour and a line style per pairing."""
    pairings = lengths["pairing"].unique(maintain_order=True).to_list()
    limit = max(quantile_ply(lengths.filter(pl.col("pairing") == name), 0.995) for name in pairings)
    dashes = ("-", "--", ":", "-.")
    with style():
        figure, axes = _canvas(COLUMN, 2.6 + 0.12 * len(pairings))
        for i, name in enumerate(pairings):
            part = lengths.filter(pl.col("pairing") == name).group_by("plies").agg(pl.col("games").sum()).sort("plies")
            lasted = part["plies"].to_numpy()
            plies = np.concatenate([[0], lasted, [max(limit, int(lasted.max()))]])
            over = np.cumsum(part["games"].to_numpy()) / max(int(part["games"].sum()), 1)
            share = 100 * np.concatenate([[0.0], over, [over[-1]]])
            axes.step(
                plies,
                share,
                where="post",
                color=OKABE_ITO[i % 8],
                linestyle=dashes[i % 4],
                label=name,
            )
        axes.set_xlim(0, limit)
        axes.xaxis.set_major_locator(matplotlib.ticker.MaxNLocator(integer=True))
        axes.set_ylim(0, 100.5)
        axes.set_xlabel("game length (plies)")
        axes.set_ylabel("games over by then (%)")
        _title(axes, title)
        axes.legend(loc="lower left", bbox_to_anchor=(0, 1.02, 1, 0.2), ncols=2, borderaxespad=0)
    return figure


def z_histogram(z: np.ndarray, *, flag: float, certain: int = 0, title: str | None = None) -> Figure:
    """The calibration of sampled figures against their exact values: a histogram of their z
    scores, (sampled - exact) / standard error, against the standard normal density they follow
    when the sampling and the exact values agree; dashed lines at +-``flag``, the alarm's level.
    Infinite z (a figure exactly known but sampled otherwise) are counted in the legend, and so
    are ``certain``, the figures left out of ``z`` because they cannot vary (an event that the
    exact outcome makes certain or impossible: sampled and exact agree, z is 0 by definition)."""
    finite = z[np.isfinite(z)]
    width = max(4.5, float(np.ceil(np.abs(finite).max()))) if finite.size else 4.5
    with style():
        figure, axes = _canvas(COLUMN, 2.4)
        axes.hist(
            finite,
            bins=np.arange(-width, width + 0.25, 0.25).tolist(),
            density=True,
            color=OKABE_ITO[0],
            alpha=0.6,
            label=f"{finite.size:,} figures' z",
        )
        grid = np.linspace(-width, width, 400)
        axes.plot(grid, np.exp(-(grid**2) / 2) / np.sqrt(2 * np.pi), color=OKABE_ITO[7], linewidth=1.0, label="standard normal")
        for side in (-flag, flag):
            axes.axvline(side, color="#555555", linewidth=0.8, linestyle="--", zorder=0)
        beyond = int((np.abs(finite) > 2).sum())
        expected = math.erfc(2 / math.sqrt(2)) * finite.size  # the normal's chance of |z| > 2, 4.55%
        axes.plot([], [], " ", label=f"|z| > 2: {beyond:,} (normal: {expected:,.0f})")
        if z.size > finite.size:
            axes.plot([], [], " ", label=f"infinite z: {z.size - finite.size:,}")
        if certain:
            axes.plot([], [], " ", label=f"left out, certain (no variance): {certain:,}")
        axes.set_xlim(-width, width)
        axes.set_xlabel("z = (sampled - exact) / standard error")
        axes.set_ylabel("density")
        _title(axes, title)
        axes.legend(loc="upper left", fontsize=6)
    return figure


def quantile_ply(lengths: pl.DataFrame, quantile: float) -> int:
    """A ply axis limit for ``lengths`` (columns plies, games): one past the smallest length by
    which ``quantile`` of all its games are over, and at least 10."""
    totals = lengths.group_by("plies").agg(pl.col("games").sum()).sort("plies")
    cumulative = np.cumsum(totals["games"].to_numpy()) / max(int(totals["games"].sum()), 1)
    place = min(int(np.searchsorted(cumulative, quantile)), totals.height - 1)
    return max(int(totals["plies"][place]) + 1, 10)


def events_by_ply(
    table: pl.DataFrame, *, max_ply: int, ylabel: str = "turns on which it fires (%)", title: str | None = None
) -> Figure:
    """Per event (column event), the share of turns at each ply (columns ply, share, share_low,
    share_high) on which it fires, as lines with a 95% band, on a log scale from 0.01%: the
    rules fire at rates from a few in ten thousand turns to one in two. A share of 0 leaves a
    gap in its line, and a band is drawn only where its lower end is on the axis (above 0.01%)."""
    names = table["event"].unique(maintain_order=True).to_list()
    with style():
        figure, axes = _canvas(COLUMN, 2.6)
        for i, name in enumerate(names):
            part = table.filter((pl.col("event") == name) & (pl.col("ply") <= max_ply)).sort("ply")
            plies = part["ply"].to_numpy()
            colour = OKABE_ITO[i % 8]
            share = 100 * part["share"].to_numpy()
            share = np.where(share > 0, share, np.nan)
            axes.plot(plies, share, color=colour, label=name, marker=MARKERS[i % 8], markersize=2)
            low = 100 * part["share_low"].to_numpy()
            # a band whose lower end is 0 would fall to the foot of the log axis: drawn only where it is above it
            axes.fill_between(plies, low, 100 * part["share_high"].to_numpy(), where=low > 0.01, color=colour, alpha=0.2, lw=0)
        axes.set_yscale("log")
        axes.set_ylim(0.01, 100)
        axes.yaxis.set_major_formatter(matplotlib.ticker.FuncFormatter(lambda value, _: f"{value:g}"))
        axes.set_xlim(0, max_ply)
        axes.set_xlabel("ply (0 is South's first move)")
        axes.set_ylabel(ylabel)
        _title(axes, title)
        axes.legend(loc="lower left", bbox_to_anchor=(0, 1.02, 1, 0.2), ncols=2, borderaxespad=0)
    return figure


def dot_grid(
    table: pl.DataFrame,
    *,
    row: str,
    series: str,
    value: str,
    xlabel: str,
    percent: bool = True,
    reference: float | None = None,
    log: bool = False,
    title: str | None = None,
) -> Figure:
    """Several series of estimates with intervals on shared rows (e.g. each rule event, one
    series per pairing): dots with 95% bars, series side by side within a row; a dashed
    reference line if given, and a log scale for values that span orders of magnitude (linear
    near 0 when a value or an interval reaches 0)."""
    rows = table[row].unique(maintain_order=True).to_list()
    names = table[series].unique(maintain_order=True).to_list()
    stem = _stem(value)
    scale = 100.0 if percent else 1.0
    step = 0.7 / max(len(names), 1)
    with style():
        figure, axes = _canvas(COLUMN, 0.8 + 0.22 * len(rows) * max(1, len(names) / 3))
        for i, name in enumerate(names):
            part = table.filter(pl.col(series) == name)
            where = {key: place for place, key in enumerate(rows)}
            y = np.array([len(rows) - 1 - where[key] for key in part[row].to_list()]) + 0.35 - step * (i + 0.5)
            estimate = scale * part[value].to_numpy()
            low, high = scale * part[f"{stem}_low"].to_numpy(), scale * part[f"{stem}_high"].to_numpy()
            axes.errorbar(estimate, y, xerr=_spans(estimate, low, high), fmt=MARKERS[i % 8], color=OKABE_ITO[i % 8], label=name)
        if reference is not None:
            axes.axvline(reference, color="#555555", linewidth=0.8, linestyle="--", zorder=0)
        if log:
            # a value or an interval's end of 0 has no place on a log axis: then the axis is linear
            # below the smallest positive value drawn, logarithmic above (matplotlib's symlog)
            drawn = scale * table.select(value, f"{stem}_low", f"{stem}_high").to_numpy().ravel()
            positive = drawn[drawn > 0]
            if (drawn <= 0).any() and positive.size:
                axes.set_xscale("symlog", linthresh=10 ** np.floor(np.log10(positive.min())))
                axes.set_xlim(left=0)
            else:
                axes.set_xscale("log")
            axes.xaxis.set_major_formatter(matplotlib.ticker.FuncFormatter(lambda value, _: f"{value:g}"))
        axes.set_yticks(np.arange(len(rows))[::-1], rows)
        axes.grid(axis="y", visible=False)
        axes.set_xlabel(xlabel)
        _title(axes, title)
        axes.legend(title=series, loc="lower left", bbox_to_anchor=(0, 1.02, 1, 0.2), ncols=min(len(names), 3), borderaxespad=0)
    return figure


def heatmap(
    table: pl.DataFrame,
    *,
    row: str,
    column: str,
    value: str,
    title: str | None = None,
    colour_label: str,
    fmt: str = "{:.1f}",
    diverging: float | None = None,
) -> Figure:
    """A grid of values (rows x columns, labelled by the columns' names) with every cell's value
    printed in it; a sequential, colour-blind-safe colour map (cividis), or with ``diverging`` a
    diverging one (PuOr, also colour-blind safe) centred on that value. An empty cell stays blank."""
    rows = table[row].unique(maintain_order=True).to_list()
    columns = table[column].unique(maintain_order=True).to_list()
    grid = np.full((len(rows), len(columns)), np.nan)
    for r, c, v in table.select(row, column, value).iter_rows():
        grid[rows.index(r), columns.index(c)] = np.nan if v is None else v
    with style():
        figure, axes = _canvas(PAGE, 0.9 + 0.24 * len(rows))
        if diverging is None:
            image = axes.imshow(grid, cmap="cividis", aspect="auto")
        else:
            spread = max(float(np.nanmax(np.abs(grid - diverging))) if np.isfinite(grid).any() else 0.0, 1e-9)
            norm = matplotlib.colors.TwoSlopeNorm(diverging, diverging - spread, diverging + spread)
            image = axes.imshow(grid, cmap="PuOr", norm=norm, aspect="auto")
        axes.set_xticks(np.arange(len(columns)), columns, rotation=30, ha="right")
        axes.set_yticks(np.arange(len(rows)), rows)
        axes.set_xlabel(column)
        axes.set_ylabel(row)
        axes.grid(visible=False)
        for (r, c), v in np.ndenumerate(grid):
            if np.isfinite(v):
                red, green, blue, _ = image.cmap(image.norm(v))
                dark = 0.299 * red + 0.587 * green + 0.114 * blue < 0.5
                axes.text(c, r, fmt.format(v), ha="center", va="center", fontsize=7, color="white" if dark else "black")
        figure.colorbar(image, ax=axes, label=colour_label, fraction=0.03, pad=0.01)
        _title(axes, title)
    return figure


def _stem(value: str) -> str:
    """The stem of an estimate's interval columns: first_player_score -> first_player (its
    bounds first_player_low and _high), fired_share -> fired."""
    return value.removesuffix("_share").removesuffix("_score")


def _title(axes: Axes, title: str | None) -> None:
    if title:
        axes.set_title(title, loc="left")


def _spans(estimate: np.ndarray, low: np.ndarray, high: np.ndarray) -> np.ndarray:
    """Error-bar lengths below and above; rounding can put a bound a hair past its estimate."""
    return np.maximum(np.vstack([estimate - low, high - estimate]), 0.0)


def _canvas(width: float, height: float) -> tuple[Figure, Axes]:
    figure = Figure(figsize=(width, height))
    return figure, figure.subplots()


def _colour_groups(table: pl.DataFrame, colour_by: str | None) -> Sequence[tuple[str, np.ndarray]]:
    if colour_by is None:
        return [("", np.ones(table.height, dtype=bool))]
    values = table[colour_by].to_numpy()
    return [(str(name), values == name) for name in table[colour_by].unique(maintain_order=True).to_list()]


def board(counts: Sequence[int], *, title: str | None = None) -> Figure:
    """The board as RULES.md draws it: North's row on top (pits 5 4 3 from the left), South's
    below (0 1 2), each pit a hollow with its stones counted in it and its number beside it,
    and an arrow round the ring for the way stones are sown (0 -> 1 -> ... -> 5 -> 0)."""
    if len(counts) != 6:
        raise ValueError(f"a board has 6 pits, not {len(counts)}")
    places = {pit: (pit, 0.0) for pit in range(3)} | {pit: (5 - pit, 1.0) for pit in range(3, 6)}
    with style():
        figure, axes = _canvas(COLUMN, 1.75)
        axes.set_aspect("equal")
        axes.axis("off")
        axes.add_patch(
            matplotlib.patches.FancyBboxPatch((-0.5, -0.45), 3.0, 1.9, boxstyle="round,pad=0.05", fc="#f3ead8", ec="#8c7853")
        )
        for pit, (x, y) in places.items():
            axes.add_patch(matplotlib.patches.Circle((x, y), 0.36, fc="#d9c7a3", ec="#8c7853", lw=0.8))
            axes.text(x, y, str(counts[pit]), ha="center", va="center", fontsize=11, fontweight="bold", color="#3b2f1e")
            axes.text(x + 0.3, y + (0.33 if y else -0.36), str(pit), ha="center", va="center", fontsize=6.5, color="#555555")
        arrow = {"arrowstyle": "-|>", "color": OKABE_ITO[0], "lw": 0.9, "mutation_scale": 8}
        axes.annotate("", xy=(2.72, 0.85), xytext=(2.72, 0.15), arrowprops=arrow | {"connectionstyle": "arc3,rad=0.5"})
        axes.annotate("", xy=(-0.72, 0.15), xytext=(-0.72, 0.85), arrowprops=arrow | {"connectionstyle": "arc3,rad=0.5"})
        axes.text(-1.05, 1.0, "North", ha="right", va="center")
        axes.text(-1.05, 0.0, "South\n(moves first)", ha="right", va="center")
        axes.set_xlim(-2.1, 3.0)
        axes.set_ylim(-0.6, 1.6)
        _title(axes, title)
    return figure
