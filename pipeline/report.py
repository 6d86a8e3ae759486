"""A study's report: ``modiar study report DIR`` (the end of ``make study``).

    reports/<study>/index.html      the whole report, one file, figures inline: opens offline
    reports/<study>/report.md       the same text and tables, figures linked
    reports/<study>/tables/*.csv    every table at full precision (what the report rounds)
    reports/<study>/figures/*.svg|pdf|png   every figure, in the style of pipeline.figures

Every number comes from the study's Parquet through the library: pipeline.metrics (outcomes,
Ludii game metrics, rule events), pipeline.turns (the per-ply metrics, events by ply and
agreement with perfect play, by replaying the recorded moves) and pipeline.ratings. A study of
one rule set gets the full report of its pairings; a study of several rule sets (a variant
sweep) gets, first, what each rule set does to the first-player advantage, game length and
the rule events, then the same per-pairing tables with a ``rules`` column.

The report is built in a temporary folder and moved into place whole, so a failure never
leaves half a report over a good one. Every report's folder holds a marker (MARKER, a line of
JSON: the study's name and the engine's version), and a report replaces only a folder that is
empty or holds a report of ours and nothing else: never the study's folder, nor a folder of
the user's files.
"""

from __future__ import annotations

import html
import json
import os
import shutil
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import polars as pl
from matplotlib.figure import Figure

from engine.rules import Rules
from engine.version import ENGINE_VERSION
from pipeline import figures
from pipeline.metrics import events, ludii, outcomes
from pipeline.paths import REPORTS
from pipeline.records import RecordError, read_manifest, scan_games
from pipeline.status import incomplete_warning
from pipeline.study import parse_study
from pipeline.turns import END_EVENTS, MAX_GAMES_PER_PAIRING, TURN_EVENTS

KEYS = ("rules", "south", "north")
SELF_PLAY = pl.col("south") == pl.col("north")
MARKER = ".modiar-report"  # in every report's folder, JSON: only a folder holding it is ever replaced


@dataclass
class Table:
    """A table as the reader sees it: formatted cells; ``name`` is its CSV (full precision)."""

    caption: str
    header: list[str]
    rows: list[list[str]]
    name: str | None = None


@dataclass
class Section:
    title: str
    text: list[str] = field(default_factory=list)
    tables: list[Table] = field(default_factory=list)
    figures: list[tuple[str, str]] = field(default_factory=list)  # (file stem, caption)


@dataclass
class Report:
    study: str
    text: list[str]
    sections: list[Section]
    data: dict[str, pl.DataFrame]


# ---------------------------------------------------------------------------------------------
# Building


def build_report(directory: str | Path, out: str | Path | None = None, *, progress: bool = True) -> Path:
    """Compute, draw and write the report of the study in ``directory``; returns its folder
    (default reports/<study>/). Raises RecordError for a folder that is not a sound study, and
    for an ``out`` that is not a new or empty folder or a report of ours (see check_out), or
    cannot be written; then the report that was there, if any, is left as it was."""
    directory = Path(directory)
    manifest = read_manifest(directory)
    games = scan_games(directory)
    out = check_out(directory, out if out is not None else _default_out(manifest["study"]))
    started = time.perf_counter()
    with _staging(out) as staging:
        data = compute(games, manifest)
        _say(progress, f"tables computed in {time.perf_counter() - started:.1f} s")
        report = compose(manifest, data, warning=incomplete_warning(directory, manifest))
        _publish(staging, out, report, data)
    _say(progress, f"report of {manifest['study']} in {time.perf_counter() - started:.1f} s: {out / 'index.html'}")
    return out


def check_out(study: Path, out: str | Path) -> Path:
    """``out`` resolved, if the report of ``study`` may go there: a folder that does not exist,
    is empty or holds a report of ours (MARKER) and nothing else; never the study's folder, a
    folder inside it or one that holds it. Raises RecordError otherwise."""
    if str(out) == "":
        raise RecordError("the report's folder (--out) is empty: name a folder, e.g. --out reports/mine")
    try:
        target, data = Path(out).resolve(), study.resolve()
    except (OSError, RuntimeError) as error:  # RuntimeError: a symlink loop
        raise RecordError(f"{out} cannot be the report's folder: {error}") from None
    if target == data or target.is_relative_to(data) or data.is_relative_to(target):
        raise RecordError(f"{out} is, holds or lies in the study's folder {study}; choose an --out outside it")
    _check_replaceable(target, str(out))
    return target


def _default_out(study: object) -> Path:
    """reports/<study>/, which must be a folder right inside reports/ (the manifest is user data)."""
    out = REPORTS / str(study)
    if not isinstance(study, str) or out.resolve().parent != REPORTS.resolve():
        raise RecordError(f"the study's name {study!r} cannot name a folder in {REPORTS}; choose the report's folder with --out")
    return out


def compute(games: pl.LazyFrame, manifest: dict[str, Any] | None = None) -> dict[str, pl.DataFrame]:
    """Every table of the report, at full precision, keyed by its CSV name. ``manifest`` (the
    study's, pipeline.records.read_manifest) gives the rule sets their variant labels; without
    it a rule set is labelled by its name."""
    keys = list(KEYS)
    data = {
        "outcomes": outcomes(games, by=keys),
        "outcomes_overall": outcomes(games, by=["rules"]),
        "ludii": ludii(games, by=keys),
        "events": events(games, by=keys),
        "lengths": games.group_by(*keys, "plies").agg(pl.len().alias("games")).sort(*keys, "plies").collect(),
    }
    data.update(_per_ply(games, keys))
    data.update(_ratings(data["outcomes"]))
    data.update(_agreement(games))
    first = _first_games(games)
    data["rule_sets"] = _rule_sets(first, data, manifest)
    return {name: _sorted_by(table, first) for name, table in data.items()}


