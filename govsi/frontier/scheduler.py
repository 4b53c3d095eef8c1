"""The Scrapy scheduler around ``govsi.frontier.queue``: crawldb's FRONTIER rows are the queue,
memory holds a bounded window of it, and a request leaves only when its host and its
IP address may be asked again.

What it adds to the frontier's decisions is the crawl's I/O: resolving each host's
address, sending its robots.txt first (``govsi.robots.fetching``), refilling a host's window
from crawldb, recording pages it will not fetch, hearing when a request reached the
server and left the downloader (``govsi.frontier.inflight``), and waking Scrapy's engine
when the next host becomes ready (the engine otherwise asks only when a download ends, or
every 5 seconds).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Collection, Iterable
from functools import partial
from typing import Any

from scrapy import Request, Spider, signals
from scrapy.core.scheduler import BaseScheduler
from scrapy.crawler import Crawler
from scrapy.dupefilters import BaseDupeFilter
from scrapy.statscollectors import StatsCollector
from scrapy.utils.misc import build_from_crawler, load_object

from govsi.frontier.addresses import AddressSharing, robots_key
from govsi.frontier.config import SchedulerConfig
from govsi.frontier.entries import Entry, HostInfo, QueueCallbacks, Workbench, page_url
from govsi.frontier.fingerprints import FingerprintSet
from govsi.frontier.hostsetup import HostSetup, SetupCallbacks
from govsi.frontier.inflight import InFlight
from govsi.frontier.intake import place
from govsi.frontier.outcomes import PagesOut
from govsi.frontier.progress import Progress
from govsi.frontier.queue import Frontier, HostState
from govsi.frontier.refills import Refills
from govsi.frontier.rendering import RenderSide
from govsi.frontier.revisits import Revisits, revisit_rows_for
from govsi.frontier.sweep import DrySweep
from govsi.frontier.waking import Waker
from govsi.items import FetchedPage
from govsi.net.guard import AddressGuard
from govsi.render.renderer import Renderer
from govsi.requestmeta import (
    KIND_IMAGE,
    KIND_PAGE,
    KIND_ROBOTS,
    META_ARRIVED,
    META_FINISHED,
    META_HOST,
    META_KIND,
    META_URL,
    RequestFactory,
    is_feed,
)
from govsi.store.database import is_sqlite
from govsi.store.extension import CrawlStore
from govsi.store.reader import StoredRobots
from govsi.store.revisits import RevisitRows
from govsi.web.urls import fingerprint, host_of


def _wake_engine(crawler: Crawler) -> None:
    # Scrapy offers no public way for a scheduler to say "I have work now"; this is what
    # the engine's own crawl() and heartbeat call. Without it a host ready in 0.3 s would
    # wait for the next download to end or the 5 s heartbeat.
    slot = getattr(crawler.engine, "_slot", None)
    if slot is not None:
        slot.nextcall.schedule()


class FrontierScheduler(BaseScheduler):
    """Holds its parts as objects, built from plain values and talking through callbacks:
    the ``Frontier`` (what may go now), ``HostSetup`` (addresses, robots.txt, budgets),
    ``Refills`` (FRONTIER rows read back), ``Revisits`` (stored pages due again),
    ``AddressSharing`` (leases) and ``InFlight`` (requests out, the watchdog). The hosts'
    ``HostInfo`` records are the scheduler's, handed to each part."""

    def __init__(
        self,
        dupefilter: BaseDupeFilter,
        config: SchedulerConfig,
        stats: StatsCollector,
        store: CrawlStore,
        *,
        guard: AddressGuard | None = None,
        renderer: Renderer | None = None,
        wake_engine: Callable[[], None] = lambda: None,
        revisit_rows: RevisitRows | None = None,
    ) -> None:
        self.stats = stats
        self.store = store
        self.renderer = renderer
        self._wake_engine = wake_engine
        self.df = dupefilter
        self.config = config
        delay = config.crawl_delay
        self.frontier = Frontier(delay, ip_delay=delay, window=config.window)
        self.hosts: dict[str, HostInfo] = {}
        # Every page or image released in this run, so that none is released twice while
        # its row in crawldb still says FRONTIER (writes lag behind).
        self.released = FingerprintSet()
        # No single attempt can take longer (DNS and connection included in the timeout).
        stuck_after = config.download_timeout + 60.0
        self.sharing = AddressSharing(
            frontier=self.frontier,
            store=store,
            served=self,
            stats=stats,
            ttl=config.lease_ttl,
            scan_interval=config.lease_scan_interval,
            shared=not is_sqlite(store.url),
            settle_within=2 * stuck_after,
            robots_max_age=config.robots_max_age,
        )
        bench = Workbench(self.hosts, self.frontier, store, stats)
        self.setup = HostSetup(
            config,
            bench,
            guard=guard,
            callbacks=SetupCallbacks(
                wake=self.wake,
                resolved=self.sharing.resolved,
                sitemaps=self._sitemaps,
                not_fetched=self._not_fetched,
                robots_settled=lambda host: self.sharing.settled(robots_key(host)),
            ),
        )
        # Refills and revisits both queue work read from crawldb: one way to say so.
        queued = QueueCallbacks(
            wake=self.wake, add_host=self.setup.host, work_for=self.sharing.work_for
        )
        self.refills = Refills(
            config,
            bench,
            released=self.released,
            callbacks=queued,
        )
        # Stored pages due again (REVISIT); none without crawldb's side (``revisit_rows``).
        self.revisits = Revisits(
            config,
            bench,
            rows=revisit_rows,
            callbacks=queued,
        )
        self.waker = Waker(self.frontier, self.wake, stats)
        # Before the crawl ends: FRONTIER rows the seen-URL set wrongly took for known.
        self.sweep = DrySweep(
            store, self.released, self.refills.scan_frontier, self.wake, stats.inc_value
        )
        self.progress = Progress(config.progress_interval, bench, held=self.sharing.held)
        self.rendering = RenderSide(config, bench, wake=self.wake)
        self.pages_out = PagesOut(
            self.frontier,
            settled=self.sharing.settled,
            changed=self.waker.schedule,
            stuck_after=stuck_after,
        )
        self.inflight = InFlight(
            self.frontier,
            stats,
            hosts=self.hosts.keys(),
            stuck_after=stuck_after,
            body_received=self.setup.body_received,
            changed=self.waker.schedule,
            tick=self._tick,
        )

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> FrontierScheduler:
        dupefilter = build_from_crawler(load_object(crawler.settings["DUPEFILTER_CLASS"]), crawler)
        store = crawler.get_extension(CrawlStore)
        if store is None:
            raise RuntimeError("the frontier needs the govsi.store.extension.CrawlStore extension")
        config = SchedulerConfig.from_settings(crawler.settings)
        scheduler = cls(
            dupefilter,
            config,
            crawler.stats,
            store,
            # Rendered pages' sub-resources come through here, under the same rules.
            guard=crawler.get_extension(AddressGuard),
            renderer=crawler.get_extension(Renderer),
            wake_engine=partial(_wake_engine, crawler),
            revisit_rows=revisit_rows_for(config, store),
        )
        connect = crawler.signals.connect
        connect(scheduler.inflight.headers_received, signal=signals.headers_received)
        connect(scheduler.inflight.left_downloader, signal=signals.request_left_downloader)
        connect(scheduler.inflight.response_received, signal=signals.response_received)
        for outcome in (signals.item_scraped, signals.item_dropped, signals.item_error):
            connect(scheduler.pages_out.item_done, signal=outcome)
        connect(scheduler.pages_out.spider_error, signal=signals.spider_error)
        connect(scheduler.sweep.spider_idle, signal=signals.spider_idle)
        # Leases go back once this run's last writes are in (after spider_closed).
        connect(scheduler._engine_stopped, signal=signals.engine_stopped)
        return scheduler

    # -- life cycle -------------------------------------------------------------------------
    def open(self, spider: Spider) -> None:
        if not isinstance(spider, RequestFactory):
            # The queue keeps (kind, URL, depth) only; the spider makes the requests back.
            raise TypeError(f"{type(spider).__name__} is not a govsi.requestmeta.RequestFactory")
        self.spider = spider
        self.requests: RequestFactory = spider
        self.sharing.start(job=getattr(spider, "_job", None))  # scrapyd's job id
        self.df.open()
        self.refills.open()
        # After the new pages' hosts: due rows are claimed once a host's new pages are out.
        self.revisits.open(self.sharing.worker)
        self.progress.start()
        self.inflight.start()
        # Pages wait while the browser's queue holds enough of them (a host's, or all).
        if self.renderer is not None:
            self.renderer.bind(self.resource_refusal, self.hold_pages, self.cancel_resources)

    # The renderer's hooks (Renderer.bind), answered by the render side.
    def resource_refusal(self, url: str) -> str | None:
        return self.rendering.refusal(url)

    def hold_pages(self, host: str | None, held: bool) -> None:
        self.rendering.hold_pages(host, held)

    def cancel_resources(self, requests: Collection[Request]) -> list[Request]:
        return self.rendering.cancel(requests)

    def close(self, reason: str) -> None:
        self.waker.close()
        self.setup.close()
        self.progress.stop()
        self.inflight.stop()
        self.df.close(reason)

    def has_pending_requests(self) -> bool:
        if len(self.frontier) or self.sharing.waiting():
            return True
        return self.revisits.has_work() or any(
            (h.backlog and not h.unavailable) or h.refilling or h.robots_retry is not None
            for h in self.hosts.values()
        )

    def __len__(self) -> int:
        return len(self.frontier)

    # -- in ---------------------------------------------------------------------------------
    def enqueue_request(self, request: Request) -> bool:
        if not request.dont_filter and self.df.request_seen(request):
            self.revisits.seen(request)  # a sitemap's lastmod may make it due again
            self.df.log(request, self.spider)
            return False
        meta = request.meta
        host: str = meta.get(META_HOST) or host_of(request.url)
        self.setup.host(host, request.url)
        if meta.get(META_KIND) in (KIND_PAGE, KIND_IMAGE):
            self.sharing.settled(meta.get(META_URL, request.url))
        level, entry, late = place(request.url, meta, request.dont_filter)
        if entry is None:
            self.frontier.push(host, level, request, spillable=False)
        elif not self.frontier.push(host, level, entry, entry.kind == KIND_PAGE, late):
            self.refills.spilled(host, entry.depth)
        self.sharing.work_for(self.hosts[host].ip)
        self.stats.inc_value("scheduler/enqueued")
        return True

    # -- out --------------------------------------------------------------------------------
    def next_request(self) -> Request | None:
        now = time.monotonic()
        if self.waker.store_full(self.store.saturated()):
            return None  # back-pressure: nothing new until crawldb's writer drains
        popped = self.frontier.pop(now, self._admit)
        if popped is None:
            self.refills.start_refills(now)
            self.revisits.poll(now)
            self.waker.schedule()
            return None
        state, entry = popped
        if isinstance(entry, Entry):
            request = self.requests.request_for(
                entry.kind, entry.url, entry.depth, revisit=entry.revisit
            )
            if entry.revisit is not None:
                self.revisits.sent(state.name, entry)
            else:
                self.released.add(fingerprint(entry.url))
            if entry.kind == KIND_PAGE:
                self.pages_out.opened(entry.url, state.name, entry.depth, now)
        else:
            request = entry
        request.meta[META_HOST] = state.name
        url = page_url(entry)
        if url is None and request.meta.get(META_KIND) == KIND_ROBOTS:
            url = robots_key(state.name)
        if url is not None:
            self.sharing.page_out(url, self.hosts[state.name].ip)
        # A retry is a copy of a request that went out before, marks and all.
        request.meta.pop(META_ARRIVED, None)
        request.meta.pop(META_FINISHED, None)
        self.stats.inc_value("scheduler/dequeued")
        self.refills.refill_if_low(state, now)
        self.revisits.after_release(state.name, now)
        return request

    def _admit(self, state: HostState, entry: Any) -> bool:
        """The last check before a request leaves; a refusal costs the host no delay."""
        info = self.hosts[state.name]
        if not isinstance(entry, Entry):
            if is_feed(entry.meta):
                # A page's link, as far as the host is concerned: robots.txt, a host given up.
                if not self.setup.allows(state.name, entry.url):
                    self.stats.inc_value("govsi/feeds/refused_by_robots")
                    return False
                return info.unavailable is None
            # robots.txt, sitemaps: not sent for a host given up on.
            return info.unavailable is None or entry.meta.get(META_KIND) != KIND_ROBOTS
        if entry.revisit is not None:
            if not self.revisits.admit(state.name, entry, time.monotonic()):
                return False
        elif fingerprint(entry.url) in self.released:
            return False
        return self.setup.admit(state.name, entry)

    def _not_fetched(self, entry: Entry, reason: str, stat: str) -> None:
        self.stats.inc_value(stat)
        if entry.revisit is not None:
            self.revisits.not_fetched(entry, reason, stat)  # a stored page keeps its copy
            return
        self.released.add(fingerprint(entry.url))  # its row stays FRONTIER: not again
        if entry.kind == KIND_PAGE:
            self.store.add(
                FetchedPage(entry.url, entry.depth, "FRONTIER", None, fetch_error=reason)
            )

    def _tick(self, now: float) -> None:
        """Every ``WATCH_INTERVAL`` (``InFlight``'s watchdog): pages whose outcome never
        came let go, and hosts whose turn for revisits came while other hosts kept the
        queue busy."""
        self.pages_out.expire(now)
        self.revisits.poll(now)
        self.waker.schedule()

    def mark_released(self, fingerprints: Iterable[int]) -> None:
        """Pages and images another worker fetched (``AddressSharing``): never released."""
        self.released.update(fingerprints)

    def wake(self) -> None:
        self._wake_engine()

    def _engine_stopped(self) -> None:
        # This run's writes are in: claims not used go back, then the leases.
        self.revisits.stop()
        self.sharing.stop()

    # -- what the parts ask -----------------------------------------------------------------
    def scan_frontier(self) -> None:
        """Look for hosts with work in crawldb (``AddressSharing``: a worker left, or
        addresses were freed)."""
        self.refills.scan_frontier()

    def robots_read(self, stored: dict[str, StoredRobots]) -> None:
        """robots.txt another worker fetched for hosts taken over (``AddressSharing``)."""
        self.setup.robots_read(stored)

    def _sitemaps(self, host: str, urls: list[str]) -> None:
        # Sitemaps robots.txt lists (HostSetup): the spider makes their requests.
        for url in urls:
            request = self.requests.sitemap_request(url, host)
            if request is not None:
                self.enqueue_request(request)
