"""engine.exact_outcome against a brute force over every game, and against sampled games.

The brute force walks every game of a small rule set move by move through the scalar engine
(engine.game.options), with each move's probability from the scalar strategy's values (the
scalar search's scores, the solution's move values) turned into cuts by engine.players.choice, in
exact fractions. It shares neither the policy tables nor the propagation with exact_outcome.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest

from engine import Rules, pack, play_batch
from engine.exact import outcome as exact
from engine.exact import tail as exact_tail
from engine.exact.outcome import exact_lengths, exact_outcome
from engine.game.board import NORTH, SOUTH, row_stones
from engine.game.events import EVENTS, unpack_events
from engine.game.moves import end_event
from engine.game.options import positions
from engine.players.choice import ARGMAX, Epsilon, key_of, probabilities
from engine.players.policy import NotATableStrategyError
from engine.players.search import solution

SMALL = [Rules(stones_per_pit=3, ply_cap=10), Rules(stones_per_pit=4, feeding=False, ply_cap=8)]
LONGER = Rules(stones_per_pit=5, ply_cap=60)  # games of 13 plies on average under random play
PAIRS = [("random", "random"), ("greedy", "perfect"), ("perfect(epsilon=0.25)", "random")]


def _chances(spec: str, rules: Rules, board: int, ply: int) -> dict[int, Fraction]:
    """The probability of each legal pit (mover's view) for the scalar strategy ``spec``."""
    options = positions(rules).options(board, ply)
    if spec == "random":
        values = [0] * len(options)
    elif spec == "greedy":
        values = [option.captured for option in options]
    else:
        values = list(solution(rules).move_values(board, SOUTH, ply))
    rule = Epsilon(0.25) if spec == "perfect(epsilon=0.25)" else ARGMAX
    key = key_of({option.pit: value for option, value in zip(options, values, strict=True)})
    return dict(enumerate(probabilities(rule.cuts(key))))


def _brute_force(south: str, north: str, rules: Rules, start: int | None = None) -> dict[str, object]:
    margins: dict[int, Fraction] = {}
    plies: dict[int, Fraction] = {}
    means = dict.fromkeys(EVENTS, Fraction(0))
    fires = dict.fromkeys(EVENTS, Fraction(0))
    memo = positions(rules)

    def walk(board: int, ply: int, margin: int, chance: Fraction, fired: frozenset[str]) -> None:
        options = memo.options(board, ply) if ply < rules.ply_cap else ()
        if not options:
            final = margin + (1 if ply % 2 == 0 else -1) * (row_stones(board, SOUTH) - row_stones(board, NORTH))
            margins[final] = margins.get(final, Fraction(0)) + chance
            plies[ply] = plies.get(ply, Fraction(0)) + chance
            ended = fired
            if ply < rules.ply_cap:
                name = end_event(board, rules)
                means[name] += chance
                ended = fired | {name}
            for name in ended:
                fires[name] += chance
            return
        mover_chances = _chances(south if ply % 2 == 0 else north, rules, board, ply)
        for option in options:
            p = mover_chances[option.pit]
            if not p:
                continue
            counts = unpack_events(option.events)
            for name, count in counts.items():
                means[name] += chance * p * count
            now = fired | {name for name, count in counts.items() if count}
            sign = 1 if ply % 2 == 0 else -1
            walk(option.child, ply + 1, margin + sign * option.captured, chance * p, frozenset(now))

    walk(memo.start if start is None else start, 0, 0, Fraction(1), frozenset())
    return {"margins": margins, "plies": plies, "means": means, "fires": fires}


# Starts of SMALL's stones other than the rule sets' own: a stone moved (the fairness search's
# kind), and a lopsided one whose first moves capture (forfeited) from the opponent's row.
OTHER_STARTS = {SMALL[0].name: [pack([2, 3, 4, 3, 3, 3]), pack([5, 1, 2, 2, 6, 2])], SMALL[1].name: [pack([4, 4, 5, 3, 4, 4])]}


@pytest.mark.parametrize(("south", "north"), PAIRS)
@pytest.mark.parametrize(
    ("rules", "start"),
    [(rules, None) for rules in SMALL] + [(rules, start) for rules in SMALL for start in OTHER_STARTS[rules.name]],
    ids=lambda value: value.name if isinstance(value, Rules) else str(value),
)
def test_exact_outcome_is_the_brute_force_over_every_game(rules, start, south, north):
    exact = exact_outcome(south, north, rules=rules, tolerance=0, start=start)
    brute = _brute_force(south, north, rules, start)
    assert exact.unresolved == 0
    assert set(exact.margin) == set(brute["margins"])
    for margin, chance in brute["margins"].items():
        assert exact.margin[margin] == pytest.approx(float(chance), abs=1e-12)
    lengths = np.zeros(rules.ply_cap + 1)
    for ply, chance in brute["plies"].items():
        lengths[ply] = float(chance)
    np.testing.assert_allclose(exact.plies, lengths, atol=1e-12, rtol=0)
    for name in EVENTS:
        assert exact.event_mean[name] == pytest.approx(float(brute["means"][name]), abs=1e-12), name
        assert exact.event_fires[name] == pytest.approx(float(brute["fires"][name]), abs=1e-12), name
    assert exact.south_win + exact.draw + exact.north_win == pytest.approx(1, abs=1e-12)
    lengths = exact_lengths(south, north, rules=rules, tolerance=0, start=start)
    assert np.array_equal(lengths.plies, exact.plies) and lengths.unresolved == 0


@pytest.mark.parametrize(("south", "north"), [("random", "random"), ("greedy", "perfect(epsilon=0.25)"), ("heuristic", "random")])
@pytest.mark.parametrize("rules", [Rules(stones_per_pit=4, feeding=False, ply_cap=30), LONGER], ids=lambda rules: rules.name)
def test_sampled_games_agree_with_the_exact_outcome(rules, south, north):
    """Every quantity of 200,000 sampled games within 4 standard errors of its exact value."""
    exact = exact_outcome(south, north, rules=rules)
    games = play_batch(200_000, south, north, rules=rules, seed=11)
    n = len(games)
    checks = [((games.winner == 0).mean(), exact.south_win), ((games.winner == 2).mean(), exact.draw)]
    checks += [((games.events[name] > 0).mean(), exact.event_fires[name]) for name in EVENTS]
    for sampled, p in checks:
        assert abs(sampled - p) <= 4 * np.sqrt(p * (1 - p) / n) + 1e-12
    for name in EVENTS:
        counts = games.events[name].astype(float)
        assert abs(counts.mean() - exact.event_mean[name]) <= 4 * counts.std() / np.sqrt(n) + 1e-12, name
    assert abs(games.plies.mean() - exact.mean_plies) <= 4 * games.plies.std() / np.sqrt(n)


@pytest.mark.parametrize(
    ("rules", "south", "north"),
    [
        (LONGER, "perfect", "perfect"),  # perfect's near-cap corrections, deepened to the cap
        (Rules(stones_per_pit=4, min_stones_to_play=1), "perfect", "perfect"),  # games that cycle to the cap
        (Rules(stones_per_pit=4, sow_origin=False, capture_rows="opponent"), "random", "greedy"),
    ],
    ids=lambda value: value.name if isinstance(value, Rules) else value,
)
def test_exact_lengths_are_the_lengths_of_exact_outcome(rules, south, north):
    """exact_lengths follows the chain by position with its total mass alone: the lengths are
    exact_outcome's, the same floats (no state set aside in these runs: nothing unresolved)."""
    whole = exact_outcome(south, north, rules=rules)
    lengths = exact_lengths(south, north, rules=rules)
    assert whole.unresolved == lengths.unresolved == 0
    assert np.array_equal(lengths.plies, whole.plies)
    assert lengths.mean_plies == whole.mean_plies
    assert (lengths.south, lengths.north, lengths.rules) == (whole.south, whole.north, whole.rules)


def test_a_pairing_with_mcts_is_refused_in_one_line():
    with pytest.raises(NotATableStrategyError, match="mcts") as error:
        exact_outcome("mcts(playouts=10)", "random", rules=SMALL[0])
    assert "\n" not in str(error.value)


# With LONGER, perfect's far_from is 30 and its steady floor 24: the sparse products go on down to
# 24 plies left, where random against perfect(temperature=1.0) still reaches positions whose
# class is not yet settled (taking their far class there changes the tail of the length by 1e-5).
LONGER_PAIRS = [
    pytest.param("random", "random", marks=pytest.mark.slow),  # ~40 s: random reaches the most states
    ("perfect(epsilon=0.25)", "heuristic"),
    ("alphabeta(depth=3)", "perfect(temperature=1.0)"),
    pytest.param("random", "perfect(temperature=1.0)", marks=pytest.mark.slow),  # ~60 s
]


@pytest.mark.parametrize(("south", "north"), LONGER_PAIRS)
def test_sparse_products_and_merged_children_give_the_same_outcome(monkeypatch, south, north):
    """The plies far from the cap go through sparse matrices over every reachable state; the
    plies near it merge the children of the states in play. Run all the way by merging, the
    outcome is the same (the states of 5 stones a pit, over 60 plies with perfect's varying
    positions included, and for perfect's dials the sparse products deepened below far_from,
    with the chances of the positions not yet settled taken ply by ply)."""
    deepened = []
    deepen = exact._Run.deepen

    def spy(self):
        deepened.append(deepen(self))
        return deepened[-1]

    monkeypatch.setattr(exact._Run, "deepen", spy)
    steady = exact_outcome(south, north, rules=LONGER, tolerance=0)
    assert any(deepened) == ("perfect" in south + north)
    original = exact._Run.__init__

    def merging_only(self, *arguments, **keywords):
        original(self, *arguments, **keywords)
        self.steady_until, self.deepened = 1, True

    monkeypatch.setattr(exact._Run, "__init__", merging_only)
    merged = exact_outcome(south, north, rules=LONGER, tolerance=0)
    assert steady.unresolved == merged.unresolved == 0
    assert set(steady.margin) == set(merged.margin)
    for margin, chance in merged.margin.items():
        assert steady.margin[margin] == pytest.approx(chance, abs=1e-13)
    np.testing.assert_allclose(steady.plies, merged.plies, atol=1e-13, rtol=0)
    # Sums of non-negative terms: even the tiny masses of the longest games agree to rounding.
    np.testing.assert_allclose(steady.plies, merged.plies, atol=0, rtol=1e-9)
    for name in EVENTS:
        assert steady.event_mean[name] == pytest.approx(merged.event_mean[name], rel=1e-12, abs=1e-12), name
        assert steady.event_fires[name] == pytest.approx(merged.event_fires[name], abs=1e-13), name


SET_ASIDE_PAIRS = [("perfect(temperature=1.0)", "perfect(epsilon=0.25)"), ("perfect(epsilon=0.25)", "heuristic")]


@pytest.mark.parametrize(("south", "north"), SET_ASIDE_PAIRS)
def test_states_set_aside_in_the_tail_only_lower_each_probability_and_are_counted_as_unresolved(monkeypatch, south, north):
    """engine.exact.tail keeps the products of long games' tails to the states that hold the
    mass, within a budget of the tolerance. Made to set states aside from the first ply with a
    large budget (5 stones a pit, 60 plies, perfect's near-cap corrections included), the outcome
    differs from the one
    run to the cap without setting anything aside by less than its unresolved mass, and only
    downwards: every probability is a sum of non-negative masses, some of them set aside."""
    whole = exact_outcome(south, north, rules=LONGER, tolerance=0)
    kept = []
    original = exact_tail.Kept.__init__

    def spy(self, *arguments):
        original(self, *arguments)
        kept.append(self.all.nnz / self.base.all.nnz)

    monkeypatch.setattr(exact_tail.Kept, "__init__", spy)
    monkeypatch.setattr(exact_tail, "THINNING_BELOW", 1.0)
    monkeypatch.setattr(exact_tail, "THINNING_PLIES", 4)
    monkeypatch.setattr(exact_tail, "THINNING_SHARE", 1e6)  # a budget of 1e-6, far above the mass left in play
    tolerance = 1e-12
    thinned = exact_outcome(south, north, rules=LONGER, tolerance=tolerance)
    assert kept and min(kept) < 0.5  # states were set aside
    assert 0 < thinned.unresolved <= tolerance * (1 + exact_tail.THINNING_SHARE)
    bound = thinned.unresolved + 1e-15
    for margin, chance in whole.margin.items():
        assert chance - bound <= thinned.margin.get(margin, 0.0) <= chance + 1e-15
    assert np.all(thinned.plies <= whole.plies + 1e-15) and np.all(thinned.plies >= whole.plies - bound)
    lengths = exact_lengths(south, north, rules=LONGER, tolerance=tolerance)  # sets aside by its own chain only
    assert 0 < lengths.unresolved <= tolerance * (1 + exact_tail.THINNING_SHARE)
    lower = whole.plies - lengths.unresolved - 1e-15
    assert np.all(lengths.plies <= whole.plies + 1e-15) and np.all(lengths.plies >= lower)
    for name in EVENTS:  # an event's untouched mass set aside counts as if it fired
        assert thinned.event_fires[name] == pytest.approx(whole.event_fires[name], abs=bound), name
