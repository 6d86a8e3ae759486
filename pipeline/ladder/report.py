"""The skill ladder's report: ``modiar ladder report DIR`` (the end of ``make ladder``).

    reports/<ladder>/index.html      the report, one file, figures inline
    reports/<ladder>/report.md       the same text and tables, figures linked
    reports/<ladder>/tables/*.csv    rungs (one row per rung) and pairings (one per pairing)
    reports/<ladder>/figures/*.svg|pdf|png

Every figure is exact (engine.exact_outcome, engine.exploitability): no interval, because there is
no sampling error. A rung's score against an opponent is read in both seats and shown per seat
and as their mean, so the strength of a strategy is never mistaken for the effect of the seat;
the first player's score is read in self-play, where both seats have the same strength.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl
from matplotlib.axes import Axes
from matplotlib.figure import Figure

from engine.game import GAME_EVENTS
from engine.players import engine_strategy
from pipeline.analysis.stats import points
from pipeline.exact.cache import is_wide
from pipeline.ladder.run import EXPLOITABILITY, OUTCOMES, checked_files, read_ladder_manifest
from pipeline.report import figures as plot
from pipeline.report.document import Section, Table
from pipeline.report.folder import check_out, publish_pages, staging
from pipeline.runs.paths import MANIFEST, REPORTS
from pipeline.runs.records import RecordError


def ladder_tables(directory: Path) -> tuple[pl.DataFrame, pl.DataFrame]:
    """The ladder's tables from its folder (checked against its manifest): ``rungs``, one row per
    rung in the config's order, and ``pairings``, one row per pairing (no list columns)."""
    outcomes_path, exploit_path = checked_files(directory)
    rungs_order, opponents = listed_strategies(directory)
    outcomes = pl.read_parquet(outcomes_path).drop("plies", "margin")
    exploits = pl.read_parquet(exploit_path)
    pairings = outcomes.with_columns(
        points(pl.col("north_win"), pl.col("draw")).alias("second_player_score"),
    )
    score = {(row["south"], row["north"]): row for row in pairings.iter_rows(named=True)}
    _check_rows(directory, rungs_order, opponents, set(score), set(exploits["strategy"].to_list()))
    rows = []
    for order, rung in enumerate(rungs_order):
        self_play = score[rung, rung]
        row: dict[str, object] = {
            "order": order,
            "rung": rung,
            "family": family(rung),
            "self_play_first_player_score": self_play["first_player_score"],
            "self_play_south_win": self_play["south_win"],
            "self_play_draw": self_play["draw"],
            "self_play_north_win": self_play["north_win"],
            "self_play_mean_plies": self_play["mean_plies"],
        }
        for opponent in opponents:
            as_south, as_north = score[rung, opponent], score[opponent, rung]
            south, north = as_south["first_player_score"], as_north["second_player_score"]
            row[f"score_v_{opponent}_as_south"] = south
            row[f"score_v_{opponent}_as_north"] = north
            row[f"score_v_{opponent}"] = (south + north) / 2
            row[f"mean_plies_v_{opponent}"] = (as_south["mean_plies"] + as_north["mean_plies"]) / 2
        for event in GAME_EVENTS:
            row[f"self_play_fires_{event}"] = self_play[f"fires_{event}"]
        found = exploits.filter(pl.col("strategy") == rung).row(0, named=True)
        row["exploitability_as_south"] = found["as_south"]
        row["exploitability_as_north"] = found["as_north"]
        row["exploitability"] = found["mean"]
        rows.append(row)
    return pl.DataFrame(rows), pairings


def listed_strategies(directory: Path) -> tuple[list[str], list[str]]:
    """The rungs and the opponents of the manifest's config, refused (RecordError) unless lists of specs."""
    config = read_ladder_manifest(directory)["config"]
    found = [config.get("rungs"), config.get("opponents")]
    for key, specs in zip(("rungs", "opponents"), found, strict=True):
        if not isinstance(specs, list) or not all(isinstance(spec, str) for spec in specs) or not (specs or key != "rungs"):
            raise RecordError(
                f"{directory / MANIFEST}: its config's {key} is not a list of strategy specs (rungs: at least one); "
                "the manifest was edited: run the ladder again into a new folder"
            )
    return found[0], found[1]


def family(spec: str) -> str:
    """The family of a rung, for the figures' groups: alphabeta, perfect's two dials, or the spec."""
    return engine_strategy(spec).family or spec


