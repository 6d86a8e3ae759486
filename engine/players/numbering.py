"""Numbering the keys of a policy table's classes: each distinct key (a packed choice of moves)
gets a number, in the order keys are first met, looked up by a hashed slot rather than sorted."""

from __future__ import annotations

import numpy as np


class Numbering:
    """Numbers keys in the order they are first met (those first met in one call, ascending)."""

    def __init__(self) -> None:
        self.numbers: dict[int, int] = {}
        # The keys met so far, ascending, and their numbers: a call looks its keys up there (a
        # few thousand), which is faster than sorting its million keys as np.unique would; by a
        # hashed slot of each, read directly, six times faster than a binary search.
        self._known = np.empty(0, dtype=np.int64)
        self._known_numbers = np.empty(0, dtype=np.uint32)
        self._slots = KeySlots(self._known)

    @property
    def keys(self) -> list[int]:
        return list(self.numbers)  # a dict keeps the order of insertion: key k is number k

    def __call__(self, keys: np.ndarray) -> np.ndarray:
        keys = keys.reshape(-1)
        at = self._slots.find(keys)
        new = at < 0
        if new.any():
            for key in np.unique(keys[new]).tolist():
                self.numbers[key] = len(self.numbers)
            self._known = np.array(sorted(self.numbers), dtype=np.int64)
            self._known_numbers = np.array([self.numbers[key] for key in self._known.tolist()], dtype=np.uint32)
            self._slots = KeySlots(self._known)
            at = self._slots.find(keys)
        numbers: np.ndarray = self._known_numbers[at]
        return numbers


class KeySlots:
    """Where each of ``known`` (keys, ascending, distinct) stands, found by a hashed slot: a table
    of at least 16 slots a key (Fibonacci hashing), each holding the first key to hash there;
    the few keys that find their slot taken are looked for by a binary search."""

    MULTIPLIER = np.uint64(0x9E3779B97F4A7C15)  # 2**64 over the golden ratio

    def __init__(self, known: np.ndarray) -> None:
        self.known = known
        self.bits = max(16, int(len(known) * 16).bit_length())
        slots = self._slot(known)
        self.slot_key = np.full(1 << self.bits, -1, dtype=np.int64)
        self.slot_at = np.full(1 << self.bits, -1, dtype=np.int64)
        # Reversed, so that of the keys sharing a slot the first (the smallest) is written last.
        self.slot_key[slots[::-1]] = known[::-1]
        self.slot_at[slots[::-1]] = np.arange(len(known) - 1, -1, -1)
        self.crowded = bool(np.any(self.slot_key[slots] != known))

    def find(self, keys: np.ndarray) -> np.ndarray:
        """Each key's place in ``known``, -1 where it is not there."""
        if not len(self.known):
            return np.full(len(keys), -1, dtype=np.int64)
        slots = self._slot(keys)
        at = np.where(self.slot_key[slots] == keys, self.slot_at[slots], -1)
        if self.crowded:
            missed = np.flatnonzero(at < 0)
            place = np.minimum(np.searchsorted(self.known, keys[missed]), len(self.known) - 1)
            at[missed] = np.where(self.known[place] == keys[missed], place, -1)
        return at

    def _slot(self, keys: np.ndarray) -> np.ndarray:
        hashed = keys.astype(np.uint64) * self.MULTIPLIER  # wraps modulo 2**64
        return (hashed >> np.uint64(64 - self.bits)).astype(np.intp)