def variant_labels(manifest: dict[str, Any]) -> dict[str, str]:
    """Rule-set name -> the label the study config gives it: "default" for its [rules], the key
    of [variants.LABEL] for the others."""
    return {rule_set.rules.name: rule_set.label for rule_set in parse_study(manifest["config"]).rule_sets()}


def _rule_sets(first: pl.DataFrame, data: dict[str, pl.DataFrame], manifest: dict[str, Any] | None) -> pl.DataFrame:
    """One row per rule set, in the study's order: rules, variant (its label), games and, when
    the study played perfect under it, start_value (the start's value for South under perfect play)."""
    labels = variant_labels(manifest) if manifest is not None else {}
    table = first.group_by("rules").agg(pl.col("games").sum(), pl.col("_first").min()).sort("_first").drop("_first")
    table = table.with_columns(pl.col("rules").replace_strict(labels, default=pl.col("rules")).alias("variant"))
    if "agreement" in data:
        values = data["agreement"].select("rules", "start_value").unique("rules")
        table = table.join(values, on="rules", how="left", maintain_order="left")
    else:
        table = table.with_columns(pl.lit(None, dtype=pl.Int64).alias("start_value"))
    return table.select("rules", "variant", "games", "start_value")


def in_study_order(table: pl.DataFrame, games: pl.LazyFrame) -> pl.DataFrame:
    """A table keyed by pairing (columns rules, south, north, as compute's) sorted as the study
    plays its pairings (its config's order, that of the game ids) rather than alphabetically;
    the rows of each pairing keep their order. A table without those columns comes back as it is."""
    return _sorted_by(table, _first_games(games))


def _first_games(games: pl.LazyFrame) -> pl.DataFrame:
    """Per pairing: its first game id (_first, the study's order) and its number of games."""
    return games.group_by(list(KEYS)).agg(pl.col("game_id").min().alias("_first"), pl.len().alias("games")).collect()


def _sorted_by(table: pl.DataFrame, first: pl.DataFrame) -> pl.DataFrame:
    keys = list(KEYS)
    if not set(keys) <= set(table.columns):
        return table
    order = first.select(*keys, "_first")
    return table.with_row_index("_row").join(order, on=keys, how="left").sort("_first", "_row").drop("_first", "_row")


def _per_ply(games: pl.LazyFrame, keys: list[str]) -> dict[str, pl.DataFrame]:
    """Ludii's per-ply metrics and the events by ply, one rule set at a time, so that only one
    rule set's plies are in memory at once (a sweep can hold hundreds of millions)."""
    from pipeline.turns import events_by_ply, ludii_plies, replay_games

    parts: dict[str, list[pl.DataFrame]] = {"ludii_plies": [], "events_by_ply": []}
    for rules in games.select(pl.col("rules").unique(maintain_order=True)).collect()["rules"].to_list():
        plies = replay_games(games.filter(pl.col("rules") == rules), by=keys)
        parts["ludii_plies"].append(ludii_plies(plies, by=keys))
        parts["events_by_ply"].append(events_by_ply(plies, by=keys))
        del plies
    return {name: pl.concat(tables) for name, tables in parts.items()}


def _ratings(pairings: pl.DataFrame) -> dict[str, pl.DataFrame]:
    from pipeline.ratings import ratings

    ladders, first_moves = [], []
    for (rules,), part in pairings.group_by("rules", maintain_order=True):
        if part.select(pl.concat_list("south", "north").explode().n_unique()).item() < 2:
            continue
        fitted = ratings(part)
        ladders.append(fitted.ladder.select(pl.lit(rules).alias("rules"), pl.all()))
        first, score = fitted.first_move, fitted.first_player_score
        first_moves.append(
            pl.DataFrame(
                {
                    "rules": [rules],
                    "anchor": [None if fitted.anchor is None else str(fitted.anchor)],
                    "prior_sd": [fitted.prior_sd],
                    "elo": [first.value],
                    "low": [first.low],
                    "high": [first.high],
                    "expected_score": [score.value],
                    "expected_score_low": [score.low],
                    "expected_score_high": [score.high],
                }
            )
        )
    if not ladders:
        return {}
    return {"ratings": pl.concat(ladders), "first_move": pl.concat(first_moves)}


def _agreement(games: pl.LazyFrame) -> dict[str, pl.DataFrame]:
    """Agreement with perfect play for each rule set under which the study played ``perfect``:
    its solution was needed to play, so the report does not depend on what else is cached."""
    from engine.solver import solve
    from pipeline.turns import agreement

    played = games.filter((pl.col("south") == "perfect") | (pl.col("north") == "perfect")).select(pl.col("rules").unique())
    parts = []
    for rules in played.collect()["rules"].sort().to_list():
        solution = solve(Rules.from_name(rules), verbose=False)
        table = agreement(games.filter(pl.col("rules") == rules), solution)
        parts += [table] if table.height else []  # no move to judge: games of 0 plies
    return {"agreement": pl.concat(parts, how="diagonal_relaxed")} if parts else {}


# ---------------------------------------------------------------------------------------------
# The text


