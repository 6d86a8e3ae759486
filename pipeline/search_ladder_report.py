"""The search ladder's report: figures against playouts, a CSV of the rows, and a page of text.

Beside mcts's rungs, the exact table strategies the cache folder holds (pipeline.exact_cache:
the skill ladder's and the default study's pairings) are drawn on the same axes as horizontal
lines: their exact score against perfect and their exact first-player score in self-play, so a
reader sees where a search of a given budget sits among the exact players.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import polars as pl
from matplotlib.figure import Figure

import engine
from pipeline import figures as plot
from pipeline.exact_cache import read_cached
from pipeline.paths import REPORTS
from pipeline.runfolder import SEARCH_LADDER
from pipeline.runfolder import read_manifest as read_run_manifest
from pipeline.search_ladder import read_rows
from pipeline.stats import wilson
from pipeline.study import parse_rules

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
                wilson(as_south["south_wins"] + as_south["draws"] / 2, as_south["games"]),
                wilson(as_north["north_wins"] + as_north["draws"] / 2, as_north["games"]),
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
        score = (south.south_win + south.draw / 2 + north.north_win + north.draw / 2) / 2
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
    """Write the report of the search ladder in ``directory`` into ``out`` (default reports/<name>/)."""
    manifest = read_run_manifest(directory, SEARCH_LADDER)
    rows = pl.from_arrow(read_rows(directory))
    assert isinstance(rows, pl.DataFrame)
    name = str(manifest[SEARCH_LADDER.name])
    config = manifest["config"]
    opponents = list(config["opponents"])
    rules = parse_rules(config["rules"])
    folder = REPORTS / name if out is None else out
    folder.mkdir(parents=True, exist_ok=True)
    rungs = rungs_table(rows, opponents)
    references = exact_references(rules)
    rows.write_csv(folder / "pairings.csv")
    rungs.write_csv(folder / "rungs.csv")
    plot.save(ladder_figure(rungs, opponents, references), folder, "search_ladder")
    (folder / "index.md").write_text(_text(name, rows, rungs, opponents, references, config))
    if progress:
        print(f"search ladder report of {name}: {folder / 'index.md'}")
    return folder


def _text(
    name: str,
    rows: pl.DataFrame,
    rungs: pl.DataFrame,
    opponents: list[str],
    references: dict[str, tuple[float, float]],
    config: dict[str, Any],
) -> str:
    playouts = rungs["playouts"].to_list()
    lines = [
        f"# Search ladder {name}: mcts from {min(playouts)} to {max(playouts)} playouts a move",
        "",
        f"Sampled games (engine.play_batch, mcts searched in lockstep), {rows['games'].sum():,} in all. Each pairing played "
        f"rounds of {config['round_games']:,} games until its first-player score's 95% interval was at most "
        f"±{config['half_width']:.3f} (a fixed-width sequential interval, Chow and Robbins 1965), or until games x playouts "
        f"reached {config['playout_budget']:,}: {int((rows['stopped'] == 'budget').sum())} of {rows.height} pairings stopped "
        "by that budget and have wider intervals. First-player intervals: Clopper-Pearson on the decisive games with Wilson "
        "on their share (pipeline.stats.first_player); scores against an opponent: the mean of the two seats, each with its "
        "Wilson interval. Perfect moves and the loss in stones are the strong solution's, exact per position, over every "
        "move mcts chose after the first in the rung's own games.",
        "",
        "![the search ladder](search_ladder.svg)",
        "",
        "| playouts | self-play games | first player's score | mean plies | "
        + " | ".join(f"score v {opponent}" for opponent in opponents)
        + " | perfect moves | mean loss (stones) |",
        "|" + "---|" * (6 + len(opponents)),
    ]
    for row in rungs.iter_rows(named=True):
        scores = " | ".join(
            f"{row[f'score_v_{o}']:.3f} [{row[f'score_v_{o}_low']:.3f}, {row[f'score_v_{o}_high']:.3f}]" for o in opponents
        )
        lines.append(
            f"| {row['playouts']:,} | {row['self_play_games']:,} | {row['first_player_score']:.3f} "
            f"[{row['first_player_low']:.3f}, {row['first_player_high']:.3f}] | {row['mean_plies']:.1f} | {scores} | "
            f"{row['perfect_move_share']:.3f} | {row['mean_loss_stones']:.3f} |"
        )
    if references:
        lines += ["", "The exact players on the same axes (exact outcomes from the cache folder):", "",
                  "| strategy | score v perfect, both seats | first player's score in self-play |", "|---|---|---|"]  # fmt: skip
        lines += [f"| {spec} | {score:.4f} | {first:.4f} |" for spec, (score, first) in references.items()]
    lines += ["", "Every pairing's row is in pairings.csv, every rung's in rungs.csv.", ""]
    return "\n".join(lines)