def _check_rows(
    directory: Path, rungs: list[str], opponents: list[str], pairings: set[tuple[str, str]], exploited: set[str]
) -> None:
    """Refuse (RecordError) a folder whose files lack a row the manifest's config asks for: an
    edited manifest (a rung added, or one removed from its files but not from its config)."""
    wanted = [(rung, rung) for rung in rungs]
    wanted += [pairing for rung in rungs for opponent in opponents for pairing in ((rung, opponent), (opponent, rung))]
    missing = next((f"{south} v {north}" for south, north in wanted if (south, north) not in pairings), None)
    where = OUTCOMES
    if missing is None:
        missing = next((f"the exploitability of {rung}" for rung in rungs if rung not in exploited), None)
        where = EXPLOITABILITY
    if missing is not None:
        raise RecordError(
            f"{directory / where} has no row for {missing}, which the config in {MANIFEST} lists; "
            "the folder was edited: run the ladder again into a new folder"
        )


# ---------------------------------------------------------------------------------------------
# Figures


def first_player_figure(rungs: pl.DataFrame) -> Figure:
    """The first player's exact score in self-play at each rung, against 1/2."""
    with plot.style():
        figure, axes = _rung_axes(rungs, 2.4)
        x = np.arange(rungs.height)
        axes.plot(x, rungs["self_play_first_player_score"].to_numpy(), marker="o", color=plot.OKABE_ITO[0])
        axes.axhline(0.5, color="#555555", linewidth=0.8, linestyle="--", zorder=0)
        axes.set_ylabel("first player's score in self-play")
        axes.set_ylim(-0.03, 1.03)
    return figure


def scores_figure(rungs: pl.DataFrame, opponents: list[str]) -> Figure:
    """Each rung's exact score against each opponent, as South and as North."""
    with plot.style():
        figure, axes = _rung_axes(rungs, 2.8)
        x = np.arange(rungs.height)
        series = [(opponent, seat) for opponent in opponents for seat in ("south", "north")]
        for (opponent, seat), colour, marker in zip(series, plot.OKABE_ITO, plot.MARKERS, strict=False):
            values = rungs[f"score_v_{opponent}_as_{seat}"].to_numpy()
            axes.plot(x, values, marker=marker, color=colour, label=f"v {opponent}, rung as {seat.capitalize()}")
        axes.axhline(0.5, color="#555555", linewidth=0.8, linestyle="--", zorder=0)
        axes.set_ylabel("rung's score (a draw counts 1/2)")
        axes.set_ylim(-0.03, 1.03)
        axes.legend(loc="center left", bbox_to_anchor=(1.0, 0.5))
    return figure


def length_figure(rungs: pl.DataFrame, opponents: list[str]) -> Figure:
    """The exact mean length of a game at each rung: in self-play and against each opponent."""
    with plot.style():
        figure, axes = _rung_axes(rungs, 2.4)
        x = np.arange(rungs.height)
        axes.plot(x, rungs["self_play_mean_plies"].to_numpy(), marker="o", color=plot.OKABE_ITO[0], label="self-play")
        for opponent, colour, marker in zip(opponents, plot.OKABE_ITO[1:], plot.MARKERS[1:], strict=False):
            axes.plot(x, rungs[f"mean_plies_v_{opponent}"].to_numpy(), marker=marker, color=colour, label=f"v {opponent}")
        axes.set_ylabel("mean length (plies)")
        axes.set_ylim(bottom=0)
        axes.legend(loc="center left", bbox_to_anchor=(1.0, 0.5))
    return figure


