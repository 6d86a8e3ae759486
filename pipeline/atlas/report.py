"""The atlas's report: ``modiar atlas report DIR`` (after ``modiar atlas run``).

    reports/<atlas>/index.html      the report, one file, figures inline
    reports/<atlas>/report.md       the same text and tables, figures linked
    reports/<atlas>/tables/*.csv    the whole atlas (atlas.csv), main effects, fair and first-player
                                    lists, the stones series and the costs
    reports/<atlas>/figures/*.svg|pdf|png

Every figure of an atlas is exact (pipeline.atlas.analyse: the solution and engine.exact_outcome), so
the report has no interval and no test. A grid of rule fields is laid out as one 2-D map: its
rows the combinations of some varying fields, its columns those of the others. The main effects
(a field's value against the mean of a figure over the rule sets with that value) are averages
over the grid the atlas holds, exact but not a model: a field's effect may depend on the others.
"""

from __future__ import annotations

import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import polars as pl
from matplotlib.figure import Figure

import engine
from engine.solver import CAP
from pipeline.analysis.fairness import balance_table, fair_rule_set_front
from pipeline.atlas.balancing import balance_section, front_section
from pipeline.atlas.config import atlas_of_manifest
from pipeline.atlas.effects import (
    FIELD_WORDS,
    KEY_COLUMNS,
    MAPPED,
    PARTS,
    MapLayout,
    atlas_frame,
    changed_groups,
    changes_words,
    config_order,
    cost_table,
    effects_table,
    fair_rule_sets,
    field_effects,
    first_player_wins,
    flat_atlas,
    main_effects,
    map_block,
    map_grid,
    map_layout,
    reference_rules,
    rule_that_matters,
    slowest_part,
    stones_series,
    varying_fields,
)
from pipeline.atlas.good_game import (
    QUALITY_MAPPED,
    best_games,
    drama_figure,
    drama_front,
    drama_sentence,
    good_game_section,
    quality_columns,
    quality_table,
)
from pipeline.atlas.maps import effects_figure, map_figure, reference_cell, stones_figure, tradeoff_figure
from pipeline.atlas.quality import distinct_games, quality_frame
from pipeline.atlas.run import gather_rows, read_atlas_manifest
from pipeline.atlas.verdicts import game_groups, games_section, verdict_counts, verdict_sentence, verdict_table, verdict_words
from pipeline.report import figures as plot
from pipeline.report.document import Section, Table
from pipeline.report.folder import check_out, publish_pages, staging
from pipeline.report.prose import listed, plural, signed
from pipeline.runs.paths import REPORTS
from pipeline.runs.records import RecordError


