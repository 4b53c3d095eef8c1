"""A FrontierScheduler harness for tests: a fake crawldb store, a fake spider, a fake clock
and DNS (``Harness``, made by ``make`` under the ``harnesses`` fixture)."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

import pytest
from scrapy import Request, Spider
from scrapy.http import Response
from twisted.internet import defer, task

import govsi.frontier.hostsetup as hostsetup_module
import govsi.frontier.inflight as inflight_module
import govsi.frontier.refills as refills_module
import govsi.frontier.revisits as revisits_module
import govsi.frontier.revisitwrites as revisitwrites_module
import govsi.frontier.scheduler as scheduler_module
import govsi.frontier.waking as waking_module
from govsi.frontier.config import SchedulerConfig
from govsi.frontier.scheduler import FrontierScheduler
from govsi.items import FetchedPage, Revisit
from govsi.requestmeta import (
    KIND_PAGE,
    KIND_ROBOTS,
    META_KIND,
    META_REVISIT,
    META_URL,
)
from govsi.store.revisits import RevisitRows
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
        self.outage = False

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

    def request_for(
        self, kind: str, url: str, depth: int, revisit: Revisit | None = None
    ) -> Request:
        meta: dict[str, Any] = {META_KIND: kind, META_URL: url, "depth": depth}
        if revisit is not None:
            meta[META_REVISIT] = revisit
        return Request(url, meta=meta)

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
        self,
        monkeypatch: pytest.MonkeyPatch,
        addresses: dict[str, str],
        revisit_rows: RevisitRows | None = None,
        **changes: Any,
    ) -> None:
        self.clock = Clock()
        self.clock.advance(1000.0)  # a monotonic clock does not start at 0
        for module in (scheduler_module, hostsetup_module, refills_module, revisits_module,
                       waking_module, inflight_module):  # fmt: skip
            monkeypatch.setattr(module, "time", self.clock)
        for module in (hostsetup_module, refills_module, revisits_module, revisitwrites_module):
            # crawldb calls answer at once (in a crawl they run in a worker thread).
            monkeypatch.setattr(module, "deferToThread", defer.maybeDeferred)
        for module in (waking_module, hostsetup_module):
            monkeypatch.setattr(
                module, "running_reactor", lambda: FakeReactor(self.clock, addresses)
            )
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
            revisit_rows=revisit_rows,
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
            inflight = self.scheduler.inflight
            inflight.headers_received(None, 0, request, self.spider)  # type: ignore[arg-type]
            inflight.left_downloader(request, self.spider)
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