def compose(manifest: dict[str, Any], data: dict[str, pl.DataFrame], *, warning: str | None = None) -> Report:
    """The report's words and formatted tables, from the computed tables; ``warning`` (that the
    study is unfinished, pipeline.status.incomplete_warning) opens the report in bold."""
    rule_sets = data["outcomes"]["rules"].unique(maintain_order=True).to_list()
    games = int(data["outcomes"]["games"].sum())
    versions = manifest.get("versions", {})
    text = [
        f"Study **{manifest['study']}**: {games:,} games under {_plural(len(rule_sets), 'rule set')} "
        f"({', '.join(rule_sets)}), seed {manifest['config'].get('seed')}, engine version {versions.get('engine', '?')}.",
        "Intervals are two-sided 95%: Wilson score intervals for shares, normal intervals for means. "
        "South moves first; the first-player score counts a draw as one half.",
    ]
    text = [f"**{warning}**", *text] if warning else text
    sections = [_headline_section(data)]
    sections += _variant_sections(data) if len(rule_sets) > 1 else []
    sections += [
        _advantage_section(data),
        _length_section(data),
        _ludii_section(data),
        _events_section(data),
    ]
    if "events_by_ply" in data:
        sections.append(_events_by_ply_section(data))
    if "ratings" in data:
        sections.append(_ratings_section(data))
    if "agreement" in data:
        sections.append(_agreement_section(data))
    drawn = set(figure_names(data))
    for section in sections:
        section.figures = [(stem, caption) for stem, caption in section.figures if stem in drawn]
    return Report(manifest["study"], text, sections, data)


def _headline_section(data: dict[str, pl.DataFrame]) -> Section:
    """The figures a reader wants first, per rule set: those of its pairing with the most games,
    formatted exactly as in the tables below."""
    text = []
    main = _main_pairings(data)
    for keys in main.iter_rows(named=True):
        outcome = _row(data["outcomes"], keys)
        length = _row(data["ludii"], keys)
        fired = data["events"].join(main.filter(pl.col("rules") == keys["rules"]), on=list(KEYS), how="semi")
        rates = "; ".join(
            f"{row['event']} {_share(row, 'fired', 2)}" for row in fired.iter_rows(named=True) if row["event"] in _GAME_EVENTS
        )
        variant = _row(data["rule_sets"], {"rules": keys["rules"]})["variant"]
        name = f"{variant} ({keys['rules']})" if _several_rules(data) and variant != keys["rules"] else keys["rules"]
        text.append(
            f"**{name}, {keys['south']} (South) v {keys['north']} (North), {outcome['games']:,} games.** "
            f"First-player score {_plain(outcome, 'advantage', 3)} "
            f"(two-sided p against 1/2: {_p_value(outcome['advantage_p'])}); "
            f"South wins {_share(outcome, 'south')}%, draws {_share(outcome, 'draw')}%. "
            f"Mean length {length['Duration']:.2f} [{length['Duration_low']:.2f}, {length['Duration_high']:.2f}] plies. "
            f"Games in which each rule fires (%): {rates}."
        )
    if "agreement" in data:
        values = ", ".join(f"{rules}: {value:+d}" for rules, value in _start_values(data["agreement"]))
        text.append(f"**Perfect play.** Value of the start for South: {values}.")
    return Section("Headlines", text)


def _row(table: pl.DataFrame, keys: dict[str, Any]) -> dict[str, Any]:
    return table.filter(*(pl.col(key) == value for key, value in keys.items())).row(0, named=True)


def _advantage_section(data: dict[str, pl.DataFrame]) -> Section:
    rows = [[*_pairing_cells(row, data), *_outcome_cells(row)] for row in data["outcomes"].iter_rows(named=True)]
    pooled = [[row["rules"], *_outcome_cells(row)] for row in data["outcomes_overall"].iter_rows(named=True)]
    cells = ["games", "South wins (%)", "draws (%)", "North wins (%)", "first-player score", "p (score = 1/2)"]
    return Section(
        "First-player advantage",
        [
            "The first player's score per ordered pairing (South's strategy first), with a two-sided test against one "
            "half; then every game of a rule set pooled (each pairing weighs as many games as it played)."
        ],
        [
            Table("Outcomes per pairing", [*_pairing_header(data), *cells], rows, "outcomes"),
            Table("All pairings pooled", ["rules", *cells], pooled, "outcomes_overall"),
        ],
        [("first_player_advantage", "First-player score per pairing, 95% Wilson intervals; the dashed line is a fair game.")],
    )


def _outcome_cells(row: dict[str, Any]) -> list[str]:
    return [
        f"{row['games']:,}",
        _share(row, "south"),
        _share(row, "draw"),
        _share(row, "north"),
        _plain(row, "advantage", 3),
        _p_value(row["advantage_p"]),
    ]


def _length_section(data: dict[str, pl.DataFrame]) -> Section:
    rows = [
        [
            *_pairing_cells(row, data),
            f"{row['Duration']:.2f} [{row['Duration_low']:.2f}, {row['Duration_high']:.2f}]",
            f"{row['Duration_median']:.1f}",
            f"{row['Duration_p90']:.1f}",
            f"{row['Duration_max']}",
            f"{100 * row['Timeouts']:.2f}",
        ]
        for row in data["ludii"].iter_rows(named=True)
    ]
    header = [*_pairing_header(data), "mean plies", "median", "90th percentile", "longest", "at the ply cap (%)"]
    return Section(
        "Game length",
        ["Plies per game (a ply is one player's move)."],
        [Table("Game length per pairing", header, rows, "ludii")],
        [
            (
                "game_length",
                f"Distribution of game length in {_length_subjects(data)}; each panel's axis stops at 99.5% of its games.",
            )
        ],
    )


