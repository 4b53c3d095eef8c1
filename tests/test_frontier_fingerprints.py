"""FingerprintSet: the same answers as a Python set of 64-bit ints, in 11 to 32 bytes per
member, grown a sixteenth at a time."""

from __future__ import annotations

import random

import pytest

from govsi.frontier.fingerprints import SHARDS, FingerprintSet

MAX = 2**64 - 1


@pytest.mark.parametrize(
    ("values", "held"),
    [
        ([], 0),
        ([5], 1),
        ([5, 5], 1),
        ([0], 1),  # stored as 1: the one value that shares a slot
        ([MAX, MAX - 1, 1, 2], 4),
        ([1 << 63, 1 << 62, 1 << 61], 3),  # high bits only
        (list(range(0, 4096, 1024)), 4),  # low bits all zero
    ],
)
def test_members(values: list[int], held: int) -> None:
    s = FingerprintSet()
    added = [s.add(v) for v in values]
    assert len(s) == held
    assert all(v in s for v in values)
    assert added == [v not in values[:i] for i, v in enumerate(values)]


def test_agrees_with_a_python_set_through_many_growths() -> None:
    rng = random.Random(7)
    ours, ref = FingerprintSet(), set()
    # Uniform values, and ones sharing their low 40 bits: both must spread.
    values = [rng.getrandbits(64) for _ in range(20_000)]
    values += [(rng.getrandbits(24) << 40) | 12345 for _ in range(20_000)]
    values += values[:5_000]  # repeats
    for v in values:
        assert ours.add(v) == (v not in ref)
        ref.add(v)
    assert len(ours) == len(ref)
    assert sorted(ours) == sorted(ref)
    assert all(rng.getrandbits(64) not in ours for _ in range(10_000))  # (2**-48 to fail)
    assert "x" not in ours


def test_a_member_costs_11_to_32_bytes() -> None:
    s = FingerprintSet()
    rng = random.Random(1)
    for n in (3_000, 30_000, 100_000, 300_000):
        while len(s) < n:
            s.add(rng.getrandbits(64))
        assert 8 / 0.75 <= s.nbytes / len(s) <= 32


def test_it_grows_in_steps_of_a_table_not_the_whole_set() -> None:
    # Each of the SHARDS tables doubles at its own load (1/2 to 3/4): memory follows the
    # members, and a growth holds one table twice, never the whole set.
    s = FingerprintSet()
    rng = random.Random(2)
    steps: list[float] = []
    while len(s) < 400_000:
        before = s.nbytes
        s.add(rng.getrandbits(64))
        if s.nbytes != before and len(s) > 20_000:
            steps.append((s.nbytes - before) / before)
    assert len(steps) >= 2 * SHARDS  # every table grew, more than once
    assert max(steps) <= 2 / SHARDS


def test_a_presized_set_does_not_grow() -> None:
    s = FingerprintSet(capacity=10_000)
    before = s.nbytes
    s.update(range(1, 10_001))
    assert s.nbytes == before and len(s) == 10_000
