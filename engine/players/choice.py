"""How a table strategy turns one 32-bit draw into a move: the rules of choice and their cuts.

Every strategy but ``mcts`` takes exactly one draw of the game's stream (``engine.game.rng``) per
turn, forced moves included, and chooses by it as follows. In a position it gives each of the
mover's pits 0, 1, 2 (its own view) a probability that is a multiple of 2**-32, written as three
*cuts* 0 <= c1 <= c2 <= c3 on the draw::

    pit 0 for draws below c1, pit 1 for c1 <= draw < c2, pit 2 for c2 <= draw < c3

with c3 = 2**32 (a position without legal moves has the cuts (0, 0, 0): its pit is NO_MOVE, 4,
as ``pit_of`` counts it). The probabilities of the choice are exactly the widths of these
intervals over 2**32: the chances a uniform draw gives, so that ``engine.exact.outcome`` and sampled
games agree to the last bit. A pit that is not legal gets an empty interval.

A strategy's *rule* makes the cuts from the position's legal pits and the value it gives each
move (``q``, larger is better; the gaps ``max q - q`` are what matter). The key of a position
packs what the rule needs, so that positions with the same key choose alike::

    key = legal pits (bits 0-2) | gap of pit 0 << 3 | gap of pit 1 << 11 | gap of pit 2 << 19

gaps clipped to 255 (a gap of 0 marks a best move). The rules:

- ``Argmax``: uniform among the best moves. The k-th of n best moves takes the draws
  ``ceil(k * 2**32 / n)`` to ``ceil((k + 1) * 2**32 / n) - 1``, which is the pick
  ``(draw * n) >> 32`` of ``engine.game.rng``: the games of ``random``, ``greedy``, ``heuristic``,
  ``alphabeta`` and ``perfect`` are those of their scalar versions, which use ``rng.choice``.
- ``Epsilon(e)``: with probability e uniform among the legal moves, else uniform among the best:
  pit p has e / n + (1 - e) / b if it is one of b best of n legal moves, e / n if it is not.
  The cut before pit p is ``ceil(2**32 * P(pits < p))`` computed exactly (``fractions``, e as
  the exact binary value of its float). e = 0 plays the games of ``Argmax``, e = 1 those of
  ``random``.
- ``Softmax(t)``: pit p with probability proportional to ``exp(-gap_p / t)`` (a quantal
  response, McKelvey and Palfrey 1995; gaps in stones). The weights are IEEE doubles
  ``math.exp(-gap / t)``, summed left to right over pits 0, 1, 2 (0.0 for an illegal pit); the
  cut before pit p is ``ceil(2**32 * S_p / S_3)`` with S_p the sum of the weights of pits below
  p. Both engines call this one function, so both make the same cuts.
"""

from __future__ import annotations

import math
from fractions import Fraction
from functools import lru_cache
from typing import Protocol

import numpy as np

from engine.game import ROW

SCALE = 1 << 32  # the draws: 0 .. 2**32 - 1
NO_MOVE = 4  # the pit of a position without legal moves (pit_of of the cuts (0, 0, 0))
GAP_BITS, GAP_MAX = 8, 255
LEGAL_MASK = (1 << ROW) - 1
Cuts = tuple[int, int, int]
NO_CUTS: Cuts = (0, 0, 0)


class Rule(Protocol):
    """How a strategy turns the values of the moves into the cuts of its draw."""

    name: str

    def cuts(self, key: int) -> Cuts: ...


def pack_keys(legal: np.ndarray, q: np.ndarray) -> np.ndarray:
    """The key (int64) of each row of ``legal`` ((m, 3) bool) and ``q`` ((m, 3) ints, the value of
    each pit, stones apart; ignored where the pit is not legal). Computed in int32 (a key has
    ROW + ROW * GAP_BITS = 27 bits), which is a third faster than in int64, a pit's column at a
    time: a maximum along rows of three is several times slower than two of whole columns."""
    legal = np.asarray(legal, dtype=bool)
    q = np.asarray(q)
    on = [legal[:, pit] for pit in range(ROW)]
    values = [q[:, pit].astype(np.int32) for pit in range(ROW)]
    lowest = np.iinfo(np.int32).min
    best = np.maximum(
        np.maximum(np.where(on[0], values[0], lowest), np.where(on[1], values[1], lowest)), np.where(on[2], values[2], lowest)
    )
    keys = np.zeros(len(q), dtype=np.int32)
    for pit in range(ROW):
        gaps = np.minimum(best - values[pit], GAP_MAX)  # wraps where no pit is legal: zeroed next
        gaps *= on[pit]
        keys |= on[pit].astype(np.int32) << pit
        keys |= gaps << (ROW + GAP_BITS * pit)
    return keys.astype(np.int64)


