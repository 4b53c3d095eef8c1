"""FrontierScheduler on its own: a fake crawldb store, a fake spider, a fake clock and DNS.

What a user relies on, checked without a crawl: robots.txt goes first and decides; no host
nor address is asked sooner than its delay; breadth-first order; pages that may not be
fetched are recorded with the reason; back-pressure from a full write buffer.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

import pytest
from scrapy import Request, Spider
from scrapy.http import Response
from scrapy.utils.test import get_crawler
from twisted.internet import defer, task

import govsi.frontier.hostsetup as hostsetup_module
import govsi.frontier.refills as refills_module
import govsi.frontier.scheduler as scheduler_module
from govsi.frontier.config import SchedulerConfig
from govsi.frontier.hostsetup import ROBOTS_REFUSALS
from govsi.frontier.scheduler import FrontierScheduler
from govsi.items import FetchedPage, SiteInfo
from govsi.requestmeta import (
    KIND_IMAGE,
    KIND_PAGE,
    KIND_RESOURCE,
    KIND_ROBOTS,
    META_KIND,
    META_URL,
)
from govsi.store.extension import CrawlStore
from govsi.web.scope import Scope
from tests.support.stats import DictStats

DELAY = 5.0


class Clock:
    """time.monotonic for the scheduler, and the reactor's timers, on one fake clock."""

    def __init__(self) -> None:
        self.timers = task.Clock()

    def monotonic(self) -> float:
        return float(self.timers.seconds())

    def advance(self, seconds: float) -> None:
        self.timers.advance(seconds)


class FakeReactor:
    def __init__(self, clock: Clock, addresses: dict[str, str]) -> None:
        self.clock = clock
        self.addresses = addresses

    def resolve(self, host: str) -> defer.Deferred[str]:
        if host not in self.addresses:
            return defer.fail(OSError(f"DNS lookup failed: no address for {host}"))
        return defer.succeed(self.addresses[host])

    def callLater(self, delay: float, f: Any, *args: Any) -> Any:
        return self.clock.timers.callLater(delay, f, *args)


class FakeStore:
    """The part of CrawlStore the scheduler uses; records what it was given."""

    url = "sqlite:///unused.sqlite3"  # one worker: leases are granted at once, locally

    def __init__(self) -> None:
        self.added: list[Any] = []
        self.items_added = 0
        self.items_written = 0
        self.full = False

    def add(self, item: Any) -> None:
        self.added.append(item)
        self.items_added += 1
        self.items_written += 1

    def saturated(self) -> bool:
        return self.full

    def frontier_hosts(self, depth_limit: int, *_: Any) -> list[Any]:
        return []

    def pin_address(self, host: str, ip: str) -> str:
        return ip

    def not_fetched(self) -> list[FetchedPage]:
        return [i for i in self.added if isinstance(i, FetchedPage) and i.page_type == "FRONTIER"]


class FakeDupeFilter:
    def __init__(self) -> None:
        self.seen: set[str] = set()

    def request_seen(self, request: Request) -> bool:
        if request.url in self.seen:
            return True
        self.seen.add(request.url)
        return False

    def open(self) -> None:
        pass

    def close(self, reason: str) -> None:
        pass

    def log(self, request: Request, spider: Spider) -> None:
        pass


class FactorySpider(Spider):
    """Makes requests back from what the queue keeps, as GovsiSpider does."""

    name = "factory"

    def request_for(self, kind: str, url: str, depth: int) -> Request:
        return Request(url, meta={META_KIND: kind, META_URL: url, "depth": depth})

    def sitemap_request(self, url: str, site: str) -> Request | None:
        return None


def config(**changes: Any) -> SchedulerConfig:
    values: dict[str, Any] = dict(
        crawl_delay=DELAY, max_crawl_delay=60.0, window=1000, refill_size=100,
        scope=Scope((".gov.si",), depth_limit=5, robots_token="govsi-crawler"),
        obey_robots=True, robots_max_age=86400.0,
        robots_retries=1, robots_retry_delay=10.0, follow_sitemaps=True,
        progress_interval=0.0, download_timeout=30.0,
        lease_ttl=30.0, lease_scan_interval=10.0,
    )  # fmt: skip
    values.update(changes)
    return SchedulerConfig(**values)


class Harness:
    def __init__(
        self, monkeypatch: pytest.MonkeyPatch, addresses: dict[str, str], **changes: Any
    ) -> None:
        self.clock = Clock()
        self.clock.advance(1000.0)  # a monotonic clock does not start at 0
        for module in (scheduler_module, hostsetup_module, refills_module):
            monkeypatch.setattr(module, "time", self.clock)
        for module in (hostsetup_module, refills_module):
            # crawldb calls answer at once (in a crawl they run in a worker thread).
            monkeypatch.setattr(module, "deferToThread", defer.maybeDeferred)
        for module in (scheduler_module, hostsetup_module):
            monkeypatch.setattr(module, "_reactor", lambda: FakeReactor(self.clock, addresses))
        self.store = FakeStore()
        self.stats = DictStats()
        self.spider = FactorySpider()
        # No crawler: the engine is Scrapy's; here the test is the engine and asks by itself.
        self.wakes = 0
        self.scheduler = FrontierScheduler(
            FakeDupeFilter(),  # type: ignore[arg-type]
            config(**changes),
            self.stats,  # type: ignore[arg-type]
            self.store,  # type: ignore[arg-type]
            wake_engine=self._woken,
        )
        self.scheduler.open(self.spider)

    def _woken(self) -> None:
        self.wakes += 1

    def close(self) -> None:
        self.scheduler.close("finished")

    def page(self, url: str, depth: int = 1, kind: str = KIND_PAGE) -> bool:
        request = Request(url, meta={META_KIND: kind, META_URL: url, "depth": depth})
        return self.scheduler.enqueue_request(request)

    def take(self) -> Request | None:
        """The next request, as the engine asks; it reaches the server at once and ends."""
        request = self.scheduler.next_request()
        if request is not None:
            self.scheduler._headers_received(None, 0, request, self.spider)  # type: ignore[arg-type]
            self.scheduler._left_downloader(request, self.spider)
        return request

    def answer_robots(self, request: Request, status: int = 200, body: str = "") -> None:
        assert request.meta[META_KIND] == KIND_ROBOTS
        response = Response(request.url, status=status, body=body.encode(), request=request)
        list(request.callback(response) or ())  # type: ignore[misc]

    def drain(self) -> list[Request]:
        out = []
        while (request := self.take()) is not None:
            out.append(request)
        return out

    def at(self, seconds: float) -> None:
        self.clock.advance(seconds)


@pytest.fixture
def harnesses(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[Harness]]:
    made: list[Harness] = []
    yield made
    for h in made:
        h.close()


def make(
    harnesses: list[Harness], monkeypatch: pytest.MonkeyPatch, addresses: dict[str, str], **kw: Any
) -> Harness:
    h = Harness(monkeypatch, addresses, **kw)
    harnesses.append(h)
    return h


def urls(requests: Iterable[Request]) -> list[str]:
    return [r.url for r in requests]


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
    # No extensions: the project's would open a crawldb in the working directory.
    values.update(EXTENSIONS={}, DEFAULT_CRAWL_DELAY=2.5, DEPTH_LIMIT=7)
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
