"""The atlas report's section "Is it a good game?": the exact quality (pipeline.atlas.quality) of
random and perfect(temperature=1.0) self-play across the grid, the fair rule sets ranked by it,
and the Pareto front of fairness against drama.

Drama here is the chance of a comeback in perfect(temperature=1.0) self-play: the eventual winner
was behind, by the exact forecast, at some ply (docs/quality.md). That player errs as a strong
human does, often in small ways and rarely in large ones, so its comebacks are those a game
between good players offers; random play's lead changes, also mapped, say how much a game swings
between novices. Fairness is |start value|, the margin perfect play wins by. A rule set whose
verdict the 400-ply cap decides is shown but on no front: its value is the cap's scoring.
"""

from __future__ import annotations

import matplotlib.ticker
import numpy as np
import polars as pl
from matplotlib.figure import Figure

from engine.solver import PLAY
from pipeline.analysis.fairness import pareto_front
from pipeline.report import figures as plot
from pipeline.report.document import Section, Table
from pipeline.report.prose import percent, plural

# The maps of quality over the grid: column, words, cell format.
QUALITY_MAPPED = (
    ("random_lead_changes", "lead changes a game, random v random", "{:.1f}"),
    ("perfect_t1_comeback", "chance of a comeback, perfect(temperature=1.0) v itself", "{:.2f}"),
)
DRAMA = "perfect_t1_comeback"
FRONT_REFERENCE = {"unfairness": 0.0, DRAMA: 1.0}  # the best: fair, and a comeback in every game


def quality_columns(frame: pl.DataFrame, quality: pl.DataFrame) -> pl.DataFrame:
    """The atlas's rows with their game's quality (null where not yet measured) and the shares
    derived from it: the ply decided as a share of the game's length, and the share of decisions
    with exactly one move that keeps the forecast."""
    joined = frame.join(quality, on="rules", how="left")
    shares = []
    for prefix in ("random", "perfect_t1"):
        shares.append((pl.col(f"{prefix}_decided_ply") / pl.col(f"{prefix}_plies")).alias(f"{prefix}_decided_share"))
        shares.append((pl.col(f"{prefix}_only_move") / pl.col(f"{prefix}_decisions")).alias(f"{prefix}_only_move_share"))
    return joined.with_columns(*shares, pl.col("start_value").abs().cast(pl.Float64).alias("unfairness"))


def quality_table(frame: pl.DataFrame) -> pl.DataFrame:
    """The measured rule sets of quality_columns's frame with their quality columns only, for tables/quality.csv."""
    first = frame.columns.index("quality_from")
    return frame.filter(pl.col("quality_from").is_not_null()).select("rules", *frame.columns[first:])


def drama_front(frame: pl.DataFrame) -> pl.DataFrame:
    """The measured rule sets whose verdict play decides, with whether each is on the Pareto front
    of fairness (|start value|, least) against drama (DRAMA, most)."""
    measured = frame.filter(pl.col(DRAMA).is_not_null() & (pl.col("decided_by") == PLAY))
    measured = measured.select("rules", "quality_from", "start_value", "unfairness", DRAMA, "random_lead_changes")
    if measured.height == 0:
        return measured.with_columns(pl.lit(False).alias("pareto"))
    return measured.with_columns(pareto_front(measured, FRONT_REFERENCE, tuple(FRONT_REFERENCE)))


def best_games(frame: pl.DataFrame) -> pl.DataFrame:
    """The fair rule sets (start value 0) whose quality is measured, the most dramatic first
    (DRAMA, then random play's lead changes), with what decides their verdict."""
    columns = [
        "rules",
        "quality_from",
        "decided_by",
        "random_first_player_score",
        "random_lead_changes",
        "random_comeback",
        "perfect_t1_lead_changes",
        "perfect_t1_comeback",
        "perfect_t1_decided_share",
        "perfect_t1_plies",
        "perfect_t1_only_move_share",
    ]
    fair = frame.filter((pl.col("start_value") == 0) & pl.col(DRAMA).is_not_null())
    return fair.sort([DRAMA, "random_lead_changes"], descending=True).select(columns)


