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

from functools import lru_cache
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


# ---------------------------------------------------------------------------------------------
# The same streams on arrays, for the batched games (engine.play.batch, engine.play.mcts)

# numpy.random.SeedSequence.generate_state's constants (see _hashed_seeds).
_INIT_B, _MULT_B, _XSHIFT = 0x8B51F9DD, 0x58F38DED, 16


def game_seeds_between(seed: int, start: int, stop: int) -> np.ndarray:
    """game_seeds(seed, n)[start:stop], for any n >= stop, without making the first ``start``."""
    sequence = np.random.SeedSequence(seed)
    if _numpy_agrees():
        return _hashed_seeds(sequence.pool, start, stop)
    return sequence.generate_state(stop, dtype=np.uint64)[start:]  # NumPy's own way, at Python speed


def _hashed_seeds(pool: np.ndarray, start: int, stop: int) -> np.ndarray:
    """SeedSequence.generate_state on arrays (NumPy loops in Python, 3 million seeds a second).

    Word i of its output is (pool[i % 4] ^ h_i) * h_(i+1) mod 2**32, folded by a shift, with
    h_i = INIT_B * MULT_B**i mod 2**32; a uint64 seed is two words, the low one first.
    """
    words = 2 * (stop - start)
    powers = np.full(words + 1, _MULT_B, dtype=np.uint64)
    powers[0] = pow(_MULT_B, 2 * start, 1 << 32)
    hashes = (np.cumprod(powers) * np.uint64(_INIT_B)) & np.uint64(MASK32)  # cumprod wraps mod 2**64
    pool = np.roll(np.asarray(pool, dtype=np.uint64), -(2 * start) % len(pool))
    mixed = np.tile(pool, words // len(pool) + 1)[:words]
    mixed = ((mixed ^ hashes[:-1]) * hashes[1:]) & np.uint64(MASK32)
    mixed ^= mixed >> np.uint64(_XSHIFT)
    seeds: np.ndarray = mixed[0::2] | mixed[1::2] << np.uint64(32)
    return seeds


@lru_cache(maxsize=1)
def _numpy_agrees() -> bool:
    """Whether NumPy's SeedSequence still hashes as _hashed_seeds does (checked once)."""
    sequences = [np.random.SeedSequence(seed) for seed in (0, 7, 2**64 - 1)]
    return all(np.array_equal(_hashed_seeds(s.pool, 0, 9), s.generate_state(9, dtype=np.uint64)) for s in sequences)


def mix64_words(z: np.ndarray, out: np.ndarray | None = None, scratch: np.ndarray | None = None) -> np.ndarray:
    """mix64 on an array of uint64 words (multiplication wraps mod 2**64), into ``out`` (a new
    array without it) with ``scratch`` as working memory (the batched games reuse both)."""
    out = np.empty_like(z) if out is None else out
    scratch = np.empty_like(z) if scratch is None else scratch
    np.right_shift(z, 30, out=scratch)
    np.bitwise_xor(z, scratch, out=out)
    np.multiply(out, MIX1, out=out)
    np.right_shift(out, 27, out=scratch)
    np.bitwise_xor(out, scratch, out=out)
    np.multiply(out, MIX2, out=out)
    np.right_shift(out, 31, out=scratch)
    np.bitwise_xor(out, scratch, out=out)
    return out


def sixths(words: np.ndarray, out: np.ndarray, scratch: np.ndarray) -> np.ndarray:
    """(6 * draw) >> 32 of both 32-bit halves of each word, in the words' memory order."""
    np.multiply(words.view(np.uint32), 6, out=scratch, dtype=np.uint64)
    np.right_shift(scratch, 32, out=out, casting="unsafe")
    return out
