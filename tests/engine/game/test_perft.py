"""perft as ground truth: the counts in tests/data/perft.json, made by tests/make_perft_data.py
with both the engine and the plain reference, checked against the engine and the reference.

engine.perft_counts counts every depth in one pass; the deepest stored depths still take
tens of seconds, so the full comparison is marked ``slow`` (deselect with ``-m "not slow"``).
"""

from __future__ import annotations

import json

import pytest
import reference
from locations import DATA
from polling import deadline

import engine
from engine import Rules

PERFT: dict[str, list[int]] = json.loads((DATA / "perft.json").read_text())["perft"]

# RULES.md's default rules, depths 1 to 6: the counts docs/index.md and docs/api.md give.
DEFAULT_PERFT = [3, 9, 26, 72, 187, 522]

# Deepest depth engine.perft checks in the quick run, per rule set (under a second each).
ENGINE_FAST_DEPTH = {"modiar": 12, "modiar-originoff": 12, "modiar-stones5": 15, "modiar-stones4": 30}
ENGINE_FAST_DEPTH_OTHERWISE = 12
REFERENCE_DEPTH = 10  # the reference checks its own count for depths up to this


def test_default_rules_give_the_documented_perft() -> None:
    assert [engine.perft(depth) for depth in range(1, 7)] == DEFAULT_PERFT
    assert [reference.perft(depth, Rules()) for depth in range(1, 7)] == DEFAULT_PERFT
    assert PERFT[Rules().name][1:7] == DEFAULT_PERFT


def test_data_covers_the_rule_sets_it_should() -> None:
    assert {"modiar", "modiar-stones3", "modiar-stones4", "modiar-stones5", "modiar-originoff"} <= set(PERFT)
    assert len(PERFT["modiar"]) > 20, "the default rules are stored to depth 20 or more"
    for name, counts in PERFT.items():
        assert Rules.from_name(name).name == name
        assert counts[0] == 1, "perft(0) is the empty sequence"


@pytest.mark.parametrize("name", sorted(PERFT))
def test_engine_perft_matches_stored_at_shallow_depths(name: str) -> None:
    depth = min(ENGINE_FAST_DEPTH.get(name, ENGINE_FAST_DEPTH_OTHERWISE), len(PERFT[name]) - 1)
    assert engine.perft_counts(depth, Rules.from_name(name)) == PERFT[name][: depth + 1]
    assert engine.perft(depth, Rules.from_name(name)) == PERFT[name][depth]


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(PERFT))
def test_engine_perft_matches_stored_at_every_depth(name: str) -> None:
    assert engine.perft_counts(len(PERFT[name]) - 1, Rules.from_name(name)) == PERFT[name]


@pytest.mark.parametrize("name", sorted(PERFT))
def test_reference_perft_matches_stored(name: str) -> None:
    depth = min(REFERENCE_DEPTH, len(PERFT[name]) - 1)
    assert reference.perft_counts(depth, Rules.from_name(name)) == PERFT[name][: depth + 1]


def test_perft_beyond_the_ply_cap_is_zero() -> None:
    rules = Rules(ply_cap=3)
    assert [engine.perft(depth, rules) for depth in range(6)] == [1, 3, 9, 26, 0, 0]
    assert engine.perft_counts(5, rules) == [1, 3, 9, 26, 0, 0]
    assert reference.perft_counts(5, rules) == [1, 3, 9, 26, 0, 0]


def test_perft_far_past_the_ply_cap_is_zero_at_once() -> None:
    """perft(10**6) walked a million plies, the first 400 of them whole levels, to say 0."""
    with deadline(5):
        assert engine.perft(10**6) == 0
        assert engine.perft(10**6, Rules(stones_per_pit=3, ply_cap=20)) == 0
        small = Rules(stones_per_pit=3, ply_cap=4)
        assert engine.perft_counts(10**5, small) == [*reference.perft_counts(4, small), *[0] * (10**5 - 4)]
