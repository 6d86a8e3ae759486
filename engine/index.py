"""A dense index of boards: every board of at most T stones gets one number in 0 .. C(T+6, 6) - 1.

Stars and bars: the pit counts c0..c5 of a board, with a seventh "slack" count making the
total exactly T, are marked by six bar positions p_k = c0 + ... + c_k + k, which form a
6-subset of 0 .. T+5. The index is that subset's rank in the combinatorial number system,
``sum_k C(p_k, k + 1)``, so T = 42 (the default rules) gives C(48, 6) = 12,271,512 boards.
Both directions are vectorised over NumPy arrays; the scalar ``rank`` serves Python code.
"""

from __future__ import annotations

from functools import cached_property, lru_cache
from math import comb

import numpy as np

from engine.board import Board
from engine.rules import PIT_BITS, PIT_LIMIT, PITS

_SHIFTS = np.arange(PITS, dtype=np.uint64) * np.uint64(PIT_BITS)


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

    @cached_property
    def all_counts(self) -> np.ndarray:
        """Every board's (6,) pit counts as uint8, row i being the board of index i."""
        counts = _every_composition(self.total)
        ordered = np.empty_like(counts)
        ordered[self.rank_counts(counts)] = counts
        return ordered


@lru_cache(maxsize=8)
def board_index(total: int) -> BoardIndex:
    return BoardIndex(total)


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
    block = 1 << 20
    for start in range(0, index.size, block):
        rest = np.arange(start, min(start + block, index.size), dtype=np.int64)
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


def _every_composition(total: int) -> np.ndarray:
    """Every vector of six counts with sum <= total, as uint8 rows (in no particular order)."""
    counts = np.zeros((1, 0), dtype=np.uint8)
    used = np.zeros(1, dtype=np.int64)
    for _ in range(PITS):
        # Each row branches into one row per count its pit can still take: 0 .. total - used.
        branches = total - used + 1
        parent = np.repeat(np.arange(len(counts)), branches)
        first = np.repeat(np.cumsum(branches) - branches, branches)
        pit = (np.arange(len(parent)) - first).astype(np.uint8)
        counts = np.column_stack([counts[parent], pit])
        used = used[parent] + pit
    return counts