def good_game_section(frame: pl.DataFrame, games: int, measured: int, reference: str | None) -> Section:
    """The section, from quality_columns's frame; ``games`` distinct games in the atlas, ``measured`` of them measured."""
    best = best_games(frame)
    front = drama_front(frame).filter(pl.col("pareto")).sort("unfairness")
    text = [
        f"The exact quality of {_of_games(measured, games)} ({frame[DRAMA].is_not_null().sum()} of its "
        f"{plural(frame.height, 'rule set')}; rule sets with the same game "
        "fingerprint play the same game and share it), from `modiar atlas quality`; a grey cell is a game not yet "
        "measured. Every figure is an expectation over every line of play, exact (docs/quality.md defines each): "
        "random self-play shows how much a game between novices swings, and self-play of perfect(temperature=1.0), "
        "which errs often in small ways and rarely in large ones, how often the side behind comes back between good "
        "players: the eventual winner was behind, by the exact forecast, at some ply.",
    ]
    if reference is not None and reference in frame["rules"].to_list():
        row = frame.filter(pl.col("rules") == reference).row(0, named=True)
        if row[DRAMA] is not None:
            text.append(
                f"{reference}: {row['random_lead_changes']:.2f} lead changes a random game and a comeback in "
                f"{percent(row['random_comeback'])} of them; between perfect(temperature=1.0) players "
                f"{row['perfect_t1_lead_changes']:.2f} lead changes and a comeback in {percent(row[DRAMA])} of games, the "
                f"result decided after {row['perfect_t1_decided_share']:.0%} of a game's plies."
            )
            if row["start_value"]:
                behind, wins = ("South", "south_win") if row["start_value"] < 0 else ("North", "north_win")
                text.append(
                    f"Its start is worth {row['start_value']:+d} to South: {behind} is behind from ply 0, so each game "
                    f"{behind} wins ({percent(row[f'perfect_t1_quality_{wins}'])} between perfect(temperature=1.0) "
                    "players) counts as a comeback. An unfair rule set's drama is partly its unfairness: that is why the "
                    "fair rule sets are ranked apart and the front sets drama against |start value|."
                )
    if best.height:
        top = best.row(0, named=True)
        text.append(
            f"{plural(best.height, 'fair rule set')} (start value 0) {'is' if best.height == 1 else 'are'} measured; the "
            f"most dramatic is {top['rules']} (decided by {top['decided_by']}): a comeback in {percent(top[DRAMA])} of "
            "perfect(temperature=1.0) games."
        )
    if front.height:
        names = "; ".join(
            f"{row['label']}: {int(row['unfairness'])} stones, {percent(row[DRAMA])}"
            for row in _one_a_game(front).sort("unfairness").iter_rows(named=True)
        )
        text.append(
            "The Pareto front of fairness against drama, among the rule sets play decides: no other is at least as fair "
            f"(|start value|) and at least as dramatic and better in one: {names}."
        )
    rows = [
        [
            row["rules"],
            row["quality_from"] if row["quality_from"] != row["rules"] else "",
            row["decided_by"] or "—",
            f"{row['random_first_player_score']:.3f}",
            f"{row['random_lead_changes']:.2f}",
            f"{row['random_comeback']:.3f}",
            f"{row['perfect_t1_lead_changes']:.3f}",
            f"{row['perfect_t1_comeback']:.3f}",
            f"{row['perfect_t1_decided_share']:.2f}",
            f"{row['perfect_t1_plies']:.1f}",
            f"{row['perfect_t1_only_move_share']:.3f}",
        ]
        for row in best.iter_rows(named=True)
    ]
    header = [
        "rules",
        "same game as",
        "decided by",
        "random: first player's score",
        "random: lead changes",
        "random: comeback",
        "perfect(T=1): lead changes",
        "perfect(T=1): comeback",
        "perfect(T=1): decided (share of plies)",
        "perfect(T=1): plies",
        "perfect(T=1): one right move (share of decisions)",
    ]
    tables = [Table("The fair rule sets, the most dramatic first", header, rows, "best_games")]
    figures = [
        (f"atlas_map_{column}", f"{words[0].upper() + words[1:]}, per rule set (exact); grey: not yet measured.")
        for column, words, _ in QUALITY_MAPPED
    ]
    figures.append(
        (
            "atlas_drama_front",
            "Fairness against drama: each measured rule set's |start value| against the chance of a comeback between "
            "perfect(temperature=1.0) players (exact); the Pareto front joined and named, rule sets decided at the cap "
            "hollow and grey.",
        )
    )
    return Section("Is it a good game? Drama across the grid", text, tables, figures)