def _ludii_section(data: dict[str, pl.DataFrame]) -> Section:
    table = data["ludii"]
    per_ply = data.get("ludii_plies")
    if per_ply is not None:
        table = table.join(per_ply.drop("games", strict=False), on=list(KEYS), how="left")
    names = ["AdvantageP1", "Balance", "Completion", "Drawishness", "Timeouts", "Duration"]
    if per_ply is not None:
        names += ["BranchingFactor", "DecisionMoves", "PositionalRepetition"]
    rows = [
        [*_pairing_cells(row, data), *(_ludii_cell(name, row[name]) for name in names)] for row in table.iter_rows(named=True)
    ]
    return Section(
        "Ludii game metrics",
        [
            "The metrics of the Ludii general game system (Digital Ludeme Project), under their own names, so that "
            "Modiar can be set beside the games of its database. Player 1 is South. Shares are fractions, not percents; "
            "Duration is the mean number of plies. BranchingFactor, DecisionMoves and PositionalRepetition come from "
            "replaying every game (see pipeline.turns for their exact definitions); the CSV holds their intervals."
        ],
        [Table("Ludii metrics per pairing", [*_pairing_header(data), *names], rows, "ludii")],
    )


def _events_section(data: dict[str, pl.DataFrame]) -> Section:
    main = _main_pairings(data)
    table = data["events"].join(main, on=list(KEYS), how="semi")
    rows = [
        [
            *_rules_cells(row, data),
            row["event"],
            _share(row, "fired", 2),
            f"{row['mean']:.4f} [{row['mean_low']:.4f}, {row['mean_high']:.4f}]",
            _rate(row),
        ]
        for row in table.iter_rows(named=True)
    ]
    header = [*_rules_header(data), "event", "games where it fires (%)", "mean per game", "per 100 turns"]
    described = ", ".join(f"{row['south']} v {row['north']}" for row in main.iter_rows(named=True))
    return Section(
        "Rule events",
        [
            f"How often each rule of RULES.md fires, in the pairing with the most games ({described}); "
            "tables/events.csv has every pairing. Counts such as first_move_forfeit_stones and capture_stones are "
            "stones, the others turns or games."
        ],
        [Table("Rule events", header, rows, "events")],
        [("rule_events", "Share of games in which each rule fires, self-play pairings, 95% Wilson intervals.")],
    )


def _events_by_ply_section(data: dict[str, pl.DataFrame]) -> Section:
    described = ", ".join(f"{row['south']} v {row['north']}" for row in _main_pairings(data).iter_rows(named=True))
    return Section(
        "Events by ply",
        [
            f"When in the game each rule fires, in {described}: the share of the turns played at each ply on which a "
            "turn event fires, and the share of games reaching a ply that end there with each end event. "
            "tables/events_by_ply.csv has every pairing and ply."
        ],
        [],
        [
            ("events_by_ply", "Turn events by ply (first_move_forfeit fires at ply 0 only), 95% Wilson bands, log scale."),
            (
                "end_events_by_ply",
                "End events: of the games reaching a ply, the share that end there, 95% Wilson bands, log scale.",
            ),
        ],
    )


def _ratings_section(data: dict[str, pl.DataFrame]) -> Section:
    ladder = data["ratings"]
    rows = [
        [
            *_rules_cells(row, data),
            row["strategy"],
            f"{row['rating']:.0f} [{row['low']:.0f}, {row['high']:.0f}]",
            f"{row['games']:,}",
            f"{row['score']:.3f}",
        ]
        for row in ladder.iter_rows(named=True)
    ]
    first = [
        [
            *_rules_cells(row, data),
            f"{row['elo']:.1f} [{row['low']:.1f}, {row['high']:.1f}]",
            f"{row['expected_score']:.3f} [{row['expected_score_low']:.3f}, {row['expected_score_high']:.3f}]",
        ]
        for row in data["first_move"].iter_rows(named=True)
    ]
    rules = _rules_header(data)
    return Section(
        "Strategy ratings",
        [
            "A Bradley-Terry model with a first-move term, fitted to every game of the round robin, a draw counting half "
            "a win for each side, on the Elo scale (400 points is a factor of 10 in the odds). "
            f"{_anchor_text(data['first_move'])} A weak Gaussian prior (sd {data['first_move']['prior_sd'][0]:.0f} Elo) "
            "keeps the rating of a strategy that never loses finite; pipeline.ratings gives the details. "
            "The first-move term is South's edge from moving first, between equal strategies."
        ],
        [
            Table("Rating ladder (Elo)", [*rules, "strategy", "rating", "games", "score"], rows, "ratings"),
            Table("First-move term", [*rules, "Elo", "expected score between equals"], first, "first_move"),
        ],
        [("rating_ladder", "Ratings with 95% intervals; the anchor strategy is at 0.")],
    )


def _agreement_section(data: dict[str, pl.DataFrame]) -> Section:
    table = data["agreement"]
    rows = [
        [
            *_rules_cells(row, data),
            row["strategy"],
            f"{row['moves']:,}",
            _share(row, "kept", 2),
            f"{row['loss']:.3f} [{row['loss_low']:.3f}, {row['loss_high']:.3f}]",
        ]
        for row in table.iter_rows(named=True)
    ]
    values = ", ".join(f"{rules}: {value:+d}" for rules, value in _start_values(table))
    rules = _rules_header(data)
    return Section(
        "Perfect play",
        [
            f"The value of the start under perfect play (South's final total minus North's): {values}. "
            "Each strategy's moves against the strong solution: the share that keep the value and the value lost per move "
            f"(in stones of final margin), over the first {MAX_GAMES_PER_PAIRING:,} games (by game id) of every pairing. "
            "Moves within a game are not independent, so the intervals of the loss are somewhat narrow."
        ],
        [
            Table(
                "Agreement with perfect play",
                [*rules, "strategy", "moves", "moves that keep the value (%)", "value lost per move"],
                rows,
                "agreement",
            )
        ],
        [("perfect_play_agreement", "Share of moves that keep the game's value, 95% Wilson intervals.")],
    )


