"""The atlas report's field effects, maps, trade-off figure and Pareto table on a hand-made grid
of four rule sets (sowing into the origin pit or not, feeding on or off), where turning feeding
off changes the start value in both groups, one way in one and the other way in the other: its
values' means are equal, and the report must not read that as no effect."""

from __future__ import annotations

import matplotlib.colors
import numpy as np
import polars as pl
import pytest
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.patches import Rectangle

import engine
from pipeline.analysis.fairness import RULE_SET_PARETO_COLUMNS
from pipeline.atlas.balancing import FRONT_WORDS, front_section
from pipeline.atlas.effects import changed_groups, changes_words, field_effects, main_effects, map_grid, map_layout
from pipeline.atlas.maps import effects_figure, map_figure, map_key, reference_cell, tradeoff_figure

FIELDS = ["sow_origin", "feeding"]
# (sow_origin, feeding): start value. Feeding off: -2 -> 0 with the origin on, +2 -> 0 with it off.
VALUES = {(True, True): -2, (True, False): 0, (False, True): 2, (False, False): 0}


@pytest.fixture(scope="module")
def block() -> pl.DataFrame:
    rows = [
        {
            "rules": engine.Rules(sow_origin=origin, feeding=feeding).name,
            "stones_per_pit": 7,
            "sow_origin": origin,
            "feeding": feeding,
            "start_value": value,
            "random_first_player_score": 0.5 + value / 100,
            "random_mean_plies": 20.0 + 10 * place,
            "random_feeding_forced_fires": 0.1 * feeding,
            "random_grand_slam_blocked_fires": 0.3,
        }
        for place, ((origin, feeding), value) in enumerate(VALUES.items())
    ]
    return pl.DataFrame(rows)


def texts(figure: Figure) -> list[str]:
    return [text.get_text() for text in figure.texts] + [text.get_text() for axes in figure.axes for text in axes.texts]


def test_changed_groups_count_where_changing_a_field_alone_changes_the_start_value(block: pl.DataFrame) -> None:
    changes = {row["field"]: row for row in changed_groups(block, FIELDS).iter_rows(named=True)}
    # feeding: both groups (origin on, origin off) change; the origin: only the group with feeding on (-2 v +2)
    expected = {
        field: sum(len({value for key, value in VALUES.items() if key[1 - place] == kept}) > 1 for kept in (True, False))
        for place, field in enumerate(FIELDS)
    }
    assert {field: row["changed_start_value"] for field, row in changes.items()} == expected == {"sow_origin": 1, "feeding": 2}
    assert {field: row["groups"] for field, row in changes.items()} == {"sow_origin": 2, "feeding": 2}


def test_a_field_whose_means_are_equal_but_changes_the_value_carries_both_figures(block: pl.DataFrame) -> None:
    spreads = field_effects(main_effects(block, FIELDS), changed_groups(block, FIELDS))
    feeding = spreads.filter(pl.col("field") == "feeding").row(0, named=True)
    assert feeding["effect_start_value"] == 0
    assert (feeding["changed_start_value"], feeding["blocks"], feeding["share_changed_start_value"]) == (2, 2, 1.0)
    origin = spreads.filter(pl.col("field") == "sow_origin").row(0, named=True)
    assert (origin["effect_start_value"], origin["share_changed_start_value"]) == (2.0, 0.5)
    words = " ".join(changes_words(spreads))
    assert "2 of 2 for compulsory feeding" in words
    assert "Compulsory feeding changes the start value in 2 of its 2 groups though its values' mean start values" in words
    assert "First stone back into the origin pit changes" not in words  # its means differ: no caveat


def test_the_effects_chart_shows_the_share_changed_beside_a_spread_of_zero(block: pl.DataFrame) -> None:
    spreads = field_effects(main_effects(block, FIELDS), changed_groups(block, FIELDS))
    figure = effects_figure(spreads)
    spread_axes, share_axes, _ = figure.axes
    assert "0: changes cancel" in [text.get_text() for text in spread_axes.texts]
    assert {"2 of 2", "1 of 2"} <= {text.get_text() for text in share_axes.texts}
    widths = dict(zip(spreads["field"], [bar.get_width() for bar in share_axes.patches], strict=True))
    assert widths == {"feeding": 100.0, "sow_origin": 50.0}


def test_the_maps_outline_rules_md_own_cell_and_key_their_labels(block: pl.DataFrame) -> None:
    layout = map_layout(block, FIELDS)
    figure = map_figure(block, layout, "start_value", "start value (stones)", "{:+.0f}", reference=engine.Rules().name)
    down, across = reference_cell(block, layout, engine.Rules().name) or (-1, -1)
    assert map_grid(block, layout, "start_value")[down, across] == VALUES[(True, True)]
    outlines = [
        patch
        for patch in figure.axes[0].patches
        if isinstance(patch, Rectangle) and matplotlib.colors.same_color(patch.get_edgecolor(), "black")
    ]
    assert outlines and all(
        np.allclose((patch.get_x() + patch.get_width() / 2, patch.get_y() + patch.get_height() / 2), (across, down))
        for patch in outlines
    )
    words = " ".join(texts(figure))
    assert "outlined: RULES.md's rules (modiar)" in words
    assert sorted(map_key(layout)) == [
        "feeding on / off: compulsory feeding (on) or not (off)",
        "origin on / off: first stone back into the origin pit (on) or not (off)",
    ]
    assert all(entry in words for entry in map_key(layout))
    unmarked = map_figure(block, layout, "start_value", "start value (stones)", "{:+.0f}", reference="modiar-stones5")
    assert not [patch for patch in unmarked.axes[0].patches if isinstance(patch, Rectangle)]
    assert "outlined" not in " ".join(texts(unmarked))


def test_the_tradeoff_figures_label_is_clear_of_its_ring(block: pl.DataFrame) -> None:
    """The reference's name overlapped the ring around its point."""
    figure = tradeoff_figure(block, engine.Rules().name)
    canvas = FigureCanvasAgg(figure)
    canvas.draw()
    renderer = canvas.get_renderer()
    for axes in figure.axes[:2]:
        (label,) = [text for text in axes.texts if text.get_text() == engine.Rules().name]
        ring = axes.collections[-1]
        (centre,) = axes.transData.transform(ring.get_offsets())
        radius = (np.sqrt(ring.get_sizes()[0]) / 2 + ring.get_linewidths()[0]) * figure.dpi / 72
        box = label.get_window_extent(renderer)
        nearest = np.clip(centre, [box.x0, box.y0], [box.x1, box.y1])
        assert np.hypot(*(nearest - centre)) > radius


def test_the_pareto_table_names_its_columns_in_words_and_prints_counts_whole() -> None:
    assert set(FRONT_WORDS) == set(RULE_SET_PARETO_COLUMNS)
    front = pl.DataFrame(
        {
            "rules": ["modiar-forfeitoff", "modiar-forfeitoff-feedingoff"],
            "perfect_mean_plies": [33.75, 32.625],
            "random_feeding_forced_fires": [0.0309312, 0.0],
            "random_grand_slam_blocked_fires": [0.384321, 0.383333],
            "never_settled": [996_500, 3_327],
            "pareto": [True, False],
        }
    )
    section = front_section(front, "modiar")
    (table,) = section.tables
    assert [row[4] for row in table.rows] == ["996,500", "3,327"]
    assert table.rows[0][1:4] == ["33.75", "0.0309", "0.3843"]
    printed = " ".join([*section.text, *table.header, *(cell for row in table.rows for cell in row)])
    assert "e+" not in printed and not [column for column in RULE_SET_PARETO_COLUMNS if column in printed]
