"""How a table strategy turns one 32-bit draw into a move (engine.players.choice), against the rules of
its docstring worked out independently: the pick ``(draw * n) >> 32`` of engine.game.rng, exact
fractions for epsilon, IEEE softmax weights for the temperature.
"""

from __future__ import annotations

import itertools
import math
from fractions import Fraction

import numpy as np
import pytest

from engine.game.rng import choice_index
from engine.players.choice import (
    ARGMAX,
    GAP_MAX,
    NO_CUTS,
    NO_MOVE,
    SCALE,
    Epsilon,
    Softmax,
    key_of,
    pack_keys,
    pit_of,
    probabilities,
)

PITS = (0, 1, 2)
LEGAL_SETS = [pits for size in (1, 2, 3) for pits in itertools.combinations(PITS, size)]
GAPS = (0, 1, 2, 7, 128, 255, 300)  # 300 is clipped to 255 in the key


def widths(cuts: tuple[int, int, int]) -> tuple[int, int, int]:
    c1, c2, c3 = cuts
    return c1, c2 - c1, c3 - c2


def every_key() -> list[tuple[int, dict[int, int]]]:
    """(key, gap of each legal pit) for every legal set and every assignment of GAPS with a best move."""
    found = []
    for legal in LEGAL_SETS:
        for gaps in itertools.product(GAPS, repeat=len(legal)):
            if min(gaps) == 0:
                found.append(
                    (key_of({pit: -gap for pit, gap in zip(legal, gaps, strict=True)}), dict(zip(legal, gaps, strict=True)))
                )
    return found


KEYS = every_key()
RULES = [
    ARGMAX,
    Epsilon(0.0),
    Epsilon(0.1),
    Epsilon(0.25),
    Epsilon(1 / 3),
    Epsilon(1.0),
    Softmax(0.3),
    Softmax(1.0),
    Softmax(1e9),
]