def _variant_sections(data: dict[str, pl.DataFrame]) -> list[Section]:
    rule_sets = [
        [row["variant"], row["rules"], f"{row['games']:,}", "n/a" if row["start_value"] is None else f"{row['start_value']:+d}"]
        for row in data["rule_sets"].iter_rows(named=True)
    ]
    self_play = _with_variant(data["outcomes"].filter(SELF_PLAY), data).join(
        data["ludii"].select(*KEYS, "Duration", "Duration_low", "Duration_high"), on=list(KEYS), maintain_order="left"
    )
    rows = [
        [
            row["variant"],
            row["south"],
            f"{row['games']:,}",
            _plain(row, "advantage", 3),
            _share(row, "draw"),
            f"{row['Duration']:.2f} [{row['Duration_low']:.2f}, {row['Duration_high']:.2f}]",
        ]
        for row in self_play.iter_rows(named=True)
    ]
    fired = _with_variant(_main_pairings(data).join(data["events"], on=list(KEYS), maintain_order="left"), data)
    event_rows = [
        [row["variant"], f"{row['south']} v {row['north']}", row["event"], _share(row, "fired", 2)]
        for row in fired.iter_rows(named=True)
        if row["event"] in _GAME_EVENTS
    ]
    return [
        Section(
            "What each rule does",
            [
                "Each rule set is the study's [rules] (labelled default) with the changes its label names; the rule-set "
                "name spells out every field that differs from RULES.md. The value of the start for South under perfect "
                "play is given for the rule sets under which the study played perfect. Self-play pairings: the "
                "first-player score, the share of draws and the mean length of a game."
            ],
            [
                Table("Rule sets", ["variant", "rules", "games", "value of the start (perfect play)"], rule_sets, "rule_sets"),
                Table(
                    "Self-play per rule set",
                    ["variant", "strategy", "games", "first-player score", "draws (%)", "mean plies"],
                    rows,
                ),
            ],
            [
                ("variant_first_player_advantage", "First-player score per rule set and strategy (self-play), 95% intervals."),
                ("variant_game_length", "Mean game length per rule set and strategy (self-play), 95% intervals."),
            ],
        ),
        Section(
            "How often the rules fire, per rule set",
            ["In the pairing with the most games of each rule set; tables/events.csv has every pairing and counter."],
            [Table("Games where each rule fires", ["variant", "pairing", "event", "games where it fires (%)"], event_rows)],
            [("variant_rule_events", "Share of games (%) in which each rule fires, per rule set (its largest pairing).")],
        ),
    ]


# ---------------------------------------------------------------------------------------------
# Figures


def figure_names(data: dict[str, pl.DataFrame]) -> list[str]:
    """The figures the report draws from these tables (compute's), in the report's order."""
    several = _several_rules(data)
    # With several rule sets the variant figures show the advantage and the events per rule set,
    # and the length distributions are those of each rule set's largest pairing.
    names = ["game_length"] if several else ["first_player_advantage", "game_length", "rule_events"]
    if "events_by_ply" in data:
        # Games of 0 plies (no legal first move) have no turn to draw, only their end.
        names += ["events_by_ply", "end_events_by_ply"] if _by_ply(data, _TURN_NAMES).height else ["end_events_by_ply"]
    if "ratings" in data:
        names.append("rating_ladder")
    if "agreement" in data:
        names.append("perfect_play_agreement")
    if several:
        names = ["variant_first_player_advantage", "variant_game_length", "variant_rule_events", *names]
    return names


def figure(name: str, data: dict[str, pl.DataFrame]) -> Figure:
    """The report's figure ``name`` (see figure_names) drawn from compute's tables: in a notebook
    it shows inline; pipeline.figures.save writes it as SVG, PDF and PNG."""
    if name not in _DRAWINGS:
        raise ValueError(f"no figure {name!r}; the report's figures are {', '.join(_DRAWINGS)}")
    return _DRAWINGS[name](data)


def _draw(folder: Path, data: dict[str, pl.DataFrame]) -> None:
    for name in figure_names(data):
        figures.save(figure(name, data), folder, name)


def _labelled(table: pl.DataFrame, several: bool) -> pl.DataFrame:
    label = pl.format("{} v {}", "south", "north")
    if several:
        label = pl.format("{}: {}", "rules", label)
    return table.with_columns(label.alias("label"))


def _advantage_figure(data: dict[str, pl.DataFrame]) -> Figure:
    table = _labelled(data["outcomes"], _several_rules(data)).rename({"advantage_share": "advantage"}, strict=False)
    return figures.forest(
        table,
        label="label",
        value="advantage",
        xlabel="first-player score (draw = 1/2)",
        colour_by="south",
    )


def _length_figure(data: dict[str, pl.DataFrame]) -> Figure:
    if _several_rules(data):
        lengths = data["lengths"].join(_main_pairings(data), on=list(KEYS), how="semi")
        label = pl.format("{}: {} v {}", "variant", "south", "north")
        lengths = _with_variant(lengths, data).with_columns(label.alias("pairing"))
    else:
        lengths = data["lengths"].filter(SELF_PLAY).with_columns(pl.format("{} v {}", "south", "north").alias("pairing"))
    return figures.length_distributions(lengths)