def key_of(q: dict[int, int]) -> int:
    """The key of one position from its legal pits (mover's view) and their values."""
    if not q:
        return 0
    best = max(q.values())
    key = 0
    for pit, value in q.items():
        key |= 1 << pit | min(best - value, GAP_MAX) << (ROW + GAP_BITS * pit)
    return key


def legal_pits(key: int) -> list[int]:
    return [pit for pit in range(ROW) if key >> pit & 1]


def gap(key: int, pit: int) -> int:
    return key >> (ROW + GAP_BITS * pit) & GAP_MAX


def pit_of(cuts: Cuts, draw: int) -> int:
    """The pit the draw chooses: how many cuts are at or below it (a third counts twice, so that
    the cuts (0, 0, 0) give NO_MOVE)."""
    return (draw >= cuts[0]) + (draw >= cuts[1]) + 2 * (draw >= cuts[2])


def probabilities(cuts: Cuts) -> tuple[Fraction, Fraction, Fraction]:
    """The exact probability of each pit under ``cuts``."""
    c1, c2, c3 = cuts
    return Fraction(c1, SCALE), Fraction(c2 - c1, SCALE), Fraction(c3 - c2, SCALE)


class Argmax:
    """Uniform among the best moves."""

    name = "argmax"

    def cuts(self, key: int) -> Cuts:
        return _uniform_cuts(key, [pit for pit in legal_pits(key) if gap(key, pit) == 0])


class Epsilon:
    """Uniform among the legal moves with probability ``epsilon``, else uniform among the best."""

    def __init__(self, epsilon: float) -> None:
        self.epsilon = Fraction(epsilon)
        self.name = f"epsilon={epsilon!r}"

    def cuts(self, key: int) -> Cuts:
        return _epsilon_cuts(self.epsilon, key)


class Softmax:
    """Each legal move with probability proportional to exp(-gap / temperature)."""

    def __init__(self, temperature: float) -> None:
        self.temperature = float(temperature)
        self.name = f"temperature={temperature!r}"

    def cuts(self, key: int) -> Cuts:
        return _softmax_cuts(self.temperature, key)


ARGMAX = Argmax()


def _uniform_cuts(key: int, chosen: list[int]) -> Cuts:
    """Uniform among the pits ``chosen`` (ascending); the k-th of n from ceil(k * 2**32 / n) on."""
    if not chosen:
        return NO_CUTS
    n = len(chosen)
    before = [sum(1 for pit in chosen if pit < bound) for bound in (1, 2)]
    return -(-before[0] * SCALE // n), -(-before[1] * SCALE // n), SCALE


def _cuts_of(below_1: Fraction, below_2: Fraction) -> Cuts:
    return math.ceil(below_1 * SCALE), math.ceil(below_2 * SCALE), SCALE


@lru_cache(maxsize=1 << 16)
def _epsilon_cuts(epsilon: Fraction, key: int) -> Cuts:
    legal = legal_pits(key)
    if not legal:
        return NO_CUTS
    best = [pit for pit in legal if gap(key, pit) == 0]
    chance = [Fraction(0)] * ROW
    for pit in legal:
        chance[pit] += epsilon / len(legal)
    for pit in best:
        chance[pit] += (1 - epsilon) / len(best)
    return _cuts_of(chance[0], chance[0] + chance[1])


@lru_cache(maxsize=1 << 16)
def _softmax_cuts(temperature: float, key: int) -> Cuts:
    if not key & LEGAL_MASK:
        return NO_CUTS
    weights = [math.exp(-gap(key, pit) / temperature) if key >> pit & 1 else 0.0 for pit in range(ROW)]
    below_1 = weights[0]
    below_2 = below_1 + weights[1]
    total = below_2 + weights[2]
    return math.ceil(below_1 / total * SCALE), math.ceil(below_2 / total * SCALE), SCALE