def drama_sentence(frame: pl.DataFrame, games: int, measured: int) -> str:
    """The abstract's sentence on drama: how far it runs over the measured games, and the most
    dramatic fair rule set that play decides."""
    shown = frame.filter(pl.col(DRAMA).is_not_null()).sort(DRAMA)
    low, high = shown.row(0, named=True), shown.row(-1, named=True)
    text = (
        f"Game quality, exact for {_of_games(measured, games)}: between "
        f"perfect(temperature=1.0) players the side behind comes back in {percent(low[DRAMA])} ({low['rules']}) to "
        f"{percent(high[DRAMA])} of games ({high['rules']})"
    )
    fair = best_games(frame).filter(pl.col("decided_by") == PLAY)
    if fair.height:
        top = fair.row(0, named=True)
        text += f"; the most dramatic rule set fair by play is {top['rules']}, at {percent(top[DRAMA])}"
    return text + "."


def drama_figure(frame: pl.DataFrame, reference: str | None) -> Figure:
    """|start value| against DRAMA for each measured rule set: play's verdicts filled, the cap's
    hollow and grey, the Pareto front (drama_front) joined by a step line and named."""
    measured = _one_a_game(frame.filter(pl.col(DRAMA).is_not_null()))
    front = _one_a_game(drama_front(frame).filter(pl.col("pareto"))).sort("unfairness")
    with plot.style():
        figure = Figure(figsize=(plot.PAGE, 3.0), layout="constrained")
        axes = figure.subplots()
        for by_play in (True, False):
            shown = measured.filter((pl.col("decided_by") == PLAY) == by_play)
            x, y = shown["unfairness"].to_numpy(), shown[DRAMA].to_numpy()
            label = "decided by play" if by_play else "decided at the cap"
            if by_play:
                axes.scatter(x, y, s=18, c=plot.OKABE_ITO[0], linewidths=0.6, label=label)
            else:
                axes.scatter(x, y, s=18, facecolors="none", edgecolors="#999999", linewidths=0.6, label=label)
        if front.height:
            x, y = front["unfairness"].to_numpy(), front[DRAMA].to_numpy()
            axes.step(x, y, where="post", color=plot.OKABE_ITO[1], linewidth=0.9, label="Pareto front")
            for name, xi, yi in zip(front["label"].to_list(), x, y, strict=True):
                axes.annotate(name, (xi, yi), xytext=(4, 3), textcoords="offset points", fontsize=6)
        if reference is not None and reference in frame.filter(pl.col(DRAMA).is_not_null())["rules"].to_list():
            row = frame.filter(pl.col("rules") == reference).row(0, named=True)
            axes.scatter([row["unfairness"]], [row[DRAMA]], s=80, facecolors="none", edgecolors=plot.OKABE_ITO[3], linewidths=1.1)
        axes.set_xlabel("|start value| under perfect play (stones)")
        axes.set_ylabel("P(comeback),\nperfect(T=1) v itself")
        axes.xaxis.set_major_locator(matplotlib.ticker.MaxNLocator(integer=True))
        axes.set_ylim(0, max(1e-3, float(np.nanmax(measured[DRAMA].to_numpy(), initial=0.0))) * 1.1)
        axes.legend(fontsize=6, loc="upper right")
    return figure


def _one_a_game(frame: pl.DataFrame) -> pl.DataFrame:
    """One row a distinct game (its representative's, quality_from) of rule sets with their quality,
    labelled with the representative and how many more rule sets play that game."""
    counts = frame.group_by("quality_from").len("same")
    one = frame.filter(pl.col("rules") == pl.col("quality_from"))
    one = one.vstack(frame.filter(~pl.col("quality_from").is_in(one["rules"].to_list())).unique("quality_from", keep="first"))
    one = one.join(counts, on="quality_from")
    more = pl.when(pl.col("same") > 1).then(pl.format(" (+{} alike)", pl.col("same") - 1)).otherwise(pl.lit(""))
    return one.with_columns(pl.concat_str(pl.col("rules"), more).alias("label")).drop("same")


def _of_games(measured: int, games: int) -> str:
    """How many of the atlas's distinct games are measured, in words."""
    if measured == games:
        return f"all {plural(games, 'distinct game')} of the atlas"
    return f"{measured} of the atlas's {plural(games, 'distinct game')} so far"
