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

This module is the one home of that arithmetic: the count of boards (``position_count``, and
``positions_of`` a rule set), the rank and its inverse, the rows' stones and their difference
from the ranks alone (``row_stones``, ``row_differences``) and the rank of the board turned by
three pits (``turned_ranks``).
"""

from __future__ import annotations

from functools import cached_property, lru_cache
from math import comb
from typing import NamedTuple

import numpy as np

from engine.game import PIT_BITS, PIT_LIMIT, PITS, ROW, Board, Rules
from engine.store import per_rule_set

_SHIFTS = np.arange(PITS, dtype=np.uint64) * np.uint64(PIT_BITS)
_BLOCK = 1 << 20  # boards unranked at a time


def position_count(total_stones: int) -> int:
    """The boards of at most ``total_stones`` stones: C(total_stones + 6, 6), the size of their index
    and of a rule set's position tables (12,271,512 for the default rules' 42 stones)."""
    return comb(total_stones + PITS, PITS)


def positions_of(rules: Rules) -> int:
    """The positions of a rule set's index: every board of at most its stones (12,271,512 under RULES.md)."""
    return position_count(rules.total_stones)


class BoardIndex:
    """The dense index of the boards of at most ``total`` stones."""

    def __init__(self, total: int) -> None:
        if not 0 <= total <= PIT_LIMIT:
            raise ValueError(f"an index covers boards of 0 to {PIT_LIMIT} stones, not {total!r}")
        self.total = total
        self.size = position_count(total)
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
        return position_count(stones - 1), position_count(stones)

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

    @cached_property
    def _unranking(self) -> _Unranking:
        """What turned_ranks looks up. Once p_(k+1) is found, what is left of the rank is below
        C(p_(k+1), k + 1), so bar[k] covers 0 .. C(total + 6, k + 1) - 1: 1.9 MB for 42 stones. The
        top bar, whose table would be as long as the index, is found by a binary search instead."""
        binomial = tuple(np.ascontiguousarray(self.binomial[:, k + 1]) for k in range(PITS))
        bar = tuple(
            (np.searchsorted(binomial[k], np.arange(comb(self.total + PITS, k + 1)), side="right") - 1).astype(np.uint8)
            for k in range(PITS - 1)
        )
        return _Unranking(binomial, bar)


class _Unranking(NamedTuple):
    binomial: tuple[np.ndarray, ...]  # binomial[k][n] = C(n, k + 1) for every bar position n
    bar: tuple[np.ndarray, ...]  # bar[k][r] = the largest n with C(n, k + 1) <= r, k = 0 .. 4 (uint8)


@per_rule_set
@lru_cache(maxsize=8)
def board_index(total: int) -> BoardIndex:
    return BoardIndex(total)


@per_rule_set
@lru_cache(maxsize=2)
def row_stones(index: BoardIndex) -> tuple[np.ndarray, np.ndarray]:
    """The stones in the mover's row (pits 0, 1, 2) and in the opponent's (3, 4, 5) of every
    board, in index order (uint8), from the ranks alone (``_row_bars``); kept for the last two
    indices asked."""
    third, last = _row_bars(index.total)
    return (third - 2).astype(np.uint8), (last - third - 3).astype(np.uint8)


def row_differences(total: int) -> np.ndarray:
    """V_0 of every board of at most ``total`` stones, in index order (int8): own row minus
    opponent row, from the ranks alone (``_row_bars``): 2 p_2 - p_5 + 1."""
    third, last = _row_bars(total)
    return (2 * third - last + 1).astype(np.int8)


def turned_ranks(index: BoardIndex, ranks: np.ndarray) -> np.ndarray:
    """The index of each board turned by three pits (engine.game.rotate), from the ranks alone.

    p_5, ..., p_0 come back in turn as the largest n with C(n, k + 1) at most what is left of the
    rank (as in counts_between). The turned board c_3, c_4, c_5, c_0, c_1, c_2 has the bars
    p_(3+k) - p_2 - 1 for k = 0, 1, 2 and p_5 - p_2 + p_(k-3) for k = 3, 4, 5."""
    tables = index._unranking
    top = np.searchsorted(tables.binomial[PITS - 1], ranks, side="right") - 1
    bars = [top] * PITS  # bars[0 .. 4] are found below
    rest = ranks - tables.binomial[PITS - 1][top]
    for k in range(PITS - 2, -1, -1):
        bars[k] = tables.bar[k][rest].astype(np.int64)
        rest = rest - tables.binomial[k][bars[k]]
    turned = [bars[ROW + k] - bars[ROW - 1] - 1 for k in range(ROW)]
    turned += [bars[PITS - 1] - bars[ROW - 1] + bars[k] for k in range(ROW)]
    return sum(tables.binomial[k][bar] for k, bar in enumerate(turned))


def codes_to_counts(codes: np.ndarray) -> np.ndarray:
    codes = np.asarray(codes, dtype=np.uint64)
    return ((codes[:, None] >> _SHIFTS) & np.uint64(PIT_LIMIT)).astype(np.uint8)


def counts_to_codes(counts: np.ndarray) -> np.ndarray:
    return (np.asarray(counts, dtype=np.uint64) << _SHIFTS).sum(axis=1, dtype=np.uint64)


def _row_bars(total: int) -> tuple[np.ndarray, np.ndarray]:
    """The bars p_2 and p_5 of every board of at most ``total`` stones, in index order (int16),
    without unranking a single board: the mover's row holds p_2 - 2 stones, the opponent's
    p_5 - p_2 - 3.

    In index order the bars p_0 < ... < p_5 run through the 6-subsets of 0 .. total + 5 in colex
    order: those of largest bar m follow all those of smaller largest bar, ordered as their first
    five bars are, and so on down.
    """
    top = total + PITS  # every bar is below this
    third = np.concatenate([np.full(comb(m, 2), m, dtype=np.int16) for m in range(2, top)])  # p_2 of the 3-subsets
    for size in range(ROW, PITS):
        third = np.concatenate([third[: comb(m, size)] for m in range(size, top)])
    last = np.repeat(np.arange(PITS - 1, top, dtype=np.int16), [comb(m, PITS - 1) for m in range(PITS - 1, top)])
    return third, last
