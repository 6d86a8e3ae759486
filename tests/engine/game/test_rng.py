"""The random streams that make a seed mean the same games in every engine."""

from __future__ import annotations

import pytest

from engine.game.rng import GAMMA, MASK64, Rng, choice_index, game_seeds, game_state, mix64


def test_mix64_gives_the_published_splitmix64_outputs():
    """SplitMix64 seeded with 1234567 (Vigna's reference splitmix64.c) starts with these words."""
    state, words = 1234567, []
    for _ in range(5):
        state = (state + GAMMA) & MASK64
        words.append(mix64(state))
    assert words == [
        6457827717110365317,
        3203168211198807973,
        9817491932198370423,
        4593380528125082431,
        16408922859458223821,
    ]


def test_draws_are_the_high_then_low_halves_of_successive_words():
    rng = Rng(1234567)
    draws = [rng.next_u32() for _ in range(4)]
    assert draws == [
        6457827717110365317 >> 32,
        6457827717110365317 & 0xFFFFFFFF,
        3203168211198807973 >> 32,
        3203168211198807973 & 0xFFFFFFFF,
    ]
    assert rng.draws == 4


def test_a_game_stream_depends_on_the_seed_only():
    first = [Rng.for_game(99).next_u32() for _ in range(3)]
    again = [Rng.for_game(99).next_u32() for _ in range(3)]
    assert first == again
    assert game_state(99) != game_state(100)


@pytest.mark.parametrize("n", [1, 2, 3, 7])
def test_below_is_uniform(n):
    rng = Rng.for_game(5)
    draws = 30_000
    counts = [0] * n
    for _ in range(draws):
        counts[rng.below(n)] += 1
    expected = draws / n
    # Chi-square with n - 1 degrees of freedom; 30 is far beyond its 99.99th percentile for n <= 7.
    assert sum((count - expected) ** 2 / expected for count in counts) < 30


def test_choice_index_covers_every_index_and_nothing_else():
    assert choice_index(0, 3) == 0
    assert choice_index(0xFFFFFFFF, 3) == 2
    assert {choice_index(draw << 28, 3) for draw in range(16)} == {0, 1, 2}


def test_random_floats_lie_in_the_unit_interval():
    rng = Rng.for_game(1)
    values = [rng.random() for _ in range(1000)]
    assert all(0.0 <= value < 1.0 for value in values)
    assert 0.45 < sum(values) / len(values) < 0.55


@pytest.mark.parametrize("seed", [-1, 2**64, 1.5, True, "7"])
def test_a_bad_seed_is_refused(seed):
    with pytest.raises(ValueError, match="seed"):
        game_state(seed)


def test_below_refuses_an_empty_range():
    with pytest.raises(ValueError, match="below"):
        Rng(0).below(0)


def test_game_seeds_are_a_prefix_of_any_longer_sample():
    assert game_seeds(7, 10)[:4].tolist() == game_seeds(7, 4).tolist()
    assert game_seeds(7, 4).tolist() != game_seeds(8, 4).tolist()