def build_atlas_report(directory: Path, out: Path | None = None, *, progress: bool = True) -> Path:
    """Write the report of the atlas in ``directory``; returns its folder (default
    reports/<atlas>/). Raises RecordError for a folder that is not a sound atlas, an atlas with no
    rule set done, or an ``out`` that is not a new or empty folder or a report of ours."""
    started = time.perf_counter()
    name = str(read_atlas_manifest(directory).get("atlas", directory.name))
    out = check_out(directory, out if out is not None else REPORTS / name)
    gather_rows(directory)  # the rows a killed run left, if any
    manifest = read_atlas_manifest(directory)
    frame = atlas_frame(directory)
    if frame.height == 0:
        raise RecordError(f"the atlas in {directory} has no rule set done yet; run 'modiar atlas run' on its config first")
    report = _compose(frame, manifest, quality_frame(directory, frame), len(distinct_games(frame)))
    with staging(out) as folder:
        for stem, figure in report.figures.items():
            plot.save(figure, folder / "figures", stem)
        published = {
            "kind": "atlas",
            "atlas": name,
            "config": manifest.get("config"),
            "engine": engine.ENGINE_VERSION,
            "rule_sets_done": frame.height,
        }
        publish_pages(
            folder,
            out,
            f"Atlas of rule space: {name}",
            report.text,
            report.sections,
            report.tables,
            abstract=report.abstract,
            manifest=published,
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


def _compose(frame: pl.DataFrame, manifest: dict[str, Any], quality: pl.DataFrame | None = None, games: int = 0) -> _Composed:
    """Every section, table and figure of the report, from the atlas's rows and its manifest, and
    the quality of those of its ``games`` (distinct games) measured (pipeline.atlas.quality.quality_frame)."""
    known = 0 if quality is None else quality["quality_from"].n_unique()  # the games measured
    joined = frame if quality is None or not known else quality_columns(frame, quality)
    block = map_block(frame)
    fields = varying_fields(block)
    order = config_order(manifest)
    effects = main_effects(block, fields, order)
    spreads = field_effects(effects, changed_groups(block, fields, order))
    measured = spreads.filter(pl.col("effect_start_value").is_not_null())  # the fields with a complete block
    series = stones_series(frame)
    costs = cost_table(manifest, frame)
    reference = reference_rules(frame)
    figures: dict[str, Figure] = {}
    sections: list[Section] = []
    if fields:
        layout = map_layout(block, fields, order)
        at_cap = block.with_columns((pl.col("decided_by") == CAP).cast(pl.Float64).alias("at_cap"))
        hatched = (map_grid(at_cap, layout, "at_cap") == 1, "decided at the cap")
        for column, words, form in MAPPED:
            figures[f"atlas_map_{column}"] = map_figure(
                block, layout, column, words, form, hatched if column == "start_value" else None, reference
            )
        outlined = reference if reference_cell(block, layout, reference) is not None else None
        sections.append(_maps_section(block, layout, outlined))
        if known:
            for column, words, form in QUALITY_MAPPED:
                figures[f"atlas_map_{column}"] = map_figure(map_block(joined), layout, column, words, form, None, reference)
    if series.height:
        figures["atlas_stones"] = stones_figure(series)
        sections.append(_stones_section(series))
    sections.append(_outcomes_section(frame))
    groups = game_groups(frame)
    if groups.height:
        sections.append(games_section(groups))
    if measured.height:
        figures["atlas_effects"] = effects_figure(measured)
        sections.append(_effects_section(block, effects, spreads))
    figures["atlas_tradeoff"] = tradeoff_figure(frame, reference)
    balances, front = balance_table(frame), fair_rule_set_front(frame, reference)
    sections += [_tradeoff_section(frame, reference), balance_section(balances)]
    if front.height and reference is not None:
        sections.append(front_section(front, reference))
    tables_of_quality = {}
    if known:
        figures["atlas_drama_front"] = drama_figure(joined, reference)
        sections.append(good_game_section(joined, games, known, reference))
        tables_of_quality = {
            "quality": quality_table(joined),
            "best_games": best_games(joined),
            "drama_front": drama_front(joined),
        }
    sections += [_costs_section(costs, manifest), _every_rule_set_section(frame)]
    tables = {
        "atlas": flat_atlas(frame),
        "fair": fair_rule_sets(frame),
        "first_player_wins": first_player_wins(frame),
        "main_effects": effects,
        "field_effects": spreads,
        "stones": flat_atlas(series).select("rules", "stones_per_pit", *KEY_COLUMNS[1:]),
        "costs": costs,
        "balance": balances,
        "fair_front": front,
        "verdicts": verdict_counts(frame),
        "games": groups,
        **tables_of_quality,
    }
    abstract = _abstract(frame, manifest, measured, series)
    if known:
        abstract.insert(-1, drama_sentence(joined, games, known))
    return _Composed(abstract, _text(frame, manifest), sections, tables, figures)


def _abstract(frame: pl.DataFrame, manifest: dict[str, Any], spreads: pl.DataFrame, series: pl.DataFrame) -> list[str]:
    """The atlas's answers in words: who wins where, how fair and long random games are, and
    which rule field moves the first player's advantage most."""
    score = frame.sort("random_first_player_score")
    length = frame.sort("random_mean_plies")
    text = [
        f"{plural(frame.height, 'rule set')} of Modiar, each solved and analysed exactly ({_done(frame, manifest)}). "
        + verdict_sentence(frame),
        f"Between two random players the first player's score runs from {score['random_first_player_score'][0]:.3f} "
        f"({score['rules'][0]}) to {score['random_first_player_score'][-1]:.3f} ({score['rules'][-1]}), and a game lasts "
        f"{length['random_mean_plies'][0]:.1f} ({length['rules'][0]}) to {length['random_mean_plies'][-1]:.1f} plies "
        f"on average ({length['rules'][-1]}).",
    ]
    default = engine.Rules().name
    if default in frame["rules"].to_list():
        row = frame.filter(pl.col("rules") == default).row(0, named=True)
        text.append(
            f"RULES.md's own rules ({default}): start value {signed(row['start_value'])}, random first player's score "
            f"{row['random_first_player_score']:.3f}, {row['random_mean_plies']:.1f} plies on average."
        )
    if spreads.height:
        text.append(rule_that_matters(spreads))
    if series.height:
        text.append(
            f"At RULES.md's other rules, from {series['stones_per_pit'][0]} to {series['stones_per_pit'][-1]} stones per pit "
            f"the start value goes {', '.join(signed(value) for value in series['start_value'].to_list())}."
        )
    text.append(
        "Every figure is exact (each rule set solved, and each strategy's games against itself summed over every line of "
        "play): "
        "there is no sampling error and no interval."
    )
    return text


def _done(frame: pl.DataFrame, manifest: dict[str, Any]) -> str:
    """How much of the atlas is done (its rows, of the rule sets its config makes), and what was
    refused for memory."""
    done, total = frame.height, len(atlas_of_manifest(manifest).rule_sets())
    refused = effects_table(manifest.get("refused"))
    listed = f"{len(refused)} refused for memory, listed under Costs"
    if done == total:
        return "the whole atlas"
    if done + len(refused) == total:
        return f"{done} of the atlas's {total} rule sets, every one but the {listed}"
    return f"{done} of the atlas's {total} rule sets done so far" + (f"; {listed}" if refused else "")


def _text(frame: pl.DataFrame, manifest: dict[str, Any]) -> list[str]:
    versions = effects_table(manifest.get("versions"))
    return [
        f"Atlas **{manifest.get('atlas')}**: {_done(frame, manifest)}, engine version {versions.get('engine', '?')}. "
        "The start value is "
        "South's final total less North's under perfect play: above 0 the first player wins, 0 is fair, below 0 the "
        "second wins. The first player's score counts a win as 1 and a draw as 1/2. A rule set's name spells out every "
        "field that differs from RULES.md (RULES.md: Rule-set names); tables/atlas.csv has every figure of every rule set."
    ]


def _maps_section(block: pl.DataFrame, layout: MapLayout, outlined: str | None) -> Section:
    """The maps of the grid; ``outlined`` is the rule set whose cell they outline, if any."""
    stones = block["stones_per_pit"].unique().to_list()
    fixed = f" at {stones[0]} stones per pit" if len(stones) == 1 else ""
    own = "RULES.md's own rules" if outlined == engine.Rules().name else "RULES.md's rules at this stone count"
    words = [
        f"The grid{fixed}, {plural(block.height, 'rule set')}: rows are the combinations of "
        f"{listed([FIELD_WORDS[field] for field in layout.row_fields]) or 'nothing'}, columns those of "
        f"{listed([FIELD_WORDS[field] for field in layout.column_fields]) or 'nothing'}; other fields are RULES.md's. "
        "The key under each map says what its labels mean. "
        + (f"The outlined cell is {outlined}, {own}. " if outlined else "")
        + "A grey cell is a rule set not (yet) in the atlas. The start value and the score are coloured about the fair "
        "value (0 stones, 1/2), the length from shortest to longest."
    ]
    figures = [(f"atlas_map_{column}", f"{words_.capitalize()}, per rule set (exact).") for column, words_, _ in MAPPED]
    return Section("Across the grid", words, figures=figures)


def _stones_section(series: pl.DataFrame) -> Section:
    rows = [
        [
            str(row["stones_per_pit"]),
            row["rules"],
            signed(row["start_value"]),
            f"{row['random_first_player_score']:.6f}",
            f"{row['random_mean_plies']:.2f}",
            f"{row['perfect_mean_plies']:.2f}",
            "—" if row["remoteness"] is None else str(row["remoteness"]),
        ]
        for row in series.iter_rows(named=True)
    ]
    header = [
        "stones per pit",
        "rules",
        "start value",
        "first player (random)",
        "mean plies (random)",
        "mean plies (perfect)",
        "remoteness",
    ]
    return Section(
        "Stones per pit",
        ["The number of stones in each pit at the start, every other rule RULES.md's."],
        [Table("The stones series (exact)", header, rows, "stones")],
        [("atlas_stones", "Start value, random first player's score and mean lengths against the stones per pit (exact).")],
    )


def _outcomes_section(frame: pl.DataFrame) -> Section:
    second = int((frame["start_value"] < 0).sum())
    text = [
        *verdict_words(frame),
        f"The rule sets that are fair under perfect play, and those the first player wins; in the other {second} the second "
        "player wins. Best first moves are South's pits (0, 1, 2) that keep the start value.",
    ]
    tables = [verdict_table(frame)]
    for caption, table, name in (
        ("Fair rule sets (start value 0)", fair_rule_sets(frame), "fair"),
        ("Rule sets the first player wins", first_player_wins(frame), "first_player_wins"),
    ):
        if table.height:
            tables.append(Table(caption, _key_header(), _key_rows(table), name))
        else:
            text.append(f"{caption}: none.")
    return Section("Who wins under perfect play, and what decides it", text, tables)


def _number(value: float | None, form: str) -> str:
    return "—" if value is None else form.format(value)


def _effects_section(block: pl.DataFrame, effects: pl.DataFrame, spreads: pl.DataFrame) -> Section:
    text = [
        f"For each rule field that varies, the mean of each figure over the rule sets with each of its values (over the "
        f"{plural(block.height, 'rule set')} of the grid); a field's effect is the spread of those means, largest less "
        "smallest. These are exact averages over the grid, not sampled estimates, and not a model: where fields interact, "
        "a field's effect depends on the values of the others. Only the rule sets whose every value of the field is in "
        "the grid with the other fields alike count, so that an unfinished grid compares like with like (on the whole "
        "grid that is all of them); a field with no such set yet has no effect (—).",
        *changes_words(spreads),
    ]
    effect_rows = [
        [
            FIELD_WORDS[row["field"]],
            row["values"],
            str(row["blocks"]),
            _number(row["effect_start_value"], "{:.3f}"),
            "—" if row["blocks"] == 0 else f"{row['changed_start_value']} ({row['share_changed_start_value']:.0%})",
            _number(row["effect_random_first_player_score"], "{:.4f}"),
            _number(row["effect_random_mean_plies"], "{:.2f}"),
        ]
        for row in spreads.iter_rows(named=True)
    ]
    mean_rows = [
        [
            FIELD_WORDS[row["field"]],
            row["value"],
            str(row["rule_sets"]),
            "—" if row["mean_start_value"] is None else signed(row["mean_start_value"], "{:+.3f}"),
            _number(row["mean_random_first_player_score"], "{:.4f}"),
            _number(row["mean_random_mean_plies"], "{:.2f}"),
        ]
        for row in effects.iter_rows(named=True)
    ]
    return Section(
        "Which rule matters most",
        text,
        [
            Table(
                "Each field's effect: the spread of its values' means, and the groups in which it changes the start value",
                [
                    "field",
                    "values",
                    "groups",
                    "start value: spread of means",
                    "start value: groups changed",
                    "first player (random): spread",
                    "mean plies (random): spread",
                ],
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
                "Each rule field's effect, exact over the grid: the spread of its values' mean start values, the share "
                "of its groups (rule sets alike in every other field) in which changing it alone changes the start "
                "value, and the spread of the random first player's mean score. A spread of 0 beside changes says "
                "that they cancel, not that there are none.",
            )
        ],
    )


def _tradeoff_section(frame: pl.DataFrame, reference: str | None) -> Section:
    mark = f" The ringed and named rule set is {reference}." if reference else ""
    text = [
        "Fairness, length and how often the feeding and grand-slam rules change a game, between random players: the "
        "nearer a rule set lies to the bottom, the nearer 1/2 the first player's score; colour is the probability that a "
        "feed is forced (left) or a grand slam is banned (right) at least once in a game. Who wins under perfect play is "
        f"in the section on it above.{mark}"
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
    refused = effects_table(manifest.get("refused"))
    text = [f"Refused for memory ({len(refused)}): " + "; ".join(map(str, refused.values()))] if refused else []
    if slowest is not None:
        part, seconds, share = slowest
        text.append(
            f"{float(costs['seconds'].fill_null(0).sum()):,.0f} s of analysis in all; the part that took longest is {part}: "
            f"{seconds:,.0f} s, {100 * share:.0f}% of the whole."
        )
    text.append(
        "Peak memory is the most one task held that the system cannot take back where its measure says unshared: "
        "resident memory less the pages shared with files, the solver's log among them, which the system writes out "
        "when memory runs short. Older records do not say; most of them are the largest resident size, the log with it."
    )
    rows = [
        [
            row["rules"],
            _seconds(row["seconds"]),
            *(_seconds(row[f"seconds_{part}"]) for part in PARTS),
            "n/a" if row["peak_gb"] is None else f"{row['peak_gb']:.2f}",
            row["peak_measure"] or "not said",
            row["host"] or "n/a",
        ]
        for row in costs.iter_rows(named=True)
    ]
    headers = ["rules", "seconds", *PARTS, "peak GB", "peak measure", "host"]
    return Section(
        "Costs",
        text,
        [Table("Seconds per part and peak memory per rule set", headers, rows, "costs")],
    )


def _every_rule_set_section(frame: pl.DataFrame) -> Section:
    table = Table("Every rule set's key figures (exact)", _key_header(), _key_rows(flat_atlas(frame)), "atlas")
    return Section("Every rule set", ["All columns are in tables/atlas.csv."], [table], appendix=True)


def _key_header() -> list[str]:
    return [
        "rules",
        "start value",
        "decided by",
        "remoteness",
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
            signed(row["start_value"]),
            row["decided_by"] or "not yet",
            "—" if row["remoteness"] is None else str(row["remoteness"]),
            row["best_first_moves"],
            f"{row['random_first_player_score']:.4f}",
            f"{row['greedy_first_player_score']:.4f}",
            f"{row['alphabeta4_first_player_score']:.4f}",
            f"{row['random_mean_plies']:.2f}",
            f"{row['perfect_mean_plies']:.2f}",
        ]
        for row in table.iter_rows(named=True)
    ]


def _seconds(value: float | None) -> str:
    return "n/a" if value is None else f"{value:,.1f}"
