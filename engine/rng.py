"""Counter-based random streams: the randomness of every game, defined so that any
engine (this scalar one, or a batched NumPy one) can reproduce it bit for bit.

A game's seed is an int from 0 to 2**64 - 1. The game draws 32-bit numbers from one
SplitMix64 stream (Steele, Lea and Flood, "Fast splittable pseudorandom number
generators", OOPSLA 2014): the state starts at ``mix64(seed ^ SEED_SALT)``; the k-th
64-bit word (k = 1, 2, ...) is ``mix64(state + k * GAMMA)`` and gives draws 2k-2 (its
high half) and 2k-1 (its low half). Draws are taken in the order the players ask for
them. A uniform choice among n options takes one draw: ``(draw * n) >> 32``.
"""

from __future__ import annotations

from numbers import Integral

import numpy as np

MASK32 = (1 << 32) - 1
MASK64 = (1 << 64) - 1
GAMMA = 0x9E3779B97F4A7C15  # the golden-ratio increment of SplitMix64
MIX1 = 0xBF58476D1CE4E5B9
MIX2 = 0x94D049BB133111EB
SEED_SALT = 0x6D6F_6469_6172_0001  # keeps seed 0 away from the all-zero state


def mix64(z: int) -> int:
    """The SplitMix64 finaliser: a bijection on 64-bit words that scrambles every bit."""
    z = ((z ^ (z >> 30)) * MIX1) & MASK64
    z = ((z ^ (z >> 27)) * MIX2) & MASK64
    return z ^ (z >> 31)


def check_seed(seed: int) -> int:
    """The seed as a Python int; NumPy integers are welcome, floats and bools are not."""
    if type(seed) is not int:
        if isinstance(seed, bool) or not hasattr(seed, "__index__"):
            raise ValueError(f"a game seed is an int from 0 to 2**64 - 1, not {seed!r}")
        seed = seed.__index__()
    if not 0 <= seed <= MASK64:
        raise ValueError(f"a game seed is an int from 0 to 2**64 - 1, not {seed!r}")
    return seed


def game_state(seed: int) -> int:
    """The starting state of the stream of the game with this seed."""
    return mix64(check_seed(seed) ^ SEED_SALT)


def game_seeds(seed: int, games: int) -> np.ndarray:
    """The 64-bit seeds of ``games`` games derived from one seed (uint64 array).

    NumPy's ``SeedSequence(seed).generate_state`` makes them up front, so game i's seed does
    not depend on how many games there are or how they are split between workers.
    """
    return np.random.SeedSequence(seed).generate_state(games, dtype=np.uint64)


def choice_index(draw: int, n: int) -> int:
    """A uniform index below n (n < 2**32) from one 32-bit draw."""
    return (draw * n) >> 32


class Rng:
    """A game's random stream. Strategies take every random choice from the one they are given."""

    __slots__ = ("_low", "draws", "state")

    def __init__(self, state: int) -> None:
        if not isinstance(state, Integral) or isinstance(state, bool) or not 0 <= state <= MASK64:  # once a game: cheap
            raise ValueError(f"state is a stream's 64-bit state, an int from 0 to 2**64 - 1, not {state!r}")
        self.state: int = int(state)
        self.draws: int = 0
        self._low: int = 0

    @classmethod
    def for_game(cls, seed: int) -> Rng:
        return cls(game_state(seed))

    def next_u32(self) -> int:
        self.draws += 1
        if self.draws & 1:
            self.state = (self.state + GAMMA) & MASK64
            word = mix64(self.state)
            self._low = word & MASK32
            return word >> 32
        return self._low

    def below(self, n: int) -> int:
        """A uniform int from 0 to n - 1, from exactly one draw."""
        if not 0 < n < 1 << 32:
            raise ValueError(f"below(n) needs 0 < n < 2**32, not {n!r}")
        return choice_index(self.next_u32(), n)

    def choice(self, options: tuple[int, ...] | list[int]) -> int:
        return options[self.below(len(options))]

    def random(self) -> float:
        """A float in [0, 1) with 53 random bits, from two draws."""
        high, low = self.next_u32(), self.next_u32()
        return ((high << 21) | (low >> 11)) * (1.0 / (1 << 53))
