"""The report's words and formatted tables: ``compose`` turns compute's tables into a Report.

A Report is plain text and cells (strings), ready for pipeline.report.render to lay out as
Markdown or HTML. Paragraphs may hold **bold** and [links](target); every cell is formatted
here, so the Markdown, the HTML and the tests read the same strings.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import polars as pl

from pipeline.exact_check import FLAG_P, FLAG_Z, MIN_EXPECTED, MIN_GAMES, label
from pipeline.records import Manifest
from pipeline.report.figures import figure_names
from pipeline.report.tables import GAME_EVENTS, KEYS, SELF_PLAY, ReportData
from pipeline.turns import MAX_GAMES_PER_PAIRING

# The rules the report's words refer to: the repository's RULES.md, seen from reports/<study>/.
RULES_MD = "[RULES.md](../../RULES.md)"
# An exact value has no sampling error: it is printed with more digits than its sampled estimate.
EXACT_SCORE_DIGITS = 9  # the headline's first-player score


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
    appendix: bool = False  # full tables: after the main sections, under one heading "Appendix"


@dataclass
class Report:
    """The report: ``alarm`` (sampled figures far from their exact values, a possible bug) opens
    it, in red in HTML; then ``text`` and the sections."""

    study: str
    text: list[str]
    sections: list[Section]
    data: ReportData
    alarm: list[str] = field(default_factory=list)
    abstract: list[str] = field(default_factory=list)  # plain words, before everything but the alarm
    footer: list[str] = field(default_factory=list)  # how the report was made: commit, version, date, command


def compose(manifest: Manifest, data: ReportData, *, warning: str | None = None) -> Report:
    """The report's words and formatted tables, from the computed tables; ``warning`` (that the
    study is unfinished, pipeline.status.incomplete_warning) opens the report in bold, after the
    alarm of any sampled figure more than 4 standard errors from its exact value."""
    rule_sets = data.outcomes["rules"].unique(maintain_order=True).to_list()
    games = int(data.outcomes["games"].sum())
    versions = manifest.get("versions", {})
    text = [
        f"Study **{manifest['study']}**: {games:,} games under {_plural(len(rule_sets), 'rule set')} "
        f"({', '.join(rule_sets)}), seed {manifest['config'].get('seed')}, engine version {versions.get('engine', '?')}.",
        "Intervals are two-sided 95%: Wilson score intervals for shares, normal intervals for means. "
        "South moves first; the first-player score counts a draw as one half.",
    ]
    text = [f"**{warning}**", *text] if warning else text
    sections = [_headline_section(data)]
    sections += _variant_sections(data) if data.several_rules else []
    sections += [
        _advantage_section(data),
        _length_section(data),
        _ludii_section(data),
        _events_section(data),
        _events_by_ply_section(data),
    ]
    if data.ratings is not None and data.first_move is not None:
        sections.append(_ratings_section(data.ratings, data.first_move, data))
    if data.agreement is not None:
        sections.append(_agreement_section(data.agreement, data))
    if data.exact_check is not None:
        sections.append(_exact_section(data.exact_check, data))
    drawn = set(figure_names(data))
    for section in sections:
        section.figures = [(stem, caption) for stem, caption in section.figures if stem in drawn]
    return Report(manifest["study"], text, sections, data, _alarm(data))


def _headline_section(data: ReportData) -> Section:
    """The figures a reader wants first, per rule set: those of its pairing with the most games,
    formatted exactly as in the tables below; its exact values instead where the study has them."""
    text = []
    main = data.main_pairings()
    for keys in main.iter_rows(named=True):
        variant = _row(data.rule_sets, {"rules": keys["rules"]})["variant"]
        name = f"{variant} ({keys['rules']})" if data.several_rules and variant != keys["rules"] else keys["rules"]
        outcome = _row(data.outcomes, keys)
        opening = f"**{name}, {keys['south']} (South) v {keys['north']} (North), {outcome['games']:,} games.** "
        exact = _exact_row(data, keys)
        text.append(opening + (_sampled_headline(data, keys) if exact is None else _exact_headline(outcome, exact)))
    if data.agreement is not None:
        values = ", ".join(f"{rules}: {value:+d}" for rules, value in _start_values(data.agreement))
        text.append(f"**Perfect play.** Value of the start for South: {values}.")
    return Section("Headlines", text)


def _sampled_headline(data: ReportData, keys: dict[str, Any]) -> str:
    outcome = _row(data.outcomes, keys)
    length = _row(data.ludii, keys)
    fired = data.events.filter(*(pl.col(key) == value for key, value in keys.items()))
    rates = "; ".join(
        f"{row['event']} {_share(row, 'fired', 2)}" for row in fired.iter_rows(named=True) if row["event"] in GAME_EVENTS
    )
    return (
        f"First-player score {_plain(outcome, 'advantage', 3)} "
        f"(two-sided p against 1/2: {_p_value(outcome['first_player_p'])}); "
        f"South wins {_share(outcome, 'south')}%, draws {_share(outcome, 'draw')}%. "
        f"Mean length {length['Duration']:.2f} [{length['Duration_low']:.2f}, {length['Duration_high']:.2f}] plies. "
        f"Games in which each rule fires (%): {rates}."
    )


def _exact_headline(outcome: dict[str, Any], exact: dict[str, Any]) -> str:
    rates = "; ".join(f"{name} {100 * exact[f'fires_{name}']:.4f}" for name in GAME_EVENTS)
    return (
        f"First-player score {exact['first_player_score']:.{EXACT_SCORE_DIGITS}f} (exact; its games give "
        f"{_plain(outcome, 'advantage', 3)}); South wins {100 * exact['south_win']:.4f}%, draws "
        f"{100 * exact['draw']:.4f}% (exact). Mean length {exact['mean_plies']:.4f} plies (exact). "
        f"Games in which each rule fires (%, exact): {rates}."
    )


def _variant_sections(data: ReportData) -> list[Section]:
    rule_sets = [
        [row["variant"], row["rules"], f"{row['games']:,}", "n/a" if row["start_value"] is None else f"{row['start_value']:+d}"]
        for row in data.rule_sets.iter_rows(named=True)
    ]
    self_play = data.with_variant(data.outcomes.filter(SELF_PLAY)).join(
        data.ludii.select(*KEYS, "Duration", "Duration_low", "Duration_high"), on=list(KEYS), maintain_order="left"
    )
    rows = [
        [
            row["variant"],
            row["south"],
            f"{row['games']:,}",
            *_beside(
                [
                    _plain(row, "advantage", 3),
                    _share(row, "draw"),
                    f"{row['Duration']:.2f} [{row['Duration_low']:.2f}, {row['Duration_high']:.2f}]",
                ],
                [
                    _exact_cell(data, row, "first_player_score", "{:.6f}"),
                    _exact_cell(data, row, "draw", "{:.3f}", 100),
                    _exact_cell(data, row, "mean_plies", "{:.4f}"),
                ],
                data,
            ),
        ]
        for row in self_play.iter_rows(named=True)
    ]
    fired = data.with_variant(data.main_pairings().join(data.events, on=list(KEYS), maintain_order="left"))
    event_rows = [
        [
            row["variant"],
            f"{row['south']} v {row['north']}",
            row["event"],
            *_beside([_share(row, "fired", 2)], [_exact_cell(data, row, f"fires_{row['event']}", "{:.4f}", 100)], data),
        ]
        for row in fired.iter_rows(named=True)
        if row["event"] in GAME_EVENTS
    ]
    self_play_header = ["first-player score", "draws (%)", "mean plies"]
    self_play_exact = ["first-player score, exact", "draws, exact (%)", "mean plies, exact"]
    return [
        Section(
            "What each rule does",
            [
                "Each rule set is the study's [rules] (labelled default) with the changes its label names; the rule-set "
                f"name spells out every field that differs from {RULES_MD}. The value of the start for South under perfect "
                "play is given for the rule sets under which the study played perfect. Self-play pairings: the "
                f"first-player score, the share of draws and the mean length of a game.{_exact_note(data)}"
            ],
            [
                Table("Rule sets", ["variant", "rules", "games", "value of the start (perfect play)"], rule_sets, "rule_sets"),
                Table(
                    "Self-play per rule set",
                    ["variant", "strategy", "games", *_beside(self_play_header, self_play_exact, data)],
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
            [
                "In the pairing with the most games of each rule set; tables/events.csv has every pairing and counter."
                + _exact_note(data)
            ],
            [
                Table(
                    "Games where each rule fires",
                    [
                        "variant",
                        "pairing",
                        "event",
                        *_beside(["games where it fires (%)"], ["games where it fires, exact (%)"], data),
                    ],
                    event_rows,
                )
            ],
            [("variant_rule_events", "Share of games (%) in which each rule fires, per rule set (its largest pairing).")],
        ),
    ]


def _advantage_section(data: ReportData) -> Section:
    rows = [
        [*_pairing_cells(row, data), *_beside(_outcome_cells(row), _exact_outcome_cells(data, row), data)]
        for row in data.outcomes.iter_rows(named=True)
    ]
    pooled = [[row["rules"], *_outcome_cells(row)] for row in data.outcomes_overall.iter_rows(named=True)]
    cells = ["games", "South wins (%)", "draws (%)", "North wins (%)", "first-player score", "p (score = 1/2)"]
    exact = [None, "South wins, exact (%)", "draws, exact (%)", "North wins, exact (%)", "first-player score, exact", None]
    text = (
        "The first player's score per ordered pairing (South's strategy first), with a two-sided test against one "
        "half; then every game of a rule set pooled (each pairing weighs as many games as it played)."
    )
    text += _exact_note(data)
    return Section(
        "First-player advantage",
        [text],
        [
            Table("Outcomes per pairing", [*_pairing_header(data), *_beside(cells, exact, data)], rows, "outcomes"),
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
        _p_value(row["first_player_p"]),
    ]


def _length_section(data: ReportData) -> Section:
    rows = [
        [
            *_pairing_cells(row, data),
            *_beside(
                [f"{row['Duration']:.2f} [{row['Duration_low']:.2f}, {row['Duration_high']:.2f}]"],
                [_exact_cell(data, row, "mean_plies", "{:.4f}")],
                data,
            ),
            f"{row['Duration_median']:.1f}",
            f"{row['Duration_p90']:.1f}",
            f"{row['Duration_max']}",
            f"{100 * row['Timeouts']:.2f}",
        ]
        for row in data.ludii.iter_rows(named=True)
    ]
    header = [*_pairing_header(data), *_beside(["mean plies"], ["mean plies, exact"], data)]
    header += ["median", "90th percentile", "longest", "at the ply cap (%)"]
    subjects = "the largest pairing of each rule set" if data.several_rules else "the self-play pairings"
    return Section(
        "Game length",
        ["Plies per game (a ply is one player's move)." + _exact_note(data)],
        [Table("Game length per pairing", header, rows, "ludii")],
        [("game_length", f"Distribution of game length in {subjects}; each panel's axis stops at 99.5% of its games.")],
    )


def _ludii_section(data: ReportData) -> Section:
    table = data.ludii.join(data.ludii_plies.drop("games", strict=False), on=list(KEYS), how="left")
    names = ["AdvantageP1", "Balance", "Completion", "Drawishness", "Timeouts", "Duration"]
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


def _events_section(data: ReportData) -> Section:
    main = data.main_pairings()
    table = data.events.join(main, on=list(KEYS), how="semi")
    rows = [
        [
            *_rules_cells(row, data),
            row["event"],
            *_beside(
                [_share(row, "fired", 2), f"{row['mean']:.4f} [{row['mean_low']:.4f}, {row['mean_high']:.4f}]"],
                [
                    _exact_cell(data, row, f"fires_{row['event']}", "{:.4f}", 100),
                    _exact_cell(data, row, f"mean_{row['event']}", "{:.6f}"),
                ],
                data,
            ),
            _rate(row),
        ]
        for row in table.iter_rows(named=True)
    ]
    sampled = ["games where it fires (%)", "mean per game"]
    header = [*_rules_header(data), "event", *_beside(sampled, ["fires, exact (%)", "mean, exact"], data), "per 100 turns"]
    return Section(
        "Rule events",
        [
            f"How often each rule of {RULES_MD} fires, in the pairing with the most games ({_described(main)}); "
            "tables/events.csv has every pairing. Counts such as first_move_forfeit_stones and capture_stones are "
            f"stones, the others turns or games.{_exact_note(data)}"
        ],
        [Table("Rule events", header, rows, "events")],
        [("rule_events", "Share of games in which each rule fires, self-play pairings, 95% Wilson intervals.")],
    )


def _events_by_ply_section(data: ReportData) -> Section:
    return Section(
        "Events by ply",
        [
            f"When in the game each rule fires, in {_described(data.main_pairings())}: the share of the turns played at "
            "each ply on which a turn event fires, and the share of games reaching a ply that end there with each end "
            "event. tables/events_by_ply.csv has every pairing and ply."
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


def _ratings_section(ladder: pl.DataFrame, first_move: pl.DataFrame, data: ReportData) -> Section:
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
        for row in first_move.iter_rows(named=True)
    ]
    rules = _rules_header(data)
    return Section(
        "Strategy ratings",
        [
            "A Bradley-Terry model with a first-move term, fitted to every game of the round robin, a draw counting half "
            "a win for each side, on the Elo scale (400 points is a factor of 10 in the odds). "
            f"{_anchor_text(first_move)} A weak Gaussian prior (sd {first_move['prior_sd'][0]:.0f} Elo) "
            "keeps the rating of a strategy that never loses finite; pipeline.ratings gives the details. "
            "The first-move term is South's edge from moving first, between equal strategies."
        ],
        [
            Table("Rating ladder (Elo)", [*rules, "strategy", "rating", "games", "score"], rows, "ratings"),
            Table("First-move term", [*rules, "Elo", "expected score between equals"], first, "first_move"),
        ],
        [("rating_ladder", "Ratings with 95% intervals; the anchor strategy is at 0.")],
    )


def _agreement_section(agreement: pl.DataFrame, data: ReportData) -> Section:
    rows = [
        [
            *_rules_cells(row, data),
            row["strategy"],
            f"{row['moves']:,}",
            _share(row, "kept", 2),
            f"{row['loss']:.3f} [{row['loss_low']:.3f}, {row['loss_high']:.3f}]",
        ]
        for row in agreement.iter_rows(named=True)
    ]
    values = ", ".join(f"{rules}: {value:+d}" for rules, value in _start_values(agreement))
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


def _exact_section(check: pl.DataFrame, data: ReportData) -> Section:
    """The test of every sampled figure against its exact value (pipeline.exact_check)."""
    pairings = check.select(*KEYS).unique(maintain_order=True).height
    flagged = check.filter("flagged")
    approximate = check.filter("approximate")
    largest = (
        check.with_columns(pl.col("z").abs().alias("_size")).sort("_size", descending=True, nulls_last=True).row(0, named=True)
    )
    text = [
        "Where the study has the exact outcome of a pairing (engine.exact_outcome: the outcome distribution of two "
        "table strategies, with no sampling error), every figure its games estimate is tested against its exact value: "
        "the shares of South wins, draws and North wins, the first-player score, the mean length and, for every rule "
        "event, the share of games in which it fires and its mean count per game. The test is a one-sample z test, "
        "z = (sampled - exact) / standard error, the standard error being that of the pairing's games under the exact "
        "distribution (for an event's mean count, whose exact variance is not stored, the sample's, but never below the "
        f"least a count with the exact mean can have). A figure with |z| above {FLAG_Z:g} (a chance of {FLAG_P:.1e} for one "
        "honest figure) is flagged as a possible bug at the top of the report. pipeline.exact_check gives the details; "
        "tables/exact_check.csv has every test and tables/exact.csv every exact outcome, at full precision.",
        f"**{len(check):,} figures of {_plural(pairings, 'pairing')} tested: {_flag_count(len(flagged))}.** "
        f"The z farthest from 0 is {_z(largest['z'])}: {_figure(largest, data)}"
        f"{' (approximate, see below)' if largest['approximate'] else ''}.",
    ]
    if len(approximate):
        text.append(
            f"The z of {len(approximate):,} of these figures is approximate: the pairing has fewer than {MIN_GAMES} games, "
            f"or fewer than {MIN_EXPECTED} of its games are expected away from the figure's most likely value (a rare event, "
            "a share near 0 or 1), where the normal law misleads (one game in which a rare event fires can lie many "
            "standard errors out). Such a share is flagged by its exact binomial test at the same level instead, and any "
            "other such figure only when its exact outcome rules it out."
        )
    unflagged = approximate.filter(~pl.col("flagged") & (pl.col("z").abs() > FLAG_Z))
    if len(unflagged):
        text.append(
            f"Approximate figures with |z| above {FLAG_Z:g} but not flagged (their exact test, or the share behind them, "
            f"passes): {'; '.join(_finding(row, data) for row in unflagged.iter_rows(named=True))}."
        )
    tables = [
        Table(
            "Sampled against exact per pairing",
            [*_pairing_header(data), "games", "figures", "z farthest from 0", "flagged"],
            _check_rows(check, data),
            "exact_check",
        )
    ]
    if len(flagged):
        header = [*_pairing_header(data), "figure", "games", "sampled", "exact", "standard error", "z", "approximate"]
        rows = [
            [
                *_pairing_cells(row, data),
                label(row["quantity"]),
                f"{row['games']:,}",
                f"{row['sampled']:.6g}",
                f"{row['exact']:.6g}",
                f"{row['se']:.3g}",
                _z(row["z"]),
                "yes" if row["approximate"] else "no",
            ]
            for row in flagged.iter_rows(named=True)
        ]
        tables.append(Table("Flagged figures: possible bugs", header, rows))
    return Section(
        "Sampled against exact",
        text,
        tables,
        [
            (
                "sampled_against_exact",
                "First-player score of each self-play pairing: its games' estimate with its 95% Wilson interval (dot and "
                "bar) and its exact value (cross).",
            )
        ],
    )


def _check_rows(check: pl.DataFrame, data: ReportData) -> list[list[str]]:
    """Per pairing: its games, the figures tested, the z farthest from 0 (which figure) and how many are flagged."""
    rows = []
    for _, part in check.group_by(*KEYS, maintain_order=True):
        largest = (
            part.with_columns(pl.col("z").abs().alias("_size")).sort("_size", descending=True, nulls_last=True).row(0, named=True)
        )
        rows.append(
            [
                *_pairing_cells(largest, data),
                f"{largest['games']:,}",
                f"{len(part)}",
                f"{_z(largest['z'])} ({label(largest['quantity'])})",
                f"{part['flagged'].sum()}",
            ]
        )
    return rows


def _alarm(data: ReportData) -> list[str]:
    """The report's first words when a sampled figure lies more than 4 standard errors from its
    exact value: every such figure, none left out."""
    if data.exact_check is None or not data.exact_check["flagged"].any():
        return []
    flagged = data.exact_check.filter("flagged")
    return [
        f"POSSIBLE BUG: {_plural(len(flagged), 'sampled figure')} of this study {'lies' if len(flagged) == 1 else 'lie'} "
        f"more than {FLAG_Z:g} standard errors from {'its' if len(flagged) == 1 else 'their'} exact value (|z| > {FLAG_Z:g}; "
        "see Sampled against exact). The games were played by the engine whose exact outcomes they are tested against: "
        "check the engine, the batch player, the records and the metrics before trusting this report.",
        *(_finding(row, data) for row in flagged.iter_rows(named=True)),
    ]


def _finding(row: dict[str, Any], data: ReportData) -> str:
    """One tested figure in words: pairing, figure, sampled and exact values, z."""
    approximate = f"; approximate, exact binomial p {row['p']:.2g}" if row["approximate"] else ""
    return (
        f"{_figure(row, data)}: sampled {row['sampled']:.6g} in {row['games']:,} games, exact {row['exact']:.6g}, "
        f"z = {_z(row['z'])}{approximate}"
    )


def _figure(row: dict[str, Any], data: ReportData) -> str:
    """A tested figure's name: its pairing (and rule set) and its quantity in words."""
    rules = f"{row['rules']}, " if data.several_rules else ""
    return f"{rules}{row['south']} v {row['north']}, {label(row['quantity'])}"


