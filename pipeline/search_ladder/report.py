"""The search ladder's report: reports/<name>/index.html (one file, figures inline) beside
report.md, the CSV tables (every pairing, every rung) and the figure as SVG, PDF and PNG.

Beside mcts's rungs, the exact table strategies the cache folder holds (pipeline.exact.cache:
the skill ladder's and the default study's pairings) are drawn on the same axes as horizontal
lines: their exact score against perfect and their exact first-player score in self-play, so a
reader sees where a search of a given budget sits among the exact players.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl
from matplotlib.figure import Figure

import engine
from pipeline.analysis.stats import points, wilson
from pipeline.exact.cache import read_cached
from pipeline.report import figures as plot
from pipeline.report.document import Section, Table
from pipeline.report.folder import check_out, publish_pages, staging
from pipeline.report.prose import interval
from pipeline.runs.config import parse_rules
from pipeline.runs.paths import REPORTS
from pipeline.runs.runfolder import SEARCH_LADDER
from pipeline.runs.runfolder import read_manifest as read_run_manifest
from pipeline.search_ladder.run import read_rows

# The exact players drawn beside the searches, when the cache folder holds their outcomes.
EXACT_PLAYERS = (
    "random",
    "greedy",
    "alphabeta(depth=4)",
    "alphabeta(depth=8)",
    "perfect(temperature=1.0)",
    "perfect(epsilon=0.1)",
)


def rungs_table(rows: pl.DataFrame, opponents: list[str]) -> pl.DataFrame:
    """One row a rung: its self-play, its score against each opponent over both seats (each
    seat's Wilson interval, averaged), and its strength over all its searched moves."""
    out = []
    for playouts in sorted(set(rows["playouts"].to_list())):
        spec = f"mcts(playouts={playouts})"
        mine = rows.filter(pl.col("playouts") == playouts)
        self_play = mine.filter((pl.col("south") == spec) & (pl.col("north") == spec)).row(0, named=True)
        row = {
            "playouts": playouts,
            "self_play_games": self_play["games"],
            "first_player_score": self_play["first_player_score"],
            "first_player_low": self_play["first_player_low"],
            "first_player_high": self_play["first_player_high"],
            "mean_plies": self_play["mean_plies"],
            "feeding_forced": self_play["feeding_forced"],
            "grand_slam_blocked": self_play["grand_slam_blocked"],
        }
        for opponent in opponents:
            as_south = mine.filter((pl.col("south") == spec) & (pl.col("north") == opponent)).row(0, named=True)
            as_north = mine.filter((pl.col("south") == opponent) & (pl.col("north") == spec)).row(0, named=True)
            seats = [
                wilson(points(as_south["south_wins"], as_south["draws"]), as_south["games"]),
                wilson(points(as_north["north_wins"], as_north["draws"]), as_north["games"]),
            ]
            row[f"score_v_{opponent}"] = (seats[0].value + seats[1].value) / 2
            row[f"score_v_{opponent}_low"] = (seats[0].low + seats[1].low) / 2
            row[f"score_v_{opponent}_high"] = (seats[0].high + seats[1].high) / 2
            row[f"mean_plies_v_{opponent}"] = (as_south["mean_plies"] + as_north["mean_plies"]) / 2
        searched = int(mine["searched_moves"].sum())
        row["searched_moves"] = searched
        row["perfect_move_share"] = int(mine["perfect_moves"].sum()) / searched if searched else float("nan")
        row["mean_loss_stones"] = float(mine["loss_stones"].sum()) / searched if searched else float("nan")
        out.append(row)
    return pl.DataFrame(out)


def exact_references(rules: engine.Rules) -> dict[str, tuple[float, float]]:
    """For each exact player whose outcomes the cache holds: (its score against perfect over
    both seats, the first player's score in its self-play)."""
    found = {}
    for spec in EXACT_PLAYERS:
        outcomes = [read_cached(*pairing, rules) for pairing in ((spec, "perfect"), ("perfect", spec), (spec, spec))]
        if any(outcome is None for outcome in outcomes):
            continue
        south, north, itself = outcomes
        assert south is not None and north is not None and itself is not None
        # its points in both seats, over two
        score = (points(south.south_win, south.draw) + points(north.north_win, north.draw)) / 2
        found[spec] = (score, itself.first_player_score)
    return found


def ladder_figure(rungs: pl.DataFrame, opponents: list[str], references: dict[str, tuple[float, float]]) -> Figure:
    """Six panels against playouts (log scale): self-play's first-player score, the score
    against each opponent, the mean length, the rule events' rates in self-play, and the
    moves' strength (the share that are perfect, the mean loss in stones)."""
    x = rungs["playouts"].to_numpy()
    with plot.style():
        figure = Figure(figsize=(plot.PAGE, 7.6), layout="constrained")
        axes = figure.subplots(3, 2, sharex=True).ravel()
        first = rungs["first_player_score"].to_numpy()
        spans = np.vstack([first - rungs["first_player_low"].to_numpy(), rungs["first_player_high"].to_numpy() - first])
        axes[0].errorbar(
            x, first, yerr=np.maximum(spans, 0), marker="o", color=plot.OKABE_ITO[0], capsize=2, label="mcts self-play"
        )
        axes[0].axhline(0.5, color="#555555", linewidth=0.8, linestyle="--", zorder=0)
        axes[0].set_ylabel("first player's score, self-play")
        for k, opponent in enumerate(opponents):
            value = rungs[f"score_v_{opponent}"].to_numpy()
            low, high = rungs[f"score_v_{opponent}_low"].to_numpy(), rungs[f"score_v_{opponent}_high"].to_numpy()
            spans = np.maximum(np.vstack([value - low, high - value]), 0)
            axes[1].errorbar(
                x, value, yerr=spans, marker=plot.MARKERS[k], capsize=2, color=plot.OKABE_ITO[k], label=f"mcts v {opponent}"
            )
        axes[1].set_ylabel("mcts's score, both seats")
        for (spec, (score, first_score)), colour in zip(references.items(), plot.OKABE_ITO[2:], strict=False):
            axes[1].axhline(score, color=colour, linewidth=0.8, linestyle=":", label=f"{spec} v perfect (exact)")
            axes[0].axhline(first_score, color=colour, linewidth=0.8, linestyle=":", label=f"{spec} (exact)")
        axes[2].plot(x, rungs["mean_plies"].to_numpy(), marker="o", color=plot.OKABE_ITO[0], label="self-play")
        for k, opponent in enumerate(opponents, start=1):
            axes[2].plot(x, rungs[f"mean_plies_v_{opponent}"].to_numpy(), marker=plot.MARKERS[k], color=plot.OKABE_ITO[k],
                         label=f"v {opponent}")  # fmt: skip
        axes[2].set_ylabel("mean length (plies)")
        for k, event in enumerate(("feeding_forced", "grand_slam_blocked")):
            label = event.replace("_", " ")
            axes[3].plot(x, rungs[event].to_numpy(), marker=plot.MARKERS[k], color=plot.OKABE_ITO[k], label=label)
        axes[3].set_ylabel("share of self-play games")
        axes[4].plot(x, rungs["perfect_move_share"].to_numpy(), marker="o", color=plot.OKABE_ITO[0], label="mcts's moves")
        axes[4].set_ylabel("share of moves that are perfect")
        axes[5].plot(x, rungs["mean_loss_stones"].to_numpy(), marker="s", color=plot.OKABE_ITO[1], label="mcts's moves")
        axes[5].set_ylabel("mean loss a move (stones)")
        for panel in axes:
            panel.set_xscale("log", base=2)
            panel.legend(fontsize="x-small")
        for panel in axes[4:]:
            panel.set_xlabel("playouts a move")
    return figure


def build_search_ladder_report(directory: Path, out: Path | None = None, *, progress: bool = True) -> Path:
    """Write the report of the search ladder in ``directory`` (its HTML, Markdown, CSV tables and
    figures) into ``out`` (default reports/<name>/); returns the folder. Raises RecordError for a
    folder that is not a sound search ladder or an ``out`` that is not a new or empty folder or a
    report of ours."""
    started = time.perf_counter()
    manifest = read_run_manifest(directory, SEARCH_LADDER)
    rows = pl.from_arrow(read_rows(directory))
    assert isinstance(rows, pl.DataFrame)
    name = str(manifest[SEARCH_LADDER.name])
    config = manifest["config"]
    opponents = list(config["opponents"])
    rules = parse_rules(config["rules"])
    out = check_out(directory, out if out is not None else REPORTS / name)
    rungs = rungs_table(rows, opponents)
    references = exact_references(rules)
    playouts = rungs["playouts"].to_list()
    published = published_manifest(manifest, rows, references)
    with staging(out) as folder:
        plot.save(ladder_figure(rungs, opponents, references), folder / "figures", "search_ladder")
        publish_pages(
            folder,
            out,
            f"Search ladder {name}: mcts from {min(playouts):,} to {max(playouts):,} playouts a move",
            _method(rows, config),
            _sections(rungs, opponents, references),
            {"pairings": rows, "rungs": rungs, "exact_players": exact_players_table(references)},
            footer=[_made(published)],
            manifest=published,
        )
    if progress:
        print(
            f"report of the search ladder {name} in {time.perf_counter() - started:.1f} s: {out / 'index.html'}", file=sys.stderr
        )
    return out


def exact_players_table(references: dict[str, tuple[float, float]]) -> pl.DataFrame:
    """The exact players drawn beside the searches, one row each: the score against perfect
    over both seats and the first player's score in self-play (none when the cache held none)."""
    return pl.DataFrame(
        {
            "strategy": list(references),
            "score_v_perfect": [score for score, _ in references.values()],
            "self_play_first_player_score": [first for _, first in references.values()],
        },
        schema={"strategy": pl.String, "score_v_perfect": pl.Float64, "self_play_first_player_score": pl.Float64},
    )


def published_manifest(
    manifest: dict[str, Any], rows: pl.DataFrame, references: dict[str, tuple[float, float]]
) -> dict[str, Any]:
    """What made the report, for its manifest.json (pipeline.report.folder.check_published): the
    search ladder's name, rule set and config (its seed among them), the engine that played its
    games (the run's) with the other versions, the games played, the SHA-256 of the run's rows and
    the exact players the cache folder held when the report was drawn."""
    versions = manifest.get("versions")
    files = manifest["files"] if isinstance(manifest.get("files"), dict) else {}
    return {
        "kind": "search-ladder",
        "search_ladder": manifest[SEARCH_LADDER.name],
        "rules": manifest.get("rules"),
        "config": manifest["config"],
        "engine": versions.get("engine") if isinstance(versions, dict) else None,
        "versions": versions,
        "games": int(rows["games"].sum()),
        "records": {name: entry.get("sha256") for name, entry in files.items() if isinstance(entry, dict)},
        "exact_players": list(references),
    }


def _made(published: dict[str, Any]) -> str:
    return (
        f"Games played by engine version {published['engine']} under the rule set {published['rules']}, seed "
        f"{published['config'].get('seed')}; manifest.json beside this page lists every file of the report with its "
        "SHA-256."
    )


def _method(rows: pl.DataFrame, config: dict[str, Any]) -> list[str]:
    return [
        f"Sampled games (engine.play_batch, mcts searched in lockstep), {rows['games'].sum():,} in all. Each pairing played "
        f"rounds of {config['round_games']:,} games until its first-player score's 95% interval was at most "
        f"±{config['half_width']:.3f} (a fixed-width sequential interval, Chow and Robbins 1965), or until games x playouts "
        f"reached {config['playout_budget']:,}: {int((rows['stopped'] == 'budget').sum())} of {rows.height} pairings stopped "
        "by that budget and have wider intervals. First-player intervals: Clopper-Pearson on the decisive games with Wilson "
        "on their share; scores against an opponent: the mean of the two seats, "
        "each with its "
        "Wilson interval. Perfect moves and the loss in stones are the strong solution's, exact per position, over every "
        "move mcts chose after the first in the rung's own games."
    ]


def _sections(rungs: pl.DataFrame, opponents: list[str], references: dict[str, tuple[float, float]]) -> list[Section]:
    header = ["playouts", "self-play games", "first player's score", "mean plies"]
    header += [f"score v {opponent}" for opponent in opponents] + ["perfect moves", "mean loss (stones)"]
    table = []
    for row in rungs.iter_rows(named=True):
        cells = [
            f"{row['playouts']:,}",
            f"{row['self_play_games']:,}",
            _interval(row, "first_player"),
            f"{row['mean_plies']:.1f}",
        ]
        cells += [_interval(row, f"score_v_{opponent}") for opponent in opponents]
        cells += [f"{row['perfect_move_share']:.3f}", f"{row['mean_loss_stones']:.3f}"]
        table.append(cells)
    sections = [
        Section(
            "mcts against its playouts",
            [
                "Each rung's first-player score in self-play, its game length, its score against each opponent (both seats) "
                "and the strength of its moves, with 95% intervals."
            ],
            tables=[Table("Every rung, sampled", header, table, name="rungs")],
            figures=[("search_ladder", "mcts against its playouts, the exact players as horizontal lines.")],
        )
    ]
    if references:
        exact = [[spec, f"{score:.4f}", f"{first:.4f}"] for spec, (score, first) in references.items()]
        sections.append(
            Section(
                "The exact players on the same axes",
                ["Exact outcomes from the cache folder (the skill ladder's and the default study's pairings)."],
                tables=[
                    Table(
                        "Exact players",
                        ["strategy", "score v perfect, both seats", "first player's score in self-play"],
                        exact,
                        name="exact_players",
                    )
                ],
            )
        )
    return sections


def _interval(row: dict[str, Any], column: str) -> str:
    score = row["first_player_score"] if column == "first_player" else row[column]
    return interval(score, row[f"{column}_low"], row[f"{column}_high"])
