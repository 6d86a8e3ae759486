"""The fairness search's report (pipeline.fair.report): what its figures label, on any range of values."""

from __future__ import annotations

import itertools

import pytest

from pipeline.fair.report import MOST_TICKS, pit_name, value_ticks


@pytest.mark.parametrize("low, high", [(-6, 12), (-4, 4), (-40, 30), (-90, 2), (2, 20), (-30, -4), (0, 0)])
def test_the_value_histogram_labels_the_fair_value_and_evenly_spaced_even_values(low, high):
    ticks = value_ticks(low, high)
    assert ticks and low <= ticks[0] and ticks[-1] <= high and len(ticks) <= MOST_TICKS
    assert all(tick % 2 == 0 for tick in ticks) and len({b - a for a, b in itertools.pairwise(ticks)}) <= 1
    if low <= 0 <= high:
        assert 0 in ticks  # the fair value is always labelled
    if (high - low) // 2 + 1 <= MOST_TICKS:
        assert ticks == list(range(low, high + 1, 2))  # every even value while they fit


def test_the_one_stone_figure_names_each_pit_with_its_owner_as_rules_md_does():
    # RULES.md: South owns pits 0, 1 and 2; North pits 3, 4 and 5.
    assert [pit_name(pit) for pit in range(6)] == [
        "South's pit 0",
        "South's pit 1",
        "South's pit 2",
        "North's pit 3",
        "North's pit 4",
        "North's pit 5",
    ]