def _with_variant(table: pl.DataFrame, data: dict[str, pl.DataFrame]) -> pl.DataFrame:
    """The table with the variant label of its rule set (column variant) beside its rules."""
    return table.join(data["rule_sets"].select("rules", "variant"), on="rules", how="left", maintain_order="left")


def _events_figure(data: dict[str, pl.DataFrame]) -> Figure:
    table = data["events"].filter(SELF_PLAY & pl.col("event").is_in(_GAME_EVENTS))
    label = pl.format("{}: {}", "rules", "south") if _several_rules(data) else pl.col("south")
    return figures.dot_grid(
        table.with_columns(label.alias("self-play")),
        row="event",
        series="self-play",
        value="fired_share",
        xlabel="games in which it fires (%)",
    )


# The rules' events proper (fired or not in a game), without the counters of stones and pits.
_GAME_EVENTS = (*TURN_EVENTS, *END_EVENTS)


def _by_ply(data: dict[str, pl.DataFrame], names: Sequence[str]) -> pl.DataFrame:
    main = _main_pairings(data).head(1)
    table = data["events_by_ply"].join(main, on=list(KEYS), how="semi").filter(pl.col("event").is_in(list(names)))
    return table.with_columns(pl.col("share").alias("share"))


def _ply_limit(data: dict[str, pl.DataFrame]) -> int:
    return figures.quantile_ply(data["lengths"].join(_main_pairings(data).head(1), on=list(KEYS), how="semi"), 0.99)


def _turn_events_figure(data: dict[str, pl.DataFrame]) -> Figure:
    return figures.events_by_ply(_by_ply(data, _TURN_NAMES), max_ply=_ply_limit(data))


# first_move_forfeit fires at ply 0 only, by its definition: nothing to see by ply.
_TURN_NAMES = tuple(name for name in TURN_EVENTS if name != "first_move_forfeit")


def _end_events_figure(data: dict[str, pl.DataFrame]) -> Figure:
    return figures.events_by_ply(_by_ply(data, END_EVENTS), max_ply=_ply_limit(data), ylabel="games that end at the ply (%)")


def _ladder_figure(data: dict[str, pl.DataFrame]) -> Figure:
    table = data["ratings"].with_columns(rating_low=pl.col("low"), rating_high=pl.col("high"))
    label = pl.format("{}: {}", "rules", "strategy") if _several_rules(data) else pl.col("strategy")
    return figures.forest(
        table.with_columns(label.alias("label")),
        label="label",
        value="rating",
        xlabel="rating (Elo)",
        reference=0.0,
    )


def _agreement_figure(data: dict[str, pl.DataFrame]) -> Figure:
    label = pl.format("{}: {}", "rules", "strategy") if _several_rules(data) else pl.col("strategy")
    table = data["agreement"].with_columns(label.alias("label")).sort("rules", "kept_share", descending=[False, True])
    return figures.forest(
        table,
        label="label",
        value="kept_share",
        xlabel="share of its moves that keep the value",
        reference=1.0,
    )


def _variant_advantage_figure(data: dict[str, pl.DataFrame]) -> Figure:
    return _self_play_by_variant(data, "outcomes", "advantage_share", "first-player score (draw = 1/2)", reference=0.5)


def _variant_length_figure(data: dict[str, pl.DataFrame]) -> Figure:
    lengths = data["ludii"].filter(SELF_PLAY)["Duration"]
    return _self_play_by_variant(data, "ludii", "Duration", "mean game length (plies)", log=_spans_decades(lengths))


def _self_play_by_variant(data: dict[str, pl.DataFrame], name: str, value: str, xlabel: str, **style: Any) -> Figure:
    """One of a table's estimates for each strategy's self-play, a row per rule set."""
    table = _with_variant(data[name].filter(SELF_PLAY), data).rename({"south": "strategy"})
    return figures.dot_grid(table, row="variant", series="strategy", value=value, xlabel=xlabel, percent=False, **style)


def _variant_events_figure(data: dict[str, pl.DataFrame]) -> Figure:
    table = _main_pairings(data).join(data["events"], on=list(KEYS)).filter(pl.col("event").is_in(_GAME_EVENTS))
    table = _with_variant(table, data).with_columns((100 * pl.col("fired_share")).alias("percent"))
    return figures.heatmap(
        table,
        row="variant",
        column="event",
        value="percent",
        colour_label="games in which it fires (%)",
    )


_DRAWINGS: dict[str, Callable[[dict[str, pl.DataFrame]], Figure]] = {
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
}


# ---------------------------------------------------------------------------------------------
# Writing


def markdown(report: Report) -> str:
    lines = [f"# Study report: {report.study}", "", *_paragraphs(report.text)]
    for section in report.sections:
        lines += [f"## {section.title}", "", *_paragraphs(section.text)]
        for stem, caption in section.figures:
            lines += [
                f"![{caption}](figures/{stem}.svg)",
                "",
                f"*{caption}* ([PDF](figures/{stem}.pdf), [PNG](figures/{stem}.png))",
                "",
            ]
        for table in section.tables:
            source = f" (tables/{table.name}.csv)" if table.name else ""
            lines += [f"**{table.caption}**{source}", "", _markdown_table(table), ""]
    return "\n".join(lines)