def boundary_draws(cuts: tuple[int, int, int], n: int) -> list[int]:
    """0, 2**32 - 1, every cut and every ceil(k * 2**32 / n), each with its neighbours."""
    edges = {*cuts, *(-(-k * SCALE // n) for k in range(n + 1))}
    return sorted({draw for edge in edges for draw in (edge - 1, edge, edge + 1) if 0 <= draw < SCALE} | {0, SCALE - 1})


# --- the key ------------------------------------------------------------------------------


def test_the_key_holds_the_legal_pits_and_the_clipped_gaps():
    key = key_of({0: 5, 2: -400})
    assert key & 7 == 0b101
    assert (key >> 3) & GAP_MAX == 0 and (key >> 11) & GAP_MAX == 0 and (key >> 19) & GAP_MAX == GAP_MAX
    assert key_of({}) == 0
    assert key_of({1: 3}) == 0b010  # one legal move: its gap is 0


def test_pack_keys_is_key_of_row_by_row():
    rng = np.random.default_rng(1)
    legal = rng.random((5000, 3)) < 0.6
    q = rng.integers(-400, 400, (5000, 3))
    packed = pack_keys(legal, q).tolist()
    for row in range(5000):
        expected = key_of({pit: int(q[row, pit]) for pit in PITS if legal[row, pit]})
        assert packed[row] == expected, (legal[row], q[row])


# --- argmax -------------------------------------------------------------------------------


@pytest.mark.parametrize("legal", LEGAL_SETS, ids=str)
def test_argmax_picks_the_kth_best_move_as_the_rng_does_at_every_boundary(legal):
    for size in range(1, len(legal) + 1):
        for best in itertools.combinations(legal, size):
            cuts = ARGMAX.cuts(key_of({pit: 0 if pit in best else -1 for pit in legal}))
            n = len(best)
            for draw in boundary_draws(cuts, n):
                assert pit_of(cuts, draw) == best[(draw * n) >> 32] == best[choice_index(draw, n)], (legal, best, draw)


def test_argmax_widths_are_those_of_the_uniform_pick():
    for n in (1, 2, 3):
        cuts = ARGMAX.cuts(key_of(dict.fromkeys(PITS[:n], 0)))
        starts = [-(-k * SCALE // n) for k in range(n + 1)]
        assert list(widths(cuts))[:n] == [starts[k + 1] - starts[k] for k in range(n)]
        assert cuts[2] == SCALE


# --- epsilon --------------------------------------------------------------------------------


def test_epsilon_zero_is_argmax_and_epsilon_one_is_uniform_among_the_legal_moves():
    for key, gaps in KEYS:
        assert Epsilon(0.0).cuts(key) == ARGMAX.cuts(key), gaps
        assert Epsilon(0).cuts(key) == ARGMAX.cuts(key), gaps
        legal = sorted(gaps)
        assert Epsilon(1.0).cuts(key) == ARGMAX.cuts(key_of(dict.fromkeys(legal, 0))), gaps
        uniform = Epsilon(1.0).cuts(key)
        for draw in boundary_draws(uniform, len(legal)):
            assert pit_of(uniform, draw) == legal[(draw * len(legal)) >> 32], (gaps, draw)


@pytest.mark.parametrize("epsilon", [0.1, 0.25, 1 / 3, 0.5, 0.9, 2**-33])
def test_epsilon_cuts_are_the_exact_probabilities_rounded_up(epsilon):
    exact = Fraction(epsilon)  # the float's own binary value, as engine.players.choice documents
    for key, gaps in KEYS:
        legal = sorted(gaps)
        best = [pit for pit in legal if gaps[pit] == 0]
        chance = {pit: exact / len(legal) + ((1 - exact) / len(best) if pit in best else 0) for pit in PITS if pit in gaps}
        below = [sum((chance.get(pit, Fraction(0)) for pit in PITS if pit < bound), Fraction(0)) for bound in (1, 2)]
        cuts = Epsilon(epsilon).cuts(key)
        assert cuts == (math.ceil(below[0] * SCALE), math.ceil(below[1] * SCALE), SCALE), (epsilon, gaps)
        for pit, width in zip(PITS, widths(cuts), strict=True):
            assert abs(Fraction(width, SCALE) - chance.get(pit, 0)) < Fraction(1, SCALE), (epsilon, gaps, pit)


# --- softmax --------------------------------------------------------------------------------


@pytest.mark.parametrize("temperature", [0.3, 1.0, 4.0, 1e9])
def test_softmax_widths_sum_to_every_draw_and_follow_the_weights(temperature):
    for key, gaps in KEYS:
        cuts = Softmax(temperature).cuts(key)
        got = widths(cuts)
        assert cuts[2] == SCALE and sum(got) == SCALE, (temperature, gaps)
        clipped = {pit: min(gap, GAP_MAX) for pit, gap in gaps.items()}
        weights = {pit: math.exp(-gap / temperature) for pit, gap in clipped.items()}
        total = sum(weights.values())
        for pit in PITS:
            expected = weights.get(pit, 0.0) / total * SCALE
            assert abs(got[pit] - expected) <= 2, (temperature, gaps, pit)  # two roundings up, a few ulps
        for a, b in itertools.permutations(clipped, 2):
            if clipped[a] < clipped[b]:  # a smaller gap never gets a narrower interval (ties of weight: +-1)
                assert got[a] >= got[b] - 1, (temperature, gaps)
                if weights[a] - weights[b] > 4 / SCALE * total:
                    assert got[a] > got[b], (temperature, gaps)


def test_softmax_at_a_small_temperature_is_argmax_and_at_a_huge_one_near_uniform():
    for key, gaps in KEYS:
        legal = sorted(gaps)
        cold = widths(Softmax(0.01).cuts(key))
        best = [pit for pit in legal if gaps[pit] == 0]
        for pit in PITS:
            # exp(-100) and less: a worse move keeps at most the one draw that rounding up gives it
            assert abs(cold[pit] - (SCALE / len(best) if pit in best else 0)) <= 2, gaps
        hot = widths(Softmax(1e12).cuts(key))
        for pit in PITS:
            assert abs(hot[pit] - (SCALE / len(legal) if pit in gaps else 0)) <= 2, gaps


# --- every rule -------------------------------------------------------------------------------


@pytest.mark.parametrize("rule", RULES, ids=lambda rule: rule.name)
def test_an_illegal_pit_never_gets_a_draw(rule):
    for key, gaps in KEYS:
        cuts = rule.cuts(key)
        assert 0 <= cuts[0] <= cuts[1] <= cuts[2] == SCALE, (rule.name, gaps)
        for pit, width in zip(PITS, widths(cuts), strict=True):
            if pit not in gaps:
                assert width == 0, (rule.name, gaps, pit)
        assert sum(probabilities(cuts)) == 1
        for draw in boundary_draws(cuts, 3):
            assert pit_of(cuts, draw) in gaps, (rule.name, gaps, draw)


@pytest.mark.parametrize("rule", RULES, ids=lambda rule: rule.name)
def test_no_legal_move_is_no_cuts_and_no_move(rule):
    assert rule.cuts(0) == NO_CUTS
    for draw in (0, 1, SCALE // 2, SCALE - 1):
        assert pit_of(NO_CUTS, draw) == NO_MOVE
    assert probabilities(NO_CUTS) == (0, 0, 0)
