"""Trap rules, as tables."""

from __future__ import annotations

import ada_url
import pytest

from govsi.frontier.traps import (
    QUERY_CHAIN,
    QUERY_VARIANTS,
    TrapGuard,
    _parts,
    query_family,
    repeated_segment,
)


@pytest.mark.parametrize(
    ("path", "limit", "expected"),
    [
        ("/", 3, False),
        ("/a/b/c", 3, False),
        ("/a/b/a/b", 3, False),
        ("/a/b/a/b/a/b", 3, True),
        ("/a/a/a", 3, True),
        ("/a/a", 2, True),
        ("/a/a/", 3, False),
        ("//a//a//a", 3, True),
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


def test_pages_per_host_are_a_budget_not_a_trap() -> None:
    # MAX_PAGES_PER_HOST is counted on release (govsi.frontier.budgets), so that what it
    # leaves keeps its FRONTIER row; finding many pages on a host is no trap.
    guard = TrapGuard()
    assert all(guard.check(f"http://a.gov.si/{i}") is None for i in range(5000))


def test_all_off() -> None:
    guard = TrapGuard(max_repeats=0, max_query_variants=0)
    assert all(guard.check(f"http://a.gov.si/x/x/x?i={i}") is None for i in range(100))


def test_meeting_a_url_again_counts_nothing() -> None:
    guard = TrapGuard(max_query_variants=2)
    for _ in range(10):  # a menu link on every page
        assert guard.check("http://a.gov.si/iskanje?q=1") is None
    assert guard.check("http://a.gov.si/iskanje?q=2") is None
    assert guard.check("http://a.gov.si/iskanje?q=3") == QUERY_VARIANTS
    assert guard.check("http://a.gov.si/iskanje?q=1") is None  # admitted once, always
    assert guard.check("http://a.gov.si/other") is None


A = "http://a.gov.si"
MENU = [f"{A}/", f"{A}/o-nas", f"{A}/kontakt"]


def crawl(guard: TrapGuard, start: str, links_of: object, limit: int = 10_000) -> list[str]:
    """Breadth-first over a site whose pages' links ``links_of(url)`` gives, each link
    through ``guard.chain``; the pages fetched, in order."""
    known = {start, *MENU}
    queue, fetched = [start], []
    while queue and len(fetched) < limit:
        url = queue.pop(0)
        fetched.append(url)
        for link in guard.chain(url, links_of(url), lambda u: u not in known):  # type: ignore[operator]
            if link not in known:
                known.add(link)
                queue.append(link)
    return fetched


def calendar(url: str) -> list[str]:
    month = int(url.rpartition("=")[2])
    return [*MENU, f"{A}/koledar?mesec={month - 1}", f"{A}/koledar?mesec={month + 1}"]


def test_an_endless_calendar_ends_after_a_few_hops() -> None:
    refused: list[str] = []
    guard = TrapGuard(max_query_chain=10, on_refusal=refused.append)
    fetched = crawl(guard, f"{A}/koledar?mesec=600", calendar)
    # Ten hops each way from the month the crawl came in at.
    assert len(fetched) == 21
    assert {int(u.rpartition("=")[2]) for u in fetched} == set(range(590, 611))
    assert refused == [QUERY_CHAIN, QUERY_CHAIN]


def test_pagination_that_brings_new_pages_is_never_cut() -> None:
    def archive(url: str) -> list[str]:
        if "/clanek/" in url:
            return MENU
        page = int(url.rpartition("=")[2])
        articles = [f"{A}/novice/clanek/{page}-{i}" for i in range(10)]
        return [*MENU, *articles, *([f"{A}/novice?stran={page + 1}"] if page < 300 else [])]

    guard = TrapGuard(max_query_chain=3)
    fetched = crawl(guard, f"{A}/novice?stran=1", archive)
    assert sum("stran=" in u for u in fetched) == 300
    assert sum("/clanek/" in u for u in fetched) == 3000


def test_a_chain_of_articles_on_one_script_is_not_one_family() -> None:
    # index.php?stran=N lists index.php?id=M: other parameter names, so new, so kept.
    assert query_family(f"{A}/index.php?stran=2") != query_family(f"{A}/index.php?id=7")
    assert query_family(f"{A}/k?leto=2026&mesec=5") == query_family(f"{A}/k?mesec=6&leto=2025")
    assert query_family(f"{A}/k?a=1&a=2") == query_family(f"{A}/k?a=3")
    assert query_family(f"{A}/k") == ("a.gov.si", "/k", ())


def test_chain_is_off_at_zero_and_keeps_links_that_are_not_new() -> None:
    links = [f"{A}/koledar?mesec=2", f"{A}/"]
    assert (
        TrapGuard(max_query_chain=0).chain(f"{A}/koledar?mesec=1", links, lambda u: True) == links
    )
    guard = TrapGuard(max_query_chain=1)
    page = f"{A}/koledar?mesec=5"
    assert guard.chain(page, links, lambda u: True) == links  # hop 1 of 1
    # Hop 2: a new sibling is refused, a known one stays (a link row, not a request).
    assert guard.chain(links[0], [f"{A}/koledar?mesec=3"], lambda u: True) == []
    assert guard.chain(links[0], [page], lambda u: False) == [page]


@pytest.mark.parametrize(
    "url",
    [
        "https://a.gov.si/",
        "https://a.gov.si/x/y?b=1&c=2",
        "http://a.gov.si:8080/k?q",
        "https://a.gov.si/%C4%8D/?x=%20",
        "http://[::1]:80/v?x=1",
        "https://xn--obina-bva.gov.si/a;b=c/d",
    ],
)
def test_a_canonical_url_is_cut_into_the_parts_the_parser_gives(url: str) -> None:
    parts = ada_url.parse_url(url, ("hostname", "pathname", "search"))
    assert _parts(url) == (parts["hostname"], parts["pathname"], parts["search"])


def test_a_page_without_a_query_heads_no_chain_and_costs_no_lookups() -> None:
    def never(url: str) -> bool:
        raise AssertionError("a page without a query needs no lookup of its links")

    links = [f"{A}/koledar?mesec=1", f"{A}/koledar?mesec=2", f"{A}/"]
    assert TrapGuard(max_query_chain=1).chain(f"{A}/koledar", links, never) == links


def test_query_family_of_hosts_the_fast_cut_leaves_to_the_parser() -> None:
    assert query_family("http://[::1]:8080/k?b=1&a=2") == ("[::1]", "/k", ("a", "b"))
    assert query_family("http://u@a.gov.si/k?x=1") == ("a.gov.si", "/k", ("x",))
