"""The engine agrees with the plain reference (tests/reference.py) at every position of
seeded random games, under the default rules and under every variant of RULES.md.

The games are driven by the reference and ``random.Random``, so a disagreement points at
a position the reference reached by its own reading of the rules. Whole games played by
``engine.play_game`` are then replayed through the reference.
"""

from __future__ import annotations

import random
from collections import Counter

import pytest
import reference
from variants import EVERY_FIELD_ALONE, OWARE_LIKE

import engine
from engine import Rules

# Every field of Rules switched alone, then a few combinations. Small stone counts and
# ply caps make short games; the rest are capped by the game count per variant below.
SINGLE_FIELD_VARIANTS = [
    *[Rules(stones_per_pit=stones) for stones in range(1, 11) if stones not in (4, 7, 10)],
    *EVERY_FIELD_ALONE,  # tests/variants.py: 4 and 10 stones among them
    Rules(capture_counts=(3,)),
    Rules(ply_cap=1),
    Rules(ply_cap=7),
    Rules(ply_cap=30),
]
COMBINED_VARIANTS = [
    # Oware: four stones, sowing skips the origin, captures of 2 or 3 on the opponent's side.
    Rules(stones_per_pit=4, sow_origin=False, capture_counts=(2, 3), capture_rows="opponent", min_stones_to_play=1),
    Rules(sow_origin=False, capture_rows="opponent", feeding=False, grand_slam="allowed"),
    Rules(sow_origin=False, grand_slam="no_capture", first_move_forfeit=False),
    Rules(stones_per_pit=3, feeding=False, grand_slam="no_capture", capture_counts=(2, 3)),
    Rules(stones_per_pit=10, min_stones_to_play=1, capture_rows="opponent", ply_cap=60),
    Rules(stones_per_pit=5, first_move_forfeit=False, capture_counts=(1, 3, 5), ply_cap=50),
]
VARIANTS = [Rules(), *SINGLE_FIELD_VARIANTS, OWARE_LIKE, *COMBINED_VARIANTS]
VARIANT_IDS = [rules.name for rules in VARIANTS]

# Random games a variant: the quick run's, and the slow run's (make test-slow).
GAMES_PER_VARIANT_QUICK, GAMES_PER_VARIANT = 30, 120
DEFAULT_RULES_GAMES = 1000  # the default rules get more: they are what the studies play
ENGINE_GAMES_PER_PAIRING = 12
RANDOM_BOARDS_PER_VARIANT = 600
PAIRINGS = [("random", "random"), ("greedy", "greedy"), ("random", "greedy"), ("greedy", "random")]


def test_reference_names_exactly_the_engines_events() -> None:
    assert reference.EVENTS == engine.EVENTS
    assert reference.TURN_EVENTS == engine.TURN_EVENTS
    assert reference.END_EVENTS == engine.END_EVENTS


def test_board_code_matches_rules_md() -> None:
    start = reference.start_board(Rules())
    assert reference.board_code(start) == 0x1C71C71C7 == engine.start_board()
    board = [1, 0, 63, 5, 12, 33]
    assert reference.board_code(board) == engine.pack(board)
    assert reference.board_from_code(reference.board_code(board)) == board


class Tally:
    """What the random games of one variant exercised, to show the checks were not idle."""

    def __init__(self) -> None:
        self.events: Counter[str] = Counter()
        self.illegal: Counter[str] = Counter()
        self.positions = 0


