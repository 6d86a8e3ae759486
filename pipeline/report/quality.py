"""Figures of game quality, in the style of pipeline.report.figures: the forecast by ply of
several skills, the stones given away by ply, and one game's value history.

The forecast after t plies is the margin (South's stones minus North's) the game ends with if
both sides play perfectly from there (docs/quality.md); a game of perfect play keeps it level.
"""

from __future__ import annotations

from collections.abc import Sequence

import matplotlib.ticker
import numpy as np
import polars as pl
from matplotlib.figure import Figure

from pipeline.report.figures import COLUMN, MARKERS, OKABE_ITO, style

DASHES = ("-", "--", ":", "-.")
LEAST_IN_PLAY = 0.01  # a curve stops where fewer than 1% of its games are still in play


def forecast_bands(curves: pl.DataFrame, strategies: Sequence[str], *, title: str | None = None) -> Figure:
    """The mean forecast by ply of each strategy's self-play (curves: strategy, ply, in_play,
    mean_forecast, forecast_sd, as engine.ExactQuality.frame), with a band of one standard
    deviation over the games still in play; each curve stops where fewer than 1% are."""
    with style():
        figure = Figure(figsize=(COLUMN, 2.6))
        axes = figure.subplots()
        for i, name in enumerate(strategies):
            part = _in_play(curves, name)
            ply, mean, sd = (part[column].to_numpy() for column in ("ply", "mean_forecast", "forecast_sd"))
            colour = OKABE_ITO[i % len(OKABE_ITO)]
            axes.fill_between(ply, mean - sd, mean + sd, color=colour, alpha=0.15, linewidth=0)
            axes.plot(ply, mean, color=colour, linestyle=DASHES[i % len(DASHES)], label=name)
        axes.axhline(0, color="#888888", linewidth=0.6)
        axes.xaxis.set_major_locator(matplotlib.ticker.MaxNLocator(integer=True))
        axes.set_xlabel("ply")
        axes.set_ylabel("forecast: final margin under\nperfect play from here (stones)")
        if title:
            axes.set_title(title, loc="left")
        axes.legend(loc="lower left", bbox_to_anchor=(0, 1.02, 1, 0.2), ncols=2, borderaxespad=0)
    return figure


def stones_lost_by_ply(curves: pl.DataFrame, strategies: Sequence[str], *, title: str | None = None) -> Figure:
    """The stones a move gives away on average at each ply of each strategy's self-play (per
    game still in play), on a log axis where they span decades; each curve stops where fewer
    than 1% of its games are in play."""
    with style():
        figure = Figure(figsize=(COLUMN, 2.6))
        axes = figure.subplots()
        positive = []
        for i, name in enumerate(strategies):
            part = _in_play(curves, name)
            lost = part["stones_lost"].to_numpy()
            positive.append(lost[lost > 0])
            axes.plot(
                part["ply"].to_numpy(),
                lost,
                color=OKABE_ITO[i % len(OKABE_ITO)],
                linestyle=DASHES[i % len(DASHES)],
                marker=MARKERS[i % len(MARKERS)],
                markevery=10,
                label=name,
            )
        values = np.concatenate(positive) if positive else np.empty(0)
        if len(values) and values.max() > 100 * values.min():
            axes.set_yscale("symlog", linthresh=max(float(values.min()), 1e-3))
        axes.xaxis.set_major_locator(matplotlib.ticker.MaxNLocator(integer=True))
        axes.set_xlabel("ply")
        axes.set_ylabel("stones given away by the move\n(mean per game in play)")
        if title:
            axes.set_title(title, loc="left")
        axes.legend(loc="lower left", bbox_to_anchor=(0, 1.02, 1, 0.2), ncols=2, borderaxespad=0)
    return figure


def value_history(judged: pl.DataFrame, *, title: str | None = None) -> Figure:
    """One game's forecast by ply (judged: the game's rows of pipeline.analysis.errors.judged_plies),
    the final margin last, with each move that gave stones away marked at the ply it was
    played: South's mistakes as circles, North's as squares, labelled with the stones lost."""
    rows = judged.sort("ply")
    before = rows["forecast_before"].to_numpy()
    forecast = np.append(before, rows["forecast_after"].to_numpy()[-1:]) if len(before) else before
    with style():
        figure = Figure(figsize=(COLUMN * 1.4, 2.4))
        axes = figure.subplots()
        axes.step(np.arange(len(forecast)), forecast, where="post", color=OKABE_ITO[7], linewidth=1.0, label="forecast")
        axes.axhline(0, color="#888888", linewidth=0.6)
        for mover, (name, marker) in enumerate((("South", "o"), ("North", "s"))):
            errs = rows.filter((pl.col("mover") == mover) & (pl.col("loss") > 0))
            if not errs.height:
                continue
            ply = errs["ply"].to_numpy() + 1
            after = errs["forecast_after"].to_numpy()
            axes.scatter(ply, after, marker=marker, color=OKABE_ITO[mover], zorder=3, label=f"{name}'s mistake", s=18)
            for x, y, lost in zip(ply, after, errs["loss"].to_list(), strict=True):
                axes.annotate(f"-{lost}", (x, y), textcoords="offset points", xytext=(3, 3), fontsize=6)
        axes.xaxis.set_major_locator(matplotlib.ticker.MaxNLocator(integer=True))
        axes.set_xlabel("ply")
        axes.set_ylabel("forecast (stones, South's side)")
        if title:
            axes.set_title(title, loc="left")
        axes.legend(loc="best")
    return figure


def _in_play(curves: pl.DataFrame, name: str) -> pl.DataFrame:
    return curves.filter((pl.col("strategy") == name) & (pl.col("in_play") >= LEAST_IN_PLAY)).sort("ply")