# ---------------------------------------------------------------------------------------------
# Cells and phrases


def _row(table: pl.DataFrame, keys: dict[str, Any]) -> dict[str, Any]:
    return table.filter(*(pl.col(key) == value for key, value in keys.items())).row(0, named=True)


def _rules_header(data: ReportData) -> list[str]:
    """A rules column, in a study of several rule sets only (_rules_cells fills it)."""
    return ["rules"] if data.several_rules else []


def _rules_cells(row: dict[str, Any], data: ReportData) -> list[str]:
    return [row["rules"]] if data.several_rules else []


def _pairing_header(data: ReportData) -> list[str]:
    return [*_rules_header(data), "South", "North"]


def _pairing_cells(row: dict[str, Any], data: ReportData) -> list[str]:
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


def _described(pairings: pl.DataFrame) -> str:
    """The pairings of a table keyed by pairing, as "south v north, ..."."""
    return ", ".join(f"{row['south']} v {row['north']}" for row in pairings.iter_rows(named=True))


def _anchor_text(first_move: pl.DataFrame) -> str:
    anchors = first_move["anchor"].unique(maintain_order=True).to_list()
    if anchors == [None]:
        return "Ratings are centred on their mean."
    return f"{' and '.join(str(anchor) for anchor in anchors if anchor)} is rated 0; the others relative to it."


