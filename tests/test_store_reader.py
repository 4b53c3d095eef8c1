"""The reads a continuing or shared crawl makes of crawldb (``CrawlReader``), on SQLite and
PostgreSQL: what is still to do and in which order, what is known, what was fetched, and
the robots.txt files a worker taking a host over reads instead of fetching them."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy import Engine

from govsi.items import DiscoveredPage, FetchedImage, FetchedPage, RobotsFile
from govsi.robots.fetching import stored_outcome
from govsi.store.reader import CrawlReader
from govsi.store.writer import CrawlWriter

T = datetime(2026, 11, 24, 12, 0, tzinfo=UTC)


def html(
    url: str, depth: int, links: Sequence[str] = (), images: Sequence[str] = ()
) -> FetchedPage:
    return FetchedPage(
        url, depth, "HTML", T, 200, html_content="x", links=list(links), images=list(images)
    )


@pytest.fixture
def crawl(engine: Engine) -> CrawlReader:
    """Two hosts part-way through a crawl: a.gov.si fetched to depth 1, b.gov.si only seen."""
    w = CrawlWriter(engine)
    w.add(DiscoveredPage("http://a.gov.si/", 0))
    w.add(
        html(
            "http://a.gov.si/",
            0,
            links=["http://a.gov.si/2", "http://a.gov.si/1", "http://b.gov.si/"],
            images=["http://a.gov.si/logo.png", "http://a.gov.si/slika.jpg"],
        )
    )
    w.add(html("http://a.gov.si/1", 1, links=["http://a.gov.si/deep", "http://a.gov.si/3"]))
    w.add(FetchedImage("http://a.gov.si/logo.png", T, 200, "image/png", b"png"))
    assert w.flush()
    return CrawlReader(engine)


def test_hosts_with_work_each_with_one_of_their_urls(crawl: CrawlReader) -> None:
    assert crawl.frontier_hosts() == [
        ("a.gov.si", "http://a.gov.si/2"),
        ("b.gov.si", "http://b.gov.si/"),
    ]
    # counts: how many FRONTIER rows each has (a shared crawl balances by them)
    assert crawl.frontier_hosts(counts=True) == [
        ("a.gov.si", "http://a.gov.si/2", 3),
        ("b.gov.si", "http://b.gov.si/", 1),
    ]
    # A depth-limited crawl has no work on a host whose rows are all too deep.
    assert crawl.frontier_hosts(max_depth=1) == [
        ("a.gov.si", "http://a.gov.si/2"),
        ("b.gov.si", "http://b.gov.si/"),
    ]


def test_a_hosts_queue_comes_back_breadth_first_from_a_cursor(crawl: CrawlReader) -> None:
    rows = crawl.frontier_batch("a.gov.si", (-1, 0), limit=10)
    # Depth first, then discovery order (the row id), as the crawl would have fetched them.
    assert [(u, d) for u, d, _ in rows] == [
        ("http://a.gov.si/2", 1),
        ("http://a.gov.si/deep", 2),
        ("http://a.gov.si/3", 2),
    ]
    first, rest = rows[:1], crawl.frontier_batch("a.gov.si", rows[0][1:], limit=10)
    assert first + rest == rows  # the cursor resumes after the last row read
    assert crawl.frontier_batch("a.gov.si", (-1, 0), limit=2) == rows[:2]
    assert [u for u, _, _ in crawl.frontier_batch("a.gov.si", (-1, 0), 10, max_depth=1)] == [
        "http://a.gov.si/2"
    ]
    assert crawl.frontier_batch("c.gov.si", (-1, 0), 10) == []


def test_known_urls_are_every_page_row_fetched_or_not(crawl: CrawlReader) -> None:
    assert set(crawl.known_urls()) == {
        "http://a.gov.si/",
        "http://a.gov.si/1",
        "http://a.gov.si/2",
        "http://a.gov.si/3",
        "http://a.gov.si/deep",
        "http://b.gov.si/",
    }


def test_images_downloaded_and_images_still_owed(crawl: CrawlReader) -> None:
    assert set(crawl.fetched_image_urls()) == {"http://a.gov.si/logo.png"}
    assert set(crawl.unfetched_image_urls()) == {"http://a.gov.si/slika.jpg"}


def test_what_was_fetched_on_hosts_taken_over(crawl: CrawlReader) -> None:
    # Pages and downloaded images of these hosts; FRONTIER rows and other hosts are not.
    assert crawl.fetched_on_hosts(["a.gov.si"]) == {
        "http://a.gov.si/",
        "http://a.gov.si/1",
        "http://a.gov.si/logo.png",
    }
    assert crawl.fetched_on_hosts(["b.gov.si"]) == set()


def test_robots_txt_is_read_back_for_the_workers_that_take_a_host_over(engine: Engine) -> None:
    from govsi.store.schema import utcnow

    w = CrawlWriter(engine)
    now = utcnow()
    w.add(RobotsFile("a.gov.si", "User-agent: *\nDisallow: /x\n", 200, now))
    w.add(RobotsFile("b.gov.si", None, 404, now))  # none: everything allowed
    w.add(RobotsFile("old.gov.si", "User-agent: *\n", 200, now - timedelta(days=2)))
    w.add(RobotsFile("legacy.gov.si", "User-agent: *\n"))  # from before the status was kept
    w.add(DiscoveredPage("http://c.gov.si/", 0))  # a site whose robots.txt nobody fetched
    assert w.flush()
    hosts = ["a.gov.si", "b.gov.si", "c.gov.si", "old.gov.si", "legacy.gov.si", "d.gov.si"]
    got = CrawlReader(engine).robots_of_hosts(hosts, max_age=24 * 3600)
    assert sorted(got) == ["a.gov.si", "b.gov.si"]
    assert (got["a.gov.si"].status, got["a.gov.si"].content) == (
        200,
        "User-agent: *\nDisallow: /x\n",
    )
    assert (got["b.gov.si"].status, got["b.gov.si"].content) == (404, None)
    assert all(0 <= r.age < 60 for r in got.values())
    rules = stored_outcome("a.gov.si", 200, got["a.gov.si"].content, "http://a.gov.si/robots.txt")
    assert not rules.rules.allowed("http://a.gov.si/x", "govsi-crawler")
    assert rules.rules.allowed("http://a.gov.si/y", "govsi-crawler") and rules.error is None
