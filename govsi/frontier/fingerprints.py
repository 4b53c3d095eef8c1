"""A set of 64-bit URL fingerprints in flat arrays: 8 bytes a slot, half to three quarters
of the slots used, so about 11 to 32 bytes per member (a Python ``set`` of ints costs
about 60).

Open addressing with linear probing over power-of-two ``array('Q')`` tables (indexed from
Python several times faster than a numpy array; numpy works on the same buffer when a
table grows); 0 marks an empty slot, so the fingerprint 0 is stored as 1 (one more
collision among 2**64 values). Members are never removed: a crawl only learns URLs.

The members are spread over ``SHARDS`` tables by their hash's top bits, and table i
doubles when it is (1/2 + i/(4 (SHARDS - 1))) full: half full for the first, three
quarters for the last. One table doubling at a time, the set grows in steps of about a
sixteenth of its size instead of doubling at once (which held the old table and the new,
three times the set, while it rehashed: bench/README, bench.seen_memory), and its memory
follows the
number of members instead of jumping at each power of two.

A fingerprint stands for its URL (``govsi.web.urls.fingerprint``): two URLs sharing one are
one member. crawldb's unique URL index is the ground truth; this set only saves asking it.
"""

from __future__ import annotations

from array import array
from collections.abc import Iterable, Iterator
from itertools import chain

import numpy as np

__all__ = ["SHARDS", "FingerprintSet"]

SHARDS = 16
_SHARD_BITS = 4
_MIN_SLOTS = 1 << 6
_REHASH_CHUNK = 1 << 18
# Fibonacci hashing spreads fingerprints that share low bits (they should not: SipHash's
# are uniform, but a set of anyone's ints must not degrade to a list).
_MIX = 0x9E3779B97F4A7C15
_MIX_NP = np.uint64(_MIX)
_MASK64 = (1 << 64) - 1


class _Table:
    """One open-addressing table of the set: the members whose mixed hash starts with its
    shard's bits, placed by the bits after those."""

    def __init__(self, slots: int, load: float) -> None:
        self.load = load
        self.len = 0
        self._size(slots)

    def _size(self, slots: int) -> None:
        self.table = array("Q", bytes(8 * slots))
        self.mask = slots - 1
        self.shift = 64 - (slots.bit_length() - 1)
        self.limit = int(slots * self.load)

    def find(self, mixed: int, value: int) -> int:
        """The slot holding ``value``, or the empty slot where it would go."""
        table, mask = self.table, self.mask
        i = ((mixed << _SHARD_BITS) & _MASK64) >> self.shift
        while (found := table[i]) != value and found != 0:
            i = (i + 1) & mask
        return i

    def grow(self) -> None:
        old = np.frombuffer(self.table, dtype=np.uint64)
        self._size(2 * len(old))
        self.len = 0
        # A chunk at a time: the rehash's temporaries stay small beside the two tables.
        for start in range(0, len(old), _REHASH_CHUNK):
            part = old[start : start + _REHASH_CHUNK]
            self.insert_all(part[part != 0])

    def insert_all(self, values: np.ndarray) -> None:
        """Insert distinct, non-zero ``values`` (none held yet), vectorized: each round
        places the values whose slot is free and unclaimed by another, then moves the rest
        one slot on."""
        table, mask = np.frombuffer(self.table, dtype=np.uint64), np.uint64(self.mask)
        with np.errstate(over="ignore"):
            slots = ((values * _MIX_NP) << np.uint64(_SHARD_BITS)) >> np.uint64(self.shift)
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
        self.len += len(values)


class FingerprintSet:
    """Unsigned 64-bit ints, each held once; ``capacity``: members it takes without
    growing."""

    def __init__(self, capacity: int = 0) -> None:
        self._shards: list[_Table] = []
        for i in range(SHARDS):
            load = 0.5 + 0.25 * i / (SHARDS - 1)
            slots = _MIN_SLOTS
            while slots * load < capacity / SHARDS * 1.25:  # the shards' sizes vary a bit
                slots <<= 1
            self._shards.append(_Table(slots, load))

    def __len__(self) -> int:
        return sum(s.len for s in self._shards)

    @property
    def nbytes(self) -> int:
        """Bytes the tables hold (the whole cost: there is nothing else per member)."""
        return sum(len(s.table) * 8 for s in self._shards)

    def __contains__(self, value: object) -> bool:
        if not isinstance(value, int):
            return False
        value = (value & _MASK64) or 1
        mixed = (value * _MIX) & _MASK64
        shard = self._shards[mixed >> (64 - _SHARD_BITS)]
        return shard.table[shard.find(mixed, value)] == value

    def add(self, value: int) -> bool:
        """Hold ``value``; True if it was not held before."""
        value = (value & _MASK64) or 1
        mixed = (value * _MIX) & _MASK64
        shard = self._shards[mixed >> (64 - _SHARD_BITS)]
        i = shard.find(mixed, value)
        if shard.table[i] == value:
            return False
        shard.table[i] = value
        shard.len += 1
        if shard.len > shard.limit:
            shard.grow()
        return True

    def update(self, values: Iterable[int]) -> None:
        for value in values:
            self.add(value)

    def __iter__(self) -> Iterator[int]:
        return (v for v in chain.from_iterable(s.table for s in self._shards) if v)
