"""FrontierScheduler on its own: a fake crawldb store, a fake spider, a fake clock and DNS.

What a user relies on, checked without a crawl: robots.txt goes first and decides; no host
nor address is asked sooner than its delay; breadth-first order; pages that may not be
fetched are recorded with the reason; back-pressure from a full write buffer.
"""

from __future__ import annotations

import pytest
from scrapy import Request, Spider
from scrapy.utils.test import get_crawler

from govsi.frontier.hostsetup import ROBOTS_REFUSALS
from govsi.frontier.scheduler import FrontierScheduler
from govsi.items import SiteInfo
from govsi.requestmeta import (
    KIND_IMAGE,
    KIND_RESOURCE,
    META_KIND,
)
from govsi.store.extension import CrawlStore
from tests.support.scheduler import (
    DELAY,
    FactorySpider,
    FakeDupeFilter,
    FakeStore,
    Harness,
    config,
    harnesses,
    make,
    urls,
)

__all__ = ["harnesses"]  # a fixture, used by name
from tests.support.stats import DictStats


def test_robots_txt_goes_first_and_the_page_waits_out_the_delay(
    harnesses: list[Harness], monkeypatch: pytest.MonkeyPatch
) -> None:
    h = make(harnesses, monkeypatch, {"a.gov.si": "10.0.0.1"})
    h.page("https://a.gov.si/stran")
    robots = h.take()
    assert robots is not None and robots.url == "https://a.gov.si/robots.txt"
    assert h.take() is None  # nothing of the host before its rules are known
    h.answer_robots(robots, body="User-agent: *\nAllow: /\n")
    h.at(DELAY - 0.1)
    assert h.take() is None  # robots.txt counts: the host was asked 4.9 s ago
    h.at(0.1)
    page = h.take()
    assert page is not None and page.url == "https://a.gov.si/stran"
    assert h.scheduler.has_pending_requests() is False and len(h.scheduler) == 0


def test_a_longer_crawl_delay_is_honoured_and_recorded(
    harnesses: list[Harness], monkeypatch: pytest.MonkeyPatch
) -> None:
    h = make(harnesses, monkeypatch, {"a.gov.si": "10.0.0.1"})
    h.page("https://a.gov.si/1")
    h.page("https://a.gov.si/2")
    robots = h.take()
    assert robots is not None
    h.answer_robots(robots, body="User-agent: *\nCrawl-delay: 12\n")
    h.at(DELAY)
    assert h.take() is None
    h.at(12 - DELAY)
    assert urls([h.take()]) == ["https://a.gov.si/1"]  # type: ignore[list-item]
    h.at(11.9)
    assert h.take() is None
    h.at(0.1)
    assert urls([h.take()]) == ["https://a.gov.si/2"]  # type: ignore[list-item]
    sites = [i for i in h.store.added if isinstance(i, SiteInfo)]
    assert [(s.host, s.ip_address, s.crawl_delay) for s in sites] == [
        ("a.gov.si", "10.0.0.1", 12.0)
    ]


def test_a_crawl_delay_beyond_the_cap_leaves_the_host_for_later_and_says_why(
    harnesses: list[Harness], monkeypatch: pytest.MonkeyPatch
) -> None:
    h = make(harnesses, monkeypatch, {"a.gov.si": "10.0.0.1"}, max_crawl_delay=30.0)
    h.page("https://a.gov.si/1")
    robots = h.take()
    assert robots is not None
    h.answer_robots(robots, body="User-agent: *\nCrawl-delay: 3600\n")
    h.at(4000)
    assert h.take() is None  # never fetched faster than the site asked
    [record] = h.store.not_fetched()
    assert record.url == "https://a.gov.si/1" and "MAX_CRAWL_DELAY" in (record.fetch_error or "")
    assert h.stats.get_value("govsi/robots/crawl_delay_too_long") == 1


# The govsi-crawler group beats "*", whichever way it goes.
OURS_OUT = "User-agent: govsi-crawler\nDisallow: /\n\nUser-agent: *\nAllow: /\n"
OURS_IN = "User-agent: *\nDisallow: /\n\nUser-agent: govsi-crawler\nAllow: /\n"


@pytest.mark.parametrize(
    ("robots_txt", "fetched", "forbidden"),
    [
        ("User-agent: *\nDisallow: /zasebno/\n", ["/javno"], ["/zasebno/x"]),
        (OURS_OUT, [], ["/javno", "/zasebno/x"]),
        (OURS_IN, ["/javno", "/zasebno/x"], []),
        ("", ["/javno", "/zasebno/x"], []),
    ],
)  # fmt: skip
def test_robots_txt_decides_and_refused_pages_are_recorded(
    harnesses: list[Harness],
    monkeypatch: pytest.MonkeyPatch,
    robots_txt: str,
    fetched: list[str],
    forbidden: list[str],
) -> None:
    h = make(harnesses, monkeypatch, {"a.gov.si": "10.0.0.1"})
    for path in ("/javno", "/zasebno/x"):
        h.page(f"https://a.gov.si{path}")
    robots = h.take()
    assert robots is not None
    h.answer_robots(robots, body=robots_txt)
    got: list[str] = []
    for _ in range(4):
        h.at(DELAY)
        got += urls(h.drain())
    assert got == [f"https://a.gov.si{p}" for p in fetched]
    refused = {(r.url, r.fetch_error) for r in h.store.not_fetched()}
    assert refused == {(f"https://a.gov.si{p}", "forbidden by robots.txt") for p in forbidden}


