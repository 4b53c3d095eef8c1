"""Trap rules, as tables."""

from __future__ import annotations

import pytest

from govsi.traps import HOST_BUDGET, QUERY_VARIANTS, REPEATED_SEGMENT, TrapGuard, repeated_segment


@pytest.mark.parametrize(
    ("path", "limit", "expected"),
    [
        ("/", 3, False),
        ("/a/b/c", 3, False),
        ("/a/b/a/b", 3, False),
        ("/a/b/a/b/a/b", 3, True),
        ("/a/a/a", 3, True),
        ("/novice/2026/novice/2026/novice/", 3, True),
        ("/a//a//a", 3, True),  # empty segments do not count, the repeats do
        ("/a/a/a", 0, False),  # off
        ("/a/a", 2, True),
    ],
)
def test_repeated_segment(path: str, limit: int, expected: bool) -> None:
    assert repeated_segment(path, limit) is expected


def test_query_variants_per_path_are_capped_and_counted() -> None:
    refused: list[str] = []
    guard = TrapGuard(max_query_variants=3, on_refusal=refused.append)
    results = [guard.check(f"http://a.gov.si/koledar?mesec={i}") for i in range(5)]
    assert results == [None, None, None, QUERY_VARIANTS, QUERY_VARIANTS]
    # Another path, and the same path without a query, are not affected.
    assert guard.check("http://a.gov.si/dogodki?mesec=1") is None
    assert guard.check("http://a.gov.si/koledar") is None
    assert guard.check("http://b.gov.si/koledar?mesec=9") is None
    assert refused == [QUERY_VARIANTS, QUERY_VARIANTS]


def test_per_host_budget() -> None:
    guard = TrapGuard(max_pages_per_host=2)
    got = [guard.check(f"http://a.gov.si/{i}") for i in range(3)]
    assert got == [None, None, HOST_BUDGET]
    assert guard.check("http://b.gov.si/0") is None


def test_repeated_segments_refused_before_counting() -> None:
    guard = TrapGuard(max_pages_per_host=1)
    assert guard.check("http://a.gov.si/x/x/x") == REPEATED_SEGMENT
    assert guard.check("http://a.gov.si/ok") is None  # the trap did not use the budget


def test_all_off() -> None:
    guard = TrapGuard(max_repeats=0, max_query_variants=0, max_pages_per_host=0)
    assert all(guard.check(f"http://a.gov.si/x/x/x?i={i}") is None for i in range(100))


def test_meeting_a_url_again_counts_nothing() -> None:
    guard = TrapGuard(max_query_variants=2, max_pages_per_host=3)
    for _ in range(10):  # a menu link on every page
        assert guard.check("http://a.gov.si/iskanje?q=1") is None
    assert guard.check("http://a.gov.si/iskanje?q=2") is None
    assert guard.check("http://a.gov.si/iskanje?q=3") == QUERY_VARIANTS
    assert guard.check("http://a.gov.si/iskanje?q=1") is None  # admitted once, always
    assert guard.check("http://a.gov.si/other") is None
    assert guard.check("http://a.gov.si/third") == HOST_BUDGET
