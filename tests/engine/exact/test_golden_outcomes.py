"""Today's exact outcomes of the default study's 49 pairings (tests/data/golden_exact.json,
written by tests/make_golden_exact.py with engine version 1): faster exact machinery must give
the same values to 1e-12.

The quick tier checks the file against what is known by hand: the solved game (perfect against
perfect, North wins 22 to 20 every time) and the identities between a law's figures. The slow
tier recomputes the pairings that take seconds (greedy, heuristic, alphabeta(depth=4) and
perfect against one another) and one strong dial against itself; random's and the other
dials' take a minute or more each. Probabilities must agree to 1e-12, expected counts to 1e-13
of themselves.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from make_golden_exact import PATH, SCALARS, STRATEGIES, outcome_values

import engine

TOLERANCE = 1e-12
COUNT_TOLERANCE = 1e-13
QUICK = ("greedy", "heuristic", "alphabeta(depth=4)", "perfect")  # their exact outcomes take seconds


def golden() -> dict[tuple[str, str], dict[str, object]]:
    document = json.loads(Path(PATH).read_text())
    assert document["engine_version"] == engine.ENGINE_VERSION and document["rules"] == engine.Rules().name
    return {(entry["south"], entry["north"]): entry for entry in document["pairings"]}


def test_every_pairing_is_there_and_each_law_adds_up():
    values = golden()
    assert list(values) == [(south, north) for south in STRATEGIES for north in STRATEGIES]
    for (south, north), entry in values.items():
        total = entry["south_win"] + entry["draw"] + entry["north_win"] + entry["unresolved"]
        assert total == pytest.approx(1, abs=1e-9), (south, north)
        assert entry["first_player_score"] == pytest.approx(entry["south_win"] + entry["draw"] / 2, abs=1e-12)
        margin = dict((int(m), p) for m, p in entry["margin"])
        assert sum(p for m, p in margin.items() if m > 0) == pytest.approx(entry["south_win"], abs=1e-9)
        assert margin.get(0, 0.0) == pytest.approx(entry["draw"], abs=1e-9)
        assert entry["event_fires"]["first_move_forfeit"] <= 1 and set(entry["event_fires"]) == set(engine.EVENTS)


def test_perfect_against_perfect_is_the_solved_game():
    """RULES.md's strong solution: North wins 22 to 20 under perfect play, whatever ties are broken to."""
    entry = golden()["perfect", "perfect"]
    assert entry["north_win"] == 1.0 and entry["south_win"] == entry["draw"] == entry["unresolved"] == 0.0
    assert entry["margin"] == [[-2, 1.0]]
    assert engine.solve(engine.Rules(), progress=False).start_value() == -2


@pytest.mark.slow
@pytest.mark.parametrize("south", QUICK)
@pytest.mark.parametrize("north", QUICK)
def test_the_engine_gives_todays_values(south, north):
    expected = golden()[south, north]
    found = outcome_values(engine.exact_outcome(south, north, rules=engine.Rules()))
    for name in SCALARS:
        assert math.isclose(found[name], expected[name], rel_tol=0, abs_tol=TOLERANCE), name
    for event, value in expected["event_fires"].items():
        assert math.isclose(found["event_fires"][event], value, rel_tol=0, abs_tol=TOLERANCE), event
    for event, value in expected["event_mean"].items():
        # An expected count (up to 34 stones captured a game) is a sum of millions of terms, whose
        # rounding depends on their order: to 1e-12 or 1e-13 of itself, whichever is larger.
        assert math.isclose(found["event_mean"][event], value, rel_tol=COUNT_TOLERANCE, abs_tol=TOLERANCE), event
    assert [m for m, _ in found["margin"]] == [m for m, _ in expected["margin"]]
    for (_, value), (_, wanted) in zip(found["margin"], expected["margin"], strict=True):
        assert math.isclose(value, wanted, rel_tol=0, abs_tol=TOLERANCE)


@pytest.mark.slow
def test_a_strong_dial_against_itself_gives_todays_values():
    """perfect(epsilon=0.1) against itself (a few minutes): its games cycle past far_from, so
    its sparse products go on to the cap with the near-cap corrections (engine.exact.graph._Moves.corrections,
    engine.players.near_cap.NearCap) that replaced the merging of children."""
    test_the_engine_gives_todays_values("perfect(epsilon=0.1)", "perfect(epsilon=0.1)")
