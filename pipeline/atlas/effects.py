"""The atlas's figures from its rows: the frame of its rule sets, a grid of them laid out as a 2-D map
(MapLayout), the main effect of each rule field, the fair and first-player-win lists, the
stones series and the costs of each part. Every number is exact (pipeline.atlas.analyse): these
are averages and selections, not a model.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl

import engine
from engine.game import RULE_FIELD, RULE_FIELDS
from pipeline.atlas.config import FIELDS
from pipeline.atlas.run import read_atlas
from pipeline.report.prose import listed, plural

# The figures the maps, the main effects and the stones series show: (column, words, number format).
MAPPED = (
    ("start_value", "start value under perfect play (stones)", "{:+.0f}"),
    ("random_first_player_score", "first player's score, random v random", "{:.3f}"),
    ("random_mean_plies", "mean length, random v random (plies)", "{:.0f}"),
)
CENTRES = {"start_value": 0.0, "random_first_player_score": 0.5}  # diverging maps centred here; others sequential
FIELD_WORDS = {field.name: field.words for field in RULE_FIELDS}  # "compulsory feeding"
PARTS = ("tables", "size", "solve", "perfect", "verdict", "random", "greedy", "alphabeta4", "exploitability")
LABEL_SIZE = 6.5  # points: the labels of a map's rows and columns
MAX_COLUMNS = 8  # a map's columns: beyond this its labels no longer fit the page's width
ASPECT = 1.5  # a map's columns per row, ideally: a page is wider than it is tall
NO_EFFECT = 1e-9  # an effect below this is none: the means are exact, so equal ones differ by rounding alone
KEY_COLUMNS = (
    "rules",
    "start_value",
    "decided_by",
    "remoteness",
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
    for grid in effects_table(effects_table(manifest.get("config")).get("grids")).values():
        for field, values in effects_table(grid).items():
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
    of each mapped figure over them (exact means over the grid, not estimates), counting only the
    rule sets whose every value of the field is in the grid with the other fields alike
    (complete_blocks): on a whole grid that is every rule set; on a grid still being computed it
    keeps a field's comparison from being one of other fields (rows of a null mean when no
    block is complete yet)."""
    rows = []
    for field in fields:
        values = field_values(block, field, order)
        complete = complete_blocks(block, field, [other for other in fields if other != field], len(values))
        for value in values:
            part = complete.filter(pl.col(field) == value)
            row: dict[str, Any] = {"field": field, "value": value_label(field, value), "rule_sets": part.height}
            row |= {f"mean_{column}": part[column].cast(pl.Float64).mean() for column, _, _ in MAPPED}
            rows.append(row)
    schema = {"field": pl.String, "value": pl.String, "rule_sets": pl.Int64} | {f"mean_{c}": pl.Float64 for c, _, _ in MAPPED}
    return pl.DataFrame(rows, schema=schema, orient="row")


def complete_blocks(block: pl.DataFrame, field: str, others: Sequence[str], values: int) -> pl.DataFrame:
    """The rule sets of ``block`` whose block, the rule sets with the same values of ``others``,
    holds all ``values`` values of ``field``, in ``block``'s order."""
    if not others:
        return block if block[field].n_unique() == values else block.clear()
    return block.filter(pl.col(field).n_unique().over(others) == values)


def changed_groups(block: pl.DataFrame, fields: Sequence[str], order: dict[str, list[Any]] | None = None) -> pl.DataFrame:
    """For each field, its groups (the rule sets alike in every other field, one of each of its
    values: complete_blocks) and how many of them hold more than one start value: how often
    changing the field alone changes the value under perfect play. A spread of means
    (field_effects) hides changes that cancel; this count does not."""
    rows = []
    for field in fields:
        others = [other for other in fields if other != field]
        complete = complete_blocks(block, field, others, len(field_values(block, field, order)))
        values = pl.col("start_value").n_unique().alias("values")
        groups = complete.group_by(others).agg(values) if others else complete.select(values).filter(pl.col("values") > 0)
        rows.append({"field": field, "groups": groups.height, "changed_start_value": int((groups["values"] > 1).sum())})
    return pl.DataFrame(rows, schema={"field": pl.String, "groups": pl.Int64, "changed_start_value": pl.Int64}, orient="row")