def check_position(board: list[int], mover: int, ply: int, rules: Rules, tally: Tally) -> list[int]:
    """Compare everything the engine says about one position with the reference.

    Returns the reference's legal moves.
    """
    code = reference.board_code(board)
    where = f"board {board} (code {code:#x}), mover {mover}, ply {ply}, rules {rules.name}"
    results = reference.move_results(board, mover, ply, rules)
    legal = sorted(results)
    assert engine.legal_moves(code, mover, ply, rules) == tuple(legal), where

    for pit, expected in results.items():
        got = engine.apply_move(code, mover, pit, ply, rules)
        assert got.board == reference.board_code(expected.board), f"{where}, pit {pit}: board"
        assert got.captured == expected.captured, f"{where}, pit {pit}: captured"
        assert got.captured_pits == tuple(expected.captured_pits), f"{where}, pit {pit}: captured pits"
        assert got.events == expected.events, f"{where}, pit {pit}: events"
        tally.events.update(name for name, count in expected.events.items() if count)

    for pit in range(reference.PITS):
        if pit not in results:
            tally.illegal[reference.illegal_reason(board, mover, pit, ply, rules)] += 1
            with pytest.raises(engine.IllegalMoveError):
                engine.apply_move(code, mover, pit, ply, rules)

    expected_end = reference.end_event(board, mover, ply, rules)
    assert engine.end_event(code, mover, ply, rules) == expected_end, where
    if expected_end:
        tally.events[expected_end] += 1
    tally.positions += 1
    return legal


def play_random_game(rules: Rules, seed: str, tally: Tally) -> None:
    """A game whose moves the reference and random.Random(seed) choose, checked at every position."""
    chooser = random.Random(seed)
    board, mover = reference.start_board(rules), reference.SOUTH
    for ply in range(rules.ply_cap + 1):
        legal = check_position(board, mover, ply, rules, tally)
        if not legal:
            return
        board = reference.apply_move(board, mover, chooser.choice(legal), ply, rules).board
        mover = reference.opponent_of(mover)
    raise AssertionError(f"the reference allowed a move after the ply cap of {rules.ply_cap}")


@pytest.mark.parametrize("rules", VARIANTS, ids=VARIANT_IDS)
def test_engine_agrees_with_reference_in_random_games(rules: Rules) -> None:
    _agree_in_random_games(rules, DEFAULT_RULES_GAMES if rules == Rules() else GAMES_PER_VARIANT_QUICK)


@pytest.mark.slow
@pytest.mark.parametrize("rules", VARIANTS[1:], ids=VARIANT_IDS[1:])
def test_engine_agrees_with_reference_in_more_random_games(rules: Rules) -> None:
    _agree_in_random_games(rules, GAMES_PER_VARIANT, first=GAMES_PER_VARIANT_QUICK)


def _agree_in_random_games(rules: Rules, games: int, first: int = 0) -> None:
    tally = Tally()
    for game in range(first, games):
        play_random_game(rules, f"{rules.name}/{game}", tally)
    assert tally.positions >= games - first
    if rules == Rules():
        # The default rules are the ones that matter: every event and every reason a pit
        # may be illegal must have come up, or the comparison above proved less than it seems.
        assert set(tally.events) == set(engine.EVENTS), f"events never seen: {set(engine.EVENTS) - set(tally.events)}"
        assert set(tally.illegal) == {"wrong row", "too few stones", "grand slam", "feeding"}, tally.illegal


def random_position(rules: Rules, chooser: random.Random) -> tuple[list[int], int, int]:
    """A board with the rule set's stones (or fewer, as after captures) spread at random.

    Most need not be reachable: they reach long hands that lap the ring several times,
    piles in one row, and the first move (ply 0) and the ply cap for either player.
    """
    board = [0] * reference.PITS
    # Uneven weights heap the stones on a few pits: hands of more than one lap, empty rows.
    weights = [chooser.random() ** 4 for _ in range(reference.PITS)]
    for pit in chooser.choices(range(reference.PITS), weights, k=chooser.randint(0, rules.total_stones)):
        board[pit] += 1
    mover = chooser.randrange(2)
    ply = chooser.choice((0, 1, chooser.randrange(rules.ply_cap + 1), rules.ply_cap))
    return board, mover, ply


@pytest.mark.parametrize("rules", VARIANTS, ids=VARIANT_IDS)
def test_engine_agrees_with_reference_on_random_boards(rules: Rules) -> None:
    chooser = random.Random(f"boards/{rules.name}")
    tally = Tally()
    for _ in range(RANDOM_BOARDS_PER_VARIANT):
        board, mover, ply = random_position(rules, chooser)
        check_position(board, mover, ply, rules, tally)