def test_pages_go_out_breadth_first(
    harnesses: list[Harness], monkeypatch: pytest.MonkeyPatch
) -> None:
    h = make(harnesses, monkeypatch, {"a.gov.si": "10.0.0.1"}, obey_robots=False)
    h.page("https://a.gov.si/globoko", depth=3)
    h.page("https://a.gov.si/srednje", depth=2)
    h.page("https://a.gov.si/plitvo", depth=1)
    got = []
    for _ in range(3):
        got += urls(h.drain())
        h.at(DELAY)
    assert got == [
        "https://a.gov.si/plitvo",
        "https://a.gov.si/srednje",
        "https://a.gov.si/globoko",
    ]


def test_two_hosts_on_one_address_share_its_delay_and_others_do_not_wait(
    harnesses: list[Harness], monkeypatch: pytest.MonkeyPatch
) -> None:
    addresses = {"a.gov.si": "10.0.0.1", "b.gov.si": "10.0.0.1", "c.gov.si": "10.0.0.2"}
    h = make(harnesses, monkeypatch, addresses, obey_robots=False)
    for host in ("a", "b", "c"):
        h.page(f"https://{host}.gov.si/")
    first = urls(h.drain())
    # One of a and b (same address), and c (another) at once.
    assert len(first) == 2 and "https://c.gov.si/" in first
    h.at(DELAY - 0.5)
    assert h.drain() == []  # the other host on 10.0.0.1 waits out the address's delay
    h.at(0.5)
    second = urls(h.drain())
    assert len(second) == 1 and second[0] not in first and second[0] != "https://c.gov.si/"


def test_a_page_another_worker_fetched_is_not_released(
    harnesses: list[Harness], monkeypatch: pytest.MonkeyPatch
) -> None:
    from govsi.web.urls import fingerprint

    h = make(harnesses, monkeypatch, {"a.gov.si": "10.0.0.1"}, obey_robots=False)
    h.page("https://a.gov.si/1")
    h.page("https://a.gov.si/2")
    h.scheduler.mark_released([fingerprint("https://a.gov.si/1")])
    got: list[str] = []
    for _ in range(3):
        got += urls(h.drain())
        h.at(DELAY)
    assert got == ["https://a.gov.si/2"]


def test_a_full_write_buffer_holds_new_requests_until_it_drains(
    harnesses: list[Harness], monkeypatch: pytest.MonkeyPatch
) -> None:
    h = make(harnesses, monkeypatch, {"a.gov.si": "10.0.0.1"}, obey_robots=False)
    h.page("https://a.gov.si/1")
    h.store.full = True
    assert h.take() is None
    assert h.take() is None
    assert h.stats.get_value("govsi/db_backpressure") == 1  # once per hold, not per ask
    assert h.scheduler.has_pending_requests()
    h.store.full = False
    assert urls(h.drain()) == ["https://a.gov.si/1"]


def test_a_host_that_does_not_resolve_keeps_its_pages_with_the_reason(
    harnesses: list[Harness], monkeypatch: pytest.MonkeyPatch
) -> None:
    h = make(harnesses, monkeypatch, {}, obey_robots=False)
    h.page("https://nikjer.gov.si/1")
    h.page("https://nikjer.gov.si/2", kind=KIND_IMAGE)
    assert h.drain() == []
    [record] = h.store.not_fetched()  # images have no page row to record
    assert record.url == "https://nikjer.gov.si/1" and "DNS" in (record.fetch_error or "")
    assert not h.scheduler.has_pending_requests()


def test_robots_txt_that_keeps_failing_is_retried_then_the_host_given_up(
    harnesses: list[Harness], monkeypatch: pytest.MonkeyPatch
) -> None:
    h = make(harnesses, monkeypatch, {"a.gov.si": "10.0.0.1"}, robots_retries=1)
    h.page("https://a.gov.si/1")
    robots = h.take()
    assert robots is not None
    h.answer_robots(robots, status=503)
    h.at(DELAY)
    assert h.drain() == []  # RFC 9309: nothing of the host while robots.txt is unavailable
    assert h.scheduler.has_pending_requests()  # a retry is due
    h.at(10.0)  # ROBOTSTXT_RETRY_DELAY
    retry = h.take()
    assert retry is not None and retry.url == "https://a.gov.si/robots.txt"
    h.answer_robots(retry, status=503)
    h.at(100.0)
    assert h.drain() == []
    [record] = h.store.not_fetched()
    assert record.fetch_error == "robots.txt unavailable (HTTP 503)"