def field_effects(effects: pl.DataFrame, changes: pl.DataFrame) -> pl.DataFrame:
    """Each field's effect on each mapped figure: the spread (largest less smallest) of its values'
    means (main_effects), the number of complete blocks they come from, and, from ``changes``
    (changed_groups), in how many of those blocks and what share of them the start value
    changes with the field; sorted by the effect on the start value, then on the random first
    player's score, a field with no complete block (a null effect) last."""
    spreads = [
        (pl.col(f"mean_{column}").max() - pl.col(f"mean_{column}").min()).alias(f"effect_{column}") for column, _, _ in MAPPED
    ]
    # A complete block holds one rule set of each value: a value's rule sets are its blocks.
    blocks = pl.col("rule_sets").min().alias("blocks")
    table = effects.group_by("field", maintain_order=True).agg(pl.col("value").str.join(", ").alias("values"), blocks, *spreads)
    changed = changes.select("field", "changed_start_value")
    share = (pl.col("changed_start_value") / pl.when(pl.col("blocks") > 0).then(pl.col("blocks"))).alias(
        "share_changed_start_value"
    )
    table = table.join(changed, on="field", how="left", maintain_order="left").with_columns(share)
    first = ["field", "values", "blocks", "effect_start_value", "changed_start_value", "share_changed_start_value"]
    table = table.select(*first, pl.exclude(first))
    return table.sort(
        ["effect_start_value", "effect_random_first_player_score", "field"], descending=[True, True, False], nulls_last=True
    )


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
    """Per rule set done, its seconds (in all and per part of pipeline.atlas.analyse), peak memory (GB),
    what that peak counts (``peak_measure``: pipeline.atlas.rows.PEAK_MEASURE, or null where an
    older record does not say) and host, as the manifest gives them (null where a rule set's costs
    were not kept)."""
    rows = []
    for name in frame["rules"].to_list():
        costs = effects_table(effects_table(manifest.get("costs")).get(name))
        seconds = effects_table(costs.get("seconds"))
        peak = _amount(costs.get("peak_bytes"))
        row: dict[str, Any] = {"rules": name, "seconds": _amount(seconds.get("total"))}
        row |= {f"seconds_{part}": _amount(seconds.get(part)) for part in PARTS}
        host, measure = costs.get("host"), costs.get("peak_measure")
        row |= {"peak_gb": None if peak is None else peak / 2**30, "peak_measure": measure if isinstance(measure, str) else None}
        row |= {"host": host if isinstance(host, str) else None}
        rows.append(row)
    schema = {"rules": pl.String, "seconds": pl.Float64} | {f"seconds_{part}": pl.Float64 for part in PARTS}
    return pl.DataFrame(rows, schema=schema | {"peak_gb": pl.Float64, "peak_measure": pl.String, "host": pl.String}, orient="row")


def slowest_part(costs: pl.DataFrame) -> tuple[str, float, float] | None:
    """The part of the analysis that took longest over the whole atlas: its name, its seconds and
    its share of all the seconds; None without costs."""
    totals = {part: float(costs[f"seconds_{part}"].fill_null(0).sum()) for part in PARTS}
    whole = float(costs["seconds"].fill_null(0).sum())
    part = max(totals, key=lambda name: totals[name])
    return (part, totals[part], totals[part] / whole) if whole > 0 else None


def effects_table(value: object) -> dict[str, Any]:
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


def rule_that_matters(spreads: pl.DataFrame) -> str:
    """The headline on the field effects (field_effects, largest first): the field that moves the
    start value most, and the one that moves random play's first-player score most where that is
    another; or that no field moves them, when every effect is zero (a bold "rule that matters
    most" with an effect of 0.00 stones would be a false answer)."""
    top = spreads.row(0, named=True)
    by_score = spreads.sort("effect_random_first_player_score", descending=True).row(0, named=True)
    moves_value = abs(top["effect_start_value"]) >= NO_EFFECT
    moves_score = abs(by_score["effect_random_first_player_score"]) >= NO_EFFECT
    caveat = (
        " These are averages over the grid, each field's over the rule sets that differ in it alone (a field's effect may "
        "depend on the others), exact, not sampled."
    )
    score = (
        f"for random players it is {FIELD_WORDS[by_score['field']]} "
        f"(the first player's score differs by {by_score['effect_random_first_player_score']:.3f})"
    )
    if not moves_value:
        fields = listed([FIELD_WORDS[field] for field in spreads["field"].to_list()])
        rest = f"; {score}." if moves_score else ", nor the random first player's score."
        return f"**No rule field the grid varies ({fields}) changes the start value under perfect play**{rest}{caveat}"
    return (
        f"**The rule that matters most to the first player's advantage is {FIELD_WORDS[top['field']]}**: over the grid, "
        f"the mean start value of its values ({top['values']}) differs by {top['effect_start_value']:.2f} stones "
        f"(from {plural(top['blocks'], 'group')} of rule sets alike in every other field)"
        + ("." if by_score["field"] == top["field"] or not moves_score else f"; {score}.")
        + caveat
    )


def changes_words(spreads: pl.DataFrame) -> list[str]:
    """How often changing each field alone changes the start value, which a spread of means hides
    where changes cancel; and the fields whose means are equal though they change it."""
    counted = spreads.filter(pl.col("blocks") > 0)
    if counted.height == 0:
        return []
    counts = [
        f"{row['changed_start_value']} of {row['blocks']} for {FIELD_WORDS[row['field']]}"
        for row in counted.iter_rows(named=True)
    ]
    words = [
        "A spread of means can hide changes that cancel, so the table also counts the groups (rule sets alike in every "
        f"other field) in which changing the field alone changes the start value: {listed(counts)}."
    ]
    hidden = counted.filter((pl.col("effect_start_value") < NO_EFFECT) & (pl.col("changed_start_value") > 0))
    for row in hidden.iter_rows(named=True):
        field = FIELD_WORDS[row["field"]]
        words.append(
            f"{field[0].upper()}{field[1:]} changes the start value in {row['changed_start_value']} of its {row['blocks']} "
            "groups though its values' mean start values are equal: there its gains and losses cancel, so its spread of 0 "
            "does not mean that it has no effect."
        )
    return words