@pytest.mark.parametrize("rules", VARIANTS, ids=VARIANT_IDS)
def test_engine_games_replay_through_reference(rules: Rules) -> None:
    """Whole games from engine.play_game give the reference's winner, scores, plies, end and events."""
    for south, north in PAIRINGS:
        for seed in range(ENGINE_GAMES_PER_PAIRING):
            record = engine.play_game(south, north, rules=rules, seed=seed)
            replayed = reference.replay_game(list(record.moves), rules)
            where = f"{south} vs {north}, seed {seed}, rules {rules.name}, moves {record.moves}"
            assert record.rules == rules.name, where
            assert record.plies == replayed.plies == len(record.moves), where
            assert record.end_reason == replayed.end_reason, where
            assert (record.score_south, record.score_north) == (replayed.score_south, replayed.score_north), where
            assert record.winner == replayed.winner, where
            assert record.events == replayed.events, where
            assert replayed.score_south + replayed.score_north == rules.total_stones, where


# --- the general game loop and the documented random stream ---------------------------


class LowestPit:
    """Not a table strategy, so play_game takes its general loop (engine.play.game._play_any)."""

    spec = "lowest_pit"

    def choose(self, position: engine.Position, rng: engine.Rng) -> int:
        return min(position.moves)


class RandomByChoice:
    spec = "random_by_choice"

    def choose(self, position: engine.Position, rng: engine.Rng) -> int:
        return rng.choice(position.moves)


@pytest.mark.parametrize("rules", VARIANTS, ids=VARIANT_IDS)
def test_general_game_loop_replays_through_reference(rules: Rules) -> None:
    for south, north in [(LowestPit(), RandomByChoice()), (RandomByChoice(), "greedy")]:
        for seed in range(3):
            record = engine.play_game(south, north, rules=rules, seed=seed)
            replayed = reference.replay_game(list(record.moves), rules)
            assert (record.winner, record.score_south, record.score_north) == (
                replayed.winner,
                replayed.score_south,
                replayed.score_north,
            )
            assert (record.plies, record.end_reason, record.events) == (replayed.plies, replayed.end_reason, replayed.events)


MASK64 = 2**64 - 1


def splitmix_draws(seed: int):
    """The 32-bit draws of a game, read from the docstring of engine/game/rng.py (SplitMix64)."""

    def mix64(z: int) -> int:
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK64
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK64
        return z ^ (z >> 31)

    state = mix64(seed ^ 0x6D6F_6469_6172_0001)
    word_number = 0
    while True:
        word_number += 1
        word = mix64((state + word_number * 0x9E3779B97F4A7C15) & MASK64)
        yield word >> 32  # the high half first
        yield word & (2**32 - 1)


def choose_like_documented(strategy: str, results: dict[int, reference.MoveResult], draw: int) -> int:
    """random: uniform among the legal moves; greedy: the largest capture, ties uniform."""
    pits = sorted(results)
    if strategy == "greedy":
        best = max(result.captured for result in results.values())
        pits = [pit for pit in pits if results[pit].captured == best]
    return pits[(draw * len(pits)) >> 32]


@pytest.mark.parametrize("rules", [Rules(), Rules(sow_origin=False), Rules(grand_slam="allowed")], ids=lambda rules: rules.name)
def test_play_game_takes_one_documented_draw_per_move(rules: Rules) -> None:
    """Each move of a random or greedy game is the documented choice from the seed's stream."""
    for south, north in PAIRINGS:
        for seed in (0, 1, 2**64 - 1, 123456789):
            record = engine.play_game(south, north, rules=rules, seed=seed)
            draws = splitmix_draws(seed)
            board, mover = reference.start_board(rules), reference.SOUTH
            for ply, played in enumerate(record.moves):
                results = reference.move_results(board, mover, ply, rules)
                strategy = (south, north)[mover]
                assert played == choose_like_documented(strategy, results, next(draws)), (seed, ply)
                board, mover = results[played].board, reference.opponent_of(mover)
