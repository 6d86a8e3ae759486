"""engine.exact_quality: games worked by hand, a walk over every game, and perfect play.

The hand-worked games come from boards of the 3-stone variant whose every game ends within
three plies; each step below follows RULES.md (the first stone of a sowing goes back into the
origin pit; a last pit of 2, 4 or 6 captures, and so do the pits before it while they hold 2, 4
or 6; the first move's captures are forfeited; a player without a legal move ends the game and
each side keeps its own row). The walk enumerates every game of a small rule set move by move
through the scalar engine (engine.game), reads each move's value from Solution.move_values
and computes each measure on each game's sequence of forecasts, as docs/quality.md defines
them: it shares neither the chain nor its sums with exact_quality.
"""

from __future__ import annotations

import itertools
from fractions import Fraction

import numpy as np
import pytest

import engine
from engine import Rules, pack
from engine.exact import MEASURES, exact_outcome, exact_quality, sums, tail
from engine.game import apply_move, legal_moves, rotate, unpack
from engine.players import SCALE, policy_table
from engine.tables import first_moves, kept_tables

THREE = Rules(stones_per_pit=3)
HALF = Fraction(1, 2)


def _zero_except(**given: Fraction | int) -> dict[str, Fraction]:
    expected = dict.fromkeys(MEASURES, Fraction(0))
    expected.update({name: Fraction(value) for name, value in given.items()})
    return expected


def test_two_plies_from_the_end_worked_by_hand() -> None:
    """South to move on 3 4 0 | 3 4 4 (South's pits 0-2, then North's 3-5) of the 3-stone
    variant; random against random, each of two legal moves with chance 1/2.

    - South's pit 0 sows 3 stones: one back into pit 0, then pits 1 and 2: 1 5 1 | 3 4 4 (the
      first move captures nothing). North may play pit 3 (3 stones: pits 3, 4, 5 -> 1 5 1 |
      1 5 5; its last pit holds 5: no capture) or pit 4 (4 stones: pits 4, 5, 0, 1 -> pit 1
      holds 6 and pit 0 before it 2: 8 captured, 0 0 1 | 3 1 5). After pit 4 South has only
      singletons; after pit 3 its one pit of 2 stones or more, pit 1, would sow 1 2 | 2 6 6 and
      capture all of North's row: a grand slam, illegal. Either way South has no legal move and
      each side keeps its row. Finals (South minus North): pit 3: 0 + 7 - 11 = -4; pit 4:
      -8 + 1 - 9 = -16.
    - South's pit 1 sows 4 stones: pits 1, 2, 3, 4 -> 3 1 1 | 4 5 4. North's one legal move is
      pit 3 (4 stones: 3, 4, 5, 0 -> pit 0 holds 4: 4 captured; pit 5 before it holds 5: the
      chain stops), leaving 0 1 1 | 1 6 5 and South only singletons. Final: -4 + 2 - 12 = -14.
    So North answers pit 0 best with pit 4 (-16) and the start is worth -14 (pit 1). The
    forecast is negative at every ply of every game: North leads throughout and wins, nothing
    changes hands. South's pit 0 gives away 2 stones (-14 to -16); after it North's pit 3 gives
    away 12 (-16 to -4), with chance 1/2 x 1/2. Decisions: the start (mass 1) and North's turn
    after pit 0 (mass 1/2), each with one best move, their stakes 2 and 12.
    """
    quality = exact_quality("random", "random", rules=THREE, start=pack([3, 4, 0, 3, 4, 4]))
    expected = _zero_except(
        plies=2,
        stones_lost_south=HALF * 2,
        mistakes_south=HALF,
        stones_lost_north=HALF * HALF * 12,
        mistakes_north=HALF * HALF,
        decisions=1 + HALF,
        only_move=1 + HALF,
        stake=2 + HALF * 12,
    )
    assert quality.as_dict() == {name: float(value) for name, value in expected.items()}
    assert (quality.south_win, quality.draw, quality.north_win) == (0.0, 0.0, 1.0)