def events_figure(rungs: pl.DataFrame) -> Figure:
    """The exact probability that each rule event fires at least once in a self-play game, one
    panel per event."""
    events = [event for event in GAME_EVENTS if rungs[f"self_play_fires_{event}"].to_numpy().max() > 0] or list(GAME_EVENTS)
    columns = 4  # the 8 events of RULES.md in two full rows
    lines = -(-len(events) // columns)
    with plot.style():
        figure = Figure(figsize=(plot.PAGE, 1.6 * lines + 0.8), layout="constrained")
        axes_grid = figure.subplots(lines, columns, sharex=True, squeeze=False)
        x = np.arange(rungs.height)
        for index, axes in enumerate(axes_grid.flat):
            if index >= len(events):
                axes.set_visible(False)
                continue
            event = events[index]
            axes.plot(x, rungs[f"self_play_fires_{event}"].to_numpy(), marker="o", markersize=2.5, color=plot.OKABE_ITO[0])
            axes.set_title(event.replace("_", " "))
            axes.set_ylim(-0.03, 1.03)
            axes.set_xticks(x, rungs["rung"].to_list(), rotation=90, fontsize=5)
            if index + columns >= len(events):  # the lowest panel of its column names the rungs
                axes.xaxis.set_tick_params(labelbottom=True)
        figure.supylabel("probability it fires in a game (self-play)")
    return figure


def exploitability_figure(rungs: pl.DataFrame) -> Figure:
    """What a best counter-strategy wins against each rung, in each seat (stones per game)."""
    with plot.style():
        figure, axes = _rung_axes(rungs, 2.4)
        x = np.arange(rungs.height)
        for seat, colour, marker in zip(("south", "north"), plot.OKABE_ITO, plot.MARKERS, strict=False):
            values = rungs[f"exploitability_as_{seat}"].to_numpy()
            axes.plot(x, values, marker=marker, color=colour, label=f"best response as {seat.capitalize()}")
        axes.axhline(0, color="#555555", linewidth=0.8, zorder=0)
        axes.set_ylabel("best response's margin (stones)")
        axes.legend(loc="center left", bbox_to_anchor=(1.0, 0.5))
    return figure


def _rung_axes(rungs: pl.DataFrame, height: float) -> tuple[Figure, Axes]:
    """A page-wide figure whose x axis is the rungs in order, families apart by thin rules."""
    figure = Figure(figsize=(plot.PAGE, height + 1.1), layout="constrained")
    axes = figure.subplots()
    x = np.arange(rungs.height)
    axes.set_xticks(x, rungs["rung"].to_list(), rotation=90)
    axes.grid(axis="x", visible=False)
    families = rungs["family"].to_list()
    for index in range(1, len(families)):
        if families[index] != families[index - 1]:
            axes.axvline(index - 0.5, color="#bbbbbb", linewidth=0.5)
    axes.set_xlim(-0.5, rungs.height - 0.5)
    return figure, axes


# ---------------------------------------------------------------------------------------------
# The report


def build_ladder_report(directory: Path, out: Path | None = None, *, progress: bool = True) -> Path:
    """Write the report of the ladder in ``directory``; returns its folder (default
    reports/<ladder>/). Raises RecordError for a folder that is not a sound ladder or an ``out``
    that is not a new or empty folder or a report of ours."""
    started = time.perf_counter()
    manifest = read_ladder_manifest(directory)
    name = str(manifest["ladder"])
    out = check_out(directory, out if out is not None else REPORTS / name)
    rungs, pairings = ladder_tables(directory)
    opponents = listed_strategies(directory)[1]
    figures = {
        "ladder_first_player": first_player_figure(rungs),
        "ladder_scores": scores_figure(rungs, opponents),
        "ladder_length": length_figure(rungs, opponents),
        "ladder_events": events_figure(rungs),
        "ladder_exploitability": exploitability_figure(rungs),
    }
    sections = _sections(rungs, opponents, manifest)
    published = published_manifest(manifest)
    with staging(out) as folder:
        for stem, figure in figures.items():
            plot.save(figure, folder / "figures", stem)
        publish_pages(
            folder,
            out,
            f"Skill ladder: {name}",
            _abstract(rungs, manifest),
            sections,
            {"rungs": rungs, "pairings": pairings},
            footer=[_made(published)],
            manifest=published,
        )
    if progress:
        print(f"report of the ladder {name} in {time.perf_counter() - started:.1f} s: {out / 'index.html'}", file=sys.stderr)
    return out


def published_manifest(manifest: dict[str, Any]) -> dict[str, Any]:
    """What made the report, for its manifest.json (pipeline.report.folder.check_published): the
    ladder's name, rule set and config, the engine that computed its figures (the run's, so that a
    report of an older run is not passed off as this engine's) with the other versions, and the
    SHA-256 of the run's files the report was read from."""
    versions = manifest.get("versions")
    return {
        "kind": "ladder",
        "ladder": manifest["ladder"],
        "rules": manifest.get("rules"),
        "config": manifest["config"],
        "engine": versions.get("engine") if isinstance(versions, dict) else None,
        "versions": versions,
        "records": {name: entry.get("sha256") for name, entry in manifest["files"].items() if isinstance(entry, dict)},
    }


def _made(published: dict[str, Any]) -> str:
    return (
        f"Computed exactly by engine version {published['engine']} under the rule set {published['rules']}; "
        "manifest.json beside this page lists every file of the report with its SHA-256."
    )


def _abstract(rungs: pl.DataFrame, manifest: dict[str, object]) -> list[str]:
    """The answer the ladder was built for, in words, from its exact figures."""
    scores = rungs["self_play_first_player_score"].to_numpy()
    below, above = int((scores < 0.5 - 1e-12).sum()), int((scores > 0.5 + 1e-12).sum())
    text = [
        f"{rungs.height} strategies from {rungs['rung'][0]} to {rungs['rung'][-1]} under the rules {manifest.get('rules', '?')}, "
        "each against itself and against each opponent in both seats, and what a best counter-strategy wins against "
        "each (its exploitability): every figure is exact (the outcome of every game weighed by its probability, and "
        "the best response by value iteration over every position; no game is sampled, so there are no intervals). "
        "A strategy's strength is read here as its exploitability: the fewer stones a best response wins against it, "
        "the stronger it is.",
    ]
    # Players who may play every legal move spread their self-play over the whole game: their
    # first player's score is a property of the seat at that strength, not of one line of play.
    spread = rungs.filter(pl.col("rung").map_elements(_spreads, return_dtype=pl.Boolean)).sort("exploitability", descending=True)
    if spread.height >= 2:
        steps = ", ".join(
            f"{row['rung']} {row['self_play_first_player_score']:.3f} ({row['exploitability']:.1f} stones)"
            for row in spread.iter_rows(named=True)
        )
        falls = bool((spread["self_play_first_player_score"].diff().drop_nulls() <= 1e-12).all())
        trend = "falls at every step" if falls else "does not fall at every step"
        verdict = (
            " Weak play dilutes the first player's disadvantage that the rules carry (perfect play loses the start); "
            "it does not create it."
            if falls and spread["self_play_first_player_score"][-1] < 0.5
            else ""
        )
        text.append(
            "**Does the first player lose because of the rules or because of weak play?** Among the players who "
            "randomise over the legal moves (random and perfect's skill dials), from the weakest to the strongest, the "
            f"first player's self-play score {trend}: {steps}.{verdict}"
        )
    text.append(
        f"Over all {rungs.height} rungs the first player scores below 1/2 in self-play at {below}, above it at {above} "
        f"and exactly 1/2 at {rungs.height - below - above}. Search to a fixed depth (alphabeta, ties broken at random) "
        "plays one or a few lines against itself: its self-play score jumps between 0 and 1 from one depth to the next, "
        "a property of those lines rather than of the seat; its scores against random and perfect, in both seats, "
        "and its exploitability say how strong it is."
    )
    return text


def _spreads(spec: str) -> bool:
    return spec == "perfect" or is_wide(spec)


def _sections(rungs: pl.DataFrame, opponents: list[str], manifest: dict[str, object]) -> list[Section]:
    header = ["rung", "first player (self-play)", "mean plies (self-play)"]
    header += [f"score v {opponent} (S / N)" for opponent in opponents]
    header += ["exploitability (S / N, stones)"]
    rows = []
    for row in rungs.iter_rows(named=True):
        cells = [row["rung"], f"{row['self_play_first_player_score']:.9f}", f"{row['self_play_mean_plies']:.3f}"]
        cells += [f"{row[f'score_v_{o}_as_south']:.4f} / {row[f'score_v_{o}_as_north']:.4f}" for o in opponents]
        cells += [f"{row['exploitability_as_south']:.3f} / {row['exploitability_as_north']:.3f}"]
        rows.append(cells)
    return [
        Section(
            "The first player's score against strength",
            ["The first player's exact score in self-play, where both seats have the same strength."],
            figures=[("ladder_first_player", "First player's score in self-play at each rung (exact).")],
        ),
        Section(
            "Strength",
            [
                "Each rung's score against each opponent in each seat (S: the rung moves first), and what a best "
                "counter-strategy wins against it in each seat: its exploitability, in stones per game."
            ],
            figures=[
                ("ladder_scores", "Each rung's score against the opponents, per seat (exact)."),
                ("ladder_exploitability", "A best response's expected margin against each rung, per seat (exact)."),
            ],
            tables=[Table("Every rung, exact", header, rows, name="rungs")],
        ),
        Section(
            "Game length and the rules that fire",
            ["Mean length of a game and the probability that each rule event fires at least once in a self-play game."],
            figures=[
                ("ladder_length", "Mean length of a game at each rung (exact)."),
                ("ladder_events", "Probability that each rule event fires in a self-play game (exact)."),
            ],
        ),
    ]
