"""Whole games: seeds, strategies, the fast loop against the checked loop, golden games."""

from __future__ import annotations

import json

import pytest
from locations import DATA
from variants import EVERY_FIELD_ALONE, OWARE_LIKE

import engine
from engine import IllegalMoveError, Rules, UnknownStrategyError, pack, play_game, position

GOLDEN = DATA / "golden_games.json"

VARIANTS = [Rules(), *EVERY_FIELD_ALONE, OWARE_LIKE]


class Checked:
    """Wraps a strategy so that play_game cannot take its fast path: it asks choose()."""

    def __init__(self, spec: str) -> None:
        self.inner = engine.make_strategy(spec)
        self.spec = spec

    def choose(self, here: engine.Position, rng: engine.Rng) -> int:
        return self.inner.choose(here, rng)


@pytest.mark.parametrize("rules", VARIANTS, ids=lambda rules: rules.name)
@pytest.mark.parametrize("south, north", [("random", "random"), ("greedy", "random"), ("random", "greedy")])
def test_the_fast_loop_plays_the_same_games_as_the_checked_loop(rules, south, north):
    for seed in range(150):
        fast = play_game(south, north, rules=rules, seed=seed)
        checked = play_game(Checked(south), Checked(north), rules=rules, seed=seed)
        assert fast == checked, f"seed {seed}"


@pytest.mark.parametrize("south, north", [("random", "greedy"), ("heuristic", "random")])
def test_on_move_is_told_every_move_and_changes_no_game(south, north):
    told: list[tuple[int, int, int]] = []
    for seed in range(50):
        told.clear()
        watched = play_game(south, north, seed=seed, on_move=lambda here, pit: told.append((here.ply, here.mover, pit)))
        assert watched == play_game(south, north, seed=seed), f"seed {seed}"
        assert told == [(ply, ply % 2, pit) for ply, pit in enumerate(watched.moves)]


def test_a_seed_means_the_same_game_and_seeds_differ():
    games = [play_game("random", "random", seed=seed).moves for seed in range(50)]
    assert games == [play_game("random", "random", seed=seed).moves for seed in range(50)]
    assert len(set(games)) > 45


def test_the_record_names_its_players_rules_and_seed():
    record = play_game("greedy", "random", rules=Rules(feeding=False), seed=11)
    assert (record.south, record.north, record.rules, record.seed) == ("greedy", "random", "modiar-feedingoff", 11)


def test_golden_games_are_unchanged():
    """Seeded games stored when they were first played (OpenSpiel-style golden playthroughs).

    If this fails, the games a seed means have changed: that is a change of behaviour, so
    ENGINE_VERSION must change and the file be rewritten with tests/make_golden_games.py.
    """
    golden = json.loads(GOLDEN.read_text())
    assert golden["engine_version"] == engine.ENGINE_VERSION
    for game in golden["games"]:
        record = play_game(game["south"], game["north"], rules=Rules.from_name(game["rules"]), seed=game["seed"])
        assert list(record.moves) == game["moves"]
        assert [record.winner, record.score_south, record.score_north] == game["result"]


def test_greedy_takes_the_largest_capture():
    #      5  4  3
    # N  [ 1  3  3]      pit 0: one stone back into 0, one into 1, which then holds 2: captures 2
    # S  [ 2  1  2]      pit 1: a singleton, not playable
    #      0  1  2       pit 2: one back into 2, one into 3, which then holds 4: captures 4
    board = pack([2, 1, 2, 3, 3, 1])
    here = position(board, 0, 5)
    assert here.moves == (0, 2)
    greedy = engine.make_strategy("greedy")
    for seed in range(20):
        assert greedy.choose(here, engine.Rng.for_game(seed)) == 2


def test_greedy_breaks_ties_at_random():
    here = position(engine.start_board(), 0, 0)  # ply 0: every capture forfeited, all tie at 0
    greedy = engine.make_strategy("greedy")
    assert {greedy.choose(here, engine.Rng.for_game(seed)) for seed in range(40)} == {0, 1, 2}


def test_a_strategy_that_plays_an_illegal_pit_is_stopped():
    class Cheat:
        spec = "cheat"

        def choose(self, here, rng):
            return 4  # North's pit, never South's

    with pytest.raises(IllegalMoveError, match="strategy 'cheat' played pit 4"):
        play_game(Cheat(), "random", seed=0)


@pytest.mark.parametrize("spec", ["nonsense", "random(", "greedy(depth=3)", "Random", ""])
def test_an_unknown_strategy_is_a_clear_error(spec):
    with pytest.raises(UnknownStrategyError, match="strateg") as error:
        play_game(spec, "random")
    assert "\n" not in str(error.value)


def test_an_unknown_strategy_error_lists_what_exists():
    with pytest.raises(UnknownStrategyError, match="alphabeta, greedy, heuristic, mcts, perfect, random"):
        engine.make_strategy("minimax")


def test_a_game_on_a_variant_without_moves_at_the_start_ends_at_once():
    record = play_game("random", "random", rules=Rules(stones_per_pit=1))
    assert (record.plies, record.end_reason, record.winner) == (0, "no_moves", "draw")
    assert record.events["singleton_end"] == 1
