"""A dense index of boards: every board of at most T stones gets one number in 0 .. C(T+6, 6) - 1.

Stars and bars: the pit counts c0..c5 of a board, with a seventh "slack" count making the
total exactly T, are marked by six bar positions p_k = c0 + ... + c_k + k, which form a
6-subset of 0 .. T+5. The index is that subset's rank in the combinatorial number system,
``sum_k C(p_k, k + 1)``, so T = 42 (the default rules) gives C(48, 6) = 12,271,512 boards.
Both directions are vectorised over NumPy arrays; the scalar ``rank`` serves Python code.

The ranks run through the boards in order of their stones: the boards of exactly s stones
(those whose slack count is T - s, so p_5 = s + 5) take the ranks C(s + 5, 6) .. C(s + 6, 6) - 1,
a layer of C(s + 5, 5) boards (``layer``). A move never adds stones, so it stays in its board's
layer or goes down to a lower one: ``engine.solver.solution`` solves the layers one at a time.
"""

from __future__ import annotations

from functools import cached_property, lru_cache
from math import comb

import numpy as np

from engine.game import PIT_BITS, PIT_LIMIT, PITS, Board
from engine.store import per_rule_set

_SHIFTS = np.arange(PITS, dtype=np.uint64) * np.uint64(PIT_BITS)
_BLOCK = 1 << 20  # boards unranked at a time


class BoardIndex:
    """The dense index of the boards of at most ``total`` stones."""

    def __init__(self, total: int) -> None:
        if not 0 <= total <= PIT_LIMIT:
            raise ValueError(f"an index covers boards of 0 to {PIT_LIMIT} stones, not {total!r}")
        self.total = total
        self.size = comb(total + PITS, PITS)
        # binomial[n, k] = C(n, k) for the bar positions n = 0 .. total + 5 and k = 1 .. 6.
        self.binomial = np.array([[comb(n, k) for k in range(PITS + 1)] for n in range(total + PITS)], dtype=np.int64)
        self._binomial_rows = self.binomial.tolist()

    def rank(self, board: Board) -> int:
        """The index of one board (a Python int)."""
        index = bar = 0
        rows = self._binomial_rows
        for pit in range(PITS):
            bar += (board >> (PIT_BITS * pit)) & PIT_LIMIT
            if bar > self.total:
                raise ValueError(f"board {board:#x} holds more than the index's {self.total} stones")
            index += rows[bar + pit][pit + 1]
        return index

    def layer(self, stones: int) -> tuple[int, int]:
        """The ranks [start, stop) of the boards of exactly ``stones`` stones."""
        return comb(stones + PITS - 1, PITS), comb(stones + PITS, PITS)

    def rank_counts(self, counts: np.ndarray) -> np.ndarray:
        """The indices of boards given as an (n, 6) array of pit counts."""
        bars = np.cumsum(counts, axis=1, dtype=np.int64) + np.arange(PITS)
        if bars.size and bars[:, -1].max() > self.total + PITS - 1:
            raise ValueError(f"a board holds more than the index's {self.total} stones")
        return self.binomial[bars, np.arange(1, PITS + 1)].sum(axis=1)

    def rank_codes(self, codes: np.ndarray) -> np.ndarray:
        """The indices of board codes (an array of unsigned ints)."""
        return self.rank_counts(codes_to_counts(codes))

    def counts(self, indices: np.ndarray) -> np.ndarray:
        """The (n, 6) pit counts of the boards at these indices."""
        return self.all_counts[np.asarray(indices)]

    def codes(self, indices: np.ndarray) -> np.ndarray:
        """The board codes (uint64) of the boards at these indices."""
        return counts_to_codes(self.counts(indices))

    def counts_between(self, start: int, stop: int) -> np.ndarray:
        """The (stop - start, 6) pit counts (uint8) of the boards of ranks start .. stop - 1, unranked
        from the ranks alone: no table of every board, so a block costs only its own rows."""
        rest = np.arange(start, stop, dtype=np.int64)
        bars = np.empty((len(rest), PITS), dtype=np.int64)
        for k in range(PITS - 1, 0, -1):
            # p_k is the largest n with C(n, k + 1) at most what is left of the rank.
            bars[:, k] = np.searchsorted(self.binomial[:, k + 1], rest, side="right") - 1
            rest -= self.binomial[bars[:, k], k + 1]
        bars[:, 0] = rest  # C(n, 1) = n
        counts = np.diff(bars, axis=1, prepend=-1) - 1
        return counts.astype(np.uint8)

    @cached_property
    def all_counts(self) -> np.ndarray:
        """Every board's (6,) pit counts as uint8, row i being the board of index i."""
        counts = np.empty((self.size, PITS), dtype=np.uint8)
        for start in range(0, self.size, _BLOCK):
            stop = min(start + _BLOCK, self.size)
            counts[start:stop] = self.counts_between(start, stop)
        return counts


@per_rule_set
@lru_cache(maxsize=8)
def board_index(total: int) -> BoardIndex:
    return BoardIndex(total)


@per_rule_set
@lru_cache(maxsize=2)
def row_stones(index: BoardIndex) -> tuple[np.ndarray, np.ndarray]:
    """The stones in the mover's row (pits 0, 1, 2) and in the opponent's (3, 4, 5) of every
    board, in index order (uint8), from the ranks alone; kept for the last two indices asked.

    A board's bars are p_k = c_0 + ... + c_k + k: the mover's row holds p_2 - 2 stones and the
    opponent's p_5 - p_2 - 3. p_5, p_4, p_3, p_2 come back in turn as the largest n with
    C(n, k + 1) at most what is left of the rank.
    """
    own = np.empty(index.size, dtype=np.uint8)
    opponent = np.empty(index.size, dtype=np.uint8)
    for start in range(0, index.size, _BLOCK):
        rest = np.arange(start, min(start + _BLOCK, index.size), dtype=np.int64)
        last = np.searchsorted(index.binomial[:, PITS], rest, side="right") - 1
        rest -= index.binomial[last, PITS]
        for k in range(PITS - 2, 1, -1):
            bar = np.searchsorted(index.binomial[:, k + 1], rest, side="right") - 1
            rest -= index.binomial[bar, k + 1]
        own[start : start + len(rest)] = bar - 2
        opponent[start : start + len(rest)] = last - bar - 3
    return own, opponent


def codes_to_counts(codes: np.ndarray) -> np.ndarray:
    codes = np.asarray(codes, dtype=np.uint64)
    return ((codes[:, None] >> _SHIFTS) & np.uint64(PIT_LIMIT)).astype(np.uint8)


def counts_to_codes(counts: np.ndarray) -> np.ndarray:
    return (np.asarray(counts, dtype=np.uint64) << _SHIFTS).sum(axis=1, dtype=np.uint64)