def test_lead_changes_comeback_and_drama_worked_by_hand() -> None:
    """South to move on 0 7 5 | 0 0 6 of the 3-stone variant; random against random.

    - South's pit 1 (chance 1/2) sows 7: pits 1, 2, 3, 4, 5, 0, 1 -> 1 2 6 | 1 1 7. North's one
      move, pit 5, sows 7: pits 5, 0, 1, 2, 3, 4, 5; its last pit 5 then holds 2, and pits 4 and
      3 before it 2 each (pit 2, 7, stops the chain): 6 captured, 2 3 7 | 0 0 0. South, 6
      behind, may play pit 1 (3 stones: 1, 2, 3 -> 2 1 8 | 1 0 0, no capture; North is left a
      singleton, the game ends: -6 + 11 - 1 = +4) or pit 2 (7 stones: 2, 3, 4, 5, 0, 1, 2 ->
      pit 2 holds 2 and pit 1 before it 4: 6 captured, 3 0 0 | 1 1 1, final -6 + 6 + 3 - 3 = 0).
    - South's pit 2 (chance 1/2) sows 5: pits 2, 3, 4, 5, 0 -> 1 7 1 | 1 1 7. North's pit 5
      sows 7 and captures pits 5, 4, 3, 2 (2 each): 8, leaving 2 8 0 | 0 0 0. South must feed:
      pit 0 (2 stones) would not reach North's row, so pit 1 it is (8 stones: pits 1, 2, ..., 0,
      1, 2 -> pits 2 and 1 hold 2 each: 4 captured), 3 0 0 | 1 1 1, final -8 + 4 + 3 - 3 = -4.
    Forecasts (South's side): the start is worth +4. Path pit 1, pit 5, pit 1: +4 +4 +4 +4
    (chance 1/4). Path pit 1, pit 5, pit 2: +4 +4 +4 0, a draw (1/4): one sign change, South's
    last move gives away 4 (10 against 6). Path pit 2, pit 5, pit 1: +4 -4 -4 -4 (1/2): pit 2
    gives away 8 and hands North the lead; North wins, having been behind at ply 0, by |+4|.
    So: lead changes 1/4 + 1/2; comeback 1/2; drama plies 1/2 x 1; severity 1/2 x 4; decided at
    ply 0, 3 and 1: 1/4 x 3 + 1/2 x 1; South loses 1/2 x 8 + 1/4 x 4 stones in 1/2 + 1/4
    mistakes; decisions at the start (1) and at 2 3 7 | 0 0 0 (1/2), one best move each, stakes
    8 and 4.
    """
    quality = exact_quality("random", "random", rules=THREE, start=pack([0, 7, 5, 0, 0, 6]))
    quarter = HALF * HALF
    expected = _zero_except(
        plies=3,
        lead_changes=quarter + HALF,
        comeback=HALF,
        drama_plies=HALF,
        drama_severity=HALF * 4,
        decided_ply=quarter * 3 + HALF,
        stones_lost_south=HALF * 8 + quarter * 4,
        mistakes_south=HALF + quarter,
        decisions=1 + HALF,
        only_move=1 + HALF,
        stake=8 + HALF * 4,
    )
    assert quality.as_dict() == {name: float(value) for name, value in expected.items()}
    assert (quality.south_win, quality.draw, quality.north_win) == (0.25, 0.25, 0.5)


def _walk(south: str, north: str, rules: Rules, start: int | None = None) -> dict[str, float]:
    """Every game of ``south`` against ``north``, its chance and its measures (module docstring)."""
    tables = kept_tables(rules)
    solution = engine.solve(rules, progress=False)
    players = [policy_table(spec, rules, tables=tables) for spec in (south, north)]
    cap = rules.ply_cap
    board = engine.start_board(rules) if start is None else start
    totals = dict.fromkeys(MEASURES, 0.0)

    def chances(board: int, mover: int, ply: int) -> list[float]:
        player = players[ply % 2]
        if ply == 0:
            classes = np.array([player.first_class(first_moves(rules, start))])
        else:
            seen = board if mover == 0 else rotate(board)
            classes = player.classes_at(np.array([tables.index.rank(seen)]), cap - ply)
        return [float(width) / SCALE for width in player.chances(classes)[0]]

    def end(forecasts: list[int], chance: float) -> None:
        signs = [int(np.sign(f)) for f in forecasts]
        w, last = signs[-1], len(forecasts) - 1
        totals["plies"] += chance * last
        totals["lead_changes"] += chance * sum(a != b for a, b in itertools.pairwise(signs))
        behind = [t for t, s in enumerate(signs) if w != 0 and s == -w]
        totals["comeback"] += chance * bool(behind)
        totals["drama_plies"] += chance * len(behind)
        totals["drama_severity"] += chance * sum(abs(forecasts[t]) for t in behind)
        totals["decided_ply"] += chance * (max((t for t, s in enumerate(signs) if s != w), default=-1) + 1)

    def walk(board: int, mover: int, ply: int, margin: int, chance: float, forecasts: list[int]) -> None:
        moves = legal_moves(board, mover, ply, rules) if ply < cap else ()
        side = 1 if mover == 0 else -1
        if not moves:
            pits = unpack(board)  # South's row first
            end([*forecasts, margin + sum(pits[:3]) - sum(pits[3:])], chance)
            return
        values = solution.move_values(board, mover, ply)
        best = max(values)
        forecast = margin + side * best
        losses = [best - value for value in values]
        name = "south" if mover == 0 else "north"
        if len(moves) >= 2:
            totals["decisions"] += chance
            totals["only_move"] += chance * (losses.count(0) == 1)
            totals["free_choice"] += chance * (losses.count(0) == len(moves))
            totals["stake"] += chance * max(losses)
        pit_chances = chances(board, mover, ply)
        for pit, loss in zip(moves, losses, strict=True):
            p = pit_chances[pit % 3]
            if p == 0:
                continue
            totals[f"stones_lost_{name}"] += chance * p * loss
            totals[f"mistakes_{name}"] += chance * p * (loss > 0)
            result = apply_move(board, mover, pit, ply, rules)
            walk(result.board, 1 - mover, ply + 1, margin + side * result.captured, chance * p, [*forecasts, forecast])

    walk(board, 0, 0, 0, 1.0, [])
    return totals


