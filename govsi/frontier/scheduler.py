"""The Scrapy scheduler around ``govsi.frontier.queue``: crawldb's FRONTIER rows are the queue,
memory holds a bounded window of it, and a request leaves only when its host and its
IP address may be asked again.

What it adds to the frontier's decisions is the crawl's I/O: resolving each host's
address, sending its robots.txt first (``govsi.robots.fetching``), refilling a host's window
from crawldb, recording pages it will not fetch, hearing when a request reached the
server (``headers_received``) and left the downloader, and waking Scrapy's engine when the
next host becomes ready (the engine otherwise asks only when a download ends, or every
5 seconds).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Collection, Iterable
from functools import partial
from typing import Any

from scrapy import Request, Spider, signals
from scrapy.core.scheduler import BaseScheduler
from scrapy.crawler import Crawler
from scrapy.dupefilters import BaseDupeFilter
from scrapy.http import Headers, Response
from scrapy.statscollectors import StatsCollector
from scrapy.utils.misc import build_from_crawler, load_object
from twisted.internet import task
from twisted.internet.base import DelayedCall
from twisted.python.failure import Failure

from govsi.frontier.budgets import Budgets
from govsi.frontier.config import SchedulerConfig
from govsi.frontier.entries import Entry, HostInfo, page_url
from govsi.frontier.hostsetup import DEPTH_ROBOTS, HostSetup, _reactor
from govsi.frontier.queue import Frontier, HostState
from govsi.frontier.refills import Refills
from govsi.items import FetchedImage, FetchedPage
from govsi.net.guard import AddressGuard
from govsi.render.renderer import Renderer
from govsi.requestmeta import (
    KIND_IMAGE,
    KIND_PAGE,
    KIND_RESOURCE,
    KIND_ROBOTS,
    KIND_SITEMAP,
    META_ARRIVED,
    META_FINISHED,
    META_HOST,
    META_KIND,
    META_SITEMAP,
    META_URL,
    RequestFactory,
)
from govsi.robots.fetching import RobotsFetcher, robots_url_for
from govsi.robots.rules import Refusal
from govsi.sharing.addresses import AddressSharing
from govsi.store.database import is_sqlite
from govsi.store.extension import CrawlStore, pages_fetched
from govsi.web.urls import fingerprint, host_of, in_scope

logger = logging.getLogger(__name__)

# A page robots.txt keeps us from: the reason its FRONTIER row keeps, and the stat. A check
# refused unchecked (govsi.robots.matching's bounds) fails closed, with its own reason.
ROBOTS_REFUSALS: dict[Refusal, tuple[str, str]] = {
    "forbidden": ("forbidden by robots.txt", "govsi/robots/forbidden"),
    "path_too_long": (
        "robots.txt: path too long to check, refused (fail closed)",
        "govsi/robots/refused/path_too_long",
    ),
    "check_too_costly": (
        "robots.txt: rules too costly to check for this path, refused (fail closed)",
        "govsi/robots/refused/check_too_costly",
    ),
}

# Robots.txt first, then what renders wait for, then sitemaps, then the host's pages.
DEPTH_RESOURCE, DEPTH_SITEMAP = -2, -1  # after robots.txt (DEPTH_ROBOTS, -3)


def _wake_engine(crawler: Crawler) -> None:
    # Scrapy offers no public way for a scheduler to say "I have work now"; this is what
    # the engine's own crawl() and heartbeat call. Without it a host ready in 0.3 s would
    # wait for the next download to end or the 5 s heartbeat.
    slot = getattr(crawler.engine, "_slot", None)
    if slot is not None:
        slot.nextcall.schedule()


class FrontierScheduler(HostSetup, Refills, BaseScheduler):
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
    ) -> None:
        self.stats = stats
        self.store = store
        self.guard = guard
        self.renderer = renderer
        self._wake_engine = wake_engine
        self.df = dupefilter
        self.config = config
        delay = config.crawl_delay
        self.frontier = Frontier(delay, ip_delay=delay, window=config.window)
        self.obey = config.obey_robots
        self.token = config.robots_token
        self.robots_max_age = config.robots_max_age
        self.robots_retries = config.robots_retries
        self.robots_retry_delay = config.robots_retry_delay
        self.depth_limit = config.depth_limit
        self.follow_sitemaps = config.follow_sitemaps
        self.refill_size = config.refill_size
        self.progress_interval = config.progress_interval
        suffixes = list(config.suffixes)
        self.robots = RobotsFetcher(self._robots_outcome, lambda url: in_scope(url, suffixes))
        self.max_crawl_delay = config.max_crawl_delay
        self.budgets = Budgets(
            pages_per_host=config.max_pages_per_host,
            images_per_host=config.max_images_per_host,
            bytes_per_host=config.max_bytes_per_host,
            hosts=config.max_hosts,
        )
        self.hosts: dict[str, HostInfo] = {}
        # Every page or image released in this run, so that none is released twice while
        # its row in crawldb still says FRONTIER (writes lag behind).
        self.released: set[int] = set()
        # Hosts with FRONTIER rows in crawldb that memory does not hold (HostInfo.backlog).
        self._backlogged: set[str] = set()
        self._wake_call: DelayedCall | None = None
        self._wake_at = 0.0
        self._progress: task.LoopingCall | None = None
        self._watchdog: task.LoopingCall | None = None
        # No single attempt can take longer (DNS and connection included in the timeout).
        self.stuck_after = config.download_timeout + 60.0
        self._progress_last = (time.monotonic(), 0)
        # Pages out whose links are not known yet: (host, depth, when released).
        self._open_pages: dict[int, tuple[str, int, float]] = {}
        self._held_for_store = False
        self._store_wake: DelayedCall | None = None

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> FrontierScheduler:
        dupefilter = build_from_crawler(load_object(crawler.settings["DUPEFILTER_CLASS"]), crawler)
        store = crawler.get_extension(CrawlStore)
        if store is None:
            raise RuntimeError("the frontier needs the govsi.store.extension.CrawlStore extension")
        scheduler = cls(
            dupefilter,
            SchedulerConfig.from_settings(crawler.settings),
            crawler.stats,
            store,
            # Rendered pages' sub-resources come through here, under the same rules.
            guard=crawler.get_extension(AddressGuard),
            renderer=crawler.get_extension(Renderer),
            wake_engine=partial(_wake_engine, crawler),
        )
        connect = crawler.signals.connect
        connect(scheduler._headers_received, signal=signals.headers_received)
        connect(scheduler._left_downloader, signal=signals.request_left_downloader)
        connect(scheduler._response_received, signal=signals.response_received)
        for outcome in (signals.item_scraped, signals.item_dropped, signals.item_error):
            connect(scheduler._item_done, signal=outcome)
        connect(scheduler._spider_error, signal=signals.spider_error)
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
        store = self.store
        self.sharing = AddressSharing(
            frontier=self.frontier,
            store=store,
            served=self,
            stats=self.stats,
            ttl=self.config.lease_ttl,
            scan_interval=self.config.lease_scan_interval,
            shared=not is_sqlite(store.url),
            job=getattr(spider, "_job", None),  # scrapyd's job id
            settle_within=2 * self.stuck_after,
            robots_max_age=self.robots_max_age,
        )
        self.sharing.start()
        self.df.open()
        # A continuing crawl: every host with FRONTIER rows has work in crawldb.
        for host, sample_url in store.frontier_hosts(self.depth_limit):
            self._host(host, sample_url)
            self._set_backlog(host, True)
        if self.progress_interval > 0:
            self._progress = task.LoopingCall(self._log_progress)
            self._progress.start(self.progress_interval, now=False)
        self._watchdog = task.LoopingCall(self._free_stuck)
        self._watchdog.start(10.0, now=False)
        # Pages wait while the browser's queue holds enough of them (a host's, or all).
        if self.renderer is not None:
            self.renderer.bind(self.resource_refusal, self.hold_pages, self.cancel_resources)

    def hold_pages(self, host: str | None, held: bool) -> None:
        """The renderer holds ``host``'s pages back (every host's when None), or lets them
        go again, which may make a request ready now."""
        if host is None:
            self.frontier.hold_pages(held)
        else:
            self.frontier.hold_host(host, held)
        if not held:
            self.wake()

    def resource_refusal(self, url: str) -> str | None:
        """Why a request a rendered page's script makes may not go out (None: it may): a
        host not known to this crawl yet, given up on, or whose robots.txt forbids it."""
        info = self.hosts.get(host_of(url))
        if info is None:
            return "host_unknown"
        if info.unavailable is not None:
            return "host_unavailable"
        if self.obey and info.rules is None:
            return "robots_unknown"
        if self.obey and info.rules.refusal(url, self.token) is not None:  # type: ignore[union-attr]
            return "robots"
        return None

    def cancel_resources(self, requests: Collection[Request]) -> list[Request]:
        """Take rendered pages' sub-resource requests that are still queued out of the
        frontier (their render ended); returns those taken out (the others have left)."""
        # Queued under the host enqueue_request gave them.
        hosts = {request.meta.get(META_HOST) or host_of(request.url) for request in requests}
        wanted = {id(request) for request in requests}
        taken: list[Request] = []

        def drop(entry: Any) -> bool:
            if isinstance(entry, Request) and id(entry) in wanted:
                taken.append(entry)
                return True
            return False

        for host in hosts:
            if self.frontier.queued(host):
                self.frontier.discard(host, drop)
        if taken:
            self.stats.inc_value("govsi/frontier/resources_cancelled", len(taken))
        return taken

    def close(self, reason: str) -> None:
        for call in [self._wake_call] + [h.robots_retry for h in self.hosts.values()]:
            if call is not None and call.active():
                call.cancel()
        for loop in (self._progress, self._watchdog):
            if loop is not None and loop.running:
                loop.stop()
        self.df.close(reason)

    def has_pending_requests(self) -> bool:
        if len(self.frontier) or self.sharing.waiting():
            return True
        return any(
            (h.backlog and not h.unavailable) or h.refilling or h.robots_retry is not None
            for h in self.hosts.values()
        )

    def __len__(self) -> int:
        return len(self.frontier)

    # -- in ---------------------------------------------------------------------------------
    def enqueue_request(self, request: Request) -> bool:
        if not request.dont_filter and self.df.request_seen(request):
            self.df.log(request, self.spider)
            return False
        meta = request.meta
        kind = meta.get(META_KIND)
        host = meta.get(META_HOST) or host_of(request.url)
        self._host(host, request.url)
        if kind in (KIND_PAGE, KIND_IMAGE):
            self.sharing.settled(meta.get(META_URL, request.url))
        if kind in (KIND_PAGE, KIND_IMAGE) and not request.dont_filter:
            entry = Entry(kind, meta.get(META_URL, request.url), meta.get("depth", 0))
            late = bool(meta.get(META_SITEMAP))
            if not self.frontier.push(host, entry.depth, entry, kind == KIND_PAGE, late):
                self._spilled(host, entry.depth)
        elif kind == KIND_ROBOTS:
            self.frontier.push(host, DEPTH_ROBOTS, request, spillable=False)
        elif kind == KIND_RESOURCE:
            self.frontier.push(host, DEPTH_RESOURCE, request, spillable=False)
        else:
            # Sitemaps, and deliberate repeats (dont_filter: Scrapy's retries), are kept
            # whole: their meta (a retry count) must survive, and they may repeat a URL.
            depth = DEPTH_SITEMAP if kind == KIND_SITEMAP else meta.get("depth", 0)
            self.frontier.push(host, depth, request, spillable=False)
        self.sharing.work_for(self.hosts[host].ip)
        self.stats.inc_value("scheduler/enqueued")
        return True

    def _host(self, host: str, sample_url: str) -> HostInfo:
        info = self.hosts.get(host)
        if info is not None:
            return info
        info = self.hosts[host] = HostInfo(robots_url=robots_url_for(sample_url))
        if not self.budgets.new_host():
            self._host_over_budget(host)
            return info
        self._resolve(host)
        if self.obey:
            self._send_robots(host)
        else:
            self.frontier.open_gate(host)
        return info

    def _spilled(self, host: str, depth: int) -> None:
        # The entry's FRONTIER row is (or will be) in crawldb: read it back later.
        info = self.hosts[host]
        self._set_backlog(host, True)
        info.backlog_written_at = self.store.items_added
        if depth < info.cursor[0]:
            info.cursor = (-1, 0)
        self.stats.inc_value("govsi/frontier/spilled")

    # -- out --------------------------------------------------------------------------------
    def next_request(self) -> Request | None:
        now = time.monotonic()
        if self.store.saturated():
            # Back-pressure: crawldb's writer is full; nothing new until it drains.
            if not self._held_for_store:
                self._held_for_store = True
                self.stats.inc_value("govsi/db_backpressure")
                logger.warning("crawldb's write buffer is full: no new requests until it drains")
            if self._store_wake is None or not self._store_wake.active():
                self._store_wake = _reactor().callLater(0.5, self.wake)
            return None
        self._held_for_store = False
        popped = self.frontier.pop(now, self._admit)
        if popped is None:
            self._start_refills(now)
            self._schedule_wake()
            return None
        state, entry = popped
        if isinstance(entry, Entry):
            request = self.requests.request_for(entry.kind, entry.url, entry.depth)
            self.released.add(fingerprint(entry.url))
            if entry.kind == KIND_PAGE:
                self.frontier.page_opened(state.name, entry.depth)
                self._open_pages[fingerprint(entry.url)] = (state.name, entry.depth, now)
        else:
            request = entry
        request.meta[META_HOST] = state.name
        url = page_url(entry)
        if url is not None:
            self.sharing.page_out(url, self.hosts[state.name].ip)
        # A retry is a copy of a request that went out before, marks and all.
        request.meta.pop(META_ARRIVED, None)
        request.meta.pop(META_FINISHED, None)
        self.stats.inc_value("scheduler/dequeued")
        info = self.hosts[state.name]
        if info.backlog and not info.unavailable and len(state.queue) < self.refill_size // 4:
            self._refill(state.name, now)
        return request

    def _admit(self, state: HostState, entry: Any) -> bool:
        """The last check before a request leaves; a refusal costs the host no delay."""
        info = self.hosts[state.name]
        if not isinstance(entry, Entry):
            # robots.txt, sitemaps: not sent for a host given up on.
            return info.unavailable is None or entry.meta.get(META_KIND) != KIND_ROBOTS
        if fingerprint(entry.url) in self.released:
            return False
        if info.unavailable is not None:
            self._not_fetched(entry, info.unavailable, info.unavailable_stat)
            return False
        if self.obey and info.rules is not None:
            if info.used_rules and time.monotonic() - info.rules_at > self.robots_max_age:
                # Rules older than ROBOTSTXT_MAX_AGE: fetch them again before going on.
                self.frontier.close_gate(state.name)
                self.frontier.push(state.name, entry.depth, entry, spillable=False)
                self._send_robots(state.name)
                return False
            refusal = info.rules.refusal(entry.url, self.token)
            if refusal is not None:
                self._not_fetched(entry, *ROBOTS_REFUSALS[refusal])
                return False
        spent = self.budgets.release(state.name, entry.kind == KIND_IMAGE)
        if spent is not None:
            self._over_budget(state.name, spent, entry)
            return False
        info.used_rules += 1
        return True

    def _not_fetched(self, entry: Entry, reason: str, stat: str) -> None:
        self.stats.inc_value(stat)
        self.released.add(fingerprint(entry.url))  # its row stays FRONTIER: not again
        if entry.kind == KIND_PAGE:
            self.store.add(
                FetchedPage(entry.url, entry.depth, "FRONTIER", None, fetch_error=reason)
            )

    # -- requests reaching the server -------------------------------------------------------
    def _headers_received(
        self, headers: Headers, body_length: int, request: Request, spider: Spider
    ) -> None:
        # The server has answered, so the request reached it by now.
        request.meta.setdefault(META_ARRIVED, time.monotonic())

    def _response_received(self, response: Response, request: Request, spider: Spider) -> None:
        host = request.meta.get(META_HOST)
        if host in self.hosts:
            self._body_received(host, len(response.body))

    def _left_downloader(self, request: Request, spider: Spider) -> None:
        host = request.meta.get(META_HOST)
        if host is None or request.meta.get(META_FINISHED):
            return
        request.meta[META_FINISHED] = True
        self.frontier.finished(host, request.meta.get(META_ARRIVED, time.monotonic()))
        self._schedule_wake()

    def _item_done(self, item: Any) -> None:
        # A page's or image's outcome is in the store (pipelines run before this signal).
        if isinstance(item, FetchedPage | FetchedImage):
            self.sharing.settled(item.url)
        if isinstance(item, FetchedPage):
            self._page_done(item.url)

    def _page_done(self, url: str) -> None:
        opened = self._open_pages.pop(fingerprint(url), None)
        if opened is not None:
            self.frontier.page_done(opened[0], opened[1])
            self._schedule_wake()

    def _spider_error(self, failure: Failure, response: Any, spider: Spider) -> None:
        # A callback that failed yields no record; its page is done all the same.
        url = getattr(response, "meta", {}).get(META_URL)
        if url is not None:
            self._page_done(url)

    def _free_stuck(self) -> None:
        # A request whose end we never heard of would hold its address for ever.
        now = time.monotonic()
        for host in self.frontier.busy_longer_than(self.stuck_after, now):
            logger.error(
                "%s: no word of its request for %.0f s; freeing it", host, self.stuck_after
            )
            self.stats.inc_value("govsi/frontier/stuck")
            self.frontier.finished(host, now)
        # Nor may a page whose outcome never came hold the sitemap's pages back for ever.
        for key, (_host, _depth, since) in list(self._open_pages.items()):
            if now - since > self.stuck_after:
                self._open_pages.pop(key)
                self.frontier.page_done(_host, _depth)
        self._schedule_wake()

    # -- waking the engine ------------------------------------------------------------------
    def _schedule_wake(self) -> None:
        when = self.frontier.next_ready_time()
        if when is None:
            return
        if self._wake_call is not None and self._wake_call.active():
            if self._wake_at <= when:
                return
            self._wake_call.cancel()
        self._wake_at = when
        self._wake_call = _reactor().callLater(max(0.0, when - time.monotonic()), self.wake)

    def mark_released(self, fingerprints: Iterable[int]) -> None:
        """Pages and images another worker fetched (``AddressSharing``): never released."""
        self.released.update(fingerprints)

    def wake(self) -> None:
        self._wake_engine()

    def _engine_stopped(self) -> None:
        if hasattr(self, "sharing"):
            self.sharing.stop()

    # -- progress ---------------------------------------------------------------------------
    def _log_progress(self) -> None:
        now = time.monotonic()
        fetched = pages_fetched(self.stats.get_stats())
        then, before = self._progress_last
        self._progress_last = (now, fetched)
        per_min = (fetched - before) * 60 / max(now - then, 1e-9)
        ready, waiting, in_flight = self.frontier.census(now)
        blocked = sum(1 for h in self.hosts.values() if h.robots_retry is not None)
        slowest, slowest_work = "-", 0.0
        for name, state in self.frontier.hosts.items():
            work = len(state.queue) * state.delay
            if work > slowest_work:
                slowest, slowest_work = name, work
        backlog = sum(1 for h in self.hosts.values() if h.backlog)
        addresses, held_hosts = self.sharing.held()
        logger.info(
            "progress: %d pages fetched (%.0f/min); frontier %d in memory, %d hosts with more "
            "in crawldb; hosts ready %d, waiting for a delay %d, in flight %d, blocked by "
            "robots.txt errors %d; slowest host %s (%.0f s of delays queued); serving %d "
            "addresses (%d hosts)",
            fetched, per_min, len(self.frontier), backlog, ready, waiting, in_flight, blocked,
            slowest, slowest_work, addresses, held_hosts,
        )  # fmt: skip