def page(report: Report, figure_folder: Path) -> str:
    """The report as one HTML file with its SVG figures inline (no server, no network)."""
    body = [f"<h1>Study report: {html.escape(report.study)}</h1>", *(_html_paragraph(text) for text in report.text)]
    for section in report.sections:
        body.append(f"<h2>{html.escape(section.title)}</h2>")
        body += [_html_paragraph(text) for text in section.text]
        for stem, caption in section.figures:
            svg = (figure_folder / f"{stem}.svg").read_text(encoding="utf-8")
            svg = svg[svg.index("<svg") :]
            body.append(
                f"<figure>{svg}<figcaption>{html.escape(caption)} "
                f'<a href="figures/{stem}.pdf">PDF</a> <a href="figures/{stem}.png">PNG</a></figcaption></figure>'
            )
        body += [_html_table(table) for table in section.tables]
    return _HTML.format(title=html.escape(f"Study report: {report.study}"), body="\n".join(body))


_HTML = """<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>{title}</title>
<style>
body {{ font-family: system-ui, sans-serif; max-width: 62rem; margin: 2rem auto; padding: 0 1rem; color: #222; }}
table {{ border-collapse: collapse; margin: 0.5rem 0 1.5rem; font-size: 0.85rem; }}
th, td {{ padding: 0.2rem 0.6rem; border-bottom: 1px solid #ddd; text-align: right; }}
th:first-child, td:first-child {{ text-align: left; }}
caption {{ text-align: left; font-weight: bold; padding-bottom: 0.3rem; }}
figure {{ margin: 1rem 0; }} figure svg {{ max-width: 100%; height: auto; }}
figcaption {{ font-size: 0.85rem; color: #555; }}
</style>
</head>
<body>
{body}
</body>
</html>
"""


def _write_tables(folder: Path, data: dict[str, pl.DataFrame]) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    for name, table in data.items():
        table.write_csv(folder / f"{name}.csv", float_precision=10)


def _write_report(folder: Path, report: Report, data: dict[str, pl.DataFrame]) -> None:
    _write_tables(folder / "tables", data)
    _draw(folder / "figures", data)
    (folder / "report.md").write_text(markdown(report), encoding="utf-8")
    (folder / "index.html").write_text(page(report, folder / "figures"), encoding="utf-8")
    marker = {"study": report.study, "engine_version": ENGINE_VERSION}
    (folder / MARKER).write_text(json.dumps(marker) + "\n", encoding="utf-8")


@contextmanager
def _staging(out: Path) -> Iterator[Path]:
    """A new folder beside ``out`` to build the report in, made first (a folder that cannot be
    written fails before the work) and removed afterwards whatever happens, with the parents of
    ``out`` it made if they stay empty."""
    staging = out.with_name(f".{out.name}.tmp-{os.getpid()}")
    made: list[Path] = []
    try:
        try:
            _make_folders(out.parent, made)
            shutil.rmtree(staging, ignore_errors=True)
            staging.mkdir()
        except OSError as error:
            raise _write_error(out, error) from None
        yield staging
    finally:
        shutil.rmtree(staging, ignore_errors=True)
        for folder in reversed(made):
            with suppress(OSError):  # not empty: the report is in it
                folder.rmdir()


def _make_folders(folder: Path, made: list[Path]) -> None:
    """Make ``folder`` and its missing parents, outermost first, adding each to ``made``."""
    missing = []
    while not folder.exists() and folder != folder.parent:
        missing.append(folder)
        folder = folder.parent
    for path in reversed(missing):
        path.mkdir()
        made.append(path)


def _publish(staging: Path, out: Path, report: Report, data: dict[str, pl.DataFrame]) -> None:
    """Write the report into ``staging`` and move it to ``out``. An OSError (no space, no
    permission) becomes a RecordError naming ``out``."""
    try:
        _write_report(staging, report, data)
        _replace(staging, out)
    except OSError as error:
        raise _write_error(out, error) from None


def _write_error(out: Path, error: OSError) -> RecordError:
    return RecordError(f"cannot write the report to {out}: {error.strerror or error}")


def _replace(staging: Path, out: Path) -> None:
    """Move the built report to ``out``; the report it replaces is deleted only once the new
    one is in place, and put back if the move fails."""
    _check_replaceable(out, str(out))  # again: the folder may have been filled while we computed
    old = out.with_name(f".{out.name}.old-{os.getpid()}")
    shutil.rmtree(old, ignore_errors=True)
    if out.exists():
        out.rename(old)
    try:
        staging.rename(out)
    except OSError:
        if old.exists():
            old.rename(out)
        raise
    shutil.rmtree(old, ignore_errors=True)


def _check_replaceable(target: Path, name: str) -> None:
    try:
        if not target.is_dir():
            if os.path.lexists(target):
                raise RecordError(f"{name} exists and is not a folder; choose another --out")
            return
        if not any(target.iterdir()):
            return
        if not _is_report(target):
            raise RecordError(f"{name} exists and is not a report of modiar; choose another --out or remove it")
        foreign = _foreign_files(target)
    except OSError as error:
        raise RecordError(f"cannot use {name} as the report's folder: {error.strerror or error}") from None
    if foreign:
        raise RecordError(
            f"{name} holds files the report did not write ({', '.join(foreign[:3])}); move them away or choose another --out"
        )