@pytest.mark.parametrize(
    ("url", "refusal"),
    [
        ("https://a.gov.si/app.js", None),
        ("https://a.gov.si/zasebno/api", "robots"),
        ("https://neznan.gov.si/app.js", "host_unknown"),
        ("https://b.gov.si/app.js", "robots_unknown"),
    ],
)
def test_a_rendered_pages_requests_pass_the_same_rules(
    harnesses: list[Harness], monkeypatch: pytest.MonkeyPatch, url: str, refusal: str | None
) -> None:
    addresses = {"a.gov.si": "10.0.0.1", "b.gov.si": "10.0.0.2"}
    h = make(harnesses, monkeypatch, addresses)
    h.page("https://a.gov.si/")
    h.page("https://b.gov.si/")
    [robots_a, _robots_b] = sorted(h.drain(), key=lambda r: r.url)
    h.answer_robots(robots_a, body="User-agent: *\nDisallow: /zasebno/\n")
    assert h.scheduler.resource_refusal(url) == refusal


def test_the_scheduler_needs_a_spider_that_makes_requests() -> None:
    scheduler = FrontierScheduler(FakeDupeFilter(), config(), DictStats(), FakeStore())  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="RequestFactory"):
        scheduler.open(Spider(name="plain"))


def test_from_crawler_reads_the_settings(monkeypatch: pytest.MonkeyPatch) -> None:
    from govsi import settings as project

    values = {k: getattr(project, k) for k in dir(project) if k.isupper()}
    # No extensions: the project's would open a crawldb in the working directory (and no
    # revisits, which read it: tests/test_frontier_revisits.py).
    values.update(EXTENSIONS={}, DEFAULT_CRAWL_DELAY=2.5, DEPTH_LIMIT=7, REVISIT="off")
    values.update(DUPEFILTER_CLASS=f"{__name__}.FakeDupeFilter")
    crawler = get_crawler(FactorySpider, values)
    store = FakeStore()
    monkeypatch.setattr(crawler, "get_extension", {CrawlStore: store}.get)
    scheduler = FrontierScheduler.from_crawler(crawler)
    assert scheduler.store is store
    assert scheduler.config.crawl_delay == 2.5 and scheduler.config.scope.depth_limit == 7
    assert scheduler.config.scope.robots_token == "govsi-crawler"
    assert isinstance(scheduler.df, FakeDupeFilter)


def test_a_robots_check_too_costly_fails_closed_with_its_reason(
    harnesses: list[Harness], monkeypatch: pytest.MonkeyPatch
) -> None:
    import govsi.robots.matching as matching

    monkeypatch.setattr(matching, "MAX_CHECK_WORK", 50_000)
    h = make(harnesses, monkeypatch, {"a.gov.si": "10.0.0.1"})
    costly = "https://a.gov.si/a" + "c" * 500  # 50 wildcard rules x 500 characters
    for url in ("https://a.gov.si/javno", costly):
        h.page(url)
    robots = h.take()
    assert robots is not None
    h.answer_robots(
        robots, body="User-agent: *\n" + "".join(f"Disallow: /a*{i}*b\n" for i in range(50))
    )
    got: list[str] = []
    for _ in range(4):
        h.at(DELAY)
        got += urls(h.drain())
    assert got == ["https://a.gov.si/javno"]
    refused = {(r.url, r.fetch_error) for r in h.store.not_fetched()}
    assert refused == {(costly, ROBOTS_REFUSALS["check_too_costly"][0])}
    assert h.stats.get_value("govsi/robots/refused/check_too_costly") == 1


def test_a_finished_renders_queued_requests_are_taken_out_and_the_pages_go_on(
    harnesses: list[Harness], monkeypatch: pytest.MonkeyPatch
) -> None:
    h = make(harnesses, monkeypatch, {"a.gov.si": "10.0.0.1"})
    h.page("https://a.gov.si/1")
    h.page("https://a.gov.si/2")
    [robots] = h.drain()
    h.answer_robots(robots)
    # A render queues its sub-resources ahead of the host's pages.
    wanted = [
        Request(f"https://a.gov.si/api/{i}", dont_filter=True, meta={META_KIND: KIND_RESOURCE})
        for i in range(5)
    ]
    for request in wanted:
        h.scheduler.enqueue_request(request)
    h.at(DELAY)
    first = h.take()
    assert first is wanted[0]  # left already: it cannot be called back
    # The render ended: the other four go, a request of another render stays.
    other = Request("https://a.gov.si/x.js", dont_filter=True, meta={META_KIND: KIND_RESOURCE})
    h.scheduler.enqueue_request(other)
    taken = h.scheduler.cancel_resources(wanted)
    assert sorted(r.url for r in taken) == sorted(r.url for r in wanted[1:])
    assert h.scheduler.stats.get_value("govsi/frontier/resources_cancelled") == 4
    assert h.scheduler.cancel_resources(wanted) == []  # nothing twice
    after = []
    for _ in range(4):
        h.at(DELAY)
        after += h.drain()
    assert urls(after) == ["https://a.gov.si/x.js", "https://a.gov.si/1", "https://a.gov.si/2"]