def _plural(count: int, word: str) -> str:
    return f"{count} {word}" if count == 1 else f"{count} {word}s"


def _exact_row(data: ReportData, keys: dict[str, Any]) -> dict[str, Any] | None:
    """The exact outcome of a pairing (the KEYS of ``keys``), None when the study has none."""
    if data.exact is None:
        return None
    found = data.exact.filter(*(pl.col(key) == keys[key] for key in KEYS))
    return found.row(0, named=True) if found.height else None


def _exact_cell(data: ReportData, keys: dict[str, Any], column: str, form: str, scale: float = 1.0) -> str:
    """A column of the pairing's exact outcome, formatted (times ``scale``); n/a without one."""
    exact = _exact_row(data, keys)
    return "n/a" if exact is None else form.format(scale * exact[column])


def _exact_outcome_cells(data: ReportData, row: dict[str, Any]) -> list[str | None]:
    """The exact cells beside _outcome_cells: its shares and score (None: no exact column)."""
    return [
        None,
        _exact_cell(data, row, "south_win", "{:.3f}", 100),
        _exact_cell(data, row, "draw", "{:.3f}", 100),
        _exact_cell(data, row, "north_win", "{:.3f}", 100),
        _exact_cell(data, row, "first_player_score", "{:.6f}"),
        None,
    ]


def _beside(sampled: list[str], exact: Sequence[str | None], data: ReportData) -> list[str]:
    """Sampled cells (or headers), each followed by its exact one when the study has exact outcomes
    (an exact entry of None: that cell has none)."""
    if data.exact is None:
        return sampled
    return [cell for pair in zip(sampled, exact, strict=True) for cell in pair if cell is not None]


def _exact_note(data: ReportData) -> str:
    """The sentence that introduces a table's exact columns, when it has them."""
    if data.exact is None:
        return ""
    return (
        " Beside each sampled figure, its exact value (engine.exact_outcome, no sampling error) where the study "
        'computed one; n/a where it did not (a pairing with mcts, or not self-play under exact = "self-play").'
    )


def _z(z: float) -> str:
    return f"{z:+.2f}" if math.isfinite(z) else ("+infinite" if z > 0 else "-infinite")


def _flag_count(flagged: int) -> str:
    return "none flagged" if flagged == 0 else f"{flagged:,} flagged (|z| > {FLAG_Z:g}), listed at the top of the report"