def _is_report(folder: Path) -> bool:
    try:
        marker = json.loads((folder / MARKER).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        marker = None
    if isinstance(marker, dict) and "study" in marker:
        return True
    # A report of an earlier version of modiar, written before the marker: its own files only.
    return (folder / "index.html").is_file() and (folder / "report.md").is_file() and not _foreign_files(folder)


def _foreign_files(folder: Path) -> list[str]:
    """What in a report's folder the report did not write (a reader's notes, say): replacing
    the folder would lose it."""
    return sorted(str(path.relative_to(folder)) for path in folder.rglob("*") if not _written(path, folder))


def _written(path: Path, folder: Path) -> bool:
    parts = path.relative_to(folder).parts
    if path.name in _LITTER or (len(parts) == 1 and parts[0] in _REPORT_FILES):
        return True
    if len(parts) == 1:
        return parts[0] in _REPORT_FOLDERS and path.is_dir() and not path.is_symlink()
    return len(parts) == 2 and path.suffix in _REPORT_FOLDERS.get(parts[0], ()) and not path.is_dir()


_REPORT_FILES = (MARKER, "index.html", "report.md")
_REPORT_FOLDERS = {"tables": (".csv",), "figures": tuple(f".{suffix}" for suffix in figures.FORMATS)}
_LITTER = (".DS_Store", "Thumbs.db")  # what file browsers leave in a folder they show


def _markdown_table(table: Table) -> str:
    lines = ["| " + " | ".join(table.header) + " |", "|" + "|".join("---" for _ in table.header) + "|"]
    lines += ["| " + " | ".join(row) + " |" for row in table.rows]
    return "\n".join(lines)


def _html_table(table: Table) -> str:
    head = "".join(f"<th>{html.escape(cell)}</th>" for cell in table.header)
    rows = "".join("<tr>" + "".join(f"<td>{html.escape(cell)}</td>" for cell in row) + "</tr>" for row in table.rows)
    source = f" (tables/{table.name}.csv)" if table.name else ""
    return f"<table><caption>{html.escape(table.caption + source)}</caption><tr>{head}</tr>{rows}</table>"


def _html_paragraph(text: str) -> str:
    escaped = html.escape(text)
    parts = escaped.split("**")
    return "<p>" + "".join(f"<strong>{part}</strong>" if i % 2 else part for i, part in enumerate(parts)) + "</p>"


def _paragraphs(texts: Sequence[str]) -> list[str]:
    return [line for text in texts for line in (text, "")]


# ---------------------------------------------------------------------------------------------
# Helpers


def _several_rules(data: dict[str, pl.DataFrame]) -> bool:
    return data["outcomes"]["rules"].n_unique() > 1


def _main_pairings(data: dict[str, pl.DataFrame]) -> pl.DataFrame:
    """Per rule set, the pairing with the most games (the first in order on a tie)."""
    table = data["outcomes"].with_row_index("order")
    best = table.sort(["games", "order"], descending=[True, False]).unique("rules", keep="first", maintain_order=True)
    return best.sort("order").select(*KEYS)


def _rules_header(data: dict[str, pl.DataFrame]) -> list[str]:
    """A rules column, in a study of several rule sets only (_rules_cells fills it)."""
    return ["rules"] if _several_rules(data) else []


def _rules_cells(row: dict[str, Any], data: dict[str, pl.DataFrame]) -> list[str]:
    return [row["rules"]] if _several_rules(data) else []


def _pairing_header(data: dict[str, pl.DataFrame]) -> list[str]:
    return [*_rules_header(data), "South", "North"]


def _pairing_cells(row: dict[str, Any], data: dict[str, pl.DataFrame]) -> list[str]:
    return [*_rules_cells(row, data), row["south"], row["north"]]


def _share(row: dict[str, Any], name: str, digits: int = 1) -> str:
    return (
        f"{100 * row[f'{name}_share']:.{digits}f} [{100 * row[f'{name}_low']:.{digits}f}, {100 * row[f'{name}_high']:.{digits}f}]"
    )


def _plain(row: dict[str, Any], name: str, digits: int) -> str:
    return f"{row[f'{name}_share']:.{digits}f} [{row[f'{name}_low']:.{digits}f}, {row[f'{name}_high']:.{digits}f}]"


def _ludii_cell(name: str, value: float | None) -> str:
    if value is None or value != value:  # no ply to measure: games of 0 plies
        return "n/a"
    # Repetitions are rare (a few in ten million states): three significant digits, not four decimals.
    return f"{value:.3g}" if name == "PositionalRepetition" else f"{value:.4f}"


def _rate(row: dict[str, Any]) -> str:
    if row["per_100_turns"] is None:
        return "n/a"
    return f"{row['per_100_turns']:.3f} [{row['per_100_turns_low']:.3f}, {row['per_100_turns_high']:.3f}]"


def _p_value(p: float | None) -> str:
    if p is None or p != p:
        return "n/a"
    return f"{p:.3g}" if p >= 1e-300 else "<1e-300"


def _start_values(table: pl.DataFrame) -> list[tuple[str, int]]:
    return [
        (str(rules), int(value)) for rules, value in table.select("rules", "start_value").unique(maintain_order=True).iter_rows()
    ]


def _length_subjects(data: dict[str, pl.DataFrame]) -> str:
    return "the largest pairing of each rule set" if _several_rules(data) else "the self-play pairings"


def _spans_decades(values: pl.Series) -> bool:
    """Whether positive values span more than a factor of 20: then a log scale reads better."""
    array = values.to_numpy()
    return bool(array.size and array.min() > 0 and array.max() > 20 * array.min())


def _anchor_text(first_move: pl.DataFrame) -> str:
    anchors = first_move["anchor"].unique(maintain_order=True).to_list()
    if anchors == [None]:
        return "Ratings are centred on their mean."
    return f"{' and '.join(str(anchor) for anchor in anchors if anchor)} is rated 0; the others relative to it."


def _plural(count: int, word: str) -> str:
    return f"{count} {word}" if count == 1 else f"{count} {word}s"


def _say(progress: bool, message: str) -> None:
    if progress:
        print(message, file=sys.stderr)