@pytest.mark.parametrize(
    ("rules", "south", "north"),
    [
        (THREE, "random", "random"),
        (THREE, "alphabeta(depth=2)", "random"),
        (THREE, "perfect(temperature=1.0)", "perfect(temperature=1.0)"),
        (Rules(stones_per_pit=4), "random", "perfect"),
        (Rules(stones_per_pit=4), "perfect(temperature=1.0)", "greedy"),
        (Rules(stones_per_pit=4, ply_cap=6), "random", "random"),  # games cut at the cap
    ],
)
def test_every_measure_agrees_with_a_walk_over_every_game(rules: Rules, south: str, north: str) -> None:
    walked = _walk(south, north, rules)
    quality = exact_quality(south, north, rules=rules).as_dict()
    assert quality == pytest.approx(walked, abs=1e-9)


def test_the_outcome_and_length_are_exact_outcomes() -> None:
    rules = Rules(stones_per_pit=4)
    quality = exact_quality("random", "heuristic", rules=rules)
    outcome = exact_outcome("random", "heuristic", rules=rules)
    assert quality.south_win == pytest.approx(outcome.south_win, abs=1e-12)
    assert quality.north_win == pytest.approx(outcome.north_win, abs=1e-12)
    assert quality.measures["plies"] == pytest.approx(outcome.mean_plies, abs=1e-12)
    frame = quality.frame()
    assert frame["in_play"][0] == 1.0
    assert frame["mean_forecast"][0] == engine.solve(rules, progress=False).start_value()


def test_perfect_play_keeps_the_forecast_under_the_default_rules() -> None:
    """Perfect self-play never gives a stone away: the forecast stays the start's value, -2."""
    quality = exact_quality("perfect", "perfect")
    measures = quality.as_dict()
    for name in ("lead_changes", "comeback", "drama_plies", "drama_severity", "decided_ply"):
        assert measures[name] == 0, name
    for side in ("south", "north"):
        assert measures[f"stones_lost_{side}"] == 0
        assert measures[f"mistakes_{side}"] == 0
    assert quality.north_win == pytest.approx(1.0)
    assert (quality.frame()["mean_forecast"] == -2).all()


def test_a_strategy_without_a_policy_table_is_refused() -> None:
    with pytest.raises(ValueError, match="mcts"):
        exact_quality("mcts(playouts=4)", "random", rules=THREE)


LONGER = Rules(stones_per_pit=4, ply_cap=40)


@pytest.mark.slow
def test_states_set_aside_in_the_tail_move_each_measure_by_less_than_their_mass_allows(monkeypatch: pytest.MonkeyPatch) -> None:
    """engine.exact.thinning keeps the products of a long tail to the states that hold the mass.
    Made to set states aside early with a large budget (4 stones a pit, 40 plies, perfect's dials,
    whose near-cap corrections are included), every measure stays within the unresolved mass
    times its largest value in a game of that cap of the quality run to the cap without it."""
    south, north = "perfect(temperature=1.0)", "perfect(epsilon=0.25)"
    whole = exact_quality(south, north, rules=LONGER, tolerance=0)
    restricted = []
    original = sums.Side.restrict

    def spy(self: sums.Side, ids: np.ndarray, moves: tail.Kept) -> sums.Side:
        restricted.append(moves.all.nnz / moves.base.all.nnz)
        return original(self, ids, moves)

    monkeypatch.setattr(sums.Side, "restrict", spy)
    monkeypatch.setattr(tail, "THINNING_BELOW", 1.0)
    monkeypatch.setattr(tail, "THINNING_PLIES", 4)
    monkeypatch.setattr(tail, "THINNING_SHARE", 1e6)  # a budget of 1e-6, far above the mass left in play
    tolerance = 1e-12
    thinned = exact_quality(south, north, rules=LONGER, tolerance=tolerance)
    assert restricted and min(restricted) < 0.5  # states were set aside
    assert 0 < thinned.unresolved <= tolerance * (1 + tail.THINNING_SHARE)
    cap, stones = LONGER.ply_cap, LONGER.total_stones
    largest = {"drama_severity": cap * stones, "stake": cap * 2 * stones, "stones_lost_south": cap * 2 * stones}
    largest["stones_lost_north"] = largest["stones_lost_south"]
    for name, value in whole.as_dict().items():
        bound = thinned.unresolved * largest.get(name, cap) + 1e-12
        assert thinned.as_dict()[name] == pytest.approx(value, abs=bound), name
    assert thinned.south_win <= whole.south_win + 1e-15 and thinned.south_win >= whole.south_win - thinned.unresolved - 1e-15
