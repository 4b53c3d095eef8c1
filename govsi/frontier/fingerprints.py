"""A set of 64-bit URL fingerprints in one flat array: 8 bytes a slot, at most half of the
slots used, so 16 to 32 bytes per member (a Python ``set`` of ints costs about 60).

Open addressing with linear probing over a power-of-two ``array('Q')`` (indexed from
Python several times faster than a numpy array; numpy works on the same buffer when the
table grows); 0 marks an
empty slot, so the fingerprint 0 is stored as 1 (one more collision among 2**64 values).
The table doubles when it is half full. Members are never removed: a crawl only learns
URLs.

A fingerprint stands for its URL (``govsi.web.urls.fingerprint``): two URLs sharing one are
one member. crawldb's unique URL index is the ground truth; this set only saves asking it.
"""

from __future__ import annotations

from array import array
from collections.abc import Iterable, Iterator

import numpy as np

__all__ = ["FingerprintSet"]

_MIN_SLOTS = 1 << 10
_REHASH_CHUNK = 1 << 18
# Fibonacci hashing spreads fingerprints that share low bits (they should not: SipHash's
# are uniform, but a set of anyone's ints must not degrade to a list).
_MIX = np.uint64(0x9E3779B97F4A7C15)
_MASK64 = (1 << 64) - 1


class FingerprintSet:
    """Unsigned 64-bit ints, each held once."""

    def __init__(self, capacity: int = 0) -> None:
        slots = _MIN_SLOTS
        while slots < 2 * capacity:
            slots <<= 1
        self._table = _zeros(slots)
        self._mask = slots - 1
        self._shift = 64 - (slots.bit_length() - 1)
        self._len = 0

    def __len__(self) -> int:
        return self._len

    @property
    def nbytes(self) -> int:
        """Bytes the table holds (the whole cost: there is nothing else per member)."""
        return len(self._table) * self._table.itemsize

    def _find(self, value: int) -> int:
        """The slot holding ``value`` (stored form), or the empty slot where it would go."""
        table, mask = self._table, self._mask
        i = ((value * 0x9E3779B97F4A7C15) & _MASK64) >> self._shift
        while (found := table[i]) != value and found != 0:
            i = (i + 1) & mask
        return i

    def __contains__(self, value: object) -> bool:
        if not isinstance(value, int):
            return False
        value = (value & _MASK64) or 1
        return self._table[self._find(value)] == value

    def add(self, value: int) -> bool:
        """Hold ``value``; True if it was not held before."""
        value = (value & _MASK64) or 1
        table = self._table
        i = self._find(value)
        if table[i] == value:
            return False
        table[i] = value
        self._len += 1
        if 2 * self._len > len(table):
            self._grow()
        return True

    def update(self, values: Iterable[int]) -> None:
        for value in values:
            self.add(value)

    def _grow(self) -> None:
        old = self._table
        slots = 2 * len(old)
        self._table = _zeros(slots)
        self._mask = slots - 1
        self._shift = 64 - (slots.bit_length() - 1)
        self._len = 0
        held = _view(old)
        # A chunk at a time: the rehash's temporaries stay small beside the two tables.
        for start in range(0, len(held), _REHASH_CHUNK):
            part = held[start : start + _REHASH_CHUNK]
            self._insert_all(part[part != 0])

    def _insert_all(self, values: np.ndarray) -> None:
        """Insert distinct, non-zero ``values`` (none held yet), vectorized: each round
        places the values whose slot is free and unclaimed by another, then moves the rest
        one slot on."""
        table, mask = _view(self._table), np.uint64(self._mask)
        with np.errstate(over="ignore"):
            slots = (values * _MIX) >> np.uint64(self._shift)
        pending = values
        while len(pending):
            free = table[slots] == 0
            # Of the values aiming at one free slot, the first takes it.
            _, first = np.unique(slots[free], return_index=True)
            placed = np.flatnonzero(free)[first]
            table[slots[placed]] = pending[placed]
            keep = np.ones(len(pending), dtype=bool)
            keep[placed] = False
            pending = pending[keep]
            slots = (slots[keep] + np.uint64(1)) & mask
        self._len += len(values)

    def __iter__(self) -> Iterator[int]:
        return (v for v in self._table if v)


def _zeros(slots: int) -> array[int]:
    return array("Q", bytes(8 * slots))


def _view(table: array[int]) -> np.ndarray:
    return np.frombuffer(table, dtype=np.uint64)
